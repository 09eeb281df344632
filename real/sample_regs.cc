#include "real/sample_regs.h"

#include <asm/perf_regs.h>

#include <cctype>

namespace ringsim::real {
namespace {

bool same_name(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); i++) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

}  // namespace

const std::vector<SampleReg>& sample_regs() {
#if defined(__x86_64__)
  // perf's arch/x86/util/perf_regs.c sample_reg_masks, in its order (the
  // XMM registers need a PMU with extended registers: none here).
  static const std::vector<SampleReg> regs = {
      {"AX", PERF_REG_X86_AX},   {"BX", PERF_REG_X86_BX},       {"CX", PERF_REG_X86_CX},
      {"DX", PERF_REG_X86_DX},   {"SI", PERF_REG_X86_SI},       {"DI", PERF_REG_X86_DI},
      {"BP", PERF_REG_X86_BP},   {"SP", PERF_REG_X86_SP},       {"IP", PERF_REG_X86_IP},
      {"FLAGS", PERF_REG_X86_FLAGS}, {"CS", PERF_REG_X86_CS},   {"SS", PERF_REG_X86_SS},
      {"DS", PERF_REG_X86_DS},   {"ES", PERF_REG_X86_ES},       {"FS", PERF_REG_X86_FS},
      {"GS", PERF_REG_X86_GS},   {"R8", PERF_REG_X86_R8},       {"R9", PERF_REG_X86_R9},
      {"R10", PERF_REG_X86_R10}, {"R11", PERF_REG_X86_R11},     {"R12", PERF_REG_X86_R12},
      {"R13", PERF_REG_X86_R13}, {"R14", PERF_REG_X86_R14},     {"R15", PERF_REG_X86_R15},
  };
#elif defined(__aarch64__)
  static const std::vector<SampleReg> regs = [] {
    std::vector<SampleReg> r;
    static const char* const kNames[] = {"x0",  "x1",  "x2",  "x3",  "x4",  "x5",  "x6",  "x7",  "x8",
                                         "x9",  "x10", "x11", "x12", "x13", "x14", "x15", "x16", "x17",
                                         "x18", "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26",
                                         "x27", "x28", "x29", "lr",  "sp",  "pc"};
    for (std::uint32_t i = 0; i < PERF_REG_ARM64_MAX; i++) r.push_back(SampleReg{kNames[i], i});
    return r;
  }();
#else
  static const std::vector<SampleReg> regs;
#endif
  return regs;
}

bool sample_regs_mask(std::uint64_t& mask_out) {
#if defined(__x86_64__)
  const std::uint64_t all = (std::uint64_t{1} << PERF_REG_X86_64_MAX) - 1;
  const std::uint64_t segments = (std::uint64_t{1} << PERF_REG_X86_DS) | (std::uint64_t{1} << PERF_REG_X86_ES) |
                                 (std::uint64_t{1} << PERF_REG_X86_FS) | (std::uint64_t{1} << PERF_REG_X86_GS);
  mask_out = all & ~segments;
  return true;
#elif defined(__aarch64__)
  mask_out = (std::uint64_t{1} << PERF_REG_ARM64_MAX) - 1;
  return true;
#else
  mask_out = 0;
  return false;
#endif
}

std::string sample_regs_list() {
  std::uint64_t mask = 0;
  std::string out = "available registers:";
  if (!sample_regs_mask(mask)) return out;
  for (const SampleReg& r : sample_regs()) {
    if ((mask >> r.bit) & 1) out += " " + std::string(r.name);
  }
  return out;
}

std::string parse_sample_regs(std::string_view option, std::string_view text, std::uint64_t& mask_out) {
  std::uint64_t mask = 0;
  if (!sample_regs_mask(mask)) return std::string(option) + ": no sample registers on this architecture";
  if (text.empty()) {
    mask_out = mask;
    return "";
  }
  std::uint64_t chosen = 0;
  // Bounded: each step consumes one name and its comma.
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view name = text.substr(0, comma);
    bool found = false;
    for (const SampleReg& r : sample_regs()) {
      if (((mask >> r.bit) & 1) == 0 || !same_name(name, r.name)) continue;
      chosen |= std::uint64_t{1} << r.bit;
      found = true;
    }
    if (!found) {
      return std::string(option) + "=" + std::string(text) + ": unknown register \"" + std::string(name) + "\" (" +
             sample_regs_list() + "; " + std::string(option) + "=? lists them)";
    }
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    if (comma != std::string_view::npos && text.empty()) return std::string(option) + ": a list ending in ','";
  }
  mask_out = chosen;
  return "";
}

}  // namespace ringsim::real
