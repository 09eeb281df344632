#include "real/recorder.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/verify.h"
#include "real/file_stats.h"
#include "real/synthesize.h"

// The core, compiled for the real backend with the file writer.
template class ringsim::core::TraceWriter<ringsim::real::RealDisk>;
template class ringsim::core::RecordLoop<ringsim::real::RealSession, ringsim::real::RecorderSink>;

namespace ringsim::real {
namespace {

constexpr std::uint64_t kMs = 1'000'000;
constexpr std::uint64_t kNsPerSecond = 1'000'000'000;
// The command gets this long to exit after SIGTERM, then SIGKILL.
constexpr std::uint64_t kCommandGraceNs = 5'000 * kMs;
// A round budget no recording reaches (2^62 rounds): the loop stays
// bounded without ending a long recording.
constexpr std::uint64_t kRoundsMax = std::uint64_t{1} << 62;
constexpr std::uint32_t kEintrRetriesMax = 1'000'000;

std::uint64_t monotonic_ns() {
  timespec now{};
  const int rc = ::clock_gettime(CLOCK_MONOTONIC, &now);
  VERIFY(rc == 0);
  return static_cast<std::uint64_t>(now.tv_sec) * kNsPerSecond + static_cast<std::uint64_t>(now.tv_nsec);
}

void sleep_for_ns(std::uint64_t duration_ns) {
  timespec pause{};
  pause.tv_sec = static_cast<time_t>(duration_ns / kNsPerSecond);
  pause.tv_nsec = static_cast<long>(duration_ns % kNsPerSecond);
  ::nanosleep(&pause, nullptr);
}

std::string errno_text(int error) { return errno_name(error) + " (" + std::strerror(error) + ")"; }

// The command: forked at start(), held before exec until go(), waited for
// by a thread of its own that asks the session to stop when it exits.
class Command {
 public:
  Command() = default;
  Command(const Command&) = delete;
  Command& operator=(const Command&) = delete;
  ~Command() { finish(kCommandGraceNs); }

  Error start(const std::vector<std::string>& argv) {
    VERIFY(!argv.empty());
    VERIFY(pid_ < 0);
    // Everything the child needs is prepared before fork: after it, the
    // child only makes async-signal-safe calls.
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    int go[2];
    int exec_error[2];
    if (::pipe2(go, O_CLOEXEC) != 0) return Error{errno, "pipe2: " + errno_text(errno)};
    if (::pipe2(exec_error, O_CLOEXEC) != 0) {
      const int error = errno;
      ::close(go[0]);
      ::close(go[1]);
      return Error{error, "pipe2: " + errno_text(error)};
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
      const int error = errno;
      for (const int fd : {go[0], go[1], exec_error[0], exec_error[1]}) ::close(fd);
      return Error{error, "fork for the command: " + errno_text(error) + ": too many processes? (ulimit -u)"};
    }
    if (pid == 0) {
      ::close(go[1]);
      ::close(exec_error[0]);
      char byte = 0;
      ssize_t got = -1;
      for (std::uint32_t i = 0; i < kEintrRetriesMax && got < 0; i++) {
        got = ::read(go[0], &byte, 1);
        if (got < 0 && errno != EINTR) break;
      }
      if (got != 1) ::_exit(kExitCommandFailed);  // the recorder gave up before go()
      ::execvp(args[0], args.data());
      const int error = errno;
      const ssize_t written = ::write(exec_error[1], &error, sizeof error);
      static_cast<void>(written);
      ::_exit(kExitCommandFailed);
    }
    ::close(go[0]);
    ::close(exec_error[1]);
    pid_ = pid;
    go_fd_ = go[1];
    exec_error_fd_ = exec_error[0];
    return Error{};
  }

  pid_t pid() const { return pid_; }

