#include "real/recorder.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <span>
#include <string>
#include <sstream>
#include <thread>
#include <vector>

#include "core/drops.h"
#include "core/perf_data_pipe.h"
#include "core/stack_cut.h"
#include "core/verify.h"
#include "real/build_ids.h"
#include "real/clock.h"
#include "real/control.h"
#include "real/file_stats.h"
#include "real/host_facts.h"
#include "real/mapped_file.h"
#include "real/process.h"
#include "real/reading_threads.h"
#include "real/staging_sync.h"
#include "real/switch_trigger.h"
#include "real/synthesize.h"
#include "real/thread_priority.h"
#include "real/tracepoints.h"

// The core, compiled for the real backend with the file writer.
template class ringsim::core::TraceWriter<ringsim::real::RealDisk>;
template class ringsim::core::RecordLoop<ringsim::real::RealSession, ringsim::real::RecorderSink>;
template class ringsim::core::Staging<ringsim::real::ThreadSync>;
template class ringsim::core::RecordLoop<
    ringsim::real::RealSession, ringsim::core::StackCutter<ringsim::core::Staging<ringsim::real::ThreadSync>>>;

namespace ringsim::real {
namespace {

// The command gets this long to exit after SIGTERM, then SIGKILL.
constexpr std::uint64_t kCommandGraceNs = 5'000 * kNsPerMs;
// A round budget no recording reaches (2^62 rounds): the loop stays
// bounded without ending a long recording.
constexpr std::uint64_t kRoundsMax = std::uint64_t{1} << 62;
// The command's name between fork and exec, perf's (evlist.c), which the
// tools reading perf.data know (a process named so has not exec'd yet).
constexpr const char* kCommandCommBeforeExec = "perf-exec";

// The command: started held before exec, released once the events and the
// file are ready; from then on the session polls its pidfd with the rings
// (RealSession::watch_exit), and its exit is a stop request. No thread of
// the recorder's waits for it: ringsim-run's simulated kernel decides the
// exit inside that poll, and an -a recording does not sample a waiter
// (docs/recorder.md, "Self-sampling").
class Command {
 public:
  Command() = default;
  Command(const Command&) = delete;
  Command& operator=(const Command&) = delete;
  ~Command() { finish(); }

  // stdout_to_stderr: with -o - the recorder's standard output is the
  // stream, so the command's goes to standard error (as perf's workload).
  Error start(const std::vector<std::string>& argv, bool stdout_to_stderr) {
    ProcessOptions options;
    options.hold = true;
    options.prepare = [stdout_to_stderr] {
      // Named as perf names its workload before the exec
      // (evlist__prepare_workload: prctl(PR_SET_NAME, "perf-exec")), so
      // that the COMM synthesized for it (synthesize()) and samples taken
      // before the exec carry the name readers of perf.data know (and
      // not the recorder's). A prctl cannot fail for a valid name.
      ::prctl(PR_SET_NAME, kCommandCommBeforeExec);
      if (!stdout_to_stderr) return 0;
      // The recorder ignores SIGPIPE then (record()); the command gets the
      // default back (an ignored signal stays ignored across exec).
      ::signal(SIGPIPE, SIG_DFL);
      return ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0 ? 126 : 0;
    };
    return process_.start(argv, options);
  }

  pid_t pid() const { return process_.pid(); }

  // Lets it exec; from then on `session` polls for its exit. On the thread
  // that polls, which goes back to its rings at once: waiting here for the
  // exec (the child competes for a busy CPU) left that thread's ring
  // unread for milliseconds after the events started (the first LOST
  // record of -a recordings, 118 samples at the fp point). Whether the
  // exec failed is learnt in finish(), as perf learns it (its workload's
  // signal) after the events ran.
  Error go(RealSession& session) {
    session.watch_exit(process_.pidfd());
    const Error e = process_.release_without_waiting();
    if (e.ok()) released_ = true;
    return e;
  }

  // Ends it if it still runs (SIGTERM, then SIGKILL after kCommandGraceNs,
  // as perf does) and reaps it. Returns the exec's failure ("cannot run
  // ...", the status kExitCommandFailed), if it failed.
  Error finish() {
    if (!process_.started() || finished_) return Error{};
    if (released_ && !process_.has_exited()) process_.signal(SIGTERM);
    end_ = process_.wait(kCommandGraceNs);
    finished_ = true;
    // Reaped: the exec-error pipe has its errno, or EOF.
    return released_ ? process_.exec_outcome() : Error{};
  }

  // After finish(): whether it ran (was let go and exec'd), and how it ended.
  bool ran() const { return finished_ && released_ && process_.exec_error() == 0 && end_.reaped; }
  const WaitStatus& end() const { return end_; }

 private:
  Process process_;
  bool finished_ = false;
  bool released_ = false;
  WaitStatus end_;
};

// Where -G's cgroup names are, as perf's cgroupfs_find_mountpoint(...,
// "perf_event") finds it: a cgroup v1 mount with the perf_event
// controller, else the cgroup2 mount (/proc/self/mounts). "" or why not.
std::string cgroup_mount_for_events(std::string& mount_out) {
  std::ifstream mounts("/proc/self/mounts");
  std::string line, v2;
  // Bounded: a mount table of at most 100,000 lines is read.
  for (int n = 0; n < 100'000 && std::getline(mounts, line); n++) {
    std::istringstream words(line);
    std::string device, point, type, options;
    if (!(words >> device >> point >> type >> options)) continue;
    if (type == "cgroup" && ("," + options + ",").find(",perf_event,") != std::string::npos) {
      mount_out = point;
      return "";
    }
    if (type == "cgroup2" && v2.empty()) v2 = point;
  }
  if (v2.empty()) return "no cgroup file system with perf_event mounted (mount -t cgroup2 none /sys/fs/cgroup)";
  mount_out = v2;
  return "";
}

void print_line(const std::string& line) { std::fprintf(stderr, "ringsim-record: %s\n", line.c_str()); }
void print_error(const std::string& line) { std::fprintf(stderr, "ringsim-record: error: %s\n", line.c_str()); }

// The exit status for a failure to open or map the events.
int session_error_status(const Error& error) {
  const bool mapping = error.message.find("mmap of") != std::string::npos;
  switch (error.error) {
    case EACCES:
    case EPERM:
      return kExitNoPermission;
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV:
      return kExitUnavailable;
    case ESRCH:  // a task given with -p/-t is gone
      return kExitUsage;
    case EINVAL:
      return mapping ? kExitOsError : kExitUnavailable;
    default:
      return kExitOsError;
  }
}

std::string joined(const std::vector<std::string>& words, const char* separator) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : separator) + w;
  return out;
}

std::string session_error_message(const Error& error, const RecordOptions& o, const perf_event_attr& attr) {
  const bool opening = error.message.find("perf_event_open") != std::string::npos;
  const std::string events = joined(o.events, ",");
  std::string message = opening ? "-e " + events + ": " + error.message : error.message;
  const bool denied = error.error == EACCES || error.error == EPERM;
  if (opening && denied && o.attach()) {
    message += "; attaching to a task of another user needs root, CAP_PERFMON or ptrace permission over it";
  } else if (opening && denied && attr.exclude_kernel == 0 && o.command_target()) {
    message += "; or record user space only (-e " + joined(o.events, ":u,") + ":u)";
  }
  return message;
}

std::string seconds_text(std::uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", static_cast<double>(ns) / 1e9);
  return text;
}

std::uint64_t cpu_ns(const timeval& t) {
  return static_cast<std::uint64_t>(t.tv_sec) * kNsPerSecond + static_cast<std::uint64_t>(t.tv_usec) * 1000;
}

// The first line of a small file ("?" if unreadable).
std::string read_first_line_of(const char* path) {
  std::ifstream in(path);
  std::string line;
  return in && std::getline(in, line) ? line : "?";
}

// What the files' feature sections hold, over all files.
struct FeatureCounts {
  std::uint64_t files = 0;      // finished with the data's features (sample time, build-ids)
  std::uint64_t build_ids = 0;  // BUILD_ID entries, all files
  std::uint64_t build_id_problems = 0;
  std::string first_build_id_problem;
  std::string cache_problem;    // the first one

  void note_build_id_problem(const std::string& problem) {
    if (build_id_problems++ == 0) first_build_id_problem = problem;
  }
};

// Installs the signal handlers; restores the previous ones when it goes.
class SignalHandlers {
 public:
  SignalHandlers() = default;
  SignalHandlers(const SignalHandlers&) = delete;
  SignalHandlers& operator=(const SignalHandlers&) = delete;
  ~SignalHandlers() {
    if (installed_) restore_signal_handlers();
  }
  Error install() {
    const Error e = install_signal_handlers();
    installed_ = e.ok();
    return e;
  }

 private:
  bool installed_ = false;
};

std::string command_text(const std::vector<std::string>& command) { return joined(command, " "); }

// Whether this kernel accepts the attribute bits `set` adds: a disabled
// dummy event on this process opens with them.
bool kernel_accepts(void (*set)(perf_event_attr&)) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_DUMMY;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  set(attr);
  PerfEvent probe;
  return PerfEvent::open(attr, EventTarget{0, -1}, probe).ok();
}

// Build-ids in MMAP2 records (attr.build_id, Linux 5.12+).
bool kernel_has_mmap_build_ids() {
  return kernel_accepts([](perf_event_attr& a) { a.mmap2 = a.build_id = 1; });
}

// Each event's lost samples for read() (PERF_FORMAT_LOST, Linux 6.0+).
bool kernel_has_format_lost() {
  return kernel_accepts([](perf_event_attr& a) { a.read_format = PERF_FORMAT_LOST; });
}

}  // namespace

// --- RecorderSink --------------------------------------------------------------

RecorderSink::RecorderSink(std::unique_ptr<Writer>& writer, RealDisk& disk, const core::PerfDataHead& head,
                           std::uint64_t header_interval_ns, Rotation rotation, ZstdRecordCompressor* compressor)
    : writer_(writer),
      disk_(disk),
      head_(head),
      interval_ns_(header_interval_ns),
      keep_side_band_(rotation.keep_side_band),
      rotation_(std::move(rotation)),
      file_start_ns_(monotonic_ns()),
      compressor_(compressor),
      file_index_(rotation_.file_index()) {
  VERIFY(!rotation_.per_snapshot || rotation_.snapshots_taken);
}

std::span<std::byte> RecorderSink::acquire(std::size_t mapping) {
  if (!round_has_data_ && begin_data() < 0) return {};
  const std::span<std::byte> buffer = writer_->acquire(mapping);
  if (keep_side_band_) {
    if (mapping >= acquired_.size()) acquired_.resize(mapping + 1);
    acquired_[mapping] = buffer;
  }
  return buffer;
}

