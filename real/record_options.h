// The recorder's options: the command line (CLI11), their checks, and the
// perf_event_attr they describe.
//
// Every value is checked; a value out of range is an error naming the
// option and the range, never clamped.
#pragma once

#include <sys/types.h>

#include <linux/perf_event.h>

#include <cstdint>
#include <ctime>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "real/thread_priority.h"

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
// --switch-output=TIME: 10 ms .. 30 days.
inline constexpr std::uint64_t kSwitchOutputMinNs = 10'000'000;
inline constexpr std::uint64_t kSwitchOutputMaxNs = std::uint64_t{30} * 86'400 * 1'000'000'000;
inline constexpr std::uint32_t kSwitchMaxFilesMax = 1'000'000;
inline constexpr std::uint64_t kHeaderIntervalMaxMs = 3'600'000;
// 10 s: a checkpoint's timed read and write, each second, put the recorder
// in its own -a profile 2.5 times as often as perf is in its own (60
// idle runs of -a -F 4000 -- sleep 1: 62 samples against 22); every 10 s
// it is at perf's level (33; docs/recorder.md, "Self-sampling"). kill -9
// then loses at most about 20 s (perf's own file is unreadable after it).
inline constexpr std::uint64_t kHeaderIntervalDefaultMs = 10'000;
inline constexpr std::uint64_t kDelayMaxMs = 3'600'000;  // -D: an hour
// Without a wakeup from the rings, the reading thread reads them once per
// header interval (what a checkpoint covers must be written first), or
// every kReadIntervalNoCheckpointsMs with --header-interval-ms 0; the
// writing thread looks at the staging buffer as often, at most every
// kWriterWaitMaxMs (and at once when kWriterWakeMaxBytes are staged). Every
// wakeup is CPU time of the recorder, which then shows in its own -a
// profile: reading every 100 ms (the default until 2026-11-25) and the
// writer looking every 10 ms, it had 5x perf's own samples; reading every
// second (until 2026-11-26), 2.5x (docs/recorder.md, "Self-sampling").
inline constexpr std::uint64_t kReadIntervalNoCheckpointsMs = 10'000;
inline constexpr std::uint64_t kWriterWaitMaxMs = 1000;
// The writer writes at least this often in bytes (perf writes each ring's
// half at its watermark, 256 KiB by default): a full disk keeps what came
// before the last such write, a --switch-output file ends near its size.
inline constexpr std::uint64_t kWriterWakeMaxBytes = std::uint64_t{512} << 10;
// The staging buffer's default size: this many times the rings' total
// size, within [kStagingDefaultMinBytes, kStagingDefaultMaxBytes].
// --staging SIZE: kStagingMinBytes..kStagingMaxBytes, and at least twice a
// ring's size.
inline constexpr std::uint64_t kStagingRingMultiple = 16;
inline constexpr std::uint64_t kStagingDefaultMinBytes = std::uint64_t{4} << 20;
inline constexpr std::uint64_t kStagingDefaultMaxBytes = std::uint64_t{512} << 20;
inline constexpr std::uint64_t kStagingMinBytes = std::uint64_t{8} << 10;
inline constexpr std::uint64_t kStagingMaxBytes = std::uint64_t{64} << 30;
// -e may name this many events in all (perf has no fixed limit; each one is
// a file descriptor per CPU and task).
inline constexpr std::size_t kEventsMax = 64;
// -p and -t may name this many tasks in all.
inline constexpr std::size_t kTasksMax = 1024;

