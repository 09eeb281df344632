// The process helper (real/process.h): output redirected and captured,
// exec errors, holding before exec, deadlines, signals, functions in a
// forked child, waiting without reaping, rusage, cleanup.
//
// The deadlines here only decide when a child is killed; no check depends
// on how long anything took.
#include "real/process.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace ringsim::real {
namespace {

constexpr std::uint64_t kMs = 1'000'000;
constexpr std::uint64_t kDeadlineNs = 60'000 * kMs;  // only turns a hang into a failure

ProcessOptions captured() {
  ProcessOptions o;
  o.out = Output::captured();
  o.err = Output::captured();
  return o;
}

std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name + "-" + std::to_string(::getpid());
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(Process, CapturesStdoutAndStderrAndTheExitCode) {
  Process p;
  const Error e = p.start({"sh", "-c", "echo out; echo err >&2; exit 3"}, captured());
  ASSERT_TRUE(e.ok()) << e.message;
  EXPECT_EQ(p.exec_error(), 0);
  const WaitStatus w = p.wait(kDeadlineNs);
  EXPECT_TRUE(w.reaped);
  EXPECT_FALSE(w.timed_out);
  EXPECT_TRUE(w.exited());
  EXPECT_EQ(w.exit_code(), 3);
  EXPECT_EQ(w.text(), "exited with status 3");
  EXPECT_EQ(p.captured_out(), "out\n");
  EXPECT_EQ(p.captured_err(), "err\n");
  // Waiting again gives the same result; a reaped child takes no signal.
  EXPECT_EQ(p.wait(kDeadlineNs).exit_code(), 3);
  EXPECT_EQ(p.signal(SIGTERM), ESRCH);
}

TEST(Process, StdoutAndStderrToOneFileKeepBothStreams) {
  const std::string log = temp_path("both.log");
  ProcessOptions o;
  o.out = Output::file(log);
  o.err = Output::file(log);
  Process p;
  ASSERT_TRUE(p.start({"sh", "-c", "echo one; echo two >&2; echo three"}, o).ok());
  EXPECT_EQ(p.wait(kDeadlineNs).exit_code(), 0);
  EXPECT_EQ(read_file(log), "one\ntwo\nthree\n");
  EXPECT_EQ(p.captured_out(), "");  // not captured
}

TEST(Process, AnOutputThatCannotBeCreatedStartsNothing) {
  ProcessOptions o;
  o.out = Output::file("/nonexistent-dir/x.log");
  Process p;
  const Error e = p.start({"true"}, o);
  EXPECT_EQ(e.error, ENOENT);
  EXPECT_NE(e.message.find("/nonexistent-dir/x.log"), std::string::npos) << e.message;
  EXPECT_FALSE(p.started());
}

TEST(Process, ExecFailureIsReportedWithItsErrno) {
  Process p;
  const Error e = p.start({"/nonexistent-dir/command"}, captured());
  EXPECT_EQ(e.error, ENOENT);
  EXPECT_EQ(p.exec_error(), ENOENT);
  EXPECT_EQ(e.message, "cannot run /nonexistent-dir/command: ENOENT (No such file or directory): check the command "
                       "name and PATH");
  ASSERT_TRUE(p.started());
  EXPECT_EQ(p.wait(kDeadlineNs).exit_code(), kChildCannotRunStatus);
}

TEST(Process, AHeldChildRunsOnlyWhenReleased) {
  const std::string marker = temp_path("held.marker");
  std::remove(marker.c_str());
  ProcessOptions o = captured();
  o.hold = true;
  Process p;
  ASSERT_TRUE(p.start({"sh", "-c", "echo ran > " + marker + "; echo ran"}, o).ok());
  // Held: it has not exec'd, so the marker cannot exist yet.
  EXPECT_FALSE(p.has_exited());
  EXPECT_EQ(read_file(marker), "");
  const Error released = p.release();
  ASSERT_TRUE(released.ok()) << released.message;
  EXPECT_EQ(p.wait(kDeadlineNs).exit_code(), 0);
  EXPECT_EQ(p.captured_out(), "ran\n");
  EXPECT_EQ(read_file(marker), "ran\n");
}

// start() of a held child returns once the child waits for release(),
// past its prepare: the recorder opens its events on it then (a child
// still starting threads could make a group's member fail with EINVAL).
TEST(Process, AHeldChildIsReadyWhenStartReturns) {
  const std::string marker = temp_path("ready.marker");
  std::remove(marker.c_str());
  ProcessOptions o = captured();
  o.hold = true;
  o.prepare = [path = marker.c_str()] {
    const timespec pause{0, 200'000'000};
    ::nanosleep(&pause, nullptr);
    const int fd = ::open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) return 9;
    ::close(fd);
    return 0;
  };
  Process p;
  ASSERT_TRUE(p.start({"true"}, o).ok());
  EXPECT_TRUE(std::ifstream(marker).good()) << "start() returned before the held child's prepare ran";
  const Error released = p.release();
  ASSERT_TRUE(released.ok()) << released.message;
  EXPECT_EQ(p.wait(kDeadlineNs).exit_code(), 0);
}