// The first data of a round. --overwrite: every round that reads is a
// snapshot (requested: SIGUSR2, or every TIME) or the final read. The
// file gets the tasks of this moment (/proc) and the side-band kept so
// far, besides what it got when it was opened (as perf's file gets at its
// switch: the tasks that have exited since, which /proc no longer shows),
// so that perf resolves it on its own.
int RecorderSink::begin_data() {
  round_has_data_ = true;
  if (!rotation_.per_snapshot) return 0;
  const std::uint64_t taken = rotation_.snapshots_taken();
  round_requested_ = taken != snapshots_seen_;
  snapshots_seen_ = taken;
  if (file_has_data_) return 0;  // the final read, spread over rounds
  return rotation_.on_new_file(rotation_.file_index(), false);
}

int RecorderSink::commit(std::size_t mapping, std::uint64_t bytes, const core::RecordCounts& counts) {
  if (keep_side_band_) {
    VERIFY(mapping < acquired_.size());
    VERIFY(bytes <= acquired_[mapping].size());
    keep_side_band(std::span<const std::byte>(acquired_[mapping].data(), bytes));
  }
  return writer_->commit(mapping, bytes, counts);
}

// With -z the batch goes out as COMPRESSED records, compressed here, on
// the writer's thread: the counts stay those of the records inside (the
// summary's samples and losses), the bytes become the compressed ones.
int RecorderSink::write_staged(std::span<const std::byte> data, const core::RecordCounts& counts) {
  if (keep_side_band_) keep_side_band(data);
  if (compressor_ == nullptr) return writer_->write_staged(data, counts);
  std::span<const std::byte> compressed;
  const std::string problem = compressor_->compress(data, compressed);
  if (!problem.empty()) {
    if (compression_problem_.empty()) compression_problem_ = problem;
    return -EIO;
  }
  core::RecordCounts packed = counts;
  packed.bytes = compressed.size();
  return writer_->write_staged(compressed, packed);
}

// The COMM, MMAP, MMAP2 and FORK records of whole records the loop walked.
// FORK too: a thread has no COMM of its own (it inherits its creator's),
// and perf names it from its FORK; without it a rotated file that holds a
// thread's samples but not its FORK (the thread gone from /proc by then)
// shows the thread as ":TID" with no symbols.
void RecorderSink::keep_side_band(std::span<const std::byte> records) {
  core::RecordCounts again;
  core::walk_records(records, again, [this](const perf_event_header& header, std::span<const std::byte> record) {
    if (header.type != PERF_RECORD_COMM && header.type != PERF_RECORD_MMAP && header.type != PERF_RECORD_MMAP2 &&
        header.type != PERF_RECORD_FORK) {
      return;
    }
    if (side_band_.size() + record.size() > kSideBandBytesMax) {
      counters_.side_band_records_dropped++;
      return;
    }
    side_band_.insert(side_band_.end(), record.begin(), record.end());
    counters_.side_band_records_kept++;
  });
}

int RecorderSink::end_round(bool all_drained) {
  const int rc = writer_->end_round(all_drained);
  if (rc < 0) return rc;
  if (round_has_data_) {
    round_has_data_ = false;
    if (rotation_.per_snapshot) {
      file_has_data_ = true;
      if (round_requested_) {
        // A requested snapshot is a file of its own: the next one (or the
        // final read) goes into a new file, opened now, as perf's
        // record__switch_output after its snapshot.
        counters_.snapshot_files++;
        round_requested_ = false;
        const int switched = switch_now();
        if (switched < 0) return switched;
      }
    }
  }
  if (rotation_.file_index() != file_index_) {
    const int made = new_file();  // a writer that rotates by itself
    if (made < 0) return made;
  }
  if (rotation_.max_bytes > 0 && !max_size_reached_ && writer_->stats().bytes_committed >= rotation_.max_bytes) {
    max_size_reached_ = true;
    rotation_.on_max_size(writer_->stats().bytes_committed);
  }
  if (rotation_.every_bytes > 0) {
    const std::uint64_t bytes = writer_->stats().bytes_committed;
    if (bytes >= rotation_.every_bytes && (all_drained || bytes / 2 >= rotation_.every_bytes)) {
      const int switched = switch_now();
      if (switched < 0) return switched;
    }
  }
  const std::uint64_t now_ns = monotonic_ns();
  if (rotation_.every_ns > 0 && now_ns - file_start_ns_ >= rotation_.every_ns) {
    file_start_ns_ = now_ns;
    if (rotation_.per_snapshot) {
      rotation_.request_snapshot();  // the next round reads it into a file of its own
    } else {
      const int switched = switch_now();
      if (switched < 0) return switched;
    }
  }
  if (rotation_.on_signal && !rotation_.per_snapshot && take_switch_request()) {
    const int switched = switch_now();
    if (switched < 0) return switched;
  }
  if (interval_ns_ > 0) {
    if (now_ns - last_checkpoint_ns_ >= interval_ns_) {
      last_checkpoint_ns_ = now_ns;
      checkpoint();
    }
  }
  return 0;
}

int RecorderSink::switch_now() {
  const int rc = rotation_.switch_file();
  if (rc < 0) return rc;
  return new_file();
}

// A new file: it needs the synthesized records too; its header has not
// been rewritten yet.
int RecorderSink::new_file() {
  file_index_ = rotation_.file_index();
  checkpointed_bytes_ = 0;
  file_has_data_ = false;
  file_start_ns_ = monotonic_ns();
  if (compressor_ != nullptr) compressor_->restart();  // perf reads each file with a stream of its own
  const int synthesized = rotation_.on_new_file(file_index_, true);
  if (synthesized < 0) return synthesized;
  counters_.files_synthesized++;
  checkpoint();
  return 0;
}

void RecorderSink::checkpoint() {
  if (interval_ns_ == 0 || writer_->failed() || !disk_.file_open()) return;
  const std::uint64_t prefix = disk_.complete_prefix_bytes();
  if (prefix <= checkpointed_bytes_ || prefix < head_.data_offset()) return;
  const auto header = head_.header(prefix - head_.data_offset());
  std::uint64_t done = 0;
  // Bounded: a header is 104 bytes; each try writes some or fails.
  for (std::uint32_t attempt = 0; attempt < 16 && done < header.size(); attempt++) {
    const std::int64_t n = disk_.write_at(std::span<const std::byte>(header).subspan(done), done);
    if (n > 0) done += static_cast<std::uint64_t>(n);
    if (n < 0 && n != -EINTR && n != -EAGAIN) break;
  }
  if (done == header.size()) {
    checkpointed_bytes_ = prefix;
    writer_->header_covers(prefix);
    counters_.header_checkpoints++;
  } else {
    // Not fatal: the file keeps its previous header; the final fix-up
    // reports an error if writing fails for good.
    counters_.header_checkpoint_failures++;
  }
}
// --- record() ------------------------------------------------------------------

namespace {

// One recording, its steps in the order run() takes them. A step that fails
// keeps the first error (fail()) and returns false; what follows a failure
// does only what ending the recording needs.
class Recording {
 public:
  explicit Recording(const RecordOptions& o) : o_(o), has_command_(!o.command.empty()) {}
  int run();
  // The signal that ended the command (0: it exited, or none ran).
  int command_signal() const;

 private:
  bool fail(int status, const std::string& line);
  bool make_event_attrs();
  bool choose_cpus();
  bool find_tasks();
  bool install_signals();
  bool start_command();
  bool set_priority();
  bool open_events();
  // At the open: the filters without --exclude-perf's part.
  bool set_filters() { return set_filters({}); }
  bool set_filters(std::span<const pid_t> own_threads);
  bool exclude_own_threads();
  bool start_aio_helpers_to_exclude();
  bool open_trigger();
  bool fall_back(const Error& e);
  bool break_weak_groups();
  bool describe_events();
  bool open_output();
  void choose_staging_options();
  bool file_features(const core::FinishedFile& file, core::PerfFeatures& out);
  int synthesize(std::uint32_t file_index, bool first_of_file = true);
  int switch_file();
  void remove_old_files(std::size_t keep);
  core::WriterStats writer_stats() const;
  void synthesize_first_file();
  bool open_control();
  bool open_cgroups();
  void watch_control();
  Error control_enable(bool enable, const std::string& name, bool* found);
  void print_control() const;
  bool start_events();
  bool release_command();
  Error enable_at_start();
  void make_sink();
  void record_until_the_end(bool started);
  core::LoopOptions loop_options() const;
  // How often the rings are read without a wakeup from them: the header
  // interval (kReadIntervalNoCheckpointsMs without checkpoints).
  std::uint64_t read_interval_ns() const {
    return (o_.header_interval_ms > 0 ? o_.header_interval_ms : kReadIntervalNoCheckpointsMs) * kNsPerMs;
  }
  // --switch-output=TIME: how often the reading and the writing side look
  // at the time at the latest, so that a file ends at most a twentieth of
  // TIME (at least 1 ms) after TIME, as perf's alarm ends it at TIME. At
  // TIME / 2 (before 2026-11-27) the writer, woken by the time alone at the
  // benchmark's rates, made "1s" files of 1.0-1.5 s, and perf's
  // --switch-max-files=2 kept 2.0 s where ours kept 2.4.
  std::uint64_t switch_check_ns() const {
    return std::max<std::uint64_t>(o_.switch_output_ns / 20, kNsPerMs);
  }
  bool record_staged();
  void read_one(core::Staging<ThreadSync>& staging, bool& started, std::thread& reader);
  std::vector<RingGroup> reader_groups() const;
  core::StackCutPolicy stack_cut_policy() const;
  void check_loop_status();
  void write_lost_samples();
  void finish(bool started);
  void print_summary(bool started) const;
  void print_files(const FileStats& back) const;
  void print_events(const FileStats& back) const;
  void print_features() const;
  void print_drops() const;
  void print_writer() const;
  void print_loop() const;
  void print_staging() const;
  void print_compression() const;
  void print_costs() const;