struct RecordOptions {
  std::string output = "perf.data";
  bool system_wide = false;
  // NAME[:MODIFIERS] each, as given (-e a,b and repeated -e), in order.
  std::vector<std::string> events = {"cpu-clock"};
  // Per event: its group's number ({a,b}: the first is the leader), or -1;
  // empty: no groups.
  std::vector<int> event_groups;
  std::vector<std::string> group_modifiers;  // per group number: {a,b}:MODIFIERS's, for each member
  // Per event (or empty): its tracepoint filter's parts, in the order
  // given: --filter's text, or --exclude-perf's (the recorder's own
  // threads, known only when the events start); compose_filter() makes the
  // filter of them. No part: no filter.
  struct FilterPart {
    std::string text;           // --filter
    bool exclude_self = false;  // --exclude-perf
    bool operator==(const FilterPart&) const = default;
  };
  std::vector<std::vector<FilterPart>> event_filters;
  std::string cpu_list;                // -C: these CPUs only (system-wide on them); "" for all
  std::vector<int> pids;               // -p: these processes (every thread, and what they start)
  std::vector<int> tids;               // -t: these threads only
  // -u/--uid: every process of this user (each thread, and what they
  // start), as perf 6.1's thread_map__new_by_uid; -1: none. uid_text: as given.
  long uid = -1;
  std::string uid_text;
  std::uint64_t freq_hz = kFreqDefaultHz;  // used when period == 0
  bool freq_given = false;             // -F given (a tracepoint samples every event unless -F or -c)
  bool strict_freq = false;            // --strict-freq: -F above the kernel's maximum refused, not lowered
  std::uint64_t freq_lowered_from = 0; // -F above the maximum: the frequency asked, lowered to the maximum (perf's warning)
  std::uint64_t period = 0;            // -c; 0: frequency mode
  CallGraph call_graph = CallGraph::none;
  std::uint32_t dwarf_stack_bytes = kDwarfStackDefaultBytes;
  std::uint64_t mmap_pages = kMmapPagesDefault;
  std::uint32_t aio_cblocks = kAioDefault;  // 0: serial
  bool overwrite = false;
  std::uint64_t switch_output_bytes = 0;  // 0: one file
  std::uint64_t max_size_bytes = 0;       // --max-size: stop once the open file holds this much data (0: no limit)
  // --switch-output=signal: a new file at each SIGUSR2 (with --overwrite:
  // each snapshot its own file, as without it).
  bool switch_output_signal = false;
  // --switch-output=TIME (perf's Ns, Nm, Nh, Nd; ours also Nms): a new
  // file every TIME (with --overwrite: a snapshot every TIME, each its own
  // file). 0: none.
  std::uint64_t switch_output_ns = 0;
  // --switch-output-event: each record of these events (expanded as -e's,
  // tracepoints from globs) asks for a new file, as SIGUSR2 does (perf's
  // side-band thread); sets switch_output_signal. Empty: none.
  std::vector<std::string> switch_output_events;
  // --switch-max-files=N: at most N files are kept, the oldest removed as
  // a new one is finished (perf's). 0: all.
  std::uint32_t switch_max_files = 0;
  // Whether the output is split into several files, by any means.
  bool rotates() const { return switch_output_bytes > 0 || switch_output_signal || switch_output_ns > 0 || overwrite; }
  // How often the header is rewritten while recording, so that a file cut
  // short (kill -9) is readable up to its last complete write. 0: only at
  // the end.
  std::uint64_t header_interval_ms = kHeaderIntervalDefaultMs;
  // SCHED_FIFO priority of the recorder (1..99), as perf record -r; 0: the
  // normal scheduler. The command keeps the normal one.
  std::uint32_t realtime_priority = 0;
  // --staging: a reading thread moves the rings' records into a staging
  // buffer of staging_bytes (0: the default size, see kStagingRingMultiple)
  // and the main thread writes them (core/staging.h). staged = false
  // (--staging off): one thread reads and writes, as before.
  bool staged = true;
  std::uint64_t staging_bytes = 0;
  // --readers: one reading thread per CPU with rings (cpu, the default),
  // each pinned to its CPU, or one for every ring (one). Staged normal-mode
  // recordings that do not rotate files only; the others read with one.
  // readers_help: each per-CPU thread also drains the other CPUs' rings it
  // can lock (cpu); not with cpu-own.
  bool readers_per_cpu = true;
  bool readers_help = true;
  // --reader-priority: the reading thread's scheduling (staged only).
  ThreadPriority reader_priority;
  bool reader_priority_given = false;
  // --cut-stacks (dwarf, staged): off, pressure (cut the user stack dumps
  // while the staging buffer is more than half full), or always to
  // cut_stack_bytes.
  enum class CutStacks : std::uint8_t { off, pressure, always };
  CutStacks cut_stacks = CutStacks::off;
  std::uint32_t cut_stack_bytes = 0;
  // -z/--compression-level: zstd level 1..22 (0: not compressed); the
  // data is written as PERF_RECORD_COMPRESSED records (real/zstd_records.h)
  // by the writer (main) thread, so it needs the staging buffer.
  int compression_level = 0;
  // -D/--delay: the events sample from this many ms after the command
  // was let go (after the start with -a, -p, -t), as perf's -D; a dummy
  // event records the side-band (COMM, MMAP, ...) from the start, as
  // perf's. 0: at once.
  std::uint64_t delay_ms = 0;
  // -D -1: the events (but the side-band dummy) start disabled until a
  // --control "enable" (perf's initial_delay -1).
  bool start_disabled = false;
  // Whether the events wait (-D MS or -D -1) with a side-band dummy first.
  bool delayed() const { return delay_ms > 0 || start_disabled; }
  // -G/--cgroup: per event (in `events` order) the cgroup it counts in,
  // a name under the cgroup mount ("" for none); empty: no -G. With -a.
  std::vector<std::string> cgroups;
  // --control fifo:CTL[,ACK] or fd:CTL[,ACK] (real/control.h); "" for none.
  std::string control;
  bool quiet = false;                 // only errors
  // -v, -vv (perf's): 1 prints the settings perf's -v prints (nr_cblocks,
  // comp level, mmap size); 2 also every perf_event_open with its attr, as
  // perf's -vv. -q wins (as perf's, whose -q sets verbose -1).
  int verbose = 0;
  // -k: the clock the kernel stamps samples with (perf's parse_clockid:
  // monotonic, monotonic_raw, realtime, boottime, tai, their short names
  // mono, raw, real, boot, a CLOCK_ prefix, or the number); CLOCKID and
  // CLOCK_DATA say which, with a time-of-day reference.
  int clockid = CLOCK_MONOTONIC;
  bool no_inherit = false;            // -i/--no-inherit: the command's children and new threads are not recorded
  // --per-thread: one ring per thread (cpu -1), with no inherit (the kernel
  // maps an inherited event of cpu -1 for no one), as perf's dummy cpu
  // map; per_thread_ignored: given with -a/-C, which perf lets win.
  bool sample_cpu = false;  // --sample-cpu: CPU sampled with --overwrite and one event too (else always)
  // --sample-identifier: IDENTIFIER sampled with --overwrite and one event
  // too (else always), as perf's evsel__config (use_sample_identifier).
  bool sample_identifier = false;
  bool per_thread = false;
  bool per_thread_ignored = false;
  bool switch_events = false;         // --switch-events: context_switch on the tracking event
  bool all_user = false;              // --all-user: exclude_kernel on every event
  bool all_kernel = false;            // --all-kernel: exclude_user on every event
  bool sample_period = false;         // -P: PERF_SAMPLE_PERIOD with -c too
  bool raw_samples = false;           // -R: PERF_SAMPLE_RAW on every event
  // Sample fields and counts as perf 6.1's evsel__config sets them:
  bool sample_addr = false;           // -d/--data: ADDR and DATA_SRC; mmap_data on the tracking event
  bool sample_phys_addr = false;      // --phys-data: PHYS_ADDR
  bool sample_weight = false;         // -W/--weight: WEIGHT_STRUCT on x86 (perf's arch_evsel__set_sample_weight), else WEIGHT
  bool sample_transaction = false;    // --transaction: TRANSACTION
  bool sample_data_page_size = false;  // --data-page-size: DATA_PAGE_SIZE
  bool sample_code_page_size = false;  // --code-page-size: CODE_PAGE_SIZE
  std::uint64_t user_regs = 0;        // --user-regs: REGS_USER, sample_regs_user |= this (not on a dummy)
  std::uint64_t intr_regs = 0;        // -I/--intr-regs: REGS_INTR, sample_regs_intr (not on a dummy)
  bool running_time = false;          // --running-time: read_format TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING
  bool no_samples = false;            // -n/--no-samples: sample_freq (sample_period) 0: counting only
  bool inherit_stat = false;          // -s/--stat: inherit_stat, read_format TOTAL_TIMEs | ID (PERF_RECORD_READ per task)
  std::uint64_t branch_stack = 0;     // -b (ANY), -j FILTERS: BRANCH_STACK, branch_sample_type (not on a dummy)
  // The build-id cache (perf's ~/.debug layout) the hit DSOs are copied
  // into; "" for $HOME/.debug. no_buildid_cache (-N): not filled.
  std::string buildid_dir;
  bool no_buildid_cache = false;
  bool buildid_all = false;           // --buildid-all: BUILD_ID for every mapped DSO, not only those samples hit (perf's)
  bool no_buildid = false;            // -B/--no-buildid: no BUILD_ID section, no cache (perf's rec->no_buildid)
  // --buildid-mmap (default) / --no-buildid-mmap: attr.build_id on the
  // side-band event where the kernel has it, so MMAP2 records carry
  // build-ids; without, they are read from the ELF files at the end (perf's
  // default). On Linux 6.x one event with build_id sets the misc bit on
  // every event's MMAP2 (docs/fidelity.md, row 20): a perf 6.1 recording
  // beside such a one aborts; --no-buildid-mmap spares it.
  bool buildid_mmap = true;
  // --timestamp-filename: each file, when finished, renamed
  // FILE.<YYYYmmddHHMMSScc> (local time), as perf's; not in pipe mode
  // (one warning line, as perf). Without it ours numbers FILE, FILE.1, ...
  bool timestamp_filename = false;
  bool kernel_callchains = false;     // --kernel-callchains: with call graphs, exclude_callchain_user (perf's)
  bool user_callchains = false;       // --user-callchains: with call graphs, exclude_callchain_kernel (perf's)
  // --synth (perf's): synthesize the running tasks' COMM (and NAMESPACES),
  // and their MMAP2 (which needs the tasks'); both by default.
  bool synth_tasks = true;
  bool synth_mmaps = true;
  // --proc-map-timeout: how long one task's /proc maps may take to read
  // before its mappings are cut (perf's default 500 ms; unsigned int there).
  std::uint32_t proc_map_timeout_ms = 500;
  bool synth_cgroups = true;          // --synth's cgroup kind (all by default): CGROUP records with --all-cgroups
  // --all-cgroups: PERF_SAMPLE_CGROUP on every event, attr.cgroup on the
  // side-band event (the kernel's CGROUP records of cgroups made while
  // recording), and a CGROUP record per existing cgroup synthesized at each
  // file's start (perf's record_cgroup).
  bool all_cgroups = false;
  bool namespaces = false;            // --namespaces: attr.namespaces on the side-band event, NAMESPACES synthesized (perf's)
  bool no_buffering = false;          // --no-buffering: wakeup_events 1, watermark 0 on every event (perf's)
  bool dry_run = false;               // --dry-run: the options and events checked, nothing opened or written
  std::vector<std::string> command;   // empty with -a, -C, -p or -t alone
  std::vector<std::string> argv;      // the whole command line (CMDLINE feature)

