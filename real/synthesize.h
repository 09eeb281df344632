// Records the recorder writes itself, so that perf's tools can name tasks
// and resolve symbols of what was already running when the recording
// started (as perf record does with perf_event__synthesize_*):
//   - PERF_RECORD_MMAP for the kernel: "[kernel.kallsyms]_text" at _text,
//     up to _etext, pid -1 (from /proc/kallsyms);
//   - per process in /proc: PERF_RECORD_COMM for each thread, and
//     PERF_RECORD_MMAP2 for each executable mapping in /proc/PID/maps
//     (anonymous executable mappings as "//anon", as perf names them);
//     with data maps (perf's mmap_data: --call-graph dwarf) each readable
//     one too, marked PERF_RECORD_MISC_MMAP_DATA, as perf 6.1's
//     perf_event__synthesize_mmap_events does with its mmap_data argument
//     (`if (prot[2] != 'x') { if (!mmap_data || prot[0] != 'r') continue;
//     event->header.misc |= PERF_RECORD_MISC_MMAP_DATA; }`): perf's DWARF
//     unwinder reads .eh_frame_hdr at its address, which a binary linked
//     with -z separate-code (Debian's) has in a read-only segment.
// New tasks, execs and mappings after the events are enabled come from the
// kernel itself (attr.comm, comm_exec, mmap, mmap2, task).
//
// Layout: each record ends with the sample_id trailer the attr implies
// (sample_id_all), zero-filled as perf fills it for synthesized records:
// time 0 (perf sorts them first), identifier 0 (perf maps it to the first
// event).
//
// Processes that exit during the scan are skipped; unreadable files are
// skipped (a process of another user without permission).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/records.h"

namespace ringsim::real {

// An executable mapping, as /proc/PID/maps describes it.
struct MapEntry {
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  std::uint64_t pgoff = 0;
  std::uint32_t major = 0;
  std::uint32_t minor = 0;
  std::uint64_t inode = 0;
  std::uint32_t prot = 0;   // PROT_READ | PROT_WRITE | PROT_EXEC
  std::uint32_t flags = 0;  // MAP_PRIVATE or MAP_SHARED
  std::string path;         // "" for anonymous
};

// Parses one line of /proc/PID/maps. false if it is not one.
bool parse_maps_line(std::string_view line, MapEntry& out);

// One namespace of a task: the device and inode of its /proc/TID/ns/NAME
// (the nsfs inode), as perf's perf_ns_link_info and the kernel's
// PERF_RECORD_NAMESPACES give them.
struct NamespaceLink {
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
};
// The kernel's order (NET_NS_INDEX .. CGROUP_NS_INDEX): net, uts, ipc,
// pid, user, mnt, cgroup.
inline constexpr std::size_t kNamespaces = 7;
// A task's namespaces from /proc/TID/ns (one left 0 where the kernel has
// no such namespace, as perf). false if the task is gone.
bool namespace_links(pid_t tid, NamespaceLink (&out)[kNamespaces]);

// One entry of PERF_RECORD_ID_INDEX: an event id, the index of its ring in
// the CPU list, its CPU and its task (-1: every task).
struct IdIndexEntry {
  std::uint64_t id = 0;
  std::uint64_t idx = 0;
  std::uint64_t cpu = 0;
  std::uint64_t tid = 0;
};
// PERF_RECORD_ID_INDEX, perf.data's own record type (no sample_id).
inline constexpr std::uint32_t kRecordIdIndex = 69;
static_assert(sizeof(IdIndexEntry) == 32);
// Entries in one record (its u16 size): 8 + 8 + 32 * n <= 65528.
inline constexpr std::size_t kIdIndexEntriesMax = 2047;

// Builds records in one buffer.
class RecordBuilder {
 public:
  RecordBuilder(std::uint64_t sample_type, bool sample_id_all);

  std::uint64_t trailer_bytes() const { return trailer_bytes_; }

  void add_comm(std::uint32_t pid, std::uint32_t tid, std::string_view comm);
  // PERF_RECORD_MMAP with pid -1 (the kernel).
  void add_kernel_mmap(std::uint64_t start, std::uint64_t length, std::uint64_t pgoff, std::string_view name);
  // `extra_misc`: PERF_RECORD_MISC_PROC_MAP_PARSE_TIMEOUT on the last
  // mapping read before --proc-map-timeout ran out.
  void add_mmap2(std::uint32_t pid, std::uint32_t tid, const MapEntry& map, std::uint16_t extra_misc = 0);
  // PERF_RECORD_NAMESPACES {pid, tid, nr, {dev, ino} per namespace} (--namespaces).
  void add_namespaces(std::uint32_t pid, std::uint32_t tid, std::span<const NamespaceLink> links);
  // PERF_RECORD_CGROUP {id, path} (--all-cgroups): a cgroup's id (its
  // file handle, as the kernel's cgroup id) and its path under the mount
  // ("/" for the root).
  void add_cgroup(std::uint64_t id, std::string_view path);
  // Which event each id is (perf writes it at the start of the data): as
  // many records as the entries need.
  void add_id_index(std::span<const IdIndexEntry> entries);
  // PERF_RECORD_LOST_SAMPLES {lost} for the event with `id` (in the
  // trailer's IDENTIFIER, the rest 0; with no IDENTIFIER in the
  // sample_type, which only one event may lack, no id), as perf record writes one per
  // event, CPU and thread at its end from read_format's PERF_FORMAT_LOST
  // (perf report's "Total Lost Samples").
  void add_lost_samples(std::uint64_t lost, std::uint64_t id);
  // Whole records written elsewhere (the kernel's, kept from the rings).
  // The caller guarantees they walk (counts() checks).
  void add_records(std::span<const std::byte> records);