  const RecordOptions& o_;
  const bool has_command_;
  std::vector<EventAttr> attrs_;
  std::vector<int> cpus_;            // one ring each
  std::vector<pid_t> tasks_;         // the events' tasks (-1: every task on the CPU)
  // The rings' layout: one per CPU, each with every task's events; with
  // --per-thread one per task (cpu -1), each with that task's.
  std::size_t ring_tasks() const { return o_.per_thread ? 1 : tasks_.size(); }
  pid_t ring_task(std::size_t ring, std::size_t t) const { return o_.per_thread ? tasks_[ring] : tasks_[t]; }
  int ring_cpu(std::size_t ring) const { return o_.per_thread ? -1 : cpus_[ring]; }
  std::vector<pid_t> processes_;     // -p/-t: the processes named and mapped in each file
  // The kernel's bound on a filter's text (strndup_user(arg, PAGE_SIZE)).
  static constexpr std::size_t kFilterBytesMax = 4096;
  std::vector<IdIndexEntry> id_index_;
  core::HostFeatures host_;
  std::vector<std::byte> tracing_data_;  // TRACING_DATA; empty without tracepoints
  std::string buildid_dir_;          // "" with -N
  FeatureCounts features_;
  SignalHandlers signals_;
  std::unique_ptr<RealSession> session_;
  Command command_;  // after session_, which polls its pidfd: goes first
  std::unique_ptr<core::PerfDataHead> head_;
  core::WriterOptions wo_;
  core::StagingOptions so_;          // staged recordings
  core::StagingStats staging_;
  core::StackCutStats stack_cut_;
  PriorityOutcome reader_priority_;  // what the reading thread got (the first, with several)
  ReadingThreadsResult readers_;     // --readers cpu with more than one CPU: threads > 0
  std::unique_ptr<RealDisk> disk_;
  std::unique_ptr<Writer> writer_;   // the open file's (a new one per switch_file)
  core::WriterStats retired_;        // the writers before it, summed
  std::uint64_t sink_files_removed_ = 0;  // --switch-max-files
  std::unique_ptr<RecordBuilder> builder_;
  std::unique_ptr<ZstdRecordCompressor> compressor_;  // -z; before sink_, which refers to it
  SynthesisStats synthesis_;
  std::string kernel_warning_;
  std::unique_ptr<RecorderSink> sink_;
  std::size_t side_band_in_file_ = 0;  // bytes of sink_->side_band() the open file has
  core::LoopResult loop_;
  std::uint64_t elapsed_ns_ = 0;
  rusage usage_{};
  int status_ = kExitOk;
  std::string error_line_;
  std::uint64_t lost_samples_ = 0;         // in LOST_SAMPLES records (PERF_FORMAT_LOST)
  std::uint64_t lost_samples_unread_ = 0;  // events whose lost count read() did not give
  std::uint32_t uid_rescans_ = 0;           // -u: /proc walked again after a task ended (open_events)
  static constexpr std::uint32_t kUidRescansMax = 20;
  std::vector<int> cgroup_fds_;             // -G: per attr, its cgroup's directory or -1; closed by the destructor
  std::string cgroup_mount_;                // -G, --all-cgroups: where the cgroups are named from
  std::uint64_t cgroups_synthesized_ = 0;   // CGROUP records written
  ControlFds control_fds_;                  // --control; closed by the destructor
  std::unique_ptr<ControlServer> control_;  // serves them on the polling thread
  std::unique_ptr<SwitchTrigger> trigger_;  // --switch-output-event
 public:
  ~Recording() {
    close_control(control_fds_);
    for (const int fd : cgroup_fds_) {
      if (fd >= 0) ::close(fd);
    }
  }
};

int Recording::run() {
  // --dry-run: as perf's cmd_record, after the options and the events.
  if (o_.freq_lowered_from > 0 && !o_.quiet) {
    print_line("warning: -F " + std::to_string(o_.freq_lowered_from) + " is above the kernel's maximum (" +
               std::to_string(o_.freq_hz) + " Hz, /proc/sys/kernel/perf_event_max_sample_rate): sampling at " +
               std::to_string(o_.freq_hz) + " Hz, as perf does (--strict-freq refuses instead)");
  }
  if (o_.per_thread_ignored && !o_.quiet) {
    print_line("warning: --per-thread is ignored with -a/-C, as perf does: one ring per CPU");
  }
  const int verbose = o_.quiet ? 0 : o_.verbose;
  if (verbose >= 1) {
    // As perf's cmd_record with -v (pr_debug): its names, ours' values.
    std::fprintf(stderr, "nr_cblocks: %u\ncomp level: %d\n", o_.aio_cblocks, o_.compression_level);
  }
  if (verbose >= 2) trace_event_opens(stderr);
  if (o_.dry_run) {
    if (make_event_attrs() && choose_cpus()) return kExitOk;
    print_error(error_line_);
    return status_;
  }
  const bool ready = make_event_attrs() && open_control() && open_cgroups() && choose_cpus() && find_tasks() && install_signals() &&
                     start_command() && set_priority() && open_events() && set_filters() && open_trigger() &&
                     describe_events() && start_aio_helpers_to_exclude() && open_output();
  if (!ready) {
    print_error(error_line_);
    return status_;
  }
  synthesize_first_file();
  bool started = false;
  if (status_ == kExitOk && o_.staged) {
    started = record_staged();  // starts the events itself
  } else {
    started = status_ == kExitOk && start_events();
    record_until_the_end(started);
  }
  finish(started);
  if (status_ != kExitOk) print_error(error_line_);
  if (!o_.quiet) print_summary(started);
  // As perf record: the recording went well, so the status is the
  // command's (exit code; killed by a signal: record() ends by it).
  if (status_ == kExitOk && has_command_ && command_.ran() && command_.end().exited()) {
    return command_.end().exit_code();
  }
  return status_;
}

int Recording::command_signal() const {
  if (!has_command_ || !command_.ran() || !command_.end().signaled()) return 0;
  return command_.end().term_signal();
}

bool Recording::fail(int status, const std::string& line) {
  if (status_ == kExitOk) {  // the first error is the one reported
    status_ = status;
    error_line_ = line;
  }
  return false;
}

bool Recording::make_event_attrs() {
  if (const std::string problem = make_attrs(o_, attrs_); !problem.empty()) {
    return fail(kExitUsage, problem + " (see --help)");
  }
  // Build-ids in the kernel's MMAP2 records where it can (the first event
  // asks for the side-band records); else, or with --no-buildid-mmap, they
  // come from the ELF files.
  if (o_.buildid_mmap && kernel_has_mmap_build_ids()) attrs_[0].attr.build_id = 1;
  // Each event's lost samples, for LOST_SAMPLES records at the end (as
  // perf record 6.x: perf report's "Total Lost Samples").
  if (kernel_has_format_lost()) {
    for (EventAttr& a : attrs_) a.attr.read_format |= PERF_FORMAT_LOST;
  }
  // The formats of the tracepoints, read now (they do not change while
  // the kernel runs), for every file's TRACING_DATA.
  std::vector<Tracepoint> tracepoints;
  for (const EventAttr& a : attrs_) {
    if (a.attr.type != PERF_TYPE_TRACEPOINT) continue;
    if (const std::string problem = find_tracepoints(tracefs_root(), a.name, tracepoints); !problem.empty()) {
      return fail(kExitUsage, problem);
    }
  }
  if (!tracepoints.empty()) {
    if (const std::string problem = tracing_data(tracefs_root(), tracepoints, tracing_data_); !problem.empty()) {
      return fail(kExitOsError, "tracepoint formats (TRACING_DATA): " + problem);
    }
  }
  return true;
}

// Every online CPU, or -C's, which must be online.
bool Recording::choose_cpus() {
  std::vector<int> online;
  if (const Error e = online_cpus(online); !e.ok()) return fail(kExitOsError, e.message);
  if (o_.cpu_list.empty()) {
    cpus_ = online;
    return true;
  }
  if (const Error e = parse_cpu_list(o_.cpu_list, cpus_); !e.ok()) {
    return fail(kExitUsage, "-C " + o_.cpu_list + ": " + e.message + " (see --help)");
  }
  std::sort(cpus_.begin(), cpus_.end());
  cpus_.erase(std::unique(cpus_.begin(), cpus_.end()), cpus_.end());
  for (const int cpu : cpus_) {
    if (std::find(online.begin(), online.end(), cpu) == online.end()) {
      return fail(kExitUsage, "-C " + o_.cpu_list + ": CPU " + std::to_string(cpu) + " is not online (online: " +
                                  read_first_line_of("/sys/devices/system/cpu/online") + ")");
    }
  }
  return true;
}

// -p: every thread of each process now; -t: those threads. The tasks must
// exist (the kernel would say ESRCH for each event).
bool Recording::find_tasks() {
  if (o_.cpu_wide()) tasks_ = {-1};
  if (o_.uid >= 0) {
    // -u: the user's processes now (the recorder's own left out), each
    // thread; what they start later by inherit.
    for (const pid_t pid : processes_of_user(static_cast<uid_t>(o_.uid), ::getpid())) {
      const std::vector<pid_t> threads = threads_of(pid);
      if (threads.empty()) continue;  // gone meanwhile
      tasks_.insert(tasks_.end(), threads.begin(), threads.end());
      processes_.push_back(pid);
    }
    if (tasks_.empty()) {
      return fail(kExitUsage, "-u " + o_.uid_text + ": no process of that user (uid " + std::to_string(o_.uid) +
                                  ", see ps -u " + std::to_string(o_.uid) + ")");
    }
  }
  for (const int pid : o_.pids) {
    const std::vector<pid_t> threads = threads_of(pid);
    if (threads.empty()) return fail(kExitUsage, "-p " + std::to_string(pid) + ": no such process (see ps)");
    tasks_.insert(tasks_.end(), threads.begin(), threads.end());
    processes_.push_back(pid);
  }
  for (const int tid : o_.tids) {
    const pid_t process = thread_group_of(tid);
    if (process < 0) return fail(kExitUsage, "-t " + std::to_string(tid) + ": no such thread (see ps -T)");
    tasks_.push_back(tid);
    if (std::find(processes_.begin(), processes_.end(), process) == processes_.end()) processes_.push_back(process);
  }
  return true;
}

bool Recording::install_signals() {
  if (const Error e = signals_.install(); !e.ok()) return fail(kExitOsError, e.message);
  return true;
}

// Forked and held before exec until start_events().
bool Recording::start_command() {
  if (!has_command_) return true;
  if (const Error e = command_.start(o_.command, o_.pipe_output()); !e.ok()) return fail(kExitOsError, e.message);
  return true;
}

// The recorder's scheduling, once the command (which keeps the normal
// scheduler) is forked; threads created later (the reading thread, glibc's
// AIO helpers) inherit it.
bool Recording::set_priority() {
  if (o_.staged && o_.reader_priority_given) {
    // An explicit request that cannot be met is an error before anything
    // starts (a thread of its own tries it).
    const PriorityOutcome probe = probe_thread_priority(o_.reader_priority);
    if (!probe.error.ok()) {
      return fail(probe.error.error == EPERM || probe.error.error == EACCES ? kExitNoPermission : kExitOsError,
                  "--reader-priority: " + probe.error.message);
    }
  }
  if (o_.realtime_priority == 0) return true;
  sched_param param{};
  param.sched_priority = static_cast<int>(o_.realtime_priority);
  if (::sched_setscheduler(0, SCHED_FIFO, &param) == 0) return true;
  const int error = errno;
  return fail(error == EPERM ? kExitNoPermission : kExitOsError,
              "--realtime " + std::to_string(o_.realtime_priority) + ": sched_setscheduler(SCHED_FIFO): " +
                  errno_text(error) +
                  (error == EPERM ? ": needs root or CAP_SYS_NICE (or an RLIMIT_RTPRIO of at least the priority)" : ""));
}

// One ring per CPU, every event of every task on that CPU writing into it
// (disabled; a command's: enable_on_exec).
// perf's fallbacks when an event cannot be opened (evsel__fallback), each
// said in one warning line: -e cycles with no hardware PMU records
// cpu-clock; an event counting the kernel that perf_event_paranoid refuses
// (EACCES at 2 or more) counts user space only, its name given ":u".
// True if an attribute changed (open again).
bool Recording::fall_back(const Error& e) {
  bool changed = false;
  const bool no_pmu = e.error == ENOENT || e.error == ENODEV || e.error == EOPNOTSUPP;
  for (EventAttr& a : attrs_) {
    if (no_pmu && a.attr.type == PERF_TYPE_HARDWARE && a.attr.config == PERF_COUNT_HW_CPU_CYCLES) {
      if (!o_.quiet) print_line("warning: -e " + a.name + ": no hardware PMU here (" + errno_name(e.error) +
                                "): recording cpu-clock instead, as perf does");
      a.attr.type = PERF_TYPE_SOFTWARE;
      a.attr.config = PERF_COUNT_SW_CPU_CLOCK;
      a.name = "cpu-clock" + perf_modifier_suffix(a.attr);  // as perf names it (evsel__fallback)
      changed = true;
    }
  }
  // Only a command's events: CPU-wide ones need the permission whatever they count.
  if (changed || (e.error != EACCES && e.error != EPERM) || !o_.command_target()) return changed;
  const std::string paranoid = read_first_line_of("/proc/sys/kernel/perf_event_paranoid");
  if (paranoid == "?" || std::atoi(paranoid.c_str()) < 2) return false;
  for (EventAttr& a : attrs_) {
    if (a.attr.exclude_kernel != 0 || a.attr.exclude_user != 0) continue;
    if (!o_.quiet) print_line("warning: -e " + a.name + ": kernel.perf_event_paranoid=" + paranoid +
                              " refuses the kernel's samples: recording user space only (" + a.name +
                              (a.name.find(':') == std::string::npos ? ":u" : "u") + "), as perf does");
    a.name += a.name.find(':') == std::string::npos ? ":u" : "u";
    a.attr.exclude_kernel = 1;
    a.attr.exclude_hv = 1;
    changed = true;
  }
  return changed;
}

// The modifier W, as perf 6.1's record__open: when the kernel refuses a
// group's member with EINVAL or EBADF and the member is a weak group's, the
// group is broken up (evlist__reset_weak_group) and its events opened
// alone; the members keep their attrs (not disabled, no enable_on_exec: as
// perf's, they count from their open). Every weak group is broken, where
// perf breaks the one its failing member is in: the error does not say
// which member failed. False when there was none to break.
bool Recording::break_weak_groups() {
  bool broke = false;
  for (EventAttr& a : attrs_) {
    if (a.leader < 0 || !a.weak_group) continue;
    a.leader = -1;
    broke = true;
  }
  return broke;
}

bool Recording::open_events() {
  if (o_.command_target()) tasks_ = {command_.pid()};
  // The first attempt, then one per fallback (at most two: cycles, then
  // the paranoid one).
  for (int attempt = 0; attempt < 3; attempt++) {
    std::vector<perf_event_attr> attrs;
    std::vector<int> leaders;
    for (const EventAttr& e : attrs_) {
      attrs.push_back(e.attr);
      leaders.push_back(e.leader);
    }
    const std::vector<RingSpec> specs = o_.per_thread
                                            ? per_thread_ring_specs(attrs, tasks_, o_.mmap_pages, leaders)
                                            : shared_ring_specs(attrs, tasks_, cpus_, o_.mmap_pages, leaders, cgroup_fds_);
    const Error e = RealSession::open(specs, session_);
    if (e.ok()) {
      // perf's -v: the size of each ring's mapping, control page included.
      if (o_.verbose >= 1 && !o_.quiet) {
        std::fprintf(stderr, "mmap size %lluB\n",
                     static_cast<unsigned long long>((o_.mmap_pages + 1) * page_size_bytes()));
      }
      return true;
    }
    // -u: a process of the user ended between the /proc walk and its
    // events (perf ignores it: ignore_missing_thread): walk again.
    if (e.error == ESRCH && o_.uid >= 0 && uid_rescans_ < kUidRescansMax) {
      uid_rescans_++;
      tasks_.clear();
      processes_.clear();
      if (!find_tasks()) return false;
      attempt--;
      continue;
    }
    // A weak group {a,b}:W the kernel refused: its events alone (once).
    if ((e.error == EINVAL || e.error == EBADF) && break_weak_groups()) {
      attempt--;
      continue;
    }
    if (attempt == 2 || !fall_back(e)) return fail(session_error_status(e), session_error_message(e, o_, attrs_[0].attr));
  }
  return false;
}

namespace {

bool excludes_self(const std::vector<RecordOptions::FilterPart>& parts) {
  return std::any_of(parts.begin(), parts.end(), [](const RecordOptions::FilterPart& p) { return p.exclude_self; });
}

}  // namespace

// --filter, --exclude-perf: each filtered tracepoint's filter on every one
// of its events (each CPU's ring, each task), as shared_ring_specs laid
// them out. The kernel sets an event's filter once (EEXIST after), so the
// filters with --exclude-perf's part are set when the events start
// (`own_threads`: the recorder's threads then), the others at the open.
bool Recording::set_filters(std::span<const pid_t> own_threads) {
  if (o_.event_filters.empty()) return true;
  VERIFY(o_.event_filters.size() + (o_.delayed() ? 1 : 0) == attrs_.size());
  const std::size_t first = attrs_.size() - o_.event_filters.size();  // after -D's dummy
  const std::size_t tasks = ring_tasks();
  for (std::size_t e = first; e < attrs_.size(); e++) {
    if (excludes_self(o_.event_filters[e - first]) == own_threads.empty()) continue;
    const std::string filter = compose_filter(o_.event_filters[e - first], own_threads);
    if (filter.empty()) continue;
    if (!own_threads.empty() && filter.size() >= kFilterBytesMax) {
      return fail(kExitUsage, "--exclude-perf on " + attrs_[e].name + ": the recorder's " +
                                  std::to_string(own_threads.size()) + " threads make a filter of " +
                                  std::to_string(filter.size()) + " bytes, above the kernel's " +
                                  std::to_string(kFilterBytesMax - 1) + " (use --readers one: fewer threads)");
    }
    for (std::size_t ring = 0; ring < session_->mapping_count(); ring++) {
      for (std::size_t t = 0; t < tasks; t++) {
        PerfEvent& event = e == 0 && t == 0 ? session_->event(ring) : session_->shared_event(ring, e * tasks + t - 1);
        if (const Error error = event.set_filter(filter); !error.ok()) {
          return fail(kExitUsage, "--filter '" + filter + "' on " + attrs_[e].name + ": " + error.message +
                                      (error.error == EINVAL ? " (the kernel refused it: see the fields in its "
                                                               "tracefs format file)"
                                                             : ""));
        }
      }
    }
  }
  return true;
}

// --exclude-perf: perf's filter names its main thread, which does nothing
// while ours records (its reading threads read, its writer writes); when
// the events start every thread of the recorder is known (glibc's AIO
// helpers, made at the first aio_write, aside): the filters with that part
// are set then, excluding them all.
bool Recording::exclude_own_threads() {
  if (std::none_of(o_.event_filters.begin(), o_.event_filters.end(), excludes_self)) return true;
  const std::vector<pid_t> own = threads_of(::getpid());
  if (own.empty()) return fail(kExitOsError, "--exclude-perf: /proc/self/task: the recorder's threads not found");
  return set_filters(own);
}

// --exclude-perf with --aio: glibc's AIO helper threads, which it starts at
// the first requests and ends when idle, started now and kept (before the
// output's first write), so that the filter set when the events start
// names them too (before 2026-11-27 their pwrite64 calls were in the
// file). Two: a file being finished and the next.
bool Recording::start_aio_helpers_to_exclude() {
  if (o_.aio_cblocks == 0 || std::none_of(o_.event_filters.begin(), o_.event_filters.end(), excludes_self)) {
    return true;
  }
  if (const Error e = start_aio_helpers(2); !e.ok()) return fail(kExitOsError, e.message);
  return true;
}

// --switch-output-event: its events where perf's side-band thread opens
// them (evlist__start_sb_thread on the recording's target): each CPU's
// every task with -a and -C, and for a command too (perf's thread map is
// then the dummy, pid -1: any task's hit switches); each task of -p, -t, -u
// (no inherit, as perf's: threads they start later do not trigger).
bool Recording::open_trigger() {
  if (o_.switch_output_events.empty()) return true;
  std::vector<perf_event_attr> attrs;
  if (const std::string problem = make_trigger_attrs(o_, attrs); !problem.empty()) return fail(kExitUsage, problem);
  std::vector<EventTarget> targets;
  if (o_.attach()) {
    for (const pid_t task : tasks_) targets.push_back(EventTarget{task, -1, -1});
  } else {
    for (const int cpu : cpus_) targets.push_back(EventTarget{-1, cpu, -1});
  }
  trigger_ = std::make_unique<SwitchTrigger>();
  if (const Error e = trigger_->open(attrs, o_.switch_output_events, targets); !e.ok()) {
    return fail(session_error_status(e), e.message);
  }
  return true;
}

// The file's attributes: each event with its ids (ring by ring, as
// shared_ring_specs or per_thread_ring_specs laid them out), and the id
// index.
bool Recording::describe_events() {
  std::vector<core::EventDescription> descriptions(attrs_.size());
  const std::size_t tasks = ring_tasks();
  for (std::size_t ring = 0; ring < session_->mapping_count(); ring++) {
    VERIFY(session_->shared_count(ring) == attrs_.size() * tasks - 1);
    for (std::size_t e = 0; e < attrs_.size(); e++) {
      for (std::size_t t = 0; t < tasks; t++) {
        PerfEvent& event = e == 0 && t == 0 ? session_->event(ring) : session_->shared_event(ring, e * tasks + t - 1);
        std::uint64_t id = 0;
        if (const Error error = event.id(id); !error.ok()) return fail(kExitOsError, error.message);
        descriptions[e].ids.push_back(id);
        id_index_.push_back(IdIndexEntry{id, ring, static_cast<std::uint64_t>(static_cast<std::int64_t>(ring_cpu(ring))),
                                         static_cast<std::uint64_t>(static_cast<std::int64_t>(ring_task(ring, t)))});
      }
    }
  }
  for (std::size_t e = 0; e < attrs_.size(); e++) {
    descriptions[e].attr = attrs_[e].attr;
    descriptions[e].name = attrs_[e].name;
    descriptions[e].group_leader = attrs_[e].leader;
  }
  head_ = std::make_unique<core::PerfDataHead>(std::move(descriptions));
  return true;
}

// The output file and the writer, which writes its header.
// The staging buffer's options: its size, batches, and when each side
// wakes the other.
void Recording::choose_staging_options() {
  const std::uint64_t total = session_->data_size_bytes_max() * session_->mapping_count();
  so_.chunk_bytes_max = session_->data_size_bytes_max();
  so_.bytes = o_.staging_bytes > 0
                  ? o_.staging_bytes
                  : std::clamp(total * kStagingRingMultiple, kStagingDefaultMinBytes,
                               std::max(kStagingDefaultMaxBytes, 2 * so_.chunk_bytes_max));
  so_.batch_bytes_max = std::max(so_.chunk_bytes_max, std::min(so_.bytes / 4, std::uint64_t{4} << 20));
  // The writer wakes for kWriterWakeMaxBytes staged (at most half a
  // batch; with --switch-output at most its size, so that files switch
  // near it), or as often as the rings are read (at most every
  // kWriterWaitMaxMs); the reader waits for room for 10 s in all
  // (StagingOptions), as at the default's 1,000 waits of 10 ms.
  so_.wake_bytes = std::min(so_.batch_bytes_max / 2, kWriterWakeMaxBytes);
  if (o_.switch_output_bytes > 0) so_.wake_bytes = std::min(so_.wake_bytes, o_.switch_output_bytes);
  so_.wait_ns = std::min(read_interval_ns(), kWriterWaitMaxMs * kNsPerMs);
  if (o_.switch_output_ns > 0) so_.wait_ns = std::min(so_.wait_ns, switch_check_ns());
  // --switch-output=signal (and --switch-output-event): the writer
  // switches at the end of the round a request woke the reader for, at
  // once. Before 2026-11-27 it took that round at its next look (up to
  // kWriterWaitMaxMs later), and requests within it coalesced: three
  // SIGUSR2s 0.4 s apart to an idle recording gave 2 files where perf
  // gives 4.
  so_.notify_rounds = o_.switch_output_signal;
  so_.full_waits_max = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, 10 * kNsPerSecond / so_.wait_ns));
}