  // Attached to running tasks (-p, -t) rather than a command or CPUs.
  bool attach() const { return !pids.empty() || !tids.empty() || uid >= 0; }
  // Every task on some CPUs (-a or -C).
  bool cpu_wide() const { return system_wide || !cpu_list.empty(); }
  // The COMMAND is the recording's target (not only its duration).
  // -o -: perf's pipe format to standard output.
  bool pipe_output() const { return output == "-"; }
  bool command_target() const { return !command.empty() && !attach() && !cpu_wide(); }
};

// One event of the recording: its attr and its name as given.
struct EventAttr {
  perf_event_attr attr{};
  std::string name;
  int leader = -1;  // a group member: its leader's index among the attrs
  // The modifier W (a weak group): when the kernel refuses this member in
  // its group (EINVAL, EBADF), the group is broken up and its events
  // opened alone, as perf's record__open (evlist__reset_weak_group).
  bool weak_group = false;
};

// What an event's modifiers ask beyond its attr's bits: S (sample read:
// the counters' values in each sample, PERF_SAMPLE_READ; in a group the
// leader samples for all, as perf's leader sampling) and W (weak group).
struct EventModifiers {
  bool sample_read = false;
  bool weak_group = false;
  // The term name=NAME of NAME/TERMS/ or PMU/TERMS/: the event's name in
  // the file, as perf's ("" for none).
  std::string name;
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

// Parses "NAME[:MODIFIERS]" or a tracepoint "SYSTEM:NAME[:MODIFIERS]"
// (type PERF_TYPE_TRACEPOINT, config its id in tracefs; one tracepoint,
// not a glob: see expand_events) (modifiers: u = user space, k = kernel;
// "u" alone excludes the kernel and the hypervisor, as in perf). Fills type,
// config and the exclude_* bits of `attr` (exclude_guest as perf 6.1: set
// without modifiers, and with them only when u is one). "" or one line
// naming the problem. The modifiers S and W and the term name= go to
// *extra; with extra null they are refused (events other than -e's).
std::string parse_event(std::string_view text, perf_event_attr& attr, EventModifiers* extra = nullptr);

// Whether an -e text names a tracepoint: SYSTEM:NAME[:MODIFIERS] whose
// SYSTEM is not one of event_names() (cpu-clock:u is an event with a
// modifier, sched:sched_switch a tracepoint).
bool is_tracepoint(std::string_view text);

// The modifiers perf 6.1 names an event by when it names it from its attr
// (evsel__add_modifiers: after a fallback, cycles:u becomes cpu-clock:uH):
// ":" and k, u, h for the contexts counted when any is excluded, p per
// precise level, H and G for host and guest when a host is excluded or
// exclude_guest is what those modifiers make the default; "" for none.
std::string perf_modifier_suffix(const perf_event_attr& attr);

// Whether an -e text names a hardware breakpoint: mem:ADDR[/LEN][:ACCESS]
// (perf's syntax; ACCESS of r, w, x: watched reads, writes, executions).
bool is_breakpoint(std::string_view text);

// The filter of an event's parts as perf builds it: the first part alone,
// each next one appended as "(so far) && (next)" (evsel__append_tp_filter);
// an --exclude-perf part is "common_pid != T" for each of `own_threads`
// (the recorder's threads: perf's is getpid() alone), joined by " && ".
// "" for no part.
std::string compose_filter(const std::vector<RecordOptions::FilterPart>& parts, std::span<const pid_t> own_threads);

// One -e's comma-separated list of events (commas inside a PMU event's
// terms, software/config=2,period=3/, do not split it), appended to out.
// Groups {a,b}[:MODIFIERS]: *groups gets, per event appended, its group's
// number (numbered on from the largest there) or -1; with groups null a
// group is an error. The group's modifiers go to (*group_modifiers)[its
// number], or, with group_modifiers null, are added to each member's own.
// "" or the problem.
std::string split_event_list(std::string_view text, std::vector<std::string>& out,
                             std::vector<int>* groups = nullptr, std::vector<std::string>* group_modifiers = nullptr);

// The -e texts (each a comma-separated list) with each tracepoint glob ('syscalls:sys_enter_write*')
// replaced by the tracepoints it matches, in tracefs's order (perf's).
// "" or the problem (no tracefs, no match, more than kEventsMax events).
// groups_out (if not null): per event, its group number or -1.
std::string expand_events(const std::vector<std::string>& texts, std::vector<std::string>& out,
                          std::vector<int>* groups_out = nullptr,
                          std::vector<std::string>* group_modifiers_out = nullptr);

// "100M" -> 104857600. Suffixes B, K, M, G, T (powers of 1024), or none
// (bytes). "" or the problem.
std::string parse_size(std::string_view text, std::uint64_t& bytes_out);
// --switch-output's value as perf 6.1's switch_output_setup reads it:
// "signal"; a size (N with B, K, M, G, T; upper case, and ours also k, b,
// g, t); else a time (N with s, m, h, d, as perf's tags_time; ours also
// ms). "" or the problem.
std::string parse_switch_output(std::string_view text, std::uint64_t& bytes_out, std::uint64_t& ns_out,
                                bool& signal_out);

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

// The attr of every event, in -e order: the event, its sampling (frequency
// or period), sample_type IP | TID | TIME | CPU | PERIOD | IDENTIFIER
// (+ CALLCHAIN; + REGS_USER | STACK_USER with dwarf), sample_id_all,
// time stamps of -k's clock (use_clockid; CLOCK_MONOTONIC by default), disabled, host only; the
// first event also asks for the side-band records perf needs (mmap, mmap2,
// comm, comm_exec, task); inherit for a command and -p, enable_on_exec for
// a command; write_backward for --overwrite. With -D (delayed()) a
// dummy event comes first ("dummy:HG", or "dummy:u" when every event
// excludes the kernel) and asks for the side-band records, enabled at the
// command's exec (or at the start); the events asked for are enabled
// after the delay (enable_on_exec 0), as perf adds its tracking dummy for
// -D. "" or the problem.
std::string make_attrs(const RecordOptions& options, std::vector<EventAttr>& out);
// --switch-output-event's events: each samples every hit or occurrence
// (unless a period= or freq= term), TIME and CPU, woken at each record,
// disabled until the recording starts.
std::string make_trigger_attrs(const RecordOptions& options, std::vector<perf_event_attr>& out);

// Splits "a,b" lists of -p/-t values into task ids. "" or the problem.
std::string parse_task_list(std::string_view option, std::string_view text, std::vector<int>& out);

}  // namespace ringsim::real
