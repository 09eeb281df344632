// One child process, from start to reaping: started from a command line
// (execvp) or a function (in a forked child), its stdout and stderr
// inherited, redirected to files or captured, optionally held before exec
// until released, signalled, waited for with a deadline (SIGKILL at the
// deadline), and its wait status and rusage collected (wait4).
//
// Users: the recorder starts its command held until the events and the
// output file are ready (real/recorder.cc); the tests run the recorder, perf
// and forked workloads (real/testing, real/tests); the benchmark runs each
// recorder and takes its CPU time from the rusage (real/bench).
//
// The parent watches the child through a pidfd (pidfd_open(2), Linux 5.3):
// a wait with a deadline is one poll(2), and has_exited() /
// wait_until_exited() see the exit without reaping, so the pid stays the
// child's (a zombie) and signal() stays safe until wait() reaps it.
//
// Threads: one thread owns a Process. Meanwhile has_exited() and
// wait_until_exited() may run on another thread (they read only the pidfd);
// the owner joins that thread before the Process is destroyed.
//
// Every loop is bounded; EINTR is retried a bounded number of times.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "real/error.h"

namespace ringsim::real {

// The child's exit status when exec fails, or when a held child is never
// released (as shells report a command that could not run).
inline constexpr int kChildCannotRunStatus = 127;

// wait(): no deadline.
inline constexpr std::uint64_t kNoDeadline = std::numeric_limits<std::uint64_t>::max();

// Where one of the child's output streams goes.
struct Output {
  enum class Kind : std::uint8_t { inherit, file, capture };
  Kind kind = Kind::inherit;
  std::string path;  // Kind::file: created or truncated, mode 0644

  static Output inherited() { return {}; }
  // stdout and stderr to the same path share one descriptor (one file,
  // both streams in the order they were written).
  static Output file(std::string path) { return Output{Kind::file, std::move(path)}; }
  // Into an anonymous in-memory file (memfd), read with captured_*().
  static Output captured() { return Output{Kind::capture, ""}; }
};

struct ProcessOptions {
  Output out;  // stdout
  Output err;  // stderr
  // The child waits, before exec (or its function), until release(); if
  // the Process is waited for or destroyed first, it exits with
  // kChildCannotRunStatus without running anything. start() returns once
  // the child is ready (past its prepare, waiting), as perf's workload.
  bool hold = false;
  // Runs in the child after the redirections and before the hold and the
  // exec: 0 to go on, else the child exits with that status. Only
  // async-signal-safe calls when the parent has threads.
  std::function<int()> prepare;
};

struct WaitStatus {
  bool reaped = false;     // false: wait4 failed (error says why)
  bool timed_out = false;  // the deadline passed: the child was killed (SIGKILL)
  int status = 0;          // wait status
  int error = 0;           // errno of a failed wait4
  rusage usage{};          // the child's, with its reaped descendants'

  bool exited() const;
  int exit_code() const;  // -1 unless exited()
  bool signaled() const;
  int term_signal() const;  // 0 unless signaled()
  double cpu_seconds() const;  // user + system
  // "exited with status 0", "ended by signal 9", ... for messages.
  std::string text() const;
};

class Process {
 public:
  Process() = default;
  // A child still there is killed (SIGKILL) and reaped.
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  // Starts argv (argv[0] searched in PATH). Without hold, returns once the
  // child has exec'd, or with the exec's errno ("cannot run ..."; the child
  // has then exited with kChildCannotRunStatus). Other errors (pipes, the
  // output files, fork, pidfd_open) leave no child.
  Error start(const std::vector<std::string>& argv, const ProcessOptions& options = {});
  // Runs body() in a forked child, which exits with its return value. In
  // the child only async-signal-safe calls when the parent has threads;
  // stdio buffers are not flushed at its exit (write(2) to 1 or 2).
  Error start_function(std::function<int()> body, const ProcessOptions& options = {});

  // A held child goes on: exec (returning its errno as start() does) or its
  // function.
  Error release();
  // The same without waiting for the exec (perf's evlist__start_workload
  // does not wait either): the caller goes on at once, and learns whether
  // the exec failed from exec_outcome() once the child has exited or
  // exec'd. Only a failure to send is returned here.
  Error release_without_waiting();
  // After release_without_waiting(): waits for the exec's outcome (blocks
  // until the child has exec'd or exited) and returns what release() would
  // have; "" (ok) again on later calls, with exec_error() kept.
  Error exec_outcome();
  // 0, or the errno of the child's failed exec once known.
  int exec_error() const { return exec_error_; }

  pid_t pid() const { return pid_; }
  // The pidfd that watches it (-1 before start()): readable once it exits.
  int pidfd() const { return pidfd_; }
  bool started() const { return pid_ > 0; }
  // kill(2): 0 or the errno; ESRCH once reaped or never started.
  int signal(int number);

  // The child has exited (reaped or not). Does not block.
  bool has_exited() const;
  // Blocks until the child has exited (true), without reaping it; false if
  // the wait itself failed.
  bool wait_until_exited() const;

  // Waits for the exit, kills the child (SIGKILL) once timeout_ns has
  // passed, reaps it. Again after reaping: the same result.
  WaitStatus wait(std::uint64_t timeout_ns = kNoDeadline);

  // What a captured stream holds ("" if not captured).
  std::string captured_out() const;
  std::string captured_err() const;

 private:
  Error launch(const std::vector<std::string>& argv, std::function<int()> body, const ProcessOptions& options);
  Error await_exec();
  bool poll_exit(std::uint64_t timeout_ns) const;
  void close_go();

  pid_t pid_ = -1;
  int pidfd_ = -1;
  int go_fd_ = -1;         // the parent's end of the hold channel
  int exec_fd_ = -1;       // read end of the exec-error pipe
  int out_capture_fd_ = -1;
  int err_capture_fd_ = -1;
  int exec_error_ = 0;
  std::string name_;       // argv[0], for messages
  bool reaped_ = false;
  WaitStatus result_;
};

}  // namespace ringsim::real