bool Recording::open_output() {
  wo_.mode = o_.aio_cblocks == 0 ? core::WriteMode::serial : core::WriteMode::aio;
  wo_.cblocks = o_.aio_cblocks == 0 ? 1 : o_.aio_cblocks;
  wo_.mappings = static_cast<std::uint32_t>(session_->mapping_count());
  wo_.buffer_bytes = session_->data_size_bytes_max();
  if (o_.staged) {
    // The writer's buffers belong to no ring: one set, a batch each.
    choose_staging_options();
    if (const std::string problem = core::validate(so_); !problem.empty()) {
      return fail(kExitUsage, "--staging " + std::to_string(so_.bytes) + ": " + problem + " (-m " +
                                  std::to_string(o_.mmap_pages) + ": a ring holds " +
                                  std::to_string(so_.chunk_bytes_max) + " bytes)");
    }
    wo_.mappings = 1;
    wo_.buffer_bytes = so_.batch_bytes_max;
    if (o_.compression_level > 0) {
      // A batch's COMPRESSED records (AIO copies them into a control block).
      compressor_ = std::make_unique<ZstdRecordCompressor>(o_.compression_level);
      wo_.buffer_bytes = std::max(wo_.buffer_bytes, ZstdRecordCompressor::bound(so_.batch_bytes_max));
    }
  }
  // Never the writer's own rotation (at any round's end): the sink's, at a
  // round that drained every ring (Rotation::every_bytes).
  wo_.rotate_bytes = 0;
  if (const std::string problem = core::validate(wo_); !problem.empty()) {
    return fail(kExitUsage, "writer options: " + problem);
  }
  const std::uint32_t slots = wo_.mappings * (wo_.mode == core::WriteMode::aio ? wo_.cblocks : 1);
  disk_ = std::make_unique<RealDisk>(o_.output, slots);
  if (o_.timestamp_filename && o_.pipe_output()) {
    if (!o_.quiet) print_line("warning: --timestamp-filename is not available in pipe mode (as perf): ignored");
  } else {
    disk_->set_timestamp_names(o_.timestamp_filename);
  }
  host_ = host_features(o_.argv, o_.clockid);
  host_.tracing_data = tracing_data_;
  if (o_.pipe_output()) {
    // perf's pipe format: what a file's header, attributes and features
    // say goes first; the records follow as they are read. No feature
    // sections at the end, no build-id cache (nothing is read back).
    core::PerfFeatures start;
    start.host = host_;
    if (compressor_ != nullptr) {
      start.file.compressed = core::CompressedFeature{kCompressedFeatureVersion, kCompressedTypeZstd,
                                                      static_cast<std::uint32_t>(compressor_->level()), 0,
                                                      kCompressSliceBytes};
    }
    disk_->set_stream(STDOUT_FILENO, head_->data_offset(), core::pipe_prefix(head_->events(), start));
  }
  writer_ = std::make_unique<Writer>(*disk_, wo_, *head_);
  buildid_dir_ = o_.no_buildid_cache ? "" : (o_.buildid_dir.empty() ? default_build_id_dir() : o_.buildid_dir);
  if (!o_.pipe_output()) {
    writer_->set_feature_source(
        [this](const core::FinishedFile& file, core::PerfFeatures& out) { return file_features(file, out); });
  }
  if (const int rc = writer_->start(); rc != 0) {
    const bool created = disk_->counters().files_opened > 0;
    return fail(created ? kExitIoError : kExitCantCreate,
                output_error_message(-rc, o_.output, created ? "cannot write its header" : "cannot create it"));
  }
  return true;
}