  // Lets the command exec. exec_error_out: 0, or the errno of its failed
  // exec (it has then exited).
  Error go(int& exec_error_out) {
    VERIFY(pid_ > 0);
    VERIFY(go_fd_ >= 0);
    exec_error_out = 0;
    const ssize_t written = ::write(go_fd_, "g", 1);
    const int write_error = errno;
    ::close(go_fd_);
    go_fd_ = -1;
    if (written != 1) return Error{write_error, "starting the command: " + errno_text(write_error)};
    // EOF: exec succeeded (the pipe was close-on-exec).
    int error = 0;
    ssize_t got = -1;
    for (std::uint32_t i = 0; i < kEintrRetriesMax && got < 0; i++) {
      got = ::read(exec_error_fd_, &error, sizeof error);
      if (got < 0 && errno != EINTR) break;
    }
    ::close(exec_error_fd_);
    exec_error_fd_ = -1;
    if (got == static_cast<ssize_t>(sizeof error)) exec_error_out = error;
    return Error{};
  }

  // From now on its exit asks `session` to stop.
  void start_waiter(RealSession& session) {
    VERIFY(pid_ > 0);
    VERIFY(!waiter_.joinable());
    waiter_ = std::thread([this, &session] {
      int status = 0;
      pid_t got = -1;
      for (std::uint32_t i = 0; i < kEintrRetriesMax && got < 0; i++) {
        got = ::waitpid(pid_, &status, 0);
        if (got < 0 && errno != EINTR) break;
      }
      status_.store(got == pid_ ? status : -1);
      exited_.store(true, std::memory_order_release);
      session.request_stop();
    });
  }

  bool exited() const { return exited_.load(std::memory_order_acquire); }
  int status() const { return status_.load(); }

