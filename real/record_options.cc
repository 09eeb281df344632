#include "real/record_options.h"

#include <asm/perf_regs.h>
#include <linux/hw_breakpoint.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <tuple>
#include <fstream>
#include <limits>
#include <map>
#include <string_view>

#include "core/cli/command_line.h"
#include "core/verify.h"
#include "real/control.h"
#include "real/pmu_events.h"
#include "real/sample_regs.h"
#include "real/tracepoints.h"
#include "real/zstd_records.h"

namespace ringsim::real {
namespace {

// The user registers a dwarf call graph samples (perf's PERF_REGS_MASK).
bool user_register_mask(std::uint64_t& mask_out) { return sample_regs_mask(mask_out); }

std::string names_list() {
  std::string out;
  for (const EventName& e : event_names()) out += (out.empty() ? "" : ", ") + std::string(e.name);
  return out;
}

bool parse_u64(std::string_view text, std::uint64_t& value) {
  if (text.empty()) return false;
  const auto parsed = std::from_chars(text.data(), text.data() + text.size(), value);
  return parsed.ec == std::errc{} && parsed.ptr == text.data() + text.size();
}

}  // namespace

const std::vector<EventName>& event_names() {
  static const std::vector<EventName> names = {
      {"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "a per-CPU high-resolution timer"},
      {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "CPU time of the monitored tasks"},
      {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "context switches"},
      {"cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "context switches"},
      {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page faults"},
      {"faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page faults"},
      {"minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, "minor page faults"},
      {"major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, "major page faults"},
      {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "task migrations between CPUs"},
      {"migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "task migrations between CPUs"},
      {"alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, "alignment faults"},
      {"emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, "emulation faults"},
      {"dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, "no samples; side-band records only"},
      {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "CPU cycles (needs a hardware PMU)"},
      {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "instructions (needs a hardware PMU)"},
      {"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, "(needs a hardware PMU)"},
      {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, "(needs a hardware PMU)"},
      {"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "(needs a hardware PMU)"},
      {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, "(needs a hardware PMU)"},
  };
  return names;
}

namespace {

// Modifiers after an event, as perf 6.1's get_event_modifier reads them:
// u, k, h (user space, kernel, hypervisor: any of them excludes the
// others), G, H (guest, host: either excludes the other), I (not the idle
// task), p (up to 3: precise_ip; asks exclude_guest), P (the most precise:
// 3), D (pinned), e (exclusive). u asks exclude_guest too. S (sample read)
// and W (weak group) go to *extra (refused where extra is null: events
// other than -e's); b (BPF counter) is refused: this recorder has no BPF.
std::string parse_modifiers(std::string_view text, std::string_view modifiers, perf_event_attr& attr,
                            EventModifiers* extra) {
  const auto bad = [&](char c, const std::string& why) {
    return "-e " + std::string(text) + ": modifier '" + std::string(1, c) + "' " + why +
           " (u, k, h, G, H, I, p, pp, ppp, P, D, e, S, W)";
  };
  if (modifiers.empty()) {
    return "-e " + std::string(text) + ": empty modifier list (u, k, h, G, H, I, p, P, D, e, S, W)";
  }
  bool exclude = false, exclude_gh = false;
  unsigned eu = 0, ek = 0, eh = 0, eg = 0, e_host = 0, precise = 0;
  for (const char c : modifiers) {
    switch (c) {
      case 'u': case 'k': case 'h':
        if (!exclude) {
          exclude = true;
          eu = ek = eh = 1;
        }
        if (c == 'u' && !exclude_gh) eg = 1;
        (c == 'u' ? eu : c == 'k' ? ek : eh) = 0;
        break;
      case 'G': case 'H':
        if (!exclude_gh) {
          exclude_gh = true;
          eg = e_host = 1;
        }
        (c == 'G' ? eg : e_host) = 0;
        break;
      case 'I': attr.exclude_idle = 1; break;
      case 'p':
        if (++precise > 3) return bad(c, "more than three times");
        if (!exclude_gh) eg = 1;
        break;
      case 'P': precise = 3; break;
      case 'D': attr.pinned = 1; break;
      case 'e': attr.exclusive = 1; break;
      case 'S':
        if (extra == nullptr) return bad(c, "(sample read) is for -e's events only");
        extra->sample_read = true;
        break;
      case 'W':
        if (extra == nullptr) return bad(c, "(weak group) is for -e's events only");
        extra->weak_group = true;
        break;
      case 'b': return bad(c, "(BPF counter) is not supported");
      default: return bad(c, "is unknown");
    }
  }
  attr.exclude_user = eu;
  attr.exclude_kernel = ek;
  attr.exclude_hv = eh;
  attr.exclude_guest = eg;
  attr.exclude_host = e_host;
  attr.precise_ip = precise;
  return "";
}

const EventName* find_event_name(std::string_view name) {
  for (const EventName& e : event_names()) {
    if (name == e.name) return &e;
  }
  return nullptr;
}

}  // namespace

bool is_breakpoint(std::string_view text) { return text.rfind("mem:", 0) == 0; }

std::string perf_modifier_suffix(const perf_event_attr& attr) {
  std::string mods;
  bool exclude_guest_default = false;
  if (attr.exclude_kernel || attr.exclude_user || attr.exclude_hv) {
    if (!attr.exclude_kernel) mods += 'k';
    if (!attr.exclude_user) mods += 'u';
    if (!attr.exclude_hv) mods += 'h';
    exclude_guest_default = true;
  }
  if (attr.precise_ip) {
    mods.append(std::min<unsigned>(attr.precise_ip, 3), 'p');
    exclude_guest_default = true;
  }
  if (attr.exclude_host || (attr.exclude_guest != 0) == exclude_guest_default) {
    if (!attr.exclude_host) mods += 'H';
    if (!attr.exclude_guest) mods += 'G';
  }
  return mods.empty() ? "" : ":" + mods;
}

bool is_tracepoint(std::string_view text) {
  const std::size_t colon = text.find(':');
  return colon != std::string_view::npos && find_event_name(text.substr(0, colon)) == nullptr && !is_pmu_event(text) &&
         !is_breakpoint(text);
}

namespace {

// mem:ADDR[/LEN][:ACCESS][:MODIFIERS] split at its ':'s.
std::vector<std::string_view> breakpoint_parts(std::string_view text) {
  std::vector<std::string_view> parts;
  for (std::size_t at = 0; parts.size() < 8;) {
    const std::size_t colon = text.find(':', at);
    parts.push_back(text.substr(at, colon == std::string_view::npos ? std::string_view::npos : colon - at));
    if (colon == std::string_view::npos) break;
    at = colon + 1;
  }
  return parts;
}

// r, w, x, each at most once (perf's PE_MODIFIER_BP).
bool is_breakpoint_access(std::string_view text) {
  if (text.empty() || text.size() > 3) return false;
  for (const char c : text) {
    if (c != 'r' && c != 'w' && c != 'x') return false;
    if (std::count(text.begin(), text.end(), c) > 1) return false;
  }
  return true;
}

// `event` with the group's modifiers added to its own (perf merges them).
std::string with_modifiers(const std::string& event, const std::string& modifiers) {
  if (modifiers.empty()) return event;
  std::size_t has = 0;  // where the event's own modifiers start, 0: none
  if (is_breakpoint(event)) {
    // mem:ADDR[/LEN][:ACCESS][:MODIFIERS]: after its own, or a ':' of their own.
    const std::vector<std::string_view> parts = breakpoint_parts(event);
    return event + (parts.size() > 3 || (parts.size() == 3 && !is_breakpoint_access(parts[2])) ? "" : ":") +
           modifiers;
  }
  // PMU/TERMS/MODIFIERS: the group's after the event's own, no ':'.
  if (event.find('/') != std::string::npos) return event + modifiers;
  if (is_tracepoint(event)) {
    const std::size_t second = event.find(':', event.find(':') + 1);
    has = second == std::string::npos ? 0 : second;
  } else {
    has = event.find(':') == std::string::npos ? 0 : event.find(':');
  }
  return event + (has != 0 ? "" : ":") + modifiers;
}

}  // namespace

std::string split_event_list(std::string_view text, std::vector<std::string>& out, std::vector<int>* groups,
                             std::vector<std::string>* group_modifiers) {
  bool in_terms = false;  // between a PMU event's two '/'
  bool in_group = false;
  int group = groups == nullptr || groups->empty() ? 0 : *std::max_element(groups->begin(), groups->end()) + 1;
  std::size_t group_start = out.size();
  std::string item;
  const auto end_item = [&] {
    if (!item.empty() || !in_group) out.push_back(std::move(item));
    if (groups != nullptr) groups->resize(out.size(), in_group ? group : -1);
    item.clear();
  };
  for (std::size_t i = 0; i < text.size(); i++) {
    const char c = text[i];
    if (c == '/') in_terms = !in_terms;
    if (!in_terms && c == '{') {
      if (in_group || !item.empty()) return "-e " + std::string(text) + ": '{' inside an event or a group";
      if (groups == nullptr) return "-e " + std::string(text) + ": no event group {...} here";
      in_group = true;
      group_start = out.size();
    } else if (!in_terms && c == '}') {
      if (!in_group) return "-e " + std::string(text) + ": '}' without its '{'";
      end_item();
      in_group = false;
      // {a,b}:MODIFIERS applies to each member.
      std::string modifiers;
      if (i + 1 < text.size() && text[i + 1] == ':') {
        const std::size_t comma = text.find(',', i + 1);
        modifiers = std::string(text.substr(i + 2, comma == std::string_view::npos ? comma : comma - i - 2));
        i = comma == std::string_view::npos ? text.size() - 1 : comma - 1;
      }
      if (out.size() - group_start < 1) return "-e " + std::string(text) + ": an empty group {}";
      if (group_modifiers != nullptr) {
        group_modifiers->resize(static_cast<std::size_t>(group) + 1);
        (*group_modifiers)[static_cast<std::size_t>(group)] = modifiers;
      } else {
        for (std::size_t m = group_start; m < out.size(); m++) out[m] = with_modifiers(out[m], modifiers);
      }
      group++;
      if (i + 1 < text.size() && text[i + 1] == ',') i++;
      if (i + 1 >= text.size()) return "";
    } else if (c == ',' && !in_terms) {
      end_item();
    } else {
      item.push_back(c);
    }
  }
  if (in_group) return "-e " + std::string(text) + ": '{' without its '}'";
  end_item();
  return "";
}

namespace {

// A hardware breakpoint, as perf 6.1's parse_events_add_breakpoint:
// mem:ADDR[/LEN][:ACCESS] with ACCESS of r, w and x (default rw), LEN
// the bytes watched (default 4, 8 (a long) for x); each hit a sample
// (period 1: set_sampling). `modifiers` gets what follows.
std::string parse_breakpoint(std::string_view text, perf_event_attr& attr, std::string_view& modifiers) {
  const std::string spec(text);
  const auto bad = [&](const std::string& why) {
    return "-e " + spec + ": " + why + " (a breakpoint is mem:ADDR[/LEN][:ACCESS][:MODIFIERS], ACCESS of r, w, x)";
  };
  const std::vector<std::string_view> parts = breakpoint_parts(text);
  if (parts.size() < 2 || parts.size() > 4) return bad("too many ':'");
  const std::string_view where = parts[1];
  const std::size_t slash = where.find('/');
  std::uint64_t addr = 0, len = 0;
  const auto number = [](std::string_view digits, std::uint64_t& out) {
    const std::string d(digits);
    if (d.empty() || d[0] == '-') return false;
    char* end = nullptr;
    errno = 0;
    out = std::strtoull(d.c_str(), &end, 0);
    return errno == 0 && end == d.c_str() + d.size();
  };
  if (!number(where.substr(0, slash), addr)) return bad("\"" + std::string(where.substr(0, slash)) + "\" is not an address");
  if (slash != std::string_view::npos && !number(where.substr(slash + 1), len)) {
    return bad("\"" + std::string(where.substr(slash + 1)) + "\" is not a length");
  }
  std::uint32_t type = HW_BREAKPOINT_R | HW_BREAKPOINT_W;
  std::size_t next = 2;
  if (parts.size() > 2 && is_breakpoint_access(parts[2])) {
    type = 0;
    for (const char c : parts[2]) type |= c == 'r' ? HW_BREAKPOINT_R : c == 'w' ? HW_BREAKPOINT_W : HW_BREAKPOINT_X;
    next = 3;
  }
  if (parts.size() > next + 1) return bad("too many ':'");
  modifiers = parts.size() > next ? parts[next] : std::string_view{};
  if (parts.size() > next && modifiers.empty()) return bad("an empty modifier list");
  attr.type = PERF_TYPE_BREAKPOINT;
  attr.config = 0;
  attr.bp_type = type;
  attr.bp_addr = addr;
  const std::uint64_t len_default = (type & HW_BREAKPOINT_X) != 0 ? std::uint64_t{sizeof(long)}
                                                                  : std::uint64_t{HW_BREAKPOINT_LEN_4};
  attr.bp_len = len != 0 ? len : len_default;
  return "";
}

// The term name=NAME out of NAME/TERMS/[MODIFIERS] (perf's: the event's
// name, the modifiers not added to it), into `name`; `text` without it.
// "" or the problem.
std::string take_name_term(std::string_view text, std::string& without, std::string& name) {
  without = std::string(text);
  const std::size_t open = text.find('/');
  const std::size_t close = open == std::string_view::npos ? open : text.find('/', open + 1);
  if (close == std::string_view::npos) return "";
  std::string terms;
  for (std::size_t at = open + 1; at <= close;) {
    std::size_t end = text.find(',', at);
    if (end == std::string_view::npos || end > close) end = close;
    const std::string_view term = text.substr(at, end - at);
    at = end + 1;
    if (term.rfind("name=", 0) != 0) {
      terms += (terms.empty() ? "" : ",") + std::string(term);
      continue;
    }
    const std::string_view value = term.substr(5);
    const bool first_ok = !value.empty() && (std::isalpha(static_cast<unsigned char>(value[0])) || value[0] == '_');
    const bool rest_ok = std::all_of(value.begin(), value.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
    });
    if (!first_ok || !rest_ok) {
      return "-e " + std::string(text) + ": name=" + std::string(value) +
             ": a name is a letter or '_', then letters, digits, '_', '.' or '-'";
    }
    if (!name.empty()) return "-e " + std::string(text) + ": name= given twice";
    name = std::string(value);
  }
  without = std::string(text.substr(0, open + 1)) + terms + std::string(text.substr(close));
  return "";
}

}  // namespace

std::string parse_event(std::string_view text, perf_event_attr& attr, EventModifiers* extra) {
  std::string without_name, name_term;
  if (text.find("name=") != std::string_view::npos && text.find('/') != std::string_view::npos) {
    if (std::string problem = take_name_term(text, without_name, name_term); !problem.empty()) return problem;
    if (!name_term.empty()) {
      if (extra == nullptr) return "-e " + std::string(text) + ": the term name= is for -e's events only";
      extra->name = name_term;
      return parse_event(without_name, attr, extra);
    }
  }
  const std::size_t colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  const EventName* found = find_event_name(name);
  std::string_view modifiers;
  bool has_modifiers = colon != std::string_view::npos;
  std::string pmu_modifiers;
  if (found != nullptr) {
    attr.type = found->type;
    attr.config = found->config;
    if (has_modifiers) modifiers = text.substr(colon + 1);
  } else if (is_breakpoint(text)) {
    if (std::string problem = parse_breakpoint(text, attr, modifiers); !problem.empty()) return problem;
    has_modifiers = !modifiers.empty();
  } else if (const EventName* symbol = text.find('/') == std::string_view::npos
                                           ? nullptr
                                           : find_event_name(text.substr(0, text.find('/')));
             symbol != nullptr) {
    // cpu-clock/period=100000/u: a named event with terms, as perf's.
    attr.type = symbol->type;
    attr.config = symbol->config;
    if (std::string problem = parse_symbol_terms(text, attr, pmu_modifiers); !problem.empty()) return problem;
    modifiers = pmu_modifiers;
    has_modifiers = !pmu_modifiers.empty();
  } else if (is_pmu_event(text)) {
    if (std::string problem = parse_pmu_event(text, attr, pmu_modifiers); !problem.empty()) return problem;
    // The tracepoint PMU by number: ours finds a tracepoint's format (for
    // TRACING_DATA) and perf's sampling of it by its name.
    if (attr.type == PERF_TYPE_TRACEPOINT) {
      return "-e " + std::string(text) + ": a tracepoint through the tracepoint PMU is not supported: give it as "
             "SYSTEM:NAME (perf list tracepoint)";
    }
    modifiers = pmu_modifiers;
    has_modifiers = !pmu_modifiers.empty() || text.back() == ':';
  } else if (has_modifiers) {
    std::vector<Tracepoint> tps;
    if (std::string problem = find_tracepoints(tracefs_root(), text, tps); !problem.empty()) return problem;
    if (tps.size() != 1) {
      return "-e " + std::string(text) + ": names " + std::to_string(tps.size()) + " tracepoints, not one";
    }
    attr.type = PERF_TYPE_TRACEPOINT;
    attr.config = tps[0].id;
    const std::size_t second = text.find(':', colon + 1);
    has_modifiers = second != std::string_view::npos;
    if (has_modifiers) modifiers = text.substr(second + 1);
  } else {
    return "-e " + std::string(text) + ": unknown event \"" + std::string(name) + "\" (events: " + names_list() +
           "; or a tracepoint SYSTEM:NAME)";
  }
  attr.exclude_user = 0;
  attr.exclude_kernel = 0;
  attr.exclude_hv = 0;
  // Host only, as perf records by default (a guest's samples need perf kvm).
  attr.exclude_guest = 1;
  attr.exclude_host = 0;
  attr.exclude_idle = 0;
  attr.precise_ip = 0;
  attr.pinned = 0;
  attr.exclusive = 0;
  if (!has_modifiers) return "";
  return parse_modifiers(text, modifiers, attr, extra);
}

// An event's problem ("-e TEXT: ...") said of another option's event.
std::string without_event_option(const std::string& problem) {
  return problem.rfind("-e ", 0) == 0 ? problem.substr(3) : problem;
}

std::string expand_events(const std::vector<std::string>& lists, std::vector<std::string>& out,
                          std::vector<int>* groups_out, std::vector<std::string>* group_modifiers_out) {
  std::vector<std::string> expanded;
  std::vector<int> expanded_groups;
  std::vector<std::string> texts;
  std::vector<int> groups;
  for (const std::string& list : lists) {
    if (std::string problem = split_event_list(list, texts, groups_out == nullptr ? nullptr : &groups,
                                               group_modifiers_out);
        !problem.empty()) {
      return problem;
    }
  }
  groups.resize(texts.size(), -1);
  for (std::size_t i = 0; i < texts.size(); i++) {
    const std::string& text = texts[i];
    if (!is_tracepoint(text)) {
      expanded.push_back(text);
      expanded_groups.push_back(groups[i]);
      continue;
    }
    std::vector<Tracepoint> tps;
    if (std::string problem = find_tracepoints(tracefs_root(), text, tps); !problem.empty()) return problem;
    for (const Tracepoint& t : tps) {
      expanded.push_back(t.full_name() + (t.modifiers.empty() ? "" : ":" + t.modifiers));
      expanded_groups.push_back(groups[i]);
      if (expanded.size() > kEventsMax) {
        return "-e " + text + ": more than " + std::to_string(kEventsMax) + " events in all (" +
               std::to_string(tps.size()) + " tracepoints match it)";
      }
    }
  }
  out = std::move(expanded);
  if (groups_out != nullptr) *groups_out = std::move(expanded_groups);
  return "";
}

std::string parse_size(std::string_view text, std::uint64_t& bytes_out) {
  if (text.empty()) return "empty size";
  std::uint64_t unit = 1;
  std::string_view digits = text;
  const char last = text.back();
  switch (last) {
    case 'B': case 'b': unit = 1; break;
    case 'K': case 'k': unit = std::uint64_t{1} << 10; break;
    case 'M': case 'm': unit = std::uint64_t{1} << 20; break;
    case 'G': case 'g': unit = std::uint64_t{1} << 30; break;
    case 'T': case 't': unit = std::uint64_t{1} << 40; break;
    default:
      if (last < '0' || last > '9') {
        return "\"" + std::string(text) + "\" is not a size (a number with an optional suffix B, K, M, G or T)";
      }
      break;
  }
  if (last < '0' || last > '9') digits.remove_suffix(1);
  std::uint64_t value = 0;
  if (!parse_u64(digits, value)) {
    return "\"" + std::string(text) + "\" is not a size (a number with an optional suffix B, K, M, G or T)";
  }
  if (value > std::numeric_limits<std::uint64_t>::max() / unit) return "\"" + std::string(text) + "\" is too large";
  bytes_out = value * unit;
  return "";
}

std::string parse_switch_output(std::string_view text, std::uint64_t& bytes_out, std::uint64_t& ns_out,
                                bool& signal_out) {
  const std::string what = "--switch-output=" + std::string(text) +
                           ": expected signal, a size (e.g. 100M: B, K, M, G, T) or a time (e.g. 30s, 5m, 1h, 1d, "
                           "as perf; or 100ms)";
  if (text == "signal") {
    signal_out = true;
    return "";
  }
  if (text.empty()) return what;
  // A time: perf's tags_time (s, m, h, d; lower case), and ms.
  struct Unit {
    std::string_view suffix;
    std::uint64_t ns;
  };
  constexpr Unit kTimes[] = {{"ms", 1'000'000},
                             {"s", 1'000'000'000},
                             {"m", 60'000'000'000},
                             {"h", 3'600'000'000'000},
                             {"d", 86'400'000'000'000}};
  for (const Unit& u : kTimes) {
    if (text.size() <= u.suffix.size() || !text.ends_with(u.suffix)) continue;
    std::uint64_t value = 0;
    if (!parse_u64(text.substr(0, text.size() - u.suffix.size()), value)) return what;
    if (value > kSwitchOutputMaxNs / u.ns || value * u.ns < kSwitchOutputMinNs || value * u.ns > kSwitchOutputMaxNs) {
      return "--switch-output=" + std::string(text) + ": a time in 10ms..30d";
    }
    ns_out = value * u.ns;
    return "";
  }
  const char last = text.back();
  if (last >= '0' && last <= '9') return what;  // perf: a bare number is neither a size nor a time
  if (parse_size(text, bytes_out).empty()) {
    if (bytes_out < kSwitchOutputMinBytes || bytes_out > kSwitchOutputMaxBytes) {
      return "--switch-output=" + std::string(text) + ": a size in 4K.." +
             std::to_string(kSwitchOutputMaxBytes >> 40) + "T";
    }
    return "";
  }
  return what;
}

std::string parse_call_graph(std::string_view text, CallGraph& mode_out, std::uint32_t& stack_bytes_out) {
  if (text == "fp") {
    mode_out = CallGraph::fp;
    return "";
  }
  if (text == "dwarf") {
    mode_out = CallGraph::dwarf;
    stack_bytes_out = kDwarfStackDefaultBytes;
    return "";
  }
  if (text.rfind("dwarf,", 0) == 0) {
    std::uint64_t size = 0;
    const std::string_view number = text.substr(6);
    if (!parse_u64(number, size)) {
      return "--call-graph " + std::string(text) + ": \"" + std::string(number) + "\" is not a number of bytes";
    }
    if (size < 8 || size > kDwarfStackMaxBytes || size % 8 != 0) {
      return "--call-graph " + std::string(text) + ": the stack dump size must be a multiple of 8 in 8.." +
             std::to_string(kDwarfStackMaxBytes);
    }
    mode_out = CallGraph::dwarf;
    stack_bytes_out = static_cast<std::uint32_t>(size);
    return "";
  }
  if (text == "lbr") return "--call-graph lbr: needs a hardware PMU with LBR; use fp or dwarf";
  return "--call-graph " + std::string(text) + ": expected fp, dwarf or dwarf,SIZE";
}

std::uint64_t max_sample_rate_hz() {
  std::ifstream in("/proc/sys/kernel/perf_event_max_sample_rate");
  std::uint64_t rate = 0;
  if (!(in >> rate)) return 0;
  return rate;
}

namespace {

constexpr const char* kAppName = "ringsim-record";

// What CLI11 fills that needs converting or checking after parsing.
struct RawOptions {
  std::vector<std::string> events;
  std::vector<std::string> pids;
  std::vector<std::string> tids;
  CLI::Option* freq_option = nullptr;
  std::string freq_text;  // N or max
  std::string mmap_text;  // pages, or a size with a suffix (perf's -m 8M)
  bool callchain_fp = false;
  std::string clockid_text;         // -k: a clock's name or number (parse_clockid)
  CLI::Option* clockid_option = nullptr;
  bool timestamp = false;           // -T: the time is always sampled
  bool timestamp_boundary = false;  // --timestamp-boundary: SAMPLE_TIME is always written
  bool group = false;               // --group: every -e event in one group
  std::vector<std::string> cgroups;    // -G, in order (each a comma-separated list)
  std::string call_graph_text;
  std::string switch_text;
  std::vector<std::string> switch_events;  // --switch-output-event, in order (each a comma-separated list)
  std::string switch_max_files_text;
  CLI::Option* switch_max_files_option = nullptr;  // given, even as ""
  std::string max_size_text;
  CLI::Option* max_size_option = nullptr;  // given, even as "" (an empty size is an error, not no option)
  std::string staging_text;
  std::string reader_priority_text;
  std::string readers_text;
  std::string cut_stacks_text;
  std::string compression_text;  // -z/--compression-level
  std::string delay_text;        // -D/--delay
  CLI::Option* delay_option = nullptr;
  CLI::Option* output_option = nullptr;
  std::vector<std::string> filters;    // --filter, in order
  std::vector<std::string> user_regs;  // --user-regs[=REGS] ("" bare), at most once
  std::vector<std::string> intr_regs;  // -I/--intr-regs[=REGS] ("" bare), at most once
  std::vector<std::string> branch_filters;  // -j, at most once
  bool branch_any = false;                  // -b
  // Per --filter and --exclude-perf, in command-line order: the -e options
  // before it, and which it is (the k-th --filter is filters[k]).
  struct FilterItem {
    std::size_t events_before = 0;
    bool exclude_perf = false;
  };
  std::vector<FilterItem> filter_items;
  bool no_bpf_event = false;  // --no-bpf-event: what ours does anyway (D6)
  std::vector<std::string> synth;  // --synth, at most once
  bool exclude_perf = false;  // --exclude-perf given (CLI11's view; the order is filter_items')
};

// Everything after the first "--" is the command, as given: the index of
// that "--", or argc.
int command_split(int argc, char** argv) {
  for (int i = 1; i < argc; i++) {
    if (std::string_view(argv[i]) == "--") return i;
  }
  return argc;
}

void describe(CLI::App& app) {
  app.description(
      "Records perf samples of a command (or of the whole system with -a) into a perf.data file that perf report "
      "and perf script read.");
  app.footer("Usage: ringsim-record [OPTIONS] [--] COMMAND [ARGS...]\n"
             "       ringsim-record -a [OPTIONS] [-- COMMAND [ARGS...]]\n"
             "Stops when COMMAND exits, or on SIGINT/SIGTERM. SIGUSR2 writes a snapshot with --overwrite.\n"
             "Files: -o FILE, then FILE.1, FILE.2, ... with --switch-output. See docs/recorder.md.");
}

// What is sampled: -a, -e, -F, -c, -g, --call-graph.
void add_sampling_options(CLI::App& app, RecordOptions& o, RawOptions& raw) {
  app.add_flag("-a,--all-cpus", o.system_wide, "system-wide: every task on every online CPU");
  app.add_option("-e,--event", raw.events,
                 "events NAME[:MODIFIERS], NAME/TERMS/[MODIFIERS], SYSTEM:TRACEPOINT (globs), PMU/TERMS/[MODIFIERS] or "
                 "rHEX[:MODIFIERS], {GROUP}[:MODIFIERS], comma-separated or "
                 "repeated (default cpu-clock): " + names_list());
  app.add_option("-C,--cpu", o.cpu_list, "system-wide on these CPUs only (a list: 0,2-3)");
  app.add_option("-p,--pid", raw.pids, "attach to these running processes (comma-separated), with their threads")
      ->delimiter(',');
  app.add_option("-t,--tid", raw.tids, "attach to these threads only (comma-separated)")->delimiter(',');
  app.add_option("-u,--uid", o.uid_text,
                 "attach to every process of this user (a name or a number): their threads and what they start, "
                 "as perf");
  raw.freq_option = app.add_option("-F,--freq", raw.freq_text,
                                   "samples per second per CPU (default 4000), or max "
                                   "(/proc/sys/kernel/perf_event_max_sample_rate)");
  app.add_flag("--strict-freq", o.strict_freq,
               "refuse an -F above /proc/sys/kernel/perf_event_max_sample_rate instead of lowering it to that, as perf");
  auto* count_option = app.add_option("-c,--count", o.period, "sample every PERIOD events (instead of -F)")
                           ->check(CLI::Range(std::uint64_t{1}, (std::uint64_t{1} << 63) - 1));
  raw.freq_option->excludes(count_option);
  app.add_flag("-g", raw.callchain_fp, "frame-pointer call graphs (as --call-graph fp; with --call-graph, that one)");
  app.add_flag("--kernel-callchains", o.kernel_callchains,
               "with call graphs: the kernel's part of each chain only (exclude_callchain_user), as perf");
  app.add_flag("--user-callchains", o.user_callchains,
               "with call graphs: user space's part of each chain only (exclude_callchain_kernel), as perf");
  app.add_option("--call-graph", raw.call_graph_text, "fp, dwarf or dwarf,SIZE (SIZE default 8192)");
  app.add_flag("-i,--no-inherit", o.no_inherit, "the command's children and new threads are not recorded, as perf");
  app.add_flag("--per-thread", o.per_thread,
               "one ring per thread (cpu -1) instead of one per CPU, as perf: the command's (or -p's, -t's, -u's) "
               "threads of the start alone, their children and new threads not recorded (no inherit); "
               "ignored with -a/-C, as perf (with a warning)");
  app.add_option("--filter", raw.filters,
                 "a tracepoint filter (tracefs's syntax: 'fd == 2'), for the tracepoints of the last item of the "
                 "-e before it, as perf; a second one on the same tracepoints is ANDed with it: (first) && (second)");
  app.add_flag("--exclude-perf", raw.exclude_perf,
               "after an -e of tracepoints: leave out the recorder's own events (a filter 'common_pid != T' for "
               "each of its threads when the events start; perf's names its main thread), ANDed with their "
               "--filter, as perf");
  app.add_flag("--switch-events", o.switch_events,
               "record context switches (PERF_RECORD_SWITCH, perf script --show-switch-events), as perf");
  app.add_flag("--all-user", o.all_user, "every event counts user space only (as :u on each), as perf");
  app.add_flag("--all-kernel", o.all_kernel, "every event counts the kernel only (as :k on each), as perf");
  app.add_flag("-P,--period", o.sample_period,
               "sample the period (PERF_SAMPLE_PERIOD) with -c too: the kernel then samples a software event at "
               "every occurrence, whatever -c says (as perf)");
  app.add_flag("-R,--raw-samples", o.raw_samples, "sample RAW (a tracepoint's fields; empty for other events), as perf");
  raw.clockid_option = app.add_option("-k,--clockid", raw.clockid_text,
                 "the clock of the time stamps: monotonic (default), monotonic_raw, realtime, boottime or tai "
                 "(also mono, raw, real, boot, with or without CLOCK_, or its number), as perf");
  app.add_flag("-T,--timestamp", raw.timestamp, "sample times (always on: accepted as perf's)");
  app.add_flag("--sample-identifier", o.sample_identifier,
               "sample IDENTIFIER, as perf (ours does always, but for --overwrite with one event, which then "
               "samples it too)");
  app.add_flag("--sample-cpu", o.sample_cpu,
               "sample the CPU (always on, but with --overwrite and one event: then as perf's, on with -a/-C or "
               "this)");
  app.add_flag("--group", raw.group, "every event in one group, the first its leader (as -e '{a,b,...}'), as perf");
  app.add_flag("--timestamp-boundary", raw.timestamp_boundary,
               "the first and last sample times in the header (always written: accepted as perf's)");
  raw.delay_option = app.add_option("-D,--delay", raw.delay_text,
                 "sample from MS milliseconds after the command starts (as perf; 0: at once, up to " +
                     std::to_string(kDelayMaxMs) + "; -1: when --control says enable); side-band records from the start");
  app.add_option("--control", o.control,
                 "fifo:CTL[,ACK] or fd:CTL[,ACK]: commands enable [NAME], disable [NAME], snapshot, evlist, stop, "
                 "ping, each answered \"ack\" on ACK, as perf (with -D -1 the events wait for enable)");
  app.add_option("-G,--cgroup", raw.cgroups,
                 "with -a: count only in these cgroups (names under the cgroup mount, comma-separated: the first "
                 "for the first event, ...; one for every event), as perf")
      ->allow_extra_args(false);
}

// What each sample carries beyond the fixed fields, and counting: -d,
// --phys-data, -W, --transaction, --data-page-size, --code-page-size, --user-regs, -I, --running-time, -n, -s,
// -b, -j (perf 6.1's meanings: evsel__config).
void add_sample_field_options(CLI::App& app, RecordOptions& o, RawOptions& raw) {
  app.add_flag("-d,--data", o.sample_addr,
               "sample the data address (ADDR: a page fault's address) and DATA_SRC, and record the data mappings "
               "(mmap_data), as perf");
  app.add_flag("--phys-data", o.sample_phys_addr, "sample the physical address of the data address (PHYS_ADDR), as perf");
  app.add_flag("-W,--weight", o.sample_weight, "sample the weight (WEIGHT_STRUCT on x86; 0 for a software event), as perf");
  app.add_flag("--transaction", o.sample_transaction,
               "sample the transaction flags (TRANSACTION; 0 for a software event), as perf");
  app.add_flag("--data-page-size", o.sample_data_page_size,
               "sample the size of the page holding the data address (DATA_PAGE_SIZE; 0 where the kernel has none), "
               "as perf");
  app.add_flag("--code-page-size", o.sample_code_page_size,
               "sample the size of the page holding the sampled instruction (CODE_PAGE_SIZE), as perf");
  app.add_option("--user-regs", raw.user_regs,
                 "sample these user registers (--user-regs=AX,SP; bare: all; --user-regs=? lists them), as perf")
      ->allow_extra_args(false);
  app.add_option("-I,--intr-regs", raw.intr_regs,
                 "sample these registers at the interrupt (-IAX,SP or --intr-regs=AX,SP; bare -I: all; -I? lists "
                 "them), as perf")
      ->allow_extra_args(false);
  app.add_flag("--running-time", o.running_time,
               "the counters' enabled and running times in read_format (TOTAL_TIME_ENABLED, TOTAL_TIME_RUNNING), "
               "as perf");
  app.add_flag("-n,--no-samples", o.no_samples,
               "no samples: the events count (sample period 0), the side-band records are written, as perf");
  app.add_flag("-s,--stat", o.inherit_stat,
               "per-thread counts: inherit_stat (a PERF_RECORD_READ as each task exits; perf report -T), as perf");
  app.add_flag("-b,--branch-any", raw.branch_any, "sample any taken branch (branch stacks: needs a PMU with them)");
  app.add_option("-j,--branch-filter", raw.branch_filters,
                 "branch stacks of these kinds (any, any_call, any_ret, ind_call, call, cond, ind_jmp, abort_tx, "
                 "in_tx, no_tx, save_type, stack, priv; u, k, hv): needs a PMU with them")
      ->allow_extra_args(false);
}

// Where and how it is written: -o, -m, --aio, --overwrite, --switch-output,
// --header-interval-ms, -r, -q.
void add_output_options(CLI::App& app, RecordOptions& o, RawOptions& raw) {
  raw.output_option = app.add_option(
      "-o,--output", o.output,
      "output file (default perf.data; - or a pipe as standard output: perf's pipe format, as perf record -o -)");
  app.add_option("-m,--mmap-pages", raw.mmap_text,
                 "data pages per ring, a power of two (default 128), or their size with a suffix B, K, M, G "
                 "(e.g. 8M, as perf)");
  app.add_option("--aio", o.aio_cblocks,
                 "asynchronous writes with N control blocks per ring (1..4; bare --aio: 1, as perf); 0: serial "
                 "pwrite (default " + std::to_string(kAioDefault) + ")")
      ->check(CLI::Range(std::uint32_t{0}, kAioMax));
  app.add_option("-z,--compression-level", raw.compression_text,
                 "compress the data with zstd at level N (1..22; bare -z: 1, as perf) into PERF_RECORD_COMPRESSED "
                 "records, by the writer thread");
  app.add_flag("--overwrite", o.overwrite,
               "overwrite mode: rings keep the newest records (write_backward); written on SIGUSR2 and at the end");
  app.add_option("--switch-output", raw.switch_text,
                 "a new file after SIZE bytes of data (e.g. 100M), every TIME (30s, 5m, 1h, 1d as perf; or 100ms), "
                 "or at each SIGUSR2 (signal; bare --switch-output)");
  app.add_option("--switch-output-event", raw.switch_events,
                 "a new file (with --overwrite a snapshot) at each record of these events (-e's syntax; "
                 "tracepoints sample each hit, other events each occurrence unless period= says), as perf's "
                 "SIGUSR2 from its side-band thread; implies --switch-output=signal");
  raw.switch_max_files_option = app.add_option("--switch-max-files", raw.switch_max_files_text,
                 "keep at most N output files, the oldest removed (as perf)");
  raw.max_size_option = app.add_option("--max-size", raw.max_size_text,
                 "stop recording once the file holds SIZE bytes of data (B, K, M, G, T; 0: no limit), as perf");
  app.add_option("--header-interval-ms", o.header_interval_ms,
                 "rewrite the header every N ms while recording, so a file cut short is readable (default " +
                     std::to_string(kHeaderIntervalDefaultMs) + "; 0: only at the end)")
      ->check(CLI::Range(std::uint64_t{0}, kHeaderIntervalMaxMs));
  app.add_option("-r,--realtime", o.realtime_priority,
                 "run the recorder with SCHED_FIFO priority N (1..99), as perf record -r (needs root or CAP_SYS_NICE)")
      ->check(CLI::Range(std::uint32_t{1}, std::uint32_t{99}));
  app.add_option("--staging", raw.staging_text,
                 "SIZE of the staging buffer between the reading thread and the writer (e.g. 64M; default " +
                     std::to_string(kStagingRingMultiple) +
                     "x the rings' total size, 4M..512M), or off: one thread reads and writes");
  app.add_option("--reader-priority", raw.reader_priority_text,
                 "the reading thread's scheduling: auto (SCHED_FIFO 1, else nice -20, else normal; default), off, "
                 "fifo[:N] or nice[:N]");
  app.add_option("--readers", raw.readers_text,
                 "reading threads: cpu (one per CPU, each pinned to its CPU, reading its rings and then the others' "
                 "it can lock; default), cpu-own (the same, each its own CPU's rings only) or one; "
                 "with --overwrite, --switch-output or --staging off always one");
  app.add_option("--cut-stacks", raw.cut_stacks_text,
                 "with --call-graph dwarf: cut the samples' user stack dumps: off (default), pressure (while the "
                 "staging buffer is more than half full, the fuller the shorter), or BYTES (always, to that many)");
  app.add_flag("-q,--quiet", o.quiet, "print errors only");
  app.add_flag("-v,--verbose", o.verbose,
               "-v: the settings perf's -v prints (nr_cblocks, comp level, mmap size); -vv: also every "
               "perf_event_open, its attr and its outcome, as perf's -vv; -q wins");
  app.add_option("--buildid-dir", o.buildid_dir, "the build-id cache to copy the sampled binaries into (default ~/.debug)");
  app.add_flag("-N,--no-buildid-cache", o.no_buildid_cache, "do not copy the sampled binaries into the build-id cache");
  app.add_flag("--buildid-all", o.buildid_all,
               "BUILD_ID (and the cache) for every DSO mapped, not only those samples hit, as perf");
  app.add_flag("-B,--no-buildid", o.no_buildid,
               "no BUILD_ID section and no build-id cache (perf report then resolves symbols by path), as perf");
  app.add_flag("--timestamp-filename", o.timestamp_filename,
               "name each file, when finished, FILE.<local time YYYYmmddHHMMSScc> (--switch-output and --overwrite "
               "files too; never over another file), as perf");
  app.add_flag("--buildid-mmap,!--no-buildid-mmap", o.buildid_mmap,
               "build-ids in the kernel's MMAP2 records (default where the kernel has them); with --no-buildid-mmap "
               "read from the files at the end, as perf's default, which spares a perf record running beside "
               "(docs/recorder.md, Build-ids)");
}

// The side-band: what is synthesized from /proc at each file's start (--synth,
// --proc-map-timeout), and the kernel's side-band records asked for
// (--no-bpf-event, --all-cgroups, --namespaces).
void add_side_band_options(CLI::App& app, RecordOptions& o, RawOptions& raw) {
  app.add_option("--synth", raw.synth,
                 "which records of the tasks already running are synthesized from /proc: no (none), task (COMM), "
                 "mmap (COMM and MMAP2), cgroup (CGROUP, with --all-cgroups) or all (default); comma-separated, "
                 "as perf's; the kernel's mapping always");
  app.add_option("--proc-map-timeout", o.proc_map_timeout_ms,
                 "read each running task's mappings for at most MS ms (default 500); once over, its last mapping "
                 "read is marked PROC_MAP_PARSE_TIMEOUT and the rest left out, as perf")
      ->check(CLI::Range(std::uint32_t{0}, UINT32_MAX));
  app.add_flag("--no-bpf-event", raw.no_bpf_event,
               "as perf's: no BPF programs' events (PERF_RECORD_BPF_EVENT, KSYMBOL); ours never records them "
               "(docs/recorder.md, D6), so this asks for what it does");
  app.add_flag("--all-cgroups", o.all_cgroups,
               "each sample's cgroup (PERF_SAMPLE_CGROUP) and CGROUP records naming every cgroup (synthesized, "
               "and the kernel's for new ones), as perf: perf report --sort cgroup");
  app.add_flag("--namespaces", o.namespaces,
               "PERF_RECORD_NAMESPACES: each task's namespaces (new tasks from the kernel, those running "
               "synthesized), as perf");
}

// Wakeups and the dry run.
void add_run_options(CLI::App& app, RecordOptions& o) {
  app.add_flag("--no-buffering", o.no_buffering,
               "a wakeup after every sample (wakeup_events 1) instead of at half the ring, as perf");
  app.add_flag("--dry-run", o.dry_run, "check the options and the events, then exit (0): nothing opened or written, as perf");
}

// The command: what CLI11 left before "--" (no options there), then
// everything after it. -1, or the usage error's status.
int take_command(const CLI::App& app, int split, int argc, char** argv, RecordOptions& o) {
  const std::vector<std::string> rest = app.remaining();
  if (!rest.empty()) {
    if (rest.front().size() > 1 && rest.front().front() == '-') {
      return core::usage_error(kAppName, "unknown option " + rest.front());
    }
    if (split < argc) return core::usage_error(kAppName, "unexpected arguments before --: " + rest.front());
  }
  o.command = rest;
  for (int i = split + 1; i < argc; i++) o.command.push_back(argv[i]);
  return -1;
}

// --cut-stacks into `o` (after --call-graph and --staging). -1, or the
// usage error's status.
int apply_cut_stacks(const RawOptions& raw, RecordOptions& o) {
  const std::string& t = raw.cut_stacks_text;
  if (t.empty() || t == "off") return -1;
  if (o.call_graph != CallGraph::dwarf) {
    return core::usage_error(kAppName, "--cut-stacks " + t + ": needs --call-graph dwarf (user stack dumps)");
  }
  if (!o.staged) return core::usage_error(kAppName, "--cut-stacks " + t + ": needs the staging buffer (not --staging off)");
  if (t == "pressure") {
    o.cut_stacks = RecordOptions::CutStacks::pressure;
    return -1;
  }
  std::uint64_t bytes = 0;
  if (!parse_u64(t, bytes) || bytes % 8 != 0 || bytes >= o.dwarf_stack_bytes) {
    return core::usage_error(kAppName, "--cut-stacks " + t + ": expected off, pressure, or a multiple of 8 below the "
                                           "dump size (" + std::to_string(o.dwarf_stack_bytes) + ")");
  }
  o.cut_stacks = RecordOptions::CutStacks::always;
  o.cut_stack_bytes = static_cast<std::uint32_t>(bytes);
  return -1;
}

// --staging and --reader-priority into `o`. -1, or the usage error's
// status.
int apply_staging(const RawOptions& raw, RecordOptions& o) {
  if (raw.staging_text == "off") {
    o.staged = false;
  } else if (!raw.staging_text.empty()) {
    std::string problem = parse_size(raw.staging_text, o.staging_bytes);
    if (problem.empty() && (o.staging_bytes < kStagingMinBytes || o.staging_bytes > kStagingMaxBytes)) {
      problem = raw.staging_text + " is outside 8K..64G";
    }
    if (problem.empty() && o.staging_bytes % 8 != 0) problem = raw.staging_text + " is not a multiple of 8 bytes";
    if (!problem.empty()) return core::usage_error(kAppName, "--staging: " + problem + " (or off)");
  }
  if (const int status = apply_cut_stacks(raw, o); status >= 0) return status;
  if (raw.readers_text == "one") {
    o.readers_per_cpu = false;
  } else if (raw.readers_text == "cpu-own") {
    o.readers_help = false;
  } else if (!raw.readers_text.empty() && raw.readers_text != "cpu") {
    return core::usage_error(kAppName, "--readers " + raw.readers_text + ": not cpu, cpu-own or one");
  }
  if (raw.reader_priority_text.empty()) return -1;
  o.reader_priority_given = true;
  const std::string problem = parse_thread_priority(raw.reader_priority_text, o.reader_priority);
  if (!problem.empty()) return core::usage_error(kAppName, "--reader-priority " + problem);
  if (!o.staged) return core::usage_error(kAppName, "--reader-priority needs the reading thread (not --staging off)");
  return -1;
}

// -F (N or max) and -m (pages, or a size as perf takes it: 8M is 2048
// pages of 4 KiB) into `o`. "" or the problem.
std::string apply_freq_and_pages(const RawOptions& raw, RecordOptions& o) {
  if (raw.freq_option->count() > 0) {
    o.freq_given = true;
    if (raw.freq_text == "max") {
      o.freq_hz = max_sample_rate_hz();
      if (o.freq_hz == 0) return "-F max: /proc/sys/kernel/perf_event_max_sample_rate cannot be read";
    } else if (!parse_u64(raw.freq_text, o.freq_hz) || o.freq_hz == 0) {
      return "-F/--freq " + raw.freq_text + ": expected a frequency of at least 1 (samples per second), or max";
    }
    // Above the kernel's maximum: lowered to it with a warning, as perf
    // (record__config_freq... evlist's "Maximum frequency rate ...
    // exceeded, throttling"); --strict-freq refuses (check_options).
    const std::uint64_t max_rate = max_sample_rate_hz();
    if (!o.strict_freq && max_rate > 0 && o.freq_hz > max_rate) {
      o.freq_lowered_from = o.freq_hz;
      o.freq_hz = max_rate;
    }
  }
  if (raw.mmap_text.empty()) return "";
  if (parse_u64(raw.mmap_text, o.mmap_pages)) return "";
  std::uint64_t bytes = 0;
  if (std::string problem = parse_size(raw.mmap_text, bytes); !problem.empty()) return "-m/--mmap-pages: " + problem;
  const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  if (bytes == 0 || bytes % page != 0) {
    return "-m/--mmap-pages " + raw.mmap_text + ": not a whole number of " + std::to_string(page) + "-byte pages";
  }
  o.mmap_pages = bytes / page;
  if ((o.mmap_pages & (o.mmap_pages - 1)) != 0) {
    return "-m/--mmap-pages " + raw.mmap_text + ": " + std::to_string(o.mmap_pages) +
           " pages is not a power of two (perf would round it up, with a warning; give the size you want)";
  }
  return "";
}

// A bare --aio (as perf's --aio[=n]: 1 control block) and a bare -z or
// --compression-level (perf's -z[=n]: level 1) when no number follows;
// --aio N, --aio=N, -z N, -zN, --compression-level[=]N as given.
std::vector<char*> with_bare_optional_values(int argc, char** argv, int split) {
  static char kAioOne[] = "--aio=1";
  static char kLevelDefault[] = "--compression-level=1";
  static_assert(kCompressionLevelDefault == 1);
  std::vector<char*> out(argv, argv + argc);
  for (int i = 1; i < split; i++) {
    const std::string_view arg(argv[i]);
    if (arg == "--switch-output") {
      // perf's --switch-output[=signal|SIZE|TIME]: bare is signal; ours
      // also takes the value as the next argument.
      static char kSwitchSignal[] = "--switch-output=signal";
      if (i + 1 >= split || argv[i + 1][0] == '-') out[static_cast<std::size_t>(i)] = kSwitchSignal;
      continue;
    }
    if (arg == "--user-regs" || arg == "-I" || arg == "--intr-regs") {
      // perf's --user-regs[=REGS], -I[REGS]: a value only when attached
      // (the next argument is not one); bare: every register.
      static char kUserRegsAll[] = "--user-regs=<all>";
      static char kIntrRegsAll[] = "--intr-regs=<all>";
      out[static_cast<std::size_t>(i)] = arg == "--user-regs" ? kUserRegsAll : kIntrRegsAll;
      continue;
    }
    const bool aio = arg == "--aio";
    if (!aio && arg != "-z" && arg != "--compression-level") continue;
    std::uint64_t n = 0;
    const bool number_follows = i + 1 < split && parse_u64(argv[i + 1], n);
    if (!number_follows) out[static_cast<std::size_t>(i)] = aio ? kAioOne : kLevelDefault;
  }
  return out;
}

// -z/--compression-level into `o`. "" or the problem.
std::string apply_compression(const RawOptions& raw, RecordOptions& o) {
  if (raw.compression_text.empty()) return "";
  std::uint64_t level = 0;
  if (!parse_u64(raw.compression_text, level) || level < kCompressionLevelMin || level > kCompressionLevelMax) {
    return "-z/--compression-level " + raw.compression_text + ": expected a zstd level in " +
           std::to_string(kCompressionLevelMin) + ".." + std::to_string(kCompressionLevelMax) + " (bare -z: " +
           std::to_string(kCompressionLevelDefault) + ", as perf)";
  }
  if (!o.staged) {
    return "-z/--compression-level needs the staging buffer (not --staging off): the writer thread compresses, "
           "off the reading thread";
  }
  o.compression_level = static_cast<int>(level);
  return "";
}

// What a bare --user-regs or -I becomes (with_bare_optional_values): no
// register is named so.
constexpr std::string_view kBareRegs = "<all>";

// -j's list as perf 6.1's parse_branch_str: the kinds ORed; only u, k,
// hv (privilege levels) given: any branch instead. "" or the problem.
std::string parse_branch_filter(const std::string& text, std::uint64_t& mode_out) {
  struct Mode {
    std::string_view name;
    std::uint64_t bits;
  };
  static constexpr Mode kModes[] = {
      {"u", PERF_SAMPLE_BRANCH_USER},         {"k", PERF_SAMPLE_BRANCH_KERNEL},
      {"hv", PERF_SAMPLE_BRANCH_HV},          {"any", PERF_SAMPLE_BRANCH_ANY},
      {"any_call", PERF_SAMPLE_BRANCH_ANY_CALL}, {"any_ret", PERF_SAMPLE_BRANCH_ANY_RETURN},
      {"ind_call", PERF_SAMPLE_BRANCH_IND_CALL}, {"abort_tx", PERF_SAMPLE_BRANCH_ABORT_TX},
      {"in_tx", PERF_SAMPLE_BRANCH_IN_TX},    {"no_tx", PERF_SAMPLE_BRANCH_NO_TX},
      {"cond", PERF_SAMPLE_BRANCH_COND},      {"ind_jmp", PERF_SAMPLE_BRANCH_IND_JUMP},
      {"call", PERF_SAMPLE_BRANCH_CALL},      {"save_type", PERF_SAMPLE_BRANCH_TYPE_SAVE},
      {"stack", PERF_SAMPLE_BRANCH_CALL_STACK}, {"priv", PERF_SAMPLE_BRANCH_PRIV_SAVE},
  };
  std::uint64_t mode = 0;
  std::string_view rest = text;
  // Bounded: each step consumes one name and its comma.
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view name = rest.substr(0, comma);
    const auto* m = std::find_if(std::begin(kModes), std::end(kModes), [&](const Mode& k) { return k.name == name; });
    if (m == std::end(kModes)) {
      return "-j/--branch-filter " + text + ": unknown branch filter \"" + std::string(name) +
             "\" (any, any_call, any_ret, ind_call, call, cond, ind_jmp, abort_tx, in_tx, no_tx, save_type, "
             "stack, priv; u, k, hv)";
    }
    mode |= m->bits;
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  constexpr std::uint64_t kPrivilegeLevels = PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_KERNEL | PERF_SAMPLE_BRANCH_HV;
  if ((mode & ~kPrivilegeLevels) == 0) mode = PERF_SAMPLE_BRANCH_ANY;
  mode_out = mode;
  return "";
}

// -G's lists as perf 6.1's parse_cgroups: the names in order, each to the
// next event ("" leaves that one unconstrained); one name alone to every
// event. "" or the problem.
std::string assign_cgroups(const std::vector<std::string>& lists, RecordOptions& o) {
  if (lists.empty()) return "";
  std::vector<std::string> names;
  for (const std::string& list : lists) {
    std::size_t at = 0;
    // Bounded by the list's length: each step consumes a name and its comma.
    while (at <= list.size()) {
      const std::size_t comma = std::min(list.find(',', at), list.size());
      names.push_back(list.substr(at, comma - at));
      at = comma + 1;
    }
  }
  if (names.size() > o.events.size()) {
    return "-G/--cgroup: " + std::to_string(names.size()) + " cgroups for " + std::to_string(o.events.size()) +
           " events (one per event, in -e order; or one for all)";
  }
  if (names.size() == 1) names.assign(o.events.size(), names[0]);
  names.resize(o.events.size());
  for (const std::string& n : names) {
    if (n.find("..") != std::string::npos) return "-G/--cgroup " + n + ": a cgroup name under the cgroup mount";
  }
  o.cgroups = std::move(names);
  return "";
}

// --user-regs, -I, -b and -j into `o`. -1 to go on, 0 after a register
// list ('?', printed to stdout), or the usage error's status.
int apply_sample_fields(const RawOptions& raw, RecordOptions& o) {
  const struct {
    const char* option;
    const std::vector<std::string>* texts;
    std::uint64_t* mask;
  } regs[] = {{"--user-regs", &raw.user_regs, &o.user_regs}, {"--intr-regs", &raw.intr_regs, &o.intr_regs}};
  for (const auto& r : regs) {
    if (r.texts->empty()) continue;
    if (r.texts->size() > 1) return core::usage_error(kAppName, std::string(r.option) + ": given more than once");
    if (r.texts->front() == "?") {
      std::printf("%s\n", sample_regs_list().c_str());
      return 0;
    }
    const std::string text = r.texts->front() == kBareRegs ? std::string() : r.texts->front();
    if (const std::string problem = parse_sample_regs(r.option, text, *r.mask); !problem.empty()) {
      return core::usage_error(kAppName, problem);
    }
  }
  if (const std::string problem = assign_cgroups(raw.cgroups, o); !problem.empty()) {
    return core::usage_error(kAppName, problem);
  }
  if (raw.branch_any && !raw.branch_filters.empty()) {
    return core::usage_error(kAppName, "-b/--branch-any and -j/--branch-filter exclude each other (-b is -j any)");
  }
  if (raw.branch_filters.size() > 1) return core::usage_error(kAppName, "-j/--branch-filter: given more than once");
  if (raw.branch_any) o.branch_stack = PERF_SAMPLE_BRANCH_ANY;
  if (!raw.branch_filters.empty()) {
    if (const std::string problem = parse_branch_filter(raw.branch_filters.front(), o.branch_stack); !problem.empty()) {
      return core::usage_error(kAppName, problem);
    }
  }
  return -1;
}

// -F, -g, --call-graph and --switch-output into `o`. -1, or the usage
// error's status.
int apply(const RawOptions& raw, RecordOptions& o);

// -k: perf's parse_clockid (util/clockid.c): a number, or a name from its
// table, case aside, with or without "CLOCK_". perf takes any number and
// lets the kernel refuse it at the first open; here a clock the kernel
// does not stamp samples with (perf_event_set_clock) is refused at once.
std::string parse_clockid(const std::string& text, int& clockid) {
  struct Name {
    const char* name;
    int clock;
  };
  static constexpr Name kNames[] = {
      {"monotonic", CLOCK_MONOTONIC}, {"monotonic_raw", CLOCK_MONOTONIC_RAW}, {"realtime", CLOCK_REALTIME},
      {"boottime", CLOCK_BOOTTIME},   {"tai", CLOCK_TAI},                     {"mono", CLOCK_MONOTONIC},
      {"raw", CLOCK_MONOTONIC_RAW},   {"real", CLOCK_REALTIME},               {"boot", CLOCK_BOOTTIME}};
  const std::string kAllowed = "monotonic, monotonic_raw, realtime, boottime or tai (or their numbers 1, 4, 0, 7, 11)";
  const auto lower = [](std::string t) {
    for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return t;
  };
  int found = -1;
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos && text.size() <= 9) {
    const int number = std::stoi(text);
    for (const Name& n : kNames) {
      if (number == n.clock) found = number;
    }
    if (found < 0) return "-k " + text + ": not a clock the kernel stamps samples with: " + kAllowed;
  }
  std::string name = lower(text);
  if (name.rfind("clock_", 0) == 0) name = name.substr(6);
  for (const Name& n : kNames) {
    if (found < 0 && name == n.name) found = n.clock;
  }
  if (found < 0) return "-k " + text + ": unknown clock: " + kAllowed;
  clockid = found;
  return "";
}

// -u USER: a user name (the password database) or a number, as perf's
// parse_target_uid. "" (none given) leaves uid_out -1.
std::string parse_uid(const std::string& text, long& uid_out) {
  if (text.empty()) return "";
  std::uint64_t number = 0;
  if (parse_u64(text, number)) {
    if (number >= 0xffffffffu) return "-u " + text + ": not a user id";
    uid_out = static_cast<long>(number);
    return "";
  }
  passwd entry{};
  passwd* found = nullptr;
  std::vector<char> buffer(16384);
  if (::getpwnam_r(text.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr) {
    return "-u " + text + ": no such user (see getent passwd)";
  }
  uid_out = static_cast<long>(found->pw_uid);
  return "";
}

// -D MS: 0..kDelayMaxMs; -1 as perf's: the events start disabled, a
// --control "enable" enables them.
std::string parse_delay(const std::string& text, std::uint64_t& ms_out, bool& disabled_out) {
  if (text == "-1") {
    disabled_out = true;
    return "";
  }
  std::uint64_t ms = 0;
  const auto parsed = std::from_chars(text.data(), text.data() + text.size(), ms, 10);
  if (parsed.ec != std::errc{} || parsed.ptr != text.data() + text.size() || ms > kDelayMaxMs) {
    return "-D/--delay " + text + ": expected milliseconds in 0.." + std::to_string(kDelayMaxMs) +
           ", or -1 (disabled until --control enables them)";
  }
  ms_out = ms;
  return "";
}

// --per-thread: perf's target rules: -a or -C wins (target->per_thread
// false); else the cpu map is the dummy one, and evlist__config then sets
// no_inherit.
void apply_per_thread(RecordOptions& o) {
  if (!o.per_thread) return;
  if (o.cpu_wide()) {
    o.per_thread = false;
    o.per_thread_ignored = true;
    return;
  }
  o.no_inherit = true;
}

// --synth: perf's parse_synth_opt (util/synthetic-events.c): words
// separated by commas, case aside; "no" (or "none") and "all" end the list
// there; "mmap" implies "task"; "cgroup" changes nothing here (perf
// synthesizes CGROUP records only with --all-cgroups). "" or the problem.
std::string apply_synth(const RawOptions& raw, RecordOptions& o) {
  if (raw.synth.empty()) return "";
  if (raw.synth.size() > 1) return "--synth: given more than once";
  bool tasks = false;
  bool mmaps = false;
  bool cgroups = false;
  std::string_view rest = raw.synth.front();
  for (bool more = true; more;) {
    const std::size_t comma = rest.find(',');
    more = comma != std::string_view::npos;
    std::string word(rest.substr(0, comma));
    rest = more ? rest.substr(comma + 1) : std::string_view{};
    for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (word == "no" || word == "none" || word == "all") {
      tasks = mmaps = cgroups = word == "all";
      break;
    }
    if (word == "task") {
      tasks = true;
    } else if (word == "mmap") {
      tasks = mmaps = true;
    } else if (word == "cgroup") {
      cgroups = true;
    } else {
      return "--synth " + raw.synth.front() + ": unknown kind \"" + word + "\" (no, all, task, mmap, cgroup)";
    }
  }
  o.synth_tasks = tasks;
  o.synth_mmaps = mmaps;
  o.synth_cgroups = cgroups;
  return "";
}

// --group: perf's evlist__set_leader over every event (one event: no
// group). "" or the problem.
std::string apply_group(const RawOptions& raw, RecordOptions& o) {
  if (!raw.group || o.events.size() < 2) return "";
  if (std::any_of(o.event_groups.begin(), o.event_groups.end(), [](int g) { return g >= 0; })) {
    return "--group with groups {...} in -e: not supported (give one or the other)";
  }
  o.event_groups.assign(o.events.size(), 0);
  o.group_modifiers.assign(1, "");
  return "";
}

// --switch-output and --switch-output-event.
std::string apply_switch_output(const RawOptions& raw, RecordOptions& o) {
  if (!raw.switch_text.empty()) {
    const std::string problem =
        parse_switch_output(raw.switch_text, o.switch_output_bytes, o.switch_output_ns, o.switch_output_signal);
    if (!problem.empty()) return problem;
  }
  if (raw.switch_events.empty()) return "";
  // perf's switch_output_setup: --switch-output-event implies
  // --switch-output=signal (perf then drops a SIZE or TIME given too; ours
  // keeps both).
  if (const std::string problem = expand_events(raw.switch_events, o.switch_output_events, nullptr, nullptr);
      !problem.empty()) {
    return "--switch-output-event: " + without_event_option(problem);
  }
  o.switch_output_signal = true;
  return "";
}

int apply(const RawOptions& raw, RecordOptions& o) {
  // As perf record: with no -o and standard output a pipe, the pipe format
  // to it (ringsim-record -- CMD | perf report -i -).
  struct stat stdout_stat {};
  if (raw.output_option->count() == 0 && ::fstat(STDOUT_FILENO, &stdout_stat) == 0 && S_ISFIFO(stdout_stat.st_mode)) o.output = "-";
  if (!raw.events.empty()) {
    if (const std::string problem = expand_events(raw.events, o.events, &o.event_groups, &o.group_modifiers);
        !problem.empty()) {
      return core::usage_error(kAppName, problem);
    }
  }
  if (const std::string problem = apply_group(raw, o); !problem.empty()) return core::usage_error(kAppName, problem);
  for (const auto& [option, texts, out] : {std::tuple{"-p", &raw.pids, &o.pids}, std::tuple{"-t", &raw.tids, &o.tids}}) {
    for (const std::string& text : *texts) {
      if (const std::string problem = parse_task_list(option, text, *out); !problem.empty()) {
        return core::usage_error(kAppName, problem);
      }
    }
  }
  if (const std::string problem = apply_freq_and_pages(raw, o); !problem.empty()) {
    return core::usage_error(kAppName, problem);
  }
  if (const std::string problem = parse_uid(o.uid_text, o.uid); !problem.empty()) {
    return core::usage_error(kAppName, problem);
  }
  if (raw.clockid_option != nullptr && raw.clockid_option->count() > 0) {
    if (const std::string problem = parse_clockid(raw.clockid_text, o.clockid); !problem.empty()) {
      return core::usage_error(kAppName, problem);
    }
  }
  if (raw.delay_option != nullptr && raw.delay_option->count() > 0) {
    if (const std::string problem = parse_delay(raw.delay_text, o.delay_ms, o.start_disabled); !problem.empty()) {
      return core::usage_error(kAppName, problem);
    }
  }
  if (raw.callchain_fp) o.call_graph = CallGraph::fp;
  if (!raw.call_graph_text.empty()) {
    const std::string problem = parse_call_graph(raw.call_graph_text, o.call_graph, o.dwarf_stack_bytes);
    if (!problem.empty()) return core::usage_error(kAppName, problem);
  }
  if (const int status = apply_staging(raw, o); status >= 0) return status;
  if (const std::string problem = apply_compression(raw, o); !problem.empty()) {
    return core::usage_error(kAppName, problem);
  }
  if (raw.max_size_option->count() > 0) {
    if (const std::string problem = parse_size(raw.max_size_text, o.max_size_bytes); !problem.empty()) {
      return core::usage_error(kAppName, "--max-size: " + problem);
    }
  }
  if (raw.switch_max_files_option->count() > 0) {
    std::uint64_t n = 0;
    if (!parse_u64(raw.switch_max_files_text, n) || n == 0 || n > kSwitchMaxFilesMax) {
      return core::usage_error(kAppName, "--switch-max-files=" + raw.switch_max_files_text +
                                             ": expected a number of files in 1.." +
                                             std::to_string(kSwitchMaxFilesMax));
    }
    o.switch_max_files = static_cast<std::uint32_t>(n);
  }
  if (const std::string problem = apply_switch_output(raw, o); !problem.empty()) {
    return core::usage_error(kAppName, problem);
  }
  if (o.switch_max_files > 0 && !o.rotates()) {
    return core::usage_error(kAppName, "--switch-max-files=" + raw.switch_max_files_text +
                                           ": needs --switch-output or --overwrite (one file otherwise)");
  }
  if (o.overwrite && o.compression_level > 0) {
    return core::usage_error(kAppName, "--overwrite with -z: not supported (each snapshot is written by the "
                                       "reading thread, -z compresses on the writer thread)");
  }
  // --overwrite: the rings are read only for a snapshot (nothing to stage);
  // one thread reads each snapshot into a file of its own.
  if (o.overwrite) o.staged = false;
  return -1;
}

}  // namespace

namespace {

// Per --filter and --exclude-perf on the command line (before `split`), how
// many -e options come before it: CLI11 keeps each option's values in
// order, not their order between options.
std::vector<RawOptions::FilterItem> filters_after_events(int argc, char** argv, int split) {
  std::vector<RawOptions::FilterItem> out;
  std::size_t events = 0;
  for (int i = 1; i < split && i < argc; i++) {
    const std::string_view a = argv[i];
    if (a == "-e" || a == "--event") {
      events++;
      i++;
    } else if (a.rfind("--event=", 0) == 0 || (a.rfind("-e", 0) == 0 && a.size() > 2 && a[2] != '-')) {
      events++;
    } else if (a == "--filter" || a.rfind("--filter=", 0) == 0) {
      out.push_back({events, false});
      if (a == "--filter") i++;
    } else if (a == "--exclude-perf") {
      out.push_back({events, true});
    }
  }
  return out;
}

// The events a filter after the k-th -e (1-based) applies to, as perf's
// foreach_evsel_in_last_glob: those of that -e's last item (a glob's every
// tracepoint), [first, end) in o.events. "" or the problem.
std::string last_item_events(const RawOptions& raw, const RecordOptions& o, std::size_t k, const std::string& option,
                             std::size_t& first, std::size_t& end) {
  if (k == 0 || k > raw.events.size()) return option + ": give it after the -e of its tracepoint, as perf";
  const std::vector<std::string> prefix(raw.events.begin(), raw.events.begin() + static_cast<std::ptrdiff_t>(k));
  std::vector<std::string> through;
  std::vector<int> groups;
  std::vector<std::string> modifiers;
  if (std::string problem = expand_events(prefix, through, &groups, &modifiers); !problem.empty()) return problem;
  std::vector<std::string> items;
  groups.clear();
  modifiers.clear();
  if (std::string problem = split_event_list(raw.events[k - 1], items, &groups, &modifiers); !problem.empty()) {
    return problem;
  }
  std::vector<std::string> last;
  if (std::string problem = expand_events({items.back()}, last); !problem.empty()) return option + ": " + problem;
  if (last.size() > through.size() || through.size() > o.events.size()) return option + ": events not found";
  first = through.size() - last.size();
  end = through.size();
  return "";
}

// --filter and --exclude-perf, in their order, each on the tracepoints of
// the last item of the -e before it; a second filter on a tracepoint is
// ANDed with the first, "(first) && (second)", as perf's
// evsel__append_tp_filter. "" or the problem.
std::string apply_filters(const RawOptions& raw, RecordOptions& o) {
  if (raw.filter_items.empty()) return "";
  std::size_t texts = 0;
  for (const RawOptions::FilterItem& item : raw.filter_items) texts += item.exclude_perf ? 0 : 1;
  if (texts != raw.filters.size() || raw.exclude_perf != (texts < raw.filter_items.size())) {
    return "--filter, --exclude-perf: given in a form not understood";
  }
  o.event_filters.assign(o.events.size(), {});
  std::size_t next_text = 0;
  for (const RawOptions::FilterItem& item : raw.filter_items) {
    const RecordOptions::FilterPart part{item.exclude_perf ? std::string() : raw.filters[next_text++], item.exclude_perf};
    const std::string option = item.exclude_perf ? std::string("--exclude-perf") : "--filter '" + part.text + "'";
    std::size_t first = 0;
    std::size_t end = 0;
    if (std::string problem = last_item_events(raw, o, item.events_before, option, first, end); !problem.empty()) {
      return problem;
    }
    for (std::size_t e = first; e < end; e++) {
      if (!is_tracepoint(o.events[e])) {
        return option + ": " + o.events[e] + " is not a tracepoint" +
               (item.exclude_perf ? " (it filters the tracepoints of the -e before it, as perf)"
                                  : " (an address filter needs a PMU with them)");
      }
      o.event_filters[e].push_back(part);
    }
  }
  return "";
}

}  // namespace

std::string compose_filter(const std::vector<RecordOptions::FilterPart>& parts, std::span<const pid_t> own_threads) {
  std::string filter;
  for (const RecordOptions::FilterPart& part : parts) {
    std::string text = part.text;
    if (part.exclude_self) {
      VERIFY(!own_threads.empty());
      text.clear();
      for (const pid_t tid : own_threads) {
        text += (text.empty() ? "" : " && ") + std::string("common_pid != ") + std::to_string(tid);
      }
    }
    filter = filter.empty() ? text : "(" + filter + ") && (" + text + ")";
  }
  return filter;
}

int parse_record_command_line(int argc, char** argv, RecordOptions& out) {
  const int split = command_split(argc, argv);
  CLI::App app{"", kAppName};
  describe(app);
  RecordOptions o;
  RawOptions raw;
  add_sampling_options(app, o, raw);
  add_output_options(app, o, raw);
  add_side_band_options(app, o, raw);
  add_run_options(app, o);
  add_sample_field_options(app, o, raw);
  app.prefix_command(true);
  std::vector<char*> args = with_bare_optional_values(argc, argv, split);
  if (const int status = core::parse_command_line(app, split, args.data()); status >= 0) return status;
  if (const int status = take_command(app, split, argc, argv, o); status >= 0) return status;
  raw.filter_items = filters_after_events(argc, argv, split);
  if (const int status = apply(raw, o); status >= 0) return status;
  if (const int status = apply_sample_fields(raw, o); status >= 0) return status;
  if (const std::string problem = apply_filters(raw, o); !problem.empty()) return core::usage_error(kAppName, problem);
  if (const std::string problem = apply_synth(raw, o); !problem.empty()) return core::usage_error(kAppName, problem);
  apply_per_thread(o);
  for (int i = 0; i < argc; i++) o.argv.push_back(argv[i]);
  if (const std::string problem = check_options(o); !problem.empty()) return core::usage_error(kAppName, problem);
  out = o;
  return -1;
}

std::string parse_task_list(std::string_view option, std::string_view text, std::vector<int>& out) {
  // CLI11 split the option's values at commas already; a value is one id.
  std::uint64_t id = 0;
  if (!parse_u64(text, id) || id == 0 || id > 0x3fffffff) {
    return std::string(option) + " " + std::string(text) + ": expected process or thread ids (1, 2, ...), comma-separated";
  }
  if (out.size() >= kTasksMax) return std::string(option) + ": more than " + std::to_string(kTasksMax) + " tasks";
  out.push_back(static_cast<int>(id));
  return "";
}

namespace {

// Which tasks and CPUs: the combinations that make sense.
std::string check_targets(const RecordOptions& o) {
  if (o.all_user && o.all_kernel) return "--all-user and --all-kernel exclude each other";
  if (o.pipe_output() && o.rotates()) {
    return "-o - (a pipe): one stream, no --switch-output, --switch-output-event or --overwrite (they write "
           "several files)";
  }
  if (o.pipe_output() && o.aio_cblocks > 0) {
    return "-o - (a pipe) with --aio " + std::to_string(o.aio_cblocks) +
           ": a stream is written in order, serially: leave --aio out";
  }
  if (o.command.empty() && !o.cpu_wide() && !o.attach()) {
    return "nothing to record: give a COMMAND, -a for the whole system, -C for some CPUs, or -p/-t for running tasks";
  }
  if (!o.pids.empty() && !o.tids.empty()) return "-p and -t exclude each other: give the processes or the threads";
  if (o.uid >= 0 && (!o.pids.empty() || !o.tids.empty())) {
    return "-u and " + std::string(o.pids.empty() ? "-t" : "-p") +
           " exclude each other: a user's every process, or the tasks named";
  }
  if (o.attach() && o.cpu_wide()) {
    return std::string(o.uid >= 0 ? "-u" : o.pids.empty() ? "-t" : "-p") + " and " + (o.system_wide ? "-a" : "-C") +
           " exclude each other: attach to tasks, or record CPUs";
  }
  if (o.system_wide && !o.cpu_list.empty()) return "-a and -C exclude each other: -a is every online CPU";
  if (!o.cgroups.empty() && !o.system_wide) {
    return "-G/--cgroup: cgroup monitoring only available in system-wide mode (-a), as perf";
  }
  return "";
}

std::string check_events(const RecordOptions& o) {
  if (o.events.empty()) return "-e: no event";
  if (!o.event_groups.empty()) {
    if (o.event_groups.size() != o.events.size()) return "-e: a group number per event";
    const bool grouped = std::any_of(o.event_groups.begin(), o.event_groups.end(), [](int g) { return g >= 0; });
    if (grouped && o.delayed()) return "-D with event groups {...}: not supported (the leaders would wait, not the group)";
  }
  if (o.events.size() > kEventsMax) return "-e: more than " + std::to_string(kEventsMax) + " events";
  if (o.switch_output_events.size() > kEventsMax) {
    return "--switch-output-event: more than " + std::to_string(kEventsMax) + " events";
  }
  std::vector<perf_event_attr> triggers;
  if (std::string problem = make_trigger_attrs(o, triggers); !problem.empty()) return problem;
  perf_event_attr attr{};
  for (const std::string& e : o.events) {
    EventModifiers extra;
    if (std::string problem = parse_event(e, attr, &extra); !problem.empty()) return problem;
  }
  return "";
}

}  // namespace

std::string check_options(const RecordOptions& o) {
  if (o.output.empty()) return "-o: empty file name";
  if (!o.control.empty()) {
    if (std::string problem = check_control(o.control); !problem.empty()) return problem;
  }
  if (std::string problem = check_targets(o); !problem.empty()) return problem;
  if (o.period == 0) {
    const std::uint64_t max_rate = max_sample_rate_hz();
    if (o.freq_hz == 0) return "-F 0: the frequency must be at least 1";
    if (max_rate > 0 && o.freq_hz > max_rate) {
      return "-F " + std::to_string(o.freq_hz) + " is above /proc/sys/kernel/perf_event_max_sample_rate (" +
             std::to_string(max_rate) + ") and --strict-freq refuses to lower it: use a lower -F, or raise the limit " +
             "(sysctl kernel.perf_event_max_sample_rate)";
    }
  }
  if (o.mmap_pages == 0 || (o.mmap_pages & (o.mmap_pages - 1)) != 0 || o.mmap_pages > kMmapPagesMax) {
    return "-m/--mmap-pages " + std::to_string(o.mmap_pages) + ": expected a power of two in 1.." +
           std::to_string(kMmapPagesMax) + " (pages), or a size such as 8M";
  }
  if (o.aio_cblocks > kAioMax) return "--aio " + std::to_string(o.aio_cblocks) + " is outside 0..4";
  if (std::string problem = check_events(o); !problem.empty()) return problem;
  if (o.call_graph == CallGraph::dwarf) {
    std::uint64_t mask = 0;
    if (!user_register_mask(mask)) return "--call-graph dwarf: not supported on this architecture; use fp";
  }
  return "";
}

namespace {

// The sample fields and counting options of perf 6.1's evsel__config:
// -d, --phys-data, -W, --transaction, --data-page-size, --code-page-size,
// --user-regs, -I, -b/-j, --running-time, -s. Every event alike, ours' -D dummy too (D18: one sample layout), but
// for branch stacks, which perf leaves off a dummy (the kernel refuses
// them there).
void set_sample_fields(const RecordOptions& o, perf_event_attr& attr) {
  if (o.sample_addr) attr.sample_type |= PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC;
  if (o.sample_phys_addr) attr.sample_type |= PERF_SAMPLE_PHYS_ADDR;
  if (o.all_cgroups) attr.sample_type |= PERF_SAMPLE_CGROUP;  // perf's evsel__config: every event
  if (o.sample_weight) {
#if defined(__x86_64__)
    attr.sample_type |= PERF_SAMPLE_WEIGHT_STRUCT;  // perf's arch/x86 arch_evsel__set_sample_weight
#else
    attr.sample_type |= PERF_SAMPLE_WEIGHT;
#endif
  }
  if (o.sample_transaction) attr.sample_type |= PERF_SAMPLE_TRANSACTION;
  if (o.sample_data_page_size) attr.sample_type |= PERF_SAMPLE_DATA_PAGE_SIZE;  // every event, no -d needed
  if (o.sample_code_page_size) attr.sample_type |= PERF_SAMPLE_CODE_PAGE_SIZE;
  if (o.user_regs != 0) {
    attr.sample_type |= PERF_SAMPLE_REGS_USER;
    attr.sample_regs_user |= o.user_regs;
  }
  if (o.intr_regs != 0) {
    attr.sample_type |= PERF_SAMPLE_REGS_INTR;
    attr.sample_regs_intr = o.intr_regs;
  }
  const bool dummy = attr.type == PERF_TYPE_SOFTWARE && attr.config == PERF_COUNT_SW_DUMMY;
  if (o.branch_stack != 0 && !dummy) {
    attr.sample_type |= PERF_SAMPLE_BRANCH_STACK;
    attr.branch_sample_type = o.branch_stack;
  }
  if (o.running_time) attr.read_format |= PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  if (o.inherit_stat) {
    attr.inherit_stat = 1;
    attr.read_format |= PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;
  }
}

// What every event samples: period or frequency, sample_type, call chains.
// PERF_SAMPLE_PERIOD only in frequency mode, as perf: with a fixed period
// (-c) the kernel samples a software event at *every* occurrence when the
// sample asks for its period (perf_swevent_event: the count is reported as
// the period), so -c 10000 -e page-faults would record every fault.
void set_sampling(const RecordOptions& o, std::uint64_t register_mask, perf_event_attr& attr) {
  attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
  if (attr.sample_period != 0) {
    // The event's own period= or freq= term (PMU/TERMS/), as perf: over -c/-F.
    if (attr.freq) attr.sample_type |= PERF_SAMPLE_PERIOD;
  } else if (o.period > 0) {
    attr.sample_period = o.period;
  } else {
    attr.freq = 1;
    attr.sample_freq = o.freq_hz;
    attr.sample_type |= PERF_SAMPLE_PERIOD;
  }
  // A breakpoint: each hit, as perf's parse_events_add_breakpoint (period
  // 1, no PERIOD), unless -c or -F says otherwise (evsel__config).
  if (attr.type == PERF_TYPE_BREAKPOINT && o.period == 0 && !o.freq_given) {
    attr.freq = 0;
    attr.sample_period = 1;
    attr.sample_type &= ~std::uint64_t{PERF_SAMPLE_PERIOD};
  }
  if (o.sample_period) attr.sample_type |= PERF_SAMPLE_PERIOD;
  if (o.raw_samples) attr.sample_type |= PERF_SAMPLE_RAW;
  if (attr.type == PERF_TYPE_TRACEPOINT) {
    // As perf 6.1's evsel__newtp_idx: the tracepoint's fields (RAW), and
    // every event sampled (period 1, PERIOD) unless -F or -c says
    // otherwise (evsel__config: a user's -F or -c overrides it). With -c N
    // PERIOD stays off, so the kernel samples every Nth event, not each
    // one (see above; perf keeps PERIOD and samples each).
    attr.sample_type |= PERF_SAMPLE_RAW;
    if (o.period == 0 && !o.freq_given) {
      attr.freq = 0;
      attr.sample_period = 1;
    }
  }
  set_sample_fields(o, attr);
  if (o.call_graph != CallGraph::none) {
    attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
    // perf's __evsel__config_callchain: only where there are call graphs.
    if (o.kernel_callchains) attr.exclude_callchain_user = 1;
    if (o.user_callchains) attr.exclude_callchain_kernel = 1;
  }
  if (o.call_graph == CallGraph::dwarf) {
    // As perf: the kernel part of the chain from the kernel, the user part
    // unwound later from the registers and the stack copy.
    attr.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    attr.sample_regs_user |= register_mask;  // with --user-regs: both, as perf
    attr.sample_stack_user = o.dwarf_stack_bytes;
    attr.exclude_callchain_user = 1;
  }
  // -n: perf's `attr->sample_freq = 0` (the union with sample_period):
  // the events count, never sample.
  if (o.no_samples) attr.sample_period = 0;
}

// The bits of one event.
std::string make_event_attr(const RecordOptions& o, std::uint64_t register_mask, const std::string& event,
                            bool first, perf_event_attr& attr, EventModifiers& extra) {
  attr = perf_event_attr{};
  attr.size = sizeof attr;
  extra = EventModifiers{};
  if (std::string problem = parse_event(event, attr, &extra); !problem.empty()) return problem;
  set_sampling(o, register_mask, attr);
  if (o.no_buffering) {  // perf's evsel__config
    attr.watermark = 0;
    attr.wakeup_events = 1;
  }
  attr.sample_id_all = 1;
  // Time stamps of -k's clock (CLOCK_MONOTONIC by default), so the file's
  // CLOCKID and CLOCK_DATA relate them to wall-clock time (perf record -k).
  attr.use_clockid = 1;
  attr.clockid = o.clockid;
  // exclude_guest: parse_event's (host only, as perf).
  // Side-band records perf needs to name tasks and resolve symbols, once
  // per ring: from the first event, as perf asks for them (with -D, the
  // dummy event make_attrs puts first).
  if (first) {
    attr.mmap = 1;
    attr.mmap2 = 1;
    attr.comm = 1;
    attr.comm_exec = 1;
    if (o.namespaces) attr.namespaces = 1;  // perf: `attr->namespaces = track && opts->record_namespaces`
    if (o.all_cgroups) attr.cgroup = 1;     // perf: `attr->cgroup = track && !perf_missing_features.cgroup`
    attr.task = 1;
    // With dwarf call chains the data mappings too (MMAP2 records with
    // PERF_RECORD_MISC_MMAP_DATA), as perf 6.1: record_opts__parse_callchain
    // sets sample_address "for DWARF unwind", and evsel__config then sets
    // `attr->mmap_data = track` on the tracking event. perf's unwinder
    // (libunwind, libdw) reads a binary's .eh_frame_hdr at its address in
    // the process: in a read-only segment, not an executable one, in a
    // binary linked with -z separate-code (Debian's /usr/bin/gzip). Without
    // that mapping perf says "unwind: no map for 0x..." and every chain
    // stops at the sampled function (issue 19: gzip, 0 of 2,712 samples
    // with 3 or more user frames, perf's own file 2,473 of 2,475).
    // perf 6.1 also samples ADDR and DATA_SRC for it (D14 in the
    // side-by-side harness): not needed to unwind, and 16 zero bytes per
    // sample of a software event; later perf keeps the data mmaps only.
    if (o.call_graph == CallGraph::dwarf || o.sample_addr) attr.mmap_data = 1;  // -d: as perf's evsel__config
    // --switch-events: on the tracking event, as perf's evsel__config.
    if (o.switch_events) attr.context_switch = 1;
  }
  // --all-user, --all-kernel: as perf's evsel__config, over the modifiers
  // (those two bits only).
  if (o.all_user) {
    attr.exclude_kernel = 1;
    attr.exclude_user = 0;
  }
  if (o.all_kernel) {
    attr.exclude_kernel = 0;
    attr.exclude_user = 1;
  }
  attr.disabled = 1;
  if (o.command_target()) {
    attr.inherit = o.no_inherit ? 0 : 1;
    // With -D only the side-band event starts at exec; the others after
    // the delay (perf: evsel__config leaves enable_on_exec to the events
    // when !opts->initial_delay, and gives it to the tracking dummy).
    attr.enable_on_exec = !o.delayed() || first ? 1 : 0;
  }
  // As perf -p and -u: threads and children started later too.
  if ((!o.pids.empty() || o.uid >= 0) && !o.no_inherit) attr.inherit = 1;
  if (o.overwrite) attr.write_backward = 1;
  return "";
}

// The modifier S, as perf 6.1's evsel__config: an event with it samples
// the counters' values too (PERF_SAMPLE_READ, each with its id); in a
// group of more than one, the whole group's (PERF_FORMAT_GROUP), without
// inherit (a group read is of one task's counters); and the members of a
// group whose leader has it do not sample (period 0, no frequency): the
// leader's samples carry their counts (perf's leader sampling: perf report
// makes each member's samples of them).
std::string apply_sample_read(const RecordOptions& o, const std::vector<bool>& sample_read,
                              std::vector<EventAttr>& attrs) {
  VERIFY(sample_read.size() == attrs.size());
  std::vector<std::size_t> members(attrs.size(), 1);  // per leader: its group's size
  for (const EventAttr& e : attrs) {
    if (e.leader >= 0) members[static_cast<std::size_t>(e.leader)]++;
  }
  for (std::size_t i = 0; i < attrs.size(); i++) {
    if (!sample_read[i]) continue;
    EventAttr& e = attrs[i];
    if (o.overwrite) {
      return "-e " + e.name + ": the modifier S (sample read) with --overwrite: not supported (the members of a "
             "group that reads would write forward into backward rings)";
    }
    if (o.cut_stacks != RecordOptions::CutStacks::off) {
      return "-e " + e.name + ": the modifier S (sample read) with --cut-stacks: not supported (the cutter finds "
             "the stack dump from sample_type alone, and READ's size is not in it)";
    }
    const std::size_t leader = e.leader >= 0 ? static_cast<std::size_t>(e.leader) : i;
    e.attr.sample_type |= PERF_SAMPLE_READ;
    e.attr.read_format |= PERF_FORMAT_ID;
    if (members[leader] > 1) {
      e.attr.read_format |= PERF_FORMAT_GROUP;
      e.attr.inherit = 0;
    }
  }
  for (EventAttr& e : attrs) {
    if (e.leader < 0 || !sample_read[static_cast<std::size_t>(e.leader)]) continue;
    e.attr.freq = 0;
    e.attr.sample_period = 0;
    e.attr.sample_type = attrs[static_cast<std::size_t>(e.leader)].attr.sample_type;
  }
  return "";
}

}  // namespace

std::string make_trigger_attrs(const RecordOptions& o, std::vector<perf_event_attr>& out) {
  out.clear();
  for (const std::string& event : o.switch_output_events) {
    perf_event_attr attr{};
    attr.size = sizeof attr;
    if (std::string problem = parse_event(event, attr); !problem.empty()) {
      return "--switch-output-event: " + without_event_option(problem);
    }
    // Each hit of a tracepoint, as perf's (period 1); any other event each
    // occurrence unless its period= or freq= term says otherwise, where
    // perf's parse_events leaves period 0 and the event never fires.
    if (attr.sample_period == 0) {
      attr.freq = 0;
      attr.sample_period = 1;
    }
    attr.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
    attr.sample_id_all = 1;
    // A wakeup at every record, as perf's evlist__set_cb.
    attr.watermark = 1;
    attr.wakeup_watermark = 1;
    attr.disabled = 1;
    out.push_back(attr);
  }
  return "";
}

namespace {

// perf's record__open for -D: "we need to add a dummy event so that we can
// track PERF_RECORD_MMAP while we wait for the initial delay to enable the
// real events". Kernel side-band too unless every event is user-space only
// (a dummy counting the kernel needs the permission).
std::string add_delay_dummy(const RecordOptions& o, std::uint64_t mask, std::vector<EventAttr>& attrs) {
  bool all_user = true;
  for (const std::string& event : o.events) {
    perf_event_attr probe{};
    EventModifiers extra;
    if (std::string problem = parse_event(event, probe, &extra); !problem.empty()) return problem;
    all_user = all_user && (probe.exclude_kernel != 0 || o.all_user);
  }
  EventAttr dummy;
  dummy.name = all_user ? "dummy:u" : "dummy:HG";
  EventModifiers none;
  if (std::string problem = make_event_attr(o, mask, all_user ? "dummy:u" : "dummy", true, dummy.attr, none);
      !problem.empty()) {
    return problem;
  }
  if (!all_user) dummy.attr.exclude_guest = 0;  // :HG, as perf names its tracking dummy
  attrs.push_back(dummy);
  return "";
}

// An event's name as perf gives it: the text as written (cpu-clock:k), but
// a tracepoint's SYSTEM:NAME without its modifiers (perf's evsel has the
// tracepoint's name from the start) and a breakpoint's mem:ADDR without
// what follows a length.
std::string perf_name(const std::string& text) {
  if (is_tracepoint(text)) return text.substr(0, text.find(':', text.find(':') + 1));
  if (is_breakpoint(text) && text.find('/') != std::string::npos) return text.substr(0, text.find('/'));
  return text;
}

// perf 6.1 applies a group's modifiers to each member's attr as it already
// is (parse_events__modifier_group: get_event_modifier from the evsel),
// where a member without modifiers of its own excludes guests
// (event_attr_init): only the group's G or H undo that.
// ({cpu-clock,page-faults}:k: exclude_guest on both, in perf's file.)
void keep_member_exclude_guest(const std::string& own_text, const std::string& group_modifiers,
                               perf_event_attr& attr) {
  if (group_modifiers.empty() || group_modifiers.find_first_of("GH") != std::string::npos) return;
  perf_event_attr own{};
  EventModifiers own_extra;
  if (parse_event(own_text, own, &own_extra).empty() && own.exclude_guest != 0) attr.exclude_guest = 1;
}

}  // namespace

std::string make_attrs(const RecordOptions& o, std::vector<EventAttr>& out) {
  if (std::string problem = check_options(o); !problem.empty()) return problem;
  std::uint64_t mask = 0;
  if (o.call_graph == CallGraph::dwarf && !user_register_mask(mask)) {
    return "--call-graph dwarf: not supported on this architecture; use fp";
  }
  std::vector<EventAttr> attrs;
  if (o.delayed()) {
    if (std::string problem = add_delay_dummy(o, mask, attrs); !problem.empty()) return problem;
  }
  std::map<int, int> leaders;  // group number -> the leader's index in attrs
  std::vector<bool> sample_read(attrs.size(), false);
  for (std::size_t i = 0; i < o.events.size(); i++) {
    EventAttr e;
    e.name = perf_name(o.events[i]);  // as perf: without the group's modifiers
    const int group = i < o.event_groups.size() ? o.event_groups[i] : -1;
    const std::string modifiers =
        group >= 0 && static_cast<std::size_t>(group) < o.group_modifiers.size() ? o.group_modifiers[group] : "";
    EventModifiers extra;
    if (std::string problem =
            make_event_attr(o, mask, with_modifiers(o.events[i], modifiers), attrs.empty(), e.attr, extra);
        !problem.empty()) {
      return problem;
    }
    e.weak_group = extra.weak_group;
    if (!extra.name.empty()) e.name = extra.name;  // name=, as perf names it
    sample_read.push_back(extra.sample_read);
    keep_member_exclude_guest(o.events[i], modifiers, e.attr);
    if (group >= 0) {
      const auto [it, first] = leaders.emplace(group, static_cast<int>(attrs.size()));
      if (!first) {
        // A member: the leader enables and disables the group (perf's
        // evsel__config: disabled and enable_on_exec for leaders only).
        e.leader = it->second;
        e.attr.disabled = 0;
        e.attr.enable_on_exec = 0;
      }
    }
    attrs.push_back(e);
  }
  if (std::string problem = apply_sample_read(o, sample_read, attrs); !problem.empty()) return problem;
  // --overwrite with one event: perf's sample layout, neither IDENTIFIER
  // (one event needs none) nor CPU (perf samples it with -a, -C or
  // --sample-cpu), so that a snapshot of the same ring holds as many
  // samples as perf's (40-byte cpu-clock samples where ours were 56 bytes:
  // 0.71x as many, D21 until 2026-11-27). An overwrite ring has no LOST
  // records, which the read-back pairs with the samples' CPUs.
  if (o.overwrite && attrs.size() == 1) {
    if (!o.sample_identifier) attrs[0].attr.sample_type &= ~std::uint64_t{PERF_SAMPLE_IDENTIFIER};
    if (!o.cpu_wide() && !o.sample_cpu) attrs[0].attr.sample_type &= ~std::uint64_t{PERF_SAMPLE_CPU};
  }
  out = std::move(attrs);
  return "";
}

}  // namespace ringsim::real
