// Register names for --user-regs and -I/--intr-regs, as perf 6.1's
// parse-regs-options.c reads them: a comma-separated list of names from
// the architecture's table (case-insensitive), each in the mask the
// recorder samples (PERF_REGS_MASK: on x86_64 every general register but
// the segment ones DS, ES, FS, GS); no value: that whole mask; "?": list
// the names.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ringsim::real {

struct SampleReg {
  const char* name;
  std::uint32_t bit;  // PERF_REG_<ARCH>_<NAME>
};

// This architecture's registers as perf names them (empty where perf has
// no table the recorder copies: only x86_64 and aarch64 here).
const std::vector<SampleReg>& sample_regs();

// perf's PERF_REGS_MASK: the registers a dwarf call graph samples, and
// --user-regs / -I without a list. false where there is none.
bool sample_regs_mask(std::uint64_t& mask_out);

// "available registers: AX BX ..." (perf's '?' line, without its trailing
// space).
std::string sample_regs_list();

// `text` of `option` ("--user-regs", "-I/--intr-regs") into a mask: ""
// for the whole mask, else the names. "" or the problem (one line naming
// the register and how to list them).
std::string parse_sample_regs(std::string_view option, std::string_view text, std::uint64_t& mask_out);

}  // namespace ringsim::real
