#include "real/pmu_events.h"

#include <charconv>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <vector>

namespace ringsim::real {
namespace {

// Alias lists nest (an alias naming another); perf's do not go deeper.
constexpr int kAliasDepthMax = 4;
constexpr std::size_t kTermsMax = 64;

bool parse_number(std::string_view text, std::uint64_t& value) {
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
    base = 16;
  }
  if (text.empty()) return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  return ec == std::errc{} && ptr == text.data() + text.size();
}

bool read_line(const std::string& path, std::string& line) {
  std::ifstream in(path);
  if (!in || !std::getline(in, line)) return false;
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  return true;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, sep) && out.size() <= kTermsMax) out.push_back(part);
  return out;
}

__u64* config_field(perf_event_attr& attr, const std::string& name) {
  if (name == "config") return &attr.config;
  if (name == "config1") return &attr.config1;
  if (name == "config2") return &attr.config2;
  return nullptr;
}

// A format ("config:0-7,21"): value's bits, low first, into those bits.
std::string apply_format(const std::string& term, const std::string& format, std::uint64_t value,
                         perf_event_attr& attr) {
  const std::size_t colon = format.find(':');
  __u64* field = colon == std::string::npos ? nullptr : config_field(attr, format.substr(0, colon));
  if (field == nullptr) return "term '" + term + "': unreadable format \"" + format + "\"";
  std::uint64_t used = 0;  // value bits placed
  for (const std::string& range : split(format.substr(colon + 1), ',')) {
    std::uint64_t lo = 0;
    std::uint64_t hi = 0;
    const std::size_t dash = range.find('-');
    if (!parse_number(range.substr(0, dash), lo) ||
        !parse_number(dash == std::string::npos ? range : range.substr(dash + 1), hi) || lo > hi || hi > 63) {
      return "term '" + term + "': unreadable format \"" + format + "\"";
    }
    for (std::uint64_t bit = lo; bit <= hi; bit++, used++) {
      if (used < 64 && ((value >> used) & 1) != 0) *field |= __u64{1} << bit;
    }
  }
  if (used < 64 && (value >> used) != 0) {
    return "term '" + term + "': value " + std::to_string(value) + " too big for format \"" + format + "\"";
  }
  return "";
}

std::string apply_terms(const std::string& dir, const std::string& pmu, const std::string& terms,
                        perf_event_attr& attr, int depth) {
  for (const std::string& term : split(terms, ',')) {
    if (term.empty()) continue;
    const std::size_t eq = term.find('=');
    const std::string name = term.substr(0, eq);
    std::uint64_t value = 1;
    if (eq != std::string::npos && !parse_number(term.substr(eq + 1), value)) {
      return "term '" + term + "': the value is not a number";
    }
    std::string text;
    if (__u64* field = config_field(attr, name)) {
      *field = value;
    } else if (name == "period") {
      attr.freq = 0;
      attr.sample_period = value;
    } else if (name == "freq") {
      attr.freq = 1;
      attr.sample_freq = value;
    } else if (read_line(dir + "/format/" + name, text)) {
      if (std::string problem = apply_format(name, text, value, attr); !problem.empty()) return problem;
    } else if (eq == std::string::npos && read_line(dir + "/events/" + name, text)) {
      if (depth >= kAliasDepthMax) return "alias '" + name + "' nests too deep";
      if (std::string problem = apply_terms(dir, pmu, text, attr, depth + 1); !problem.empty()) return problem;
    } else {
      return "unknown term '" + name + "' for PMU '" + pmu + "' (config, config1, config2, period, freq, and " +
             dir + "/format and /events)";
    }
  }
  return "";
}