// The synthesized records at the start of file `file_index`; a rotated
// file also gets the side-band records the kernel wrote into the earlier
// ones (kept by the sink). 0 or -errno.
int Recording::synthesize(std::uint32_t file_index, bool first_of_file) {
  builder_->clear();
  if (first_of_file) {
    builder_->add_id_index(id_index_);
    kernel_warning_ = synthesize_kernel_mmap(*builder_);
    // --all-cgroups: every cgroup by its id, in each file (perf's
    // record__synthesize, before the tasks).
    if (o_.all_cgroups && o_.synth_cgroups && !cgroup_mount_.empty()) {
      cgroups_synthesized_ += synthesize_cgroups(cgroup_mount_, *builder_);
    }
  }
  // The mappings the kernel reports for the first event (it asks for the
  // side-band records): with mmap_data (dwarf) the data ones too.
  // --synth=task: none; --synth=no: no task at all (below).
  const MapKinds kinds = !o_.synth_mmaps                  ? MapKinds::none
                         : attrs_[0].attr.mmap_data != 0 ? MapKinds::executable_and_data
                                                         : MapKinds::executable;
  // Later than the start (a rotated file, or an --overwrite snapshot's
  // file): the command's tasks of this moment too.
  const bool later = file_index > 0 || !first_of_file;
  const bool ns = o_.namespaces;
  const ProcessSynthesis how{kinds, ns, std::uint64_t{o_.proc_map_timeout_ms} * 1'000'000};
  if (!o_.synth_tasks) {
    // --synth=no: the kernel's mapping alone, as perf's record__synthesize.
  } else if (o_.cpu_wide()) {
    synthesize_all_processes(how, *builder_, synthesis_);
  } else if (o_.attach()) {
    for (const pid_t pid : processes_) synthesize_process(pid, how, *builder_, synthesis_);
  } else if (later && has_command_ && command_.pid() > 0) {
    for (const pid_t pid : process_tree(command_.pid())) synthesize_process(pid, how, *builder_, synthesis_);
  }
  if (!later && has_command_ && command_.pid() > 0) {
    // The command, held before its exec: its COMM ("perf-exec") and its
    // namespaces now are its own then, whatever --synth says, as perf's
    // __cmd_record writes them for its forked workload (before
    // 2026-11-27 ours wrote no COMM: samples before the exec were
    // unnamed, and --synth=no left out the NAMESPACES too).
    const pid_t pid = command_.pid();
    // The summary counts distinct pids per file: -a's walk of /proc (and
    // -p's or -u's list) may have named the held command already.
    const bool named = o_.synth_tasks && (o_.cpu_wide() || (o_.attach() && std::find(processes_.begin(),
                                                                                      processes_.end(), pid) !=
                                                                                processes_.end()));
    if (synthesize_held_command(pid, *builder_, ns)) {
      synthesis_.threads++;
      if (!named) synthesis_.processes++;
    }
  }
  // The side-band kept (the kernel's records of earlier files), each once
  // in a file: at its opening all of it, at its --overwrite snapshot only
  // what was kept since (before 2026-11-27 all of it again: a snapshot's
  // file held its carried COMM exec and MMAP2 twice, which the interposer's
  // oracle found, exactly_once in 16 of 30 seeds of ringsim-record
  // --overwrite).
  if (first_of_file) side_band_in_file_ = 0;
  if (later && sink_ != nullptr) {
    const std::span<const std::byte> kept = sink_->side_band();
    VERIFY(side_band_in_file_ <= kept.size());  // kept only grows
    builder_->add_records(kept.subspan(side_band_in_file_));
    side_band_in_file_ = kept.size();
  }
  if (builder_->bytes().empty()) return 0;
  return writer_->append(builder_->bytes(), builder_->counts());
}

namespace {

void add_writer_stats(core::WriterStats& sum, const core::WriterStats& s) {
  sum.files += s.files;
  sum.chunks += s.chunks;
  sum.bytes_committed += s.bytes_committed;
  sum.bytes_completed += s.bytes_completed;
  sum.writes_submitted += s.writes_submitted;
  sum.writes_completed += s.writes_completed;
  sum.short_writes_restarted += s.short_writes_restarted;
  sum.eagain_retries += s.eagain_retries;
  sum.eagain_sync_fallbacks += s.eagain_sync_fallbacks;
  sum.eintr_retries += s.eintr_retries;
  sum.suspend_interrupted += s.suspend_interrupted;
  sum.waits_for_cblock += s.waits_for_cblock;
  sum.in_flight_max = std::max(sum.in_flight_max, s.in_flight_max);
  sum.rounds_marked += s.rounds_marked;
  sum.files_with_features += s.files_with_features;
  sum.feature_bytes += s.feature_bytes;
  sum.fix_ups_failed += s.fix_ups_failed;
  sum.fix_ups_partial += s.fix_ups_partial;
  sum.records.add(s.records);
  sum.drops.add(s.drops);
  if (sum.error == 0 && s.error != 0) {
    sum.error = s.error;
    sum.error_context = s.error_context;
  }
}

}  // namespace

core::WriterStats Recording::writer_stats() const {
  core::WriterStats sum = retired_;
  add_writer_stats(sum, writer_->stats());
  return sum;
}

// --switch-output=signal|TIME, --overwrite snapshots: the open file is
// finished (every write, the header, the features) and the next one opened
// by a writer of its own (TraceWriter switches by size only). 0 or -errno.
int Recording::switch_file() {
  const int finished = writer_->finish();
  if (finished != 0) return finished;  // the writer keeps its error for finish()
  const std::uint32_t next = disk_->index_base() + writer_->file_index() + 1;
  add_writer_stats(retired_, writer_->stats());
  disk_->set_index_base(next);
  writer_ = std::make_unique<Writer>(*disk_, wo_, *head_);
  writer_->set_feature_source(
      [this](const core::FinishedFile& file, core::PerfFeatures& out) { return file_features(file, out); });
  const int started = writer_->start();
  if (started != 0) return started;
  // As perf (record__switch_output): the finished files are kept up to
  // --switch-max-files, the open one aside.
  if (o_.switch_max_files > 0) remove_old_files(o_.switch_max_files + 1);
  return 0;
}

