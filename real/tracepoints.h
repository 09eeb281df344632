// Tracepoint events (-e sched:sched_switch, -e 'syscalls:sys_enter_write*'),
// found in tracefs as perf 6.1 finds them, and the TRACING_DATA feature
// section perf script needs to print their fields.
//
// A tracepoint is SYSTEM:NAME, either part a glob (fnmatch: *, ?, [...]),
// optionally followed by :MODIFIERS. A glob expands to every matching
// event, in tracefs's directory order (perf's order, so that the two
// recorders' files list the same events in the same order).
//
// TRACING_DATA, as perf 6.1's tracing_data_get writes it (and
// trace_report reads it; all integers in this machine's order):
//   "\x17\x08\x44tracing", "0.6\0", endianness (u8, 0: little), sizeof
//   long (u8), page size (u32);
//   "header_page\0", u64 size, events/header_page;
//   "header_event\0", u64 size, events/header_event;
//   u32 count, then u64 size + format of each recorded ftrace event (none:
//   perf records only the tracepoints asked for);
//   u32 count of systems; per system, in directory order: its name and NUL,
//   u32 count, then u64 size + events/SYSTEM/NAME/format per event asked
//   for, in directory order;
//   u32 0 (kallsyms: perf 6.1 writes none);
//   u32 size + printk_formats;
//   u64 size + saved_cmdlines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ringsim::real {

// tracefs's mount point with its events/ directory: /sys/kernel/tracing,
// else /sys/kernel/debug/tracing; "" when neither is there.
std::string tracefs_root();

struct Tracepoint {
  std::string system;
  std::string name;
  std::string modifiers;  // "" or what followed the second ':'
  std::uint64_t id = 0;   // events/SYSTEM/NAME/id: the attr's config
  std::string full_name() const { return system + ":" + name; }
};

// The tracepoints `text` names (one, or each one a glob matches, in
// directory order), under `root` (a tracefs root). "" or the problem, one
// line naming the event ("no tracepoint matches ..." for a glob that
// matches nothing, "tracefs is not mounted ..." when root is "").
std::string find_tracepoints(const std::string& root, std::string_view text, std::vector<Tracepoint>& out);

// TRACING_DATA for these tracepoints (a recording's, any order, repeats
// allowed), read from `root` now. "" or the problem (a file that cannot be
// read).
std::string tracing_data(const std::string& root, const std::vector<Tracepoint>& tracepoints,
                         std::vector<std::byte>& out);

}  // namespace ringsim::real