// NAME/TERMS/MODIFIERS: the two '/' and the modifiers after them, which
// follow the closing '/' directly, as perf 6.1's grammar has them
// (software/config=0/u, intel_pt//u); perf refuses a ':' there ("parser
// error"). "" or the problem.
std::string split_slashes(const std::string& spec, std::size_t& open, std::size_t& close, std::string& modifiers_out) {
  open = spec.find('/');
  close = open == std::string::npos ? std::string::npos : spec.find('/', open + 1);
  if (open == 0 || close == std::string::npos) return "a PMU event is PMU/TERMS/ (e.g. software/config=0/)";
  const std::string rest = spec.substr(close + 1);
  if (!rest.empty() && rest[0] == ':') {
    return "modifiers follow the closing '/' directly, as perf's PMU/TERMS/MODIFIERS (" + spec.substr(0, close + 1) +
           rest.substr(1) + ")";
  }
  modifiers_out = rest;
  return "";
}

}  // namespace

std::string parse_symbol_terms(std::string_view text, perf_event_attr& attr, std::string& modifiers_out) {
  const std::string spec(text);
  std::size_t open = 0, close = 0;
  if (std::string why = split_slashes(spec, open, close, modifiers_out); !why.empty()) return "-e " + spec + ": " + why;
  const std::string name = spec.substr(0, open);
  for (const std::string& term : split(spec.substr(open + 1, close - open - 1), ',')) {
    if (term.empty()) continue;
    const std::size_t eq = term.find('=');
    const std::string key = term.substr(0, eq);
    std::uint64_t value = 0;
    if (key != "period" && key != "freq") {
      return "-e " + spec + ": unknown term '" + key + "' for " + name + " (period=N, freq=N)";
    }
    if (eq == std::string::npos || !parse_number(term.substr(eq + 1), value)) {
      return "-e " + spec + ": term '" + term + "': the value is not a number";
    }
    if (key == "period") {
      attr.freq = 0;
      attr.sample_period = value;
    } else {
      attr.freq = 1;
      attr.sample_freq = value;
    }
  }
  return "";
}

bool is_pmu_event(std::string_view text) {
  if (text.find('/') != std::string_view::npos) return true;
  if (text.size() < 2 || text[0] != 'r') return false;
  // rHEX[:MODIFIERS]; rcu:rcu_utilization is a tracepoint.
  const std::size_t colon = text.find(':');
  const std::string_view hex = text.substr(1, colon == std::string_view::npos ? std::string_view::npos : colon - 1);
  const std::string_view modifiers = colon == std::string_view::npos ? "" : text.substr(colon + 1);
  return !hex.empty() && hex.find_first_not_of("0123456789abcdefABCDEFx") == std::string_view::npos &&
         modifiers.find_first_not_of("ukhGHIpPDeSWb") == std::string_view::npos;
}

std::string parse_pmu_event(std::string_view text, perf_event_attr& attr, std::string& modifiers_out,
                            const std::string& root) {
  const std::string spec(text);
  const auto problem = [&](const std::string& why) { return "-e " + spec + ": " + why; };
  if (spec.find('/') == std::string::npos) {  // rHEX
    const std::size_t colon = spec.find(':');
    std::uint64_t config = 0;
    std::string hex = spec.substr(1, colon == std::string::npos ? std::string::npos : colon - 1);
    if (hex.rfind("0x", 0) == 0) hex = hex.substr(2);
    const auto [ptr, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), config, 16);
    if (hex.empty() || ec != std::errc{} || ptr != hex.data() + hex.size()) return problem("not a raw event rHEX");
    attr.type = PERF_TYPE_RAW;
    attr.config = config;
    modifiers_out = colon == std::string::npos ? "" : spec.substr(colon + 1);
    return "";
  }
  std::size_t open = 0, close = 0;
  if (std::string why = split_slashes(spec, open, close, modifiers_out); !why.empty()) return problem(why);
  const std::string pmu = spec.substr(0, open);
  const std::string dir = root + "/" + pmu;
  std::string type_text;
  std::uint64_t type = 0;
  if (!read_line(dir + "/type", type_text) || !parse_number(type_text, type)) {
    return problem("no PMU '" + pmu + "' in " + root + " (ls " + root + ")");
  }
  attr.type = static_cast<std::uint32_t>(type);
  attr.config = attr.config1 = attr.config2 = 0;
  if (std::string why = apply_terms(dir, pmu, spec.substr(open + 1, close - open - 1), attr, 0); !why.empty()) {
    return problem(why);
  }
  return "";
}

}  // namespace ringsim::real