// --switch-max-files: the oldest files go until `keep` are left.
void Recording::remove_old_files(std::size_t keep) {
  while (disk_->paths().size() > keep) {
    const std::string oldest = disk_->paths().front();
    if (const int rc = disk_->remove_oldest(); rc != 0 && !o_.quiet) {
      print_line("warning: --switch-max-files: removing " + oldest + ": " + errno_text(-rc));
    }
    if (sink_ != nullptr) sink_files_removed_++;
  }
}

void Recording::synthesize_first_file() {
  builder_ = std::make_unique<RecordBuilder>(attrs_[0].attr.sample_type, attrs_[0].attr.sample_id_all != 0);
  if (synthesize(0) != 0) {
    const core::WriterStats& ws = writer_->stats();
    fail(kExitIoError, output_error_message(ws.error, disk_->current_path(), ws.error_context));
  }
  if (!kernel_warning_.empty() && !o_.quiet) print_line("warning: " + kernel_warning_);
  if (synthesis_.maps_cut > 0 && !o_.quiet) {
    // One line for them all (perf prints one per process).
    print_line("warning: the mappings of " + std::to_string(synthesis_.maps_cut) + " running task(s) (pid " +
               std::to_string(synthesis_.first_cut) + (synthesis_.maps_cut > 1 ? ", ..." : "") + ") took over " +
               std::to_string(o_.proc_map_timeout_ms) +
               " ms to read: the rest of each is left out (PROC_MAP_PARSE_TIMEOUT; raise --proc-map-timeout)");
  }
}

// -a, -C, -p, -t: the events are enabled; a command is let go (its exec
// enables its own events; with the others it only sets how long).
bool Recording::start_events() {
  watch_control();  // on the polling thread, before its first poll
  // Its thread first, so that --exclude-perf leaves it out too.
  if (trigger_ != nullptr) {
    if (const Error e = trigger_->start(); !e.ok()) return fail(kExitOsError, e.message);
  }
  if (!exclude_own_threads()) return false;
  if (!o_.command_target()) {
    if (const Error e = enable_at_start(); !e.ok()) return fail(kExitOsError, e.message);
  }
  return release_command();
}

// -a, -C, -p, -t: every event at the start; with -D only the side-band
// (tracking) event, the others after the delay.
Error Recording::enable_at_start() {
  return o_.delayed() ? session_->enable_tracking() : session_->enable_all();
}

// --control: its descriptors (before the events: a FIFO that is not there
// is a bad value, and no file is written).
bool Recording::open_control() {
  if (o_.control.empty()) return true;
  if (const Error e = ::ringsim::real::open_control(o_.control, control_fds_); !e.ok()) {
    return fail(kExitUsage, e.message);
  }
  return true;
}

// -G: each event's cgroup directory, under the cgroup file system perf
// uses (cgroup_mount_for_events(): a v1 perf_event mount, else cgroup2),
// opened for the events' lifetime (the -D dummy counts every task).
bool Recording::open_cgroups() {
  if (o_.cgroups.empty() && !o_.all_cgroups) return true;
  // perf 6.1 fails without a mount for either (--all-cgroups: "cannot
  // find cgroup mount point" stops its synthesis): ours the same, before
  // anything is opened.
  if (const std::string problem = cgroup_mount_for_events(cgroup_mount_); !problem.empty()) {
    return fail(kExitUnavailable, std::string(o_.cgroups.empty() ? "--all-cgroups" : "-G/--cgroup") + ": " + problem);
  }
  if (o_.cgroups.empty()) return true;
  VERIFY(o_.cgroups.size() + (o_.delayed() ? 1 : 0) == attrs_.size());
  if (o_.delayed()) cgroup_fds_.push_back(-1);
  for (const std::string& name : o_.cgroups) {
    if (name.empty()) {
      cgroup_fds_.push_back(-1);
      continue;
    }
    const std::string path = cgroup_mount_ + "/" + name;
    const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
      const int error = errno;
      return fail(kExitUsage, "-G/--cgroup " + name + ": no access to cgroup " + path + ": " + errno_text(error));
    }
    cgroup_fds_.push_back(fd);
  }
  return true;
}

// --control "enable [NAME]" / "disable [NAME]": every event, or those
// whose -e text is NAME (perf's evlist__find_evsel_by_str), on the
// polling thread (inside poll()).
Error Recording::control_enable(bool enable, const std::string& name, bool* found) {
  if (name.empty()) return session_->enable_where(enable, [](const perf_event_attr&) { return true; });
  std::vector<perf_event_attr> named;
  for (const EventAttr& a : attrs_) {
    if (a.name == name) named.push_back(a.attr);
  }
  *found = !named.empty();
  return session_->enable_where(enable, [&](const perf_event_attr& attr) {
    return std::any_of(named.begin(), named.end(), [&](const perf_event_attr& n) {
      return n.type == attr.type && n.config == attr.config && n.config1 == attr.config1 &&
             n.exclude_user == attr.exclude_user && n.exclude_kernel == attr.exclude_kernel &&
             n.exclude_hv == attr.exclude_hv && n.mmap == attr.mmap;
    });
  });
}

// From here the session polls the control descriptor with the rings.
void Recording::watch_control() {
  if (control_fds_.ctl < 0) return;
  ControlServer::Actions actions;
  actions.enable = [this](bool enable, const std::string& name, bool* found) {
    return control_enable(enable, name, found);
  };
  actions.event_names = [this] {
    std::string names;
    for (const EventAttr& a : attrs_) names += (names.empty() ? "" : ", ") + a.name;
    return names;
  };
  actions.stop = [this] { session_->request_stop(); };
  control_ = std::make_unique<ControlServer>(control_fds_, std::move(actions), o_.quiet);
  session_->watch_control(control_fds_.ctl, [this] { return control_->serve(); });
}

// A command is let go (its exec enables its own events; with -a, -C, -p or
// -t it only sets how long).
bool Recording::release_command() {
  if (has_command_) {
    if (const Error e = command_.go(*session_); !e.ok()) return fail(kExitOsError, e.message);
  }
  // -D: from here, as perf (__cmd_record: evlist__start_workload, then
  // usleep(initial_delay) and evlist__enable); the polling thread enables.
  if (o_.delay_ms > 0) session_->enable_all_at(monotonic_ns() + o_.delay_ms * kNsPerMs);
  // -D -1: perf says "Events disabled" here.
  if (o_.start_disabled && !o_.quiet) print_line("control: events disabled (-D -1): waiting for enable");
  return true;
}

// The record loop until the command exits, every ring hangs up, or a stop
// signal (or, when the start failed, only the events disabled).
void Recording::make_sink() {
  Rotation r;
  r.keep_side_band = o_.rotates();
  r.per_snapshot = o_.overwrite;
  r.on_signal = o_.switch_output_signal;
  r.every_ns = o_.switch_output_ns;
  r.every_bytes = o_.switch_output_bytes;
  r.max_bytes = o_.max_size_bytes;
  r.on_max_size = [this](std::uint64_t bytes) {
    // As perf's "perf size limit reached (N KB), stopping session".
    if (!o_.quiet) {
      print_line("--max-size " + std::to_string(o_.max_size_bytes) + ": the file holds " + std::to_string(bytes) +
                 " bytes of data: stopping the recording, as perf");
    }
    session_->request_stop();
  };
  r.switch_file = [this] { return switch_file(); };
  r.on_new_file = [this](std::uint32_t file_index, bool first_of_file) {
    return synthesize(file_index, first_of_file);
  };
  r.file_index = [this] { return disk_->index_base() + writer_->file_index(); };
  r.snapshots_taken = [this] { return session_->snapshots_taken(); };
  r.request_snapshot = [this] { session_->request_snapshot(); };
  sink_ = std::make_unique<RecorderSink>(writer_, *disk_, *head_, o_.header_interval_ms * kNsPerMs, std::move(r),
                                         compressor_.get());
  sink_->checkpoint();
}

void Recording::record_until_the_end(bool started) {
  make_sink();
  const std::uint64_t start_ns = monotonic_ns();
  if (started) {
    core::RecordLoop<RealSession, RecorderSink> loop(*session_, *sink_, session_->mode(), loop_options());
    loop_ = loop.run();
  } else {
    session_->disable_all();
  }
  elapsed_ns_ = monotonic_ns() - start_ns;
}

core::LoopOptions Recording::loop_options() const {
  core::LoopOptions lo;
  lo.poll_timeout_ns = read_interval_ns();
  // --switch-output=TIME: a round at least as often.
  if (o_.switch_output_ns > 0) lo.poll_timeout_ns = std::min(lo.poll_timeout_ns, switch_check_ns());
  lo.rounds_max = kRoundsMax;
  // With AIO and no staging, one chunk per ring per round (as perf reads):
  // a second chunk of the same ring would wait for the first one's control
  // block while the other rings fill (measured: docs/recorder.md).
  lo.drain_chunks_max = wo_.mode == core::WriteMode::aio && !o_.staged ? 1 : 4;
  return lo;
}

// Two threads: the reading thread (its priority raised) starts the events
// itself (start_events: enables them and lets the command go) and runs the
// record loop into the staging buffer at once; this thread writes what is
// staged. Created and raised before anything starts, with its loop made,
// the reading thread is polling when the first samples come (a burst while
// frequency mode finds its period): enabling from this thread, which runs
// at normal priority on cores the workload saturates, left the rings
// unread for milliseconds after the start (up to 230 records lost in the
// first 6 ms at the dwarf point). Nor does this thread wait for the start
// and then release the command: that handoff woke it inside an -a
// recording, where its wakeup is the recorder's own samples
// (docs/recorder.md, "Self-sampling"). Returns whether the events started.
bool Recording::record_staged() {
  make_sink();
  ThreadSync sync;
  core::Staging<ThreadSync> staging(sync, so_);
  bool started = false;  // the (first) reading thread's; read after it is joined
  std::thread reader;
  std::unique_ptr<ReadingThreads> readers;
  if (std::vector<RingGroup> groups = reader_groups(); groups.size() > 1) {
    readers = std::make_unique<ReadingThreads>(*session_, staging, std::move(groups), loop_options(),
                                               stack_cut_policy(), o_.reader_priority, o_.readers_help);
    if (const Error e = readers->start([this] { return start_events(); }); !e.ok()) {
      fail(kExitOsError, e.message);
      return false;
    }
  } else {
    read_one(staging, started, reader);
  }
  const std::uint64_t start_ns = monotonic_ns();  // as without staging: from the start
  const int drained = core::drain_staging(staging, *sink_);
  if (drained < 0) session_->request_stop();  // the reading threads stop at their next chunk or round
  if (readers) {
    readers_ = readers->join();
    loop_ = readers_.loop;
    stack_cut_ = readers_.cut;
    reader_priority_ = readers_.priority;
    started = readers_.started;
  } else {
    reader.join();
  }
  staging_ = staging.stats();
  if (!sink_->compression_problem().empty()) {
    fail(kExitIoError, "-z: compressing the data failed: " + sink_->compression_problem());
  }
  if (staging_.error != 0 && writer_->stats().error == 0) {
    fail(kExitIoError, "staging: " + errno_text(staging_.error) + ": " + staging.error_context());
  }
  elapsed_ns_ = monotonic_ns() - start_ns;
  return started;
}

