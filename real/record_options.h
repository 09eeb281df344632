// The recorder's options: the command line (CLI11), their checks, and the
// perf_event_attr they describe.
//
// Every value is checked; a value out of range is an error naming the
// option and the range, never clamped.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ringsim::real {

enum class CallGraph : std::uint8_t { none, fp, dwarf };

// Control blocks per ring for --aio, and the default. 0 means serial
// pwrite(2) from the loop's thread. The default is serial: see
// docs/recorder.md ("Choosing --aio") for the measurements behind it.
inline constexpr std::uint32_t kAioMax = 4;
inline constexpr std::uint32_t kAioDefault = 0;

inline constexpr std::uint64_t kFreqDefaultHz = 4000;      // perf's default -F
inline constexpr std::uint64_t kMmapPagesDefault = 128;    // 512 KiB per ring with 4 KiB pages, perf's default
inline constexpr std::uint64_t kMmapPagesMax = std::uint64_t{1} << 20;  // 4 GiB per ring with 4 KiB pages
inline constexpr std::uint32_t kDwarfStackDefaultBytes = 8192;  // perf's default dump size
inline constexpr std::uint32_t kDwarfStackMaxBytes = 65528;     // the largest multiple of 8 in a u16
inline constexpr std::uint64_t kSwitchOutputMinBytes = 4096;
inline constexpr std::uint64_t kSwitchOutputMaxBytes = std::uint64_t{1} << 50;
inline constexpr std::uint64_t kHeaderIntervalMaxMs = 3'600'000;
inline constexpr std::uint64_t kHeaderIntervalDefaultMs = 100;

struct RecordOptions {
  std::string output = "perf.data";
  bool system_wide = false;
  std::string event = "cpu-clock";     // NAME[:MODIFIERS], as given
  std::uint64_t freq_hz = kFreqDefaultHz;  // used when period == 0
  std::uint64_t period = 0;            // -c; 0: frequency mode
  CallGraph call_graph = CallGraph::none;
  std::uint32_t dwarf_stack_bytes = kDwarfStackDefaultBytes;
  std::uint64_t mmap_pages = kMmapPagesDefault;
  std::uint32_t aio_cblocks = kAioDefault;  // 0: serial
  bool overwrite = false;
  std::uint64_t switch_output_bytes = 0;  // 0: one file
  // How often the header is rewritten while recording, so that a file cut
  // short (kill -9) is readable up to its last complete write. 0: only at
  // the end.
  std::uint64_t header_interval_ms = kHeaderIntervalDefaultMs;
  // SCHED_FIFO priority of the recorder (1..99), as perf record -r; 0: the
  // normal scheduler. The command keeps the normal one.
  std::uint32_t realtime_priority = 0;
  bool quiet = false;                 // only errors
  std::vector<std::string> command;   // empty with -a alone
};

// A named event: perf_event_attr.type and .config.
struct EventName {
  const char* name;
  std::uint32_t type;
  std::uint64_t config;
  const char* help;
};

// The events -e accepts: the kernel's software events, and the generic
// hardware events (which need a PMU this machine may not have).
const std::vector<EventName>& event_names();

// Parses "NAME[:MODIFIERS]" (modifiers: u = user space, k = kernel; "u"
// alone excludes the kernel and the hypervisor, as in perf). Fills type,
// config and the exclude_* bits of `attr`. "" or one line naming the
// problem.
std::string parse_event(std::string_view text, perf_event_attr& attr);

// "100M" -> 104857600. Suffixes B, K, M, G, T (powers of 1024), or none
// (bytes). "" or the problem.
std::string parse_size(std::string_view text, std::uint64_t& bytes_out);

// "fp", "dwarf", "dwarf,SIZE". "" or the problem.
std::string parse_call_graph(std::string_view text, CallGraph& mode_out, std::uint32_t& stack_bytes_out);

// /proc/sys/kernel/perf_event_max_sample_rate, or 0 if unreadable.
std::uint64_t max_sample_rate_hz();

// Parses argv into `out`. Returns -1 to go on recording, 0 after --help
// (printed to stdout), or 64 after a usage error (one line on stderr:
// "ringsim-record: error: ... (see --help)").
int parse_record_command_line(int argc, char** argv, RecordOptions& out);

// Checks the combination (a command or -a, ...). "" or the problem.
std::string check_options(const RecordOptions& options);

// The attr every ring is opened with: the event, its sampling (frequency
// or period), sample_type IP | TID | TIME | CPU | PERIOD | IDENTIFIER
// (+ CALLCHAIN; + REGS_USER | STACK_USER with dwarf), sample_id_all, the
// side-band records perf needs (mmap, mmap2, comm, comm_exec, task),
// disabled; enable_on_exec and inherit for a command; write_backward for
// --overwrite. "" or the problem.
std::string make_attr(const RecordOptions& options, perf_event_attr& attr);

}  // namespace ringsim::real