  std::span<const std::byte> bytes() const { return bytes_; }
  // Counted by the core's walker over bytes() (which also checks them).
  core::RecordCounts counts() const;
  std::uint64_t records() const { return records_; }
  void clear();

 private:
  void append(const void* data, std::size_t size);
  void append_string(std::string_view text);  // NUL-terminated, padded to 8
  void finish_record(std::size_t start, std::uint32_t type, std::uint16_t misc);

  std::uint64_t trailer_bytes_ = 0;
  bool identifier_ = false;  // PERF_SAMPLE_IDENTIFIER in the trailer (its last u64)
  std::vector<std::byte> bytes_;
  std::uint64_t records_ = 0;
};

struct SynthesisStats {
  std::uint64_t processes = 0;
  std::uint64_t threads = 0;
  std::uint64_t maps = 0;
  std::uint64_t skipped = 0;  // exited during the scan, or unreadable
  // Processes whose maps took longer to read than --proc-map-timeout: their
  // MMAP2 records end early, the last one marked PROC_MAP_PARSE_TIMEOUT.
  std::uint64_t maps_cut = 0;
  pid_t first_cut = 0;  // the first such process
};

// The kernel's mapping. "" or a warning (kallsyms unreadable or hidden by
// kptr_restrict: kernel samples will not be resolved).
std::string synthesize_kernel_mmap(RecordBuilder& builder);

// Which mappings of a process are synthesized: the executable ones, or
// also every readable one (MISC_MMAP_DATA), as perf with mmap_data; or
// none (perf's --synth=task).
enum class MapKinds : std::uint8_t { executable, executable_and_data, none };

// How each process is synthesized: its mappings of `kinds`; with
// `namespaces` (--namespaces) a NAMESPACES record after each COMM; its
// maps read for at most `map_timeout_ns` (--proc-map-timeout, perf's 500 ms
// by default): as perf's perf_event__synthesize_mmap_events, once a line
// was read later than that, that mapping is written whatever its kind,
// marked PERF_RECORD_MISC_PROC_MAP_PARSE_TIMEOUT, and the rest is left out.
inline constexpr std::uint64_t kNoMapTimeout = UINT64_MAX;
struct ProcessSynthesis {
  MapKinds kinds = MapKinds::executable;
  bool namespaces = false;
  std::uint64_t map_timeout_ns = kNoMapTimeout;
};

// One process: COMM for each thread (and NAMESPACES, as perf's
// __event__synthesize_thread), then MMAP2 for its mappings. false if it
// exited (or is unreadable); the builder is then unchanged.
bool synthesize_process(pid_t pid, const ProcessSynthesis& how, RecordBuilder& builder, SynthesisStats& stats);
inline bool synthesize_process(pid_t pid, MapKinds kinds, RecordBuilder& builder, SynthesisStats& stats,
                               bool namespaces = false) {
  return synthesize_process(pid, ProcessSynthesis{kinds, namespaces, kNoMapTimeout}, builder, stats);
}

// A command held before its exec (pid = tid, one thread): its COMM from
// /proc (the name it was given, "perf-exec" for ringsim-record's as for
// perf's), then with `namespaces` its NAMESPACES, as perf's __cmd_record
// synthesizes its forked workload whatever --synth says (so that samples
// before the exec COMM are named). false if it is gone (nothing added).
bool synthesize_held_command(pid_t pid, RecordBuilder& builder, bool namespaces);

// --all-cgroups: a CGROUP record for every cgroup under `mount` (the
// directory tree, the root first, each directory before its children), as
// perf's perf_event__synthesize_cgroups; the number written. Bounded:
// kCgroupsMax directories; one that vanishes during the walk is skipped.
inline constexpr std::uint64_t kCgroupsMax = 100'000;
std::uint64_t synthesize_cgroups(const std::string& mount, RecordBuilder& builder);

// Every process in /proc.
void synthesize_all_processes(const ProcessSynthesis& how, RecordBuilder& builder, SynthesisStats& stats);

// `root` and its descendants now (from /proc/*/stat).
std::vector<pid_t> process_tree(pid_t root);

// The threads of process `pid` now (/proc/PID/task; empty if it does not exist).
std::vector<pid_t> threads_of(pid_t pid);
// The process thread `tid` belongs to (/proc/TID/status Tgid), or -1 if
// there is no such thread.
pid_t thread_group_of(pid_t tid);
// The processes whose /proc/PID belongs to `uid` (their effective user, as
// perf 6.1's thread_map__new_by_uid reads it: stat's st_uid), but
// `except` and processes that exited and are not reaped (zombies), in pid
// order.
std::vector<pid_t> processes_of_user(uid_t uid, pid_t except);

}  // namespace ringsim::real