// One reading thread for every ring (--readers one, one CPU, or a mode
// several threads do not read: overwrite, rotating files).
void Recording::read_one(core::Staging<ThreadSync>& staging, bool& started, std::thread& reader) {
  reader = std::thread([this, &staging, &started] {
    reader_priority_ = apply_thread_priority(o_.reader_priority);
    prepare_thread_allocator();
    core::StackCutter<core::Staging<ThreadSync>> cutter(staging, stack_cut_policy());
    core::RecordLoop<RealSession, core::StackCutter<core::Staging<ThreadSync>>> loop(*session_, cutter,
                                                                                       session_->mode(), loop_options());
    started = start_events();
    if (started) {
      loop_ = loop.run();
    } else {
      session_->disable_all();
    }
    stack_cut_ = cutter.stats();
    staging.close();
  });
}

// One group per CPU with --readers cpu in a normal-mode recording that
// does not rotate files (a rotation or a snapshot is one reader's round
// over every ring); else one group.
std::vector<RingGroup> Recording::reader_groups() const {
  if (!o_.readers_per_cpu || o_.rotates() || session_->mode() != core::RingMode::normal) return {};
  return rings_by_cpu(*session_);
}

// --cut-stacks: every event has the first one's sample_type and user
// registers (make_attrs).
core::StackCutPolicy Recording::stack_cut_policy() const {
  core::StackCutPolicy p;
  using Cut = RecordOptions::CutStacks;
  p.mode = o_.cut_stacks == Cut::off        ? core::StackCutPolicy::Mode::off
           : o_.cut_stacks == Cut::pressure ? core::StackCutPolicy::Mode::pressure
                                            : core::StackCutPolicy::Mode::always;
  p.keep_bytes = o_.cut_stack_bytes;
  p.dump_bytes = o_.dwarf_stack_bytes;
  p.layout.sample_type = attrs_[0].attr.sample_type;
  p.layout.user_regs = static_cast<std::uint32_t>(__builtin_popcountll(attrs_[0].attr.sample_regs_user));
  if (p.mode != core::StackCutPolicy::Mode::off) VERIFY(core::stack_cut_problem(p.layout).empty());
  return p;
}

void Recording::check_loop_status() {
  if (o_.delay_ms > 0 && session_->delayed_enable_done() && !session_->delayed_enable_error().ok()) {
    fail(kExitOsError, "-D: enabling the events after the delay: " + session_->delayed_enable_error().message);
  }
  switch (loop_.status) {
    case core::LoopStatus::done:
    case core::LoopStatus::stopped:
    case core::LoopStatus::sink_error:  // the writer's error, reported by finish()
      break;
    case core::LoopStatus::poll_error:
      fail(kExitOsError, "poll: " + errno_text(loop_.error));
      break;
    case core::LoopStatus::rounds_exhausted:
      fail(kExitSoftware, "the record loop ran out of rounds (" + std::to_string(kRoundsMax) + "): a bug");
      break;
  }
}

// The command ended and reaped; every write completed, the header fixed up
// and the file cut at the data written (TraceWriter::finish).
// PERF_RECORD_LOST_SAMPLES for every event that lost samples, as perf
// record writes them at its end; their sum is the summary's figure.
void Recording::write_lost_samples() {
  if (attrs_.empty() || (attrs_[0].attr.read_format & PERF_FORMAT_LOST) == 0 || writer_->stats().error != 0) return;
  RecordBuilder builder(attrs_[0].attr.sample_type, attrs_[0].attr.sample_id_all != 0);
  // Only one event may go without IDENTIFIER (--overwrite): its records need no id.
  VERIFY((attrs_[0].attr.sample_type & PERF_SAMPLE_IDENTIFIER) != 0 || attrs_.size() == 1);
  for (const RealSession::LostSamples& l : session_->lost_samples(lost_samples_unread_)) {
    if (l.lost == 0) continue;
    builder.add_lost_samples(l.lost, l.id);
    lost_samples_ += l.lost;
  }
  if (!builder.bytes().empty()) writer_->append(builder.bytes(), builder.counts());
}

void Recording::finish(bool started) {
  if (trigger_ != nullptr) trigger_->stop();  // the loop has ended: a request now would change nothing
  if (const Error e = command_.finish(); !e.ok()) fail(kExitCommandFailed, e.message);
  write_lost_samples();
  const int finished = writer_->finish();
  const core::WriterStats& ws = writer_->stats();
  // As perf at its exit (record__switch_output(rec, true)): the last file
  // counts among --switch-max-files.
  if (o_.switch_max_files > 0 && finished == 0) remove_old_files(o_.switch_max_files);
  if (started) check_loop_status();
  if (finished != 0 || ws.error != 0) {
    const std::string path = disk_->current_path().empty() ? o_.output : disk_->current_path();
    fail(kExitIoError, output_error_message(ws.error, path, ws.error_context));
  }
  if (disk_->in_flight() > 0) {
    // Their buffers cannot be freed while the kernel may still read them.
    print_error("output " + disk_->current_path() + ": " + std::to_string(disk_->in_flight()) +
                " asynchronous writes did not complete: the file system hangs; exiting without waiting");
    std::fflush(stderr);
    std::_Exit(kExitIoError);
  }
  ::getrusage(RUSAGE_SELF, &usage_);
}

// The feature sections of a finished file: the host, and what its data
// holds (sample times, the DSOs its samples hit and their build-ids, which
// go into the build-id cache too). Read back from the file itself.
bool Recording::file_features(const core::FinishedFile& file, core::PerfFeatures& out) {
  out.host = host_;
  MappedFile mapped;
  const std::string problem = mapped.map(disk_->current_path());
  if (!problem.empty() || mapped.bytes().size() < file.data_offset + file.data_bytes) {
    features_.note_build_id_problem(disk_->current_path() + ": reading it back: " + problem);
    return true;  // the host's sections; nothing from the data
  }
  std::span<const std::byte> data = mapped.bytes().subspan(file.data_offset, file.data_bytes);
  // -z: what the COMPRESSED records hold (the samples' times and DSOs).
  std::vector<std::byte> expanded;
  bool compressed = false;
  if (const std::string bad = expand_compressed(data, expanded, compressed); !bad.empty()) {
    features_.note_build_id_problem(disk_->current_path() + ": reading it back: " + bad);
  }
  if (compressed) data = expanded;
  if (compressor_ != nullptr) {
    out.file.compressed = core::CompressedFeature{kCompressedFeatureVersion, kCompressedTypeZstd,
                                                  static_cast<std::uint32_t>(compressor_->level()),
                                                  compressor_->file().ratio(), kCompressSliceBytes};
  }
  core::scan_data_section(data, file.data_offset, head_->events(), out.file);
  if (o_.no_buildid) return true;  // -B: no BUILD_ID section, nothing cached (perf's rec->no_buildid)
  HitDsos hits;
  find_hit_dsos(data, file.data_offset, head_->events(), hits, o_.buildid_all);
  std::vector<std::string> problems;
  if (hits.bad_mmap2 > 0) {
    problems.push_back(std::to_string(hits.bad_mmap2) + " MMAP2 records too short or with a build-id over 20 bytes");
  }
  out.file.build_ids = build_id_entries(hits, problems);
  for (const std::string& p : problems) features_.note_build_id_problem(p);
  features_.files++;
  features_.build_ids += out.file.build_ids.size();
  if (!buildid_dir_.empty()) {
    const std::string cached = fill_build_id_cache(buildid_dir_, out.file.build_ids, hits);
    if (!cached.empty() && features_.cache_problem.empty()) features_.cache_problem = cached;
  }
  return true;
}

// --- The summary ---------------------------------------------------------------

void Recording::print_summary(bool started) const {
  if (has_command_ && command_.ran()) {
    print_line("command " + command_.end().text() + ": " + command_text(o_.command));
  }
  const FileStats back = read_back(disk_->paths());
  print_files(back);
  if (!disk_->streaming()) print_events(back);
  print_features();
  print_drops();
  print_writer();
  if (started) print_loop();
  if (started && o_.staged) print_staging();
  if (compressor_ != nullptr) print_compression();
  print_costs();
}

// What the files hold: the writer's counts (the valid prefix after an
// error), and the data-loss metric read back from the files.
void Recording::print_files(const FileStats& back) const {
  const core::WriterStats ws = writer_stats();
  const core::RecordCounts& cut = ws.drops[core::DropCause::output_error].records;
  std::string files;
  for (const std::string& p : disk_->paths()) files += (files.empty() ? "" : ", ") + p;
  if (disk_->streaming()) {
    print_line("streamed " + std::to_string(disk_->stream_bytes()) +
               " bytes to standard output (perf's pipe format, -o -)");
  } else {
    print_line("wrote " + std::to_string(back.files) + " file(s): " + (files.empty() ? "none" : files) + ", " +
               std::to_string(back.file_bytes) + " bytes (data sections " + std::to_string(back.data_bytes) +
               " bytes)");
  }
  if (disk_->counters().files_kept_as_old > 0) {
    print_line("kept " + std::to_string(disk_->counters().files_kept_as_old) +
               " earlier file(s) of the same name as NAME.old");
  }
  if (!disk_->rename_problem().empty()) print_line("warning: " + disk_->rename_problem());
  if (trigger_ != nullptr) {
    const SwitchTrigger::Stats t = trigger_->stats();
    print_line("switch-output-event: " + std::to_string(t.records) + " records in " +
               std::to_string(trigger_->events()) + " rings (an event's on each CPU or task), " +
               std::to_string(t.requests) +
               " switch requests (requests the recording had not taken yet coalesce)");
  }
  print_line("samples written: " + std::to_string(ws.records.samples - cut.samples));
  print_line("records lost: " + std::to_string(ws.records.lost_sum - cut.lost_sum) + " (sum of " +
             std::to_string(ws.records.lost_records - cut.lost_records) + " PERF_RECORD_LOST records)");
  print_line("lost samples (the kernel's count per event, PERF_FORMAT_LOST): " + std::to_string(lost_samples_) +
             (lost_samples_unread_ > 0 ? " (" + std::to_string(lost_samples_unread_) + " events unread)" : ""));
  if (disk_->streaming()) {
    print_line("data-loss metric: not computed with -o - (a stream is not read back; the counts above are the "
               "writer's)");
    return;
  }
  char metric[512];
  std::snprintf(metric, sizeof metric,
                "data-loss metric: %.4f%% (lost time / elapsed, read back from the file%s); lost fraction %.4f%% "
                "(read back: %llu samples, %llu lost)",
                100 * back.loss.loss_metric(), back.files > 1 ? "s" : "", 100 * back.loss.lost_fraction(),
                static_cast<unsigned long long>(back.loss.records.samples),
                static_cast<unsigned long long>(back.loss.records.lost_sum));
  print_line(metric);
  if (!back.problem.empty()) print_line("warning: reading the output back: " + back.problem);
}