// A held child whose prepare fails exits before it is ready: start()
// does not wait for it forever, and the release and the wait say so.
TEST(Process, AHeldChildWhosePrepareFailsIsNotWaitedForForever) {
  ProcessOptions o = captured();
  o.hold = true;
  o.prepare = [] { return 5; };
  Process p;
  ASSERT_TRUE(p.start({"sh", "-c", "echo ran"}, o).ok());
  EXPECT_FALSE(p.release().ok());
  EXPECT_EQ(p.wait(kDeadlineNs).exit_code(), 5);
  EXPECT_EQ(p.captured_out(), "");
}

TEST(Process, AHeldChildNeverReleasedRunsNothing) {
  ProcessOptions o = captured();
  o.hold = true;
  Process p;
  ASSERT_TRUE(p.start({"sh", "-c", "echo ran"}, o).ok());
  const WaitStatus w = p.wait(kDeadlineNs);
  EXPECT_FALSE(w.timed_out);
  EXPECT_EQ(w.exit_code(), kChildCannotRunStatus);
  EXPECT_EQ(p.captured_out(), "");
}

TEST(Process, AHeldChildsExecFailureComesWithTheRelease) {
  ProcessOptions o;
  o.hold = true;
  Process p;
  ASSERT_TRUE(p.start({"/nonexistent-dir/command"}, o).ok());
  EXPECT_EQ(p.exec_error(), 0);
  const Error e = p.release();
  EXPECT_EQ(e.error, ENOENT);
  EXPECT_EQ(p.exec_error(), ENOENT);
  EXPECT_EQ(e.message.rfind("cannot run /nonexistent-dir/command: ENOENT", 0), 0u) << e.message;
}

// release_without_waiting() returns while the child has not exec'd: here
// it is stopped (SIGSTOP) before the release, so release() would block
// until SIGCONT; the exec's outcome comes afterwards, failure included.
TEST(Process, ReleaseWithoutWaitingDoesNotWaitForTheExec) {
  for (const char* command : {"true", "/nonexistent-dir/command"}) {
    ProcessOptions o;
    o.hold = true;
    Process p;
    ASSERT_TRUE(p.start({command}, o).ok());
    ASSERT_EQ(::kill(p.pid(), SIGSTOP), 0);
    siginfo_t info{};
    ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(p.pid()), &info, WSTOPPED | WNOWAIT), 0);
    ASSERT_EQ(info.si_code, CLD_STOPPED);
    ASSERT_TRUE(p.release_without_waiting().ok()) << command;
    EXPECT_FALSE(p.has_exited());
    EXPECT_EQ(p.exec_error(), 0);
    ASSERT_EQ(::kill(p.pid(), SIGCONT), 0);
    const Error e = p.exec_outcome();
    if (std::string(command) == "true") {
      EXPECT_TRUE(e.ok()) << e.message;
      EXPECT_EQ(p.wait(kDeadlineNs).exit_code(), 0);
    } else {
      EXPECT_EQ(e.error, ENOENT);
      EXPECT_EQ(p.exec_error(), ENOENT);
      EXPECT_EQ(p.wait(kDeadlineNs).exit_code(), kChildCannotRunStatus);
    }
    EXPECT_TRUE(p.exec_outcome().ok());  // once
  }
}

// A handler the parent installed does not catch a signal in the child
// before its exec (fork copies handlers; exec would reset them): a held
// child given SIGTERM ends by it, as the recorder's stop needs while its
// command is released but not yet exec'd. Without the reset the child's
// copy of the handler swallowed the SIGTERM and the command ran on (CI,
// RecordWithPerf.TheExitStatusIsTheCommandsAsPerfs under ASan).
TEST(Process, AHeldChildDiesOfSigtermDespiteTheParentsHandler) {
  struct sigaction handler {};
  handler.sa_handler = [](int) {};
  sigemptyset(&handler.sa_mask);
  struct sigaction previous {};
  ASSERT_EQ(::sigaction(SIGTERM, &handler, &previous), 0);
  ProcessOptions o;
  o.hold = true;
  Process p;
  ASSERT_TRUE(p.start({"sleep", "30"}, o).ok());
  ASSERT_EQ(p.signal(SIGTERM), 0);
  const WaitStatus w = p.wait(kDeadlineNs);
  ::sigaction(SIGTERM, &previous, nullptr);
  EXPECT_FALSE(w.timed_out);
  EXPECT_TRUE(w.signaled());
  EXPECT_EQ(w.term_signal(), SIGTERM);
}

