// PMU event syntax, as perf 6.1's parse-events reads it, from the PMUs in
// sysfs (/sys/bus/event_source/devices):
//   PMU/TERM[=VALUE],.../[MODIFIERS]    e.g. software/config=0/, intel_pt//u,
//                                       cpu/event=0x3c,umask=0/ on a machine with that PMU
//   rHEX                                a raw event of the CPU's PMU (PERF_TYPE_RAW)
// A TERM is config, config1 or config2 (the value as is), a format of the
// PMU (format/TERM: "config:0-7,21" puts the value's bits there, low bits
// first), an alias (events/TERM: a list of terms, applied in turn), or
// period=N / freq=N (this event's sampling, overriding -c/-F). name=NAME is
// taken out before (record_options: parse_event); perf's other terms
// (call-graph, stack-size, ...) are refused with one line naming the term.
#pragma once

#include <linux/perf_event.h>

#include <string>
#include <string_view>

namespace ringsim::real {

inline constexpr const char* kPmuRoot = "/sys/bus/event_source/devices";

// Whether `text` is in this syntax: a '/' in it, or r followed by hex digits.
bool is_pmu_event(std::string_view text);

// Fills type, config, config1, config2 and (period=/freq=) sample_period or
// freq and sample_freq of `attr`; leaves the rest. `modifiers_out`: what
// follows the closing '/' ("" if nothing; a ':' there is refused, as perf). "" or one line
// naming the problem.
std::string parse_pmu_event(std::string_view text, perf_event_attr& attr, std::string& modifiers_out,
                            const std::string& root = kPmuRoot);

// A named event with terms, NAME/TERMS/[MODIFIERS] (perf's value_sym
// '/' event_config '/': cpu-clock/period=100000/u): the terms period=N and
// freq=N into `attr` (type and config are the caller's, from the name);
// others refused with one line naming the term.
std::string parse_symbol_terms(std::string_view text, perf_event_attr& attr, std::string& modifiers_out);

}  // namespace ringsim::real