// Samples per event and losses per ring, read back from the files.
void Recording::print_events(const FileStats& back) const {
  std::string events;
  for (std::size_t e = 0; e < head_->events().size(); e++) {
    const std::uint64_t n = e < back.samples_per_event.size() ? back.samples_per_event[e] : 0;
    events += (events.empty() ? "" : ", ") + head_->events()[e].name + " " + std::to_string(n);
  }
  print_line("samples per event (read back): " + events);
  std::string rings;
  for (const auto& [cpu, loss] : back.lost_per_ring) {
    rings += (rings.empty() ? "" : ", ") + (cpu == UINT32_MAX ? std::string("no cpu") : "cpu " + std::to_string(cpu)) +
             " " + std::to_string(loss.lost) + " in " + std::to_string(loss.records);
  }
  print_line("records lost per ring (read back): " + (rings.empty() ? std::string("none") : rings));
}

// The feature sections and the build-id cache.
void Recording::print_features() const {
  const core::WriterStats ws = writer_stats();
  print_line("features: " + std::to_string(ws.files_with_features) + " file(s) with feature sections (" +
             std::to_string(ws.feature_bytes) + " bytes); build-ids listed " + std::to_string(features_.build_ids) +
             (buildid_dir_.empty() ? ", no build-id cache (-N)" : ", cached in " + buildid_dir_));
  if (o_.quiet) return;
  if (features_.build_id_problems > 0) {
    print_line("warning: " + std::to_string(features_.build_id_problems) +
               " DSO(s) without a build-id in the files, first: " + features_.first_build_id_problem);
  }
  if (!features_.cache_problem.empty()) print_line("warning: build-id cache: " + features_.cache_problem);
}

// What the recorder itself dropped, once, by cause (core/drops.h): the
// rings' (overwritten gaps, corrupt rings, data abandoned at an early
// end), the AUX areas', and the writer's cut at an output error.
void Recording::print_drops() const {
  core::Drops drops;
  drops.add(loop_.drops);
  drops.add(loop_.aux_drops);
  drops.add(writer_stats().drops);
  // What staging held when the writer failed was cut with the writer's
  // file: more records of that event, not more files (each staged batch
  // is an event of its own in staging_.drops).
  const core::DropCount& staged = staging_.drops[core::DropCause::output_error];
  if (staged.events > 0 && drops[core::DropCause::output_error].events > 0 &&
      staging_.drops.bytes() == staged.records.bytes) {
    drops.add_records(core::DropCause::output_error, staged.records);
  } else {
    drops.add(staging_.drops);
  }
  print_line("recorder drops: " + core::describe(drops));
}

void Recording::print_writer() const {
  const core::WriterStats ws = writer_stats();
  print_line(std::string("writer: ") + core::to_string(wo_.mode) +
             (wo_.mode == core::WriteMode::aio
                  ? " (" + std::to_string(wo_.cblocks) + " control block(s) " +
                        (o_.staged ? "for the staging buffer)" : "per ring)")
                  : "") +
             ", chunks " + std::to_string(ws.chunks) + ", bytes completed " + std::to_string(ws.bytes_completed) +
             ", short writes restarted " + std::to_string(ws.short_writes_restarted) + ", EAGAIN retries " +
             std::to_string(ws.eagain_retries) + ", EAGAIN sync fallbacks " + std::to_string(ws.eagain_sync_fallbacks) +
             ", EINTR retries " + std::to_string(ws.eintr_retries) + ", suspends interrupted " +
             std::to_string(ws.suspend_interrupted) + ", waits for a control block " +
             std::to_string(ws.waits_for_cblock) + ", in flight max " + std::to_string(ws.in_flight_max) +
             ", files " + std::to_string(ws.files) + ", header checkpoints " +
             std::to_string(sink_->counters().header_checkpoints));
}

void Recording::print_loop() const {
  const core::LoopResult& r = loop_;
  print_line(std::string("loop: ") + core::to_string(r.status) + ", rounds " + std::to_string(r.rounds) +
             ", poll timeouts " + std::to_string(r.poll_timeouts) + ", interrupted " +
             std::to_string(r.poll_interrupted) + ", chunks " + std::to_string(r.ring.chunks) + " (wrapped " +
             std::to_string(r.ring.wrapped_chunks) + "), snapshots " + std::to_string(r.ring.snapshots));
}

// The staging buffer and the reading thread's priority.
void Recording::print_staging() const {
  const core::StagingStats& s = staging_;
  print_line("staging: " + std::to_string(so_.bytes) + " bytes, " + std::to_string(s.chunks) + " chunks (" +
             std::to_string(s.bytes) + " bytes) in " + std::to_string(s.writes) + " writes, fill max " +
             std::to_string(s.fill_max) + " bytes, full " + std::to_string(s.full) + " time(s) (" +
             std::to_string(s.full_waits) + " waits, " + seconds_text(s.full_ns) +
             " s: the kernel dropped meanwhile, see records lost), wrap skips " + std::to_string(s.wrap_skips) +
             ", rounds " + std::to_string(s.rounds) + " (" + std::to_string(s.rounds_merged) + " merged, " +
             std::to_string(s.rounds_absorbed) + " absorbed)");
  if (o_.cut_stacks != RecordOptions::CutStacks::off) {
    print_line("stack dumps cut: " + std::to_string(stack_cut_.samples_cut) + " samples (" +
               std::to_string(stack_cut_.bytes_cut) + " bytes, in " + std::to_string(stack_cut_.chunks_cut) +
               " chunks; " + std::to_string(stack_cut_.dumps_seen) +
               " dumps looked at while cutting); each one's dyn_size says what it kept");
  }
  if (readers_.threads > 0) {
    print_line("reading threads: " + std::to_string(readers_.threads) + ", one per CPU, " +
               std::to_string(readers_.pinned) + " pinned to it" +
               (readers_.pin_problem.empty() ? "" : " (not pinned: " + readers_.pin_problem + ")") +
               "; finished-round markers " + std::to_string(readers_.markers) + ", rounds without one " +
               std::to_string(readers_.rounds_unmarked) +
               (readers_.help ? "; chunks read from another CPU's ring " + std::to_string(loop_.chunks_helped) +
                                    ", rings passed by as locked " + std::to_string(loop_.help_busy)
                              : "; each its own CPU's rings only (--readers cpu-own)"));
  }
  std::string priority = "reader thread: " + to_string(reader_priority_.got);
  if (!reader_priority_.fallback.empty()) priority += " (not higher: " + reader_priority_.fallback + ")";
  print_line(priority);
}

// -z: what went into COMPRESSED records and what came out.
void Recording::print_compression() const {
  const CompressionCounts& c = compressor_->total();
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.3f",
                c.bytes_out == 0 ? 0.0 : static_cast<double>(c.bytes_in) / static_cast<double>(c.bytes_out));
  print_line("compression: zstd level " + std::to_string(compressor_->level()) + ", " + std::to_string(c.bytes_in) +
             " bytes of records in " + std::to_string(c.records) + " COMPRESSED records of " +
             std::to_string(c.bytes_out) + " bytes, ratio " + ratio + " (by the writer thread)");
}

// Rotation, synthesis, CPU time.
void Recording::print_costs() const {
  if (o_.rotates()) {
    const SinkCounters& c = sink_->counters();
    print_line("rotation: " + std::to_string(c.files_synthesized) + " new file(s), " +
               std::to_string(c.side_band_records_kept) + " side-band records kept for them (" +
               std::to_string(c.side_band_records_dropped) + " over the " + std::to_string(kSideBandBytesMax >> 20) +
               " MiB bound)" +
               (o_.overwrite ? ", " + std::to_string(c.snapshot_files) + " requested snapshot(s)" : "") +
               (o_.switch_max_files > 0 ? ", " + std::to_string(sink_files_removed_) +
                                              " oldest file(s) removed (--switch-max-files " +
                                              std::to_string(o_.switch_max_files) + ")"
                                        : ""));
  }
  if (o_.delay_ms > 0) {
    print_line("delay: " + std::string(session_->delayed_enable_done()
                                           ? "the events were enabled " + std::to_string(o_.delay_ms) +
                                                 " ms after the start (-D), the side-band records from the start"
                                           : "the recording ended before the " + std::to_string(o_.delay_ms) +
                                                 " ms delay (-D): no event was enabled but the side-band one"));
  }
  if (o_.start_disabled) {
    print_line("delay: -D -1: the events (but the side-band one) started disabled, enabled " +
               std::to_string(control_ ? control_->stats().enables : 0) + " time(s) by --control");
  }
  print_control();
  print_line("synthesized: " + std::to_string(synthesis_.processes) + " processes, " +
             std::to_string(synthesis_.threads) + " threads, " + std::to_string(synthesis_.maps) + " mappings" +
             (o_.all_cgroups ? ", " + std::to_string(cgroups_synthesized_) + " cgroups" : "") +
             (synthesis_.maps_cut > 0 ? ", " + std::to_string(synthesis_.maps_cut) + " cut by --proc-map-timeout"
                                      : ""));
  print_line("cpu time: " + seconds_text(cpu_ns(usage_.ru_utime)) + " s user, " +
             seconds_text(cpu_ns(usage_.ru_stime)) + " s system, in " + seconds_text(elapsed_ns_) +
             " s of recording (before the read-back)");
}

void Recording::print_control() const {
  if (!control_) return;
  const ControlStats& c = control_->stats();
  print_line("control: " + std::to_string(c.commands) + " command(s): " + std::to_string(c.enables) + " enable, " +
             std::to_string(c.disables) + " disable, " + std::to_string(c.unknown) + " not understood, " +
             std::to_string(c.errors) + " failed; " + std::to_string(c.acks) + " ack(s)" +
             (c.stopped ? "; stopped by a stop command" : "") + (c.hung_up ? "; the writer closed its end" : ""));
}

}  // namespace

namespace {

// Ends this process by `signal`, as the command ended (perf record does
// the same): a shell sees 128 + signal. No core dump of the recorder's own.
[[noreturn]] void end_by_signal(int signal) {
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  std::fflush(nullptr);
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(signal, &dfl, nullptr);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signal);
  ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
  ::raise(signal);
  std::_Exit(128 + signal);  // a signal whose default is to ignore it
}

}  // namespace

int record(const RecordOptions& options) {
  int command_signal = 0;
  int status = kExitOk;
  // A stream whose reader went away (| head) is a write error (EPIPE): the
  // recording stops and says so, rather than dying of SIGPIPE in silence.
  if (options.pipe_output()) ::signal(SIGPIPE, SIG_IGN);
  {
    Recording recording(options);
    status = recording.run();
    command_signal = recording.command_signal();
  }
  trace_event_opens(nullptr);  // -vv's
  // As perf record (__cmd_record, record__sig_exit): a command ended by a
  // signal (also the SIGTERM the recorder sends it when stopped first)
  // ends the recorder by that signal; else a stop signal the recorder
  // received is re-raised; else the command's exit code.
  if (status == kExitOk && command_signal != 0) end_by_signal(command_signal);
  if (status == kExitOk && received_stop_signal() != 0) end_by_signal(received_stop_signal());
  return status;
}

}  // namespace ringsim::real