TEST(Process, TheDeadlineKillsAChildThatDoesNotExit) {
  Process p;
  ASSERT_TRUE(p.start({"sleep", "1000"}).ok());
  const WaitStatus w = p.wait(10 * kMs);
  EXPECT_TRUE(w.reaped);
  EXPECT_TRUE(w.timed_out);
  EXPECT_TRUE(w.signaled());
  EXPECT_EQ(w.term_signal(), SIGKILL);
  EXPECT_EQ(w.text(), "ended by signal 9 (killed at the deadline)");
}

TEST(Process, SignalsReachTheChild) {
  Process p;
  ASSERT_TRUE(p.start({"sleep", "1000"}).ok());
  EXPECT_EQ(p.signal(SIGTERM), 0);
  const WaitStatus w = p.wait(kDeadlineNs);
  EXPECT_FALSE(w.timed_out);
  EXPECT_EQ(w.term_signal(), SIGTERM);
}

TEST(Process, AFunctionRunsInAForkedChild) {
  const pid_t parent = ::getpid();
  Process p;
  ASSERT_TRUE(p.start_function(
                   [parent] {
                     const char text[] = "from the child\n";
                     if (::write(1, text, sizeof text - 1) != sizeof text - 1) return 1;
                     return ::getppid() == parent ? 7 : 2;
                   },
                   captured())
                  .ok());
  EXPECT_NE(p.pid(), parent);
  EXPECT_EQ(p.wait(kDeadlineNs).exit_code(), 7);
  EXPECT_EQ(p.captured_out(), "from the child\n");
}

TEST(Process, PrepareRunsBeforeTheExecAndCanStopIt) {
  ProcessOptions o = captured();
  o.prepare = [] {
    const char text[] = "prepared\n";
    return ::write(2, text, sizeof text - 1) == sizeof text - 1 ? 5 : 6;
  };
  Process p;
  ASSERT_TRUE(p.start({"sh", "-c", "echo ran"}, o).ok());
  EXPECT_EQ(p.wait(kDeadlineNs).exit_code(), 5);
  EXPECT_EQ(p.captured_err(), "prepared\n");
  EXPECT_EQ(p.captured_out(), "");
}

// The exit is seen (from another thread too) without reaping: the pid is
// still the child's, a zombie, until wait().
TEST(Process, ExitIsSeenWithoutReaping) {
  Process p;
  ASSERT_TRUE(p.start_function([] { return 4; }).ok());
  bool seen = false;
  std::thread watcher([&] { seen = p.wait_until_exited(); });
  watcher.join();
  EXPECT_TRUE(seen);
  EXPECT_TRUE(p.has_exited());
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(p.pid()), &info, WEXITED | WNOHANG | WNOWAIT), 0);
  EXPECT_EQ(info.si_pid, p.pid()) << "not a zombie waiting to be reaped";
  EXPECT_EQ(p.signal(0), 0);
  EXPECT_EQ(p.wait(kDeadlineNs).exit_code(), 4);
}

TEST(Process, RusageHoldsTheChildsCpuTime) {
  Process p;
  ASSERT_TRUE(p.start_function([] {
                 // 50 ms of this process's CPU time, whatever the wall clock does.
                 volatile std::uint64_t work = 0;
                 for (std::uint64_t round = 0; round < (std::uint64_t{1} << 40); round++) {
                   timespec used{};
                   ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &used);
                   if (used.tv_sec > 0 || used.tv_nsec >= 50'000'000) break;
                   for (int k = 0; k < 2000; k++) work = work + static_cast<std::uint64_t>(k);
                 }
                 return 0;
               })
                  .ok());
  const WaitStatus w = p.wait(kDeadlineNs);
  EXPECT_EQ(w.exit_code(), 0);
  EXPECT_GE(w.cpu_seconds(), 0.045) << "the child burnt 50 ms of CPU time";
}

TEST(Process, TheDestructorKillsAndReaps) {
  pid_t pid = -1;
  {
    Process p;
    ASSERT_TRUE(p.start({"sleep", "1000"}).ok());
    pid = p.pid();
  }
  siginfo_t info{};
  EXPECT_EQ(::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD) << "the child was not reaped";
}

}  // namespace
}  // namespace ringsim::real