  // Ends the command if it still runs (SIGTERM, then SIGKILL after
  // grace_ns, as perf does) and reaps it.
  void finish(std::uint64_t grace_ns) {
    if (pid_ <= 0) return;
    if (go_fd_ >= 0) {
      // Never let go: closing the pipe makes it exit.
      ::close(go_fd_);
      go_fd_ = -1;
    }
    if (exec_error_fd_ >= 0) {
      ::close(exec_error_fd_);
      exec_error_fd_ = -1;
    }
    if (waiter_.joinable()) {
      if (!exited()) ::kill(pid_, SIGTERM);
      const std::uint64_t deadline_ns = monotonic_ns() + grace_ns;
      for (std::uint32_t i = 0; i < 100'000 && !exited() && monotonic_ns() < deadline_ns; i++) sleep_for_ns(10 * kMs);
      if (!exited()) ::kill(pid_, SIGKILL);
      waiter_.join();
    } else if (!reaped_) {
      int status = 0;
      pid_t got = -1;
      for (std::uint32_t i = 0; i < kEintrRetriesMax && got < 0; i++) {
        got = ::waitpid(pid_, &status, 0);
        if (got < 0 && errno != EINTR) break;
      }
      status_.store(got == pid_ ? status : -1);
      exited_.store(true);
    }
    reaped_ = true;
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  int go_fd_ = -1;
  int exec_error_fd_ = -1;
  bool reaped_ = false;
  std::thread waiter_;
  std::atomic<bool> exited_{false};
  std::atomic<int> status_{0};
};

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
    case EINVAL:
      return mapping ? kExitOsError : kExitUnavailable;
    default:
      return kExitOsError;
  }
}

std::string session_error_message(const Error& error, const RecordOptions& o, const perf_event_attr& attr) {
  const bool opening = error.message.find("perf_event_open") != std::string::npos;
  std::string message = opening ? "-e " + o.event + ": " + error.message : error.message;
  if (opening && (error.error == EACCES || error.error == EPERM) && attr.exclude_kernel == 0 && !o.system_wide) {
    message += "; or record user space only (-e " + o.event + ":u)";
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

std::string command_text(const std::vector<std::string>& command) {
  std::string out;
  for (const std::string& a : command) out += (out.empty() ? "" : " ") + a;
  return out;
}

}  // namespace

// --- RecorderSink --------------------------------------------------------------

RecorderSink::RecorderSink(Writer& writer, RealDisk& disk, const core::PerfDataHead& head,
                           std::uint64_t header_interval_ns, bool keep_side_band,
                           std::function<int(std::uint32_t)> on_new_file)
    : writer_(writer),
      disk_(disk),
      head_(head),
      interval_ns_(header_interval_ns),
      keep_side_band_(keep_side_band),
      on_new_file_(std::move(on_new_file)),
      file_index_(writer.file_index()) {}

std::span<std::byte> RecorderSink::acquire(std::size_t mapping) {
  const std::span<std::byte> buffer = writer_.acquire(mapping);
  if (keep_side_band_) {
    if (mapping >= acquired_.size()) acquired_.resize(mapping + 1);
    acquired_[mapping] = buffer;
  }
  return buffer;
}

int RecorderSink::commit(std::size_t mapping, std::uint64_t bytes, const core::RecordCounts& counts) {
  if (keep_side_band_) {
    VERIFY(mapping < acquired_.size());
    VERIFY(bytes <= acquired_[mapping].size());
    // The loop walked these records already: they are whole.
    core::RecordCounts again;
    core::walk_records(std::span<const std::byte>(acquired_[mapping].data(), bytes), again,
                       [this](const perf_event_header& header, std::span<const std::byte> record) {
                         if (header.type != PERF_RECORD_COMM && header.type != PERF_RECORD_MMAP &&
                             header.type != PERF_RECORD_MMAP2) {
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
  return writer_.commit(mapping, bytes, counts);
}

int RecorderSink::end_round() {
  const int rc = writer_.end_round();
  if (rc < 0) return rc;
  if (writer_.file_index() != file_index_) {
    // A new file: it needs the synthesized records too; its header has not
    // been rewritten yet.
    file_index_ = writer_.file_index();
    checkpointed_bytes_ = 0;
    const int synthesized = on_new_file_(file_index_);
    if (synthesized < 0) return synthesized;
    counters_.files_synthesized++;
    checkpoint();
  }
  if (interval_ns_ > 0) {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    const std::uint64_t now_ns =
        static_cast<std::uint64_t>(now.tv_sec) * kNsPerSecond + static_cast<std::uint64_t>(now.tv_nsec);
    if (now_ns - last_checkpoint_ns_ >= interval_ns_) {
      last_checkpoint_ns_ = now_ns;
      checkpoint();
    }
  }
  return 0;
}

void RecorderSink::checkpoint() {
  if (interval_ns_ == 0 || writer_.failed() || !disk_.file_open()) return;
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
    counters_.header_checkpoints++;
  } else {
    // Not fatal: the file keeps its previous header; the final fix-up
    // reports an error if writing fails for good.
    counters_.header_checkpoint_failures++;
  }
}

// --- record() ------------------------------------------------------------------

int record(const RecordOptions& o) {
  perf_event_attr attr{};
  if (const std::string problem = make_attr(o, attr); !problem.empty()) {
    print_error(problem + " (see --help)");
    return kExitUsage;
  }
  std::vector<int> cpus;
  if (const Error e = online_cpus(cpus); !e.ok()) {
    print_error(e.message);
    return kExitOsError;
  }
  if (const Error e = install_signal_handlers(); !e.ok()) {
    print_error(e.message);
    return kExitOsError;
  }
  struct RestoreSignals {
    ~RestoreSignals() { restore_signal_handlers(); }
  } restore_signals;

  const bool has_command = !o.command.empty();
  // Declared before the session: once its waiter runs (start_waiter) it
  // refers to the session, and command.finish() below joins it before the
  // session goes away; every return before that point is before
  // start_waiter.
  Command command;
  if (has_command) {
    if (const Error e = command.start(o.command); !e.ok()) {
      print_error(e.message);
      return kExitOsError;
    }
  }

  // The recorder's scheduling, once the command (which keeps the normal
  // scheduler) is forked; threads created later (glibc's AIO helpers, the
  // command's waiter) inherit it.
  if (o.realtime_priority > 0) {
    sched_param param{};
    param.sched_priority = static_cast<int>(o.realtime_priority);
    if (::sched_setscheduler(0, SCHED_FIFO, &param) != 0) {
      const int error = errno;
      print_error("--realtime " + std::to_string(o.realtime_priority) + ": sched_setscheduler(SCHED_FIFO): " +
                  errno_text(error) +
                  (error == EPERM ? ": needs root or CAP_SYS_NICE (or an RLIMIT_RTPRIO of at least the priority)" : ""));
      return error == EPERM ? kExitNoPermission : kExitOsError;
    }
  }

  // Events.
  const std::vector<RingSpec> specs = o.system_wide ? system_wide_specs(attr, cpus, o.mmap_pages)
                                                    : command_specs(attr, command.pid(), cpus, o.mmap_pages);
  std::unique_ptr<RealSession> session;
  if (const Error e = RealSession::open(specs, session); !e.ok()) {
    print_error(session_error_message(e, o, attr));
    return session_error_status(e);
  }
  core::EventDescription description;
  description.attr = attr;
  for (std::size_t i = 0; i < session->mapping_count(); i++) {
    std::uint64_t id = 0;
    if (const Error e = session->event(i).id(id); !e.ok()) {
      print_error(e.message);
      return kExitOsError;
    }
    description.ids.push_back(id);
  }
  const core::PerfDataHead head({description});

  // Output.
  core::WriterOptions wo;
  wo.mode = o.aio_cblocks == 0 ? core::WriteMode::serial : core::WriteMode::aio;
  wo.cblocks = o.aio_cblocks == 0 ? 1 : o.aio_cblocks;
  wo.mappings = static_cast<std::uint32_t>(session->mapping_count());
  wo.buffer_bytes = session->data_size_bytes_max();
  wo.rotate_bytes = o.switch_output_bytes;
  if (const std::string problem = core::validate(wo); !problem.empty()) {
    print_error("writer options: " + problem);
    return kExitUsage;
  }
  const std::uint32_t slots = wo.mappings * (wo.mode == core::WriteMode::aio ? wo.cblocks : 1);
  RealDisk disk(o.output, slots);
  Writer writer(disk, wo, head);
  if (const int rc = writer.start(); rc != 0) {
    const bool created = disk.counters().files_opened > 0;
    print_error(output_error_message(-rc, o.output, created ? "cannot write its header" : "cannot create it"));
    return created ? kExitIoError : kExitCantCreate;
  }

  int status = kExitOk;
  std::string error_line;
  auto fail = [&](int code, const std::string& line) {
    if (status != kExitOk) return;  // the first error is the one reported
    status = code;
    error_line = line;
  };

  // Synthesized records: at the start of every file.
  RecordBuilder builder(attr.sample_type, attr.sample_id_all != 0);
  SynthesisStats synthesis;
  std::string kernel_warning;
  // Set once the sink exists: a rotated file also gets the side-band
  // records the kernel wrote into the earlier files.
  const RecorderSink* side_band_source = nullptr;
  auto synthesize = [&](std::uint32_t file_index) -> int {
    builder.clear();
    kernel_warning = synthesize_kernel_mmap(builder);
    if (o.system_wide) {
      synthesize_all_processes(builder, synthesis);
    } else if (file_index > 0 && has_command && command.pid() > 0) {
      for (const pid_t pid : process_tree(command.pid())) synthesize_process(pid, builder, synthesis);
    }
    if (file_index > 0 && side_band_source != nullptr) builder.add_records(side_band_source->side_band());
    if (builder.bytes().empty()) return 0;
    return writer.append(builder.bytes(), builder.counts());
  };
  if (synthesize(0) != 0) {
    fail(kExitIoError, output_error_message(writer.stats().error, disk.current_path(), writer.stats().error_context));
  }
  if (!kernel_warning.empty() && !o.quiet) print_line("warning: " + kernel_warning);

  // Start.
  bool run_loop = status == kExitOk;
  if (run_loop && o.system_wide) {
    if (const Error e = session->enable_all(); !e.ok()) {
      fail(kExitOsError, e.message);
      run_loop = false;
    }
  }
  if (run_loop && has_command) {
    int exec_error = 0;
    if (const Error e = command.go(exec_error); !e.ok()) {
      fail(kExitOsError, e.message);
      run_loop = false;
    } else if (exec_error != 0) {
      fail(kExitCommandFailed, "cannot run " + o.command.front() + ": " + errno_text(exec_error) +
                                   (exec_error == ENOENT ? ": check the command name and PATH" : ""));
      run_loop = false;
    } else {
      command.start_waiter(*session);
    }
  }

  RecorderSink sink(writer, disk, head, o.header_interval_ms * kMs, o.switch_output_bytes > 0, synthesize);
  side_band_source = &sink;
  sink.checkpoint();
  core::LoopResult loop_result;
  const std::uint64_t start_ns = monotonic_ns();
  if (run_loop) {
    core::LoopOptions lo;
    lo.poll_timeout_ns = 100 * kMs;
    lo.rounds_max = kRoundsMax;
    // With AIO, one chunk per ring per round (as perf reads): a second
    // chunk of the same ring would wait for the first one's control block
    // while the other rings fill (measured: docs/recorder.md).
    lo.drain_chunks_max = wo.mode == core::WriteMode::aio ? 1 : 4;
    core::RecordLoop<RealSession, RecorderSink> loop(*session, sink, session->mode(), lo);
    loop_result = loop.run();
  } else {
    session->disable_all();
  }
  const std::uint64_t elapsed_ns = monotonic_ns() - start_ns;
  command.finish(kCommandGraceNs);

  const int finished = writer.finish();
  const core::WriterStats& ws = writer.stats();
  if (run_loop) {
    switch (loop_result.status) {
      case core::LoopStatus::done:
      case core::LoopStatus::stopped:
        break;
      case core::LoopStatus::sink_error:
        break;  // the writer's error, below
      case core::LoopStatus::poll_error:
        fail(kExitOsError, "poll: " + errno_text(loop_result.error));
        break;
      case core::LoopStatus::rounds_exhausted:
        fail(kExitSoftware, "the record loop ran out of rounds (" + std::to_string(kRoundsMax) + "): a bug");
        break;
    }
  }
  if (finished != 0 || ws.error != 0) {
    const std::string path = disk.current_path().empty() ? o.output : disk.current_path();
    fail(kExitIoError, output_error_message(ws.error, path, ws.error_context));
  }
  if (disk.in_flight() > 0) {
    // Their buffers cannot be freed while the kernel may still read them.
    print_error("output " + disk.current_path() + ": " + std::to_string(disk.in_flight()) +
                " asynchronous writes did not complete: the file system hangs; exiting without waiting");
    std::fflush(stderr);
    std::_Exit(kExitIoError);
  }
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);

  if (status != kExitOk) print_error(error_line);
  if (o.quiet) return status;

  // Summary.
  const std::vector<std::string>& paths = disk.paths();
  const FileStats back = read_back(paths);
  const core::RecordCounts& cut = ws.drops[core::DropCause::output_error].records;
  const std::uint64_t samples = ws.records.samples - cut.samples;
  const std::uint64_t lost_sum = ws.records.lost_sum - cut.lost_sum;
  const std::uint64_t lost_records = ws.records.lost_records - cut.lost_records;
  std::string files;
  for (const std::string& p : paths) files += (files.empty() ? "" : ", ") + p;
  if (has_command && command.exited()) {
    const int s = command.status();
    if (WIFEXITED(s)) {
      print_line("command exited with status " + std::to_string(WEXITSTATUS(s)) + ": " + command_text(o.command));
    } else if (WIFSIGNALED(s)) {
      print_line("command ended by signal " + std::to_string(WTERMSIG(s)) + ": " + command_text(o.command));
    }
  }
  print_line("wrote " + std::to_string(back.files) + " file(s): " + (files.empty() ? "none" : files) + ", " +
             std::to_string(back.file_bytes) + " bytes (data sections " + std::to_string(back.data_bytes) + " bytes)");
  print_line("samples written: " + std::to_string(samples));
  print_line("records lost: " + std::to_string(lost_sum) + " (sum of " + std::to_string(lost_records) +
             " PERF_RECORD_LOST records)");
  char metric[512];
  std::snprintf(metric, sizeof metric,
                "data-loss metric: %.4f%% (lost time / elapsed, read back from the file%s); lost fraction %.4f%% "
                "(read back: %llu samples, %llu lost)",
                100 * back.loss.loss_metric(), back.files > 1 ? "s" : "",
                100 * back.loss.lost_fraction(), static_cast<unsigned long long>(back.loss.records.samples),
                static_cast<unsigned long long>(back.loss.records.lost_sum));
  print_line(metric);
  if (!back.problem.empty()) print_line("warning: reading the output back: " + back.problem);
  if (cut.bytes > 0) {
    print_line("cut off by the output error: " + std::to_string(cut.samples) + " samples, " +
               std::to_string(cut.bytes) + " bytes");
  }
  print_line(std::string("writer: ") + core::to_string(wo.mode) +
             (wo.mode == core::WriteMode::aio ? " (" + std::to_string(wo.cblocks) + " control block(s) per ring)" : "") +
             ", chunks " + std::to_string(ws.chunks) + ", bytes completed " + std::to_string(ws.bytes_completed) +
             ", short writes restarted " + std::to_string(ws.short_writes_restarted) + ", EAGAIN retries " +
             std::to_string(ws.eagain_retries) + ", EAGAIN sync fallbacks " + std::to_string(ws.eagain_sync_fallbacks) +
             ", EINTR retries " + std::to_string(ws.eintr_retries) + ", suspends interrupted " +
             std::to_string(ws.suspend_interrupted) + ", waits for a control block " +
             std::to_string(ws.waits_for_cblock) + ", in flight max " + std::to_string(ws.in_flight_max) +
             ", files " + std::to_string(ws.files) + ", header checkpoints " +
             std::to_string(sink.counters().header_checkpoints));
  if (run_loop) {
    const core::LoopResult& r = loop_result;
    print_line(std::string("loop: ") + core::to_string(r.status) + ", rounds " + std::to_string(r.rounds) +
               ", poll timeouts " + std::to_string(r.poll_timeouts) + ", interrupted " +
               std::to_string(r.poll_interrupted) + ", chunks " + std::to_string(r.ring.chunks) + " (wrapped " +
               std::to_string(r.ring.wrapped_chunks) + "), snapshots " + std::to_string(r.ring.snapshots) +
               ", overwritten " + std::to_string(r.drops[core::DropCause::overwritten].records.bytes) +
               " bytes, corrupt rings " + std::to_string(r.mappings_corrupt()) + ", abandoned " +
               std::to_string(r.drops[core::DropCause::abandoned].records.bytes) + " bytes");
  }
  if (o.switch_output_bytes > 0) {
    print_line("rotation: " + std::to_string(sink.counters().files_synthesized) + " new file(s), " +
               std::to_string(sink.counters().side_band_records_kept) + " side-band records kept for them (" +
               std::to_string(sink.counters().side_band_records_dropped) + " over the " +
               std::to_string(kSideBandBytesMax >> 20) + " MiB bound)");
  }
  print_line("synthesized: " + std::to_string(synthesis.processes) + " processes, " +
             std::to_string(synthesis.threads) + " threads, " + std::to_string(synthesis.maps) + " mappings");
  print_line("cpu time: " + seconds_text(cpu_ns(usage.ru_utime)) + " s user, " + seconds_text(cpu_ns(usage.ru_stime)) +
             " s system, in " + seconds_text(elapsed_ns) + " s of recording (before the read-back)");
  return status;
}

}  // namespace ringsim::real
