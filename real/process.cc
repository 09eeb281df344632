#include "real/process.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <utility>

#include "core/verify.h"
#include "real/clock.h"

namespace ringsim::real {
namespace {

constexpr std::uint32_t kEintrRetriesMax = 10'000;
constexpr std::uint32_t kReadsMax = 1u << 20;

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// A descriptor owned until release() (closed otherwise).
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { close_fd(fd_); }
  int get() const { return fd_; }
  void reset(int fd) {
    close_fd(fd_);
    fd_ = fd;
  }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

// What the child does between fork and exec; set up before fork, so that
// the child only makes async-signal-safe calls (and prepare/body, which
// promise the same).
struct ChildPlan {
  int out = -1;  // dup2'd to 1 (-1: inherited)
  int err = -1;  // dup2'd to 2
  int go = -1;   // the child's end of the hold channel (-1: not held)
  int exec_report = -1;  // write end of the exec-error pipe (-1: a function)
  int parent_ends[2] = {-1, -1};  // the parent's ends: closed, so that the child sees EOF when the parent closes
  char* const* args = nullptr;
  const std::function<int()>* prepare = nullptr;
  const std::function<int()>* body = nullptr;
  sigset_t mask{};  // the forking thread's signal mask, restored once the handlers are reset
};

// Reads one byte of the hold channel (EINTR retried): true when it came,
// false on EOF or an error. The child reads the go byte with it (false: the
// parent gave up), the parent the child's ready byte.
bool read_one_byte(int fd) {
  for (std::uint32_t i = 0; i < kEintrRetriesMax; i++) {
    char byte = 0;
    const ssize_t got = ::read(fd, &byte, 1);
    if (got == 1) return true;
    if (got == 0 || errno != EINTR) return false;
  }
  return false;
}

// The parent's signal handlers, inherited through fork, back to the
// default now, as exec would reset them (ignored signals stay ignored):
// a SIGTERM sent before the exec (the recorder's stop while the command is
// released but not yet exec'd) must end the child, not run the parent's
// handler in it. perf's workload child does the same for SIGTERM
// (evlist__prepare_workload). Async-signal-safe (sigaction).
void default_caught_signals() {
  for (int number = 1; number < NSIG; number++) {
    struct sigaction current {};
    if (::sigaction(number, nullptr, &current) != 0) continue;  // not a signal, or SIGKILL/SIGSTOP
    const bool caught = (current.sa_flags & SA_SIGINFO) != 0 ||
                        (current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN);
    if (!caught) continue;
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    ::sigemptyset(&fallback.sa_mask);
    ::sigaction(number, &fallback, nullptr);
  }
}

[[noreturn]] void run_child(const ChildPlan& p) {
  default_caught_signals();  // with every signal blocked (launch): none is caught by the parent's handlers
  ::sigprocmask(SIG_SETMASK, &p.mask, nullptr);
  for (const int fd : p.parent_ends) {
    if (fd >= 0) ::close(fd);
  }
  if (p.out >= 0 && ::dup2(p.out, STDOUT_FILENO) < 0) ::_exit(kChildCannotRunStatus);
  if (p.err >= 0 && ::dup2(p.err, STDERR_FILENO) < 0) ::_exit(kChildCannotRunStatus);
  if (p.prepare != nullptr && *p.prepare) {
    const int status = (*p.prepare)();
    if (status != 0) ::_exit(status);
  }
  if (p.go >= 0) {
    // Ready (start() waits for this byte, as perf's workload closes its
    // ready pipe): events opened on the child from now on find it as it
    // will be at the exec.
    const ssize_t sent = ::send(p.go, "r", 1, MSG_NOSIGNAL);
    static_cast<void>(sent);  // a parent gone is seen by the read of the go byte
    if (!read_one_byte(p.go)) ::_exit(kChildCannotRunStatus);
  }
  if (p.body != nullptr) ::_exit((*p.body)());
  ::execvp(p.args[0], p.args);
  const int error = errno;
  const ssize_t written = ::write(p.exec_report, &error, sizeof error);
  static_cast<void>(written);  // nothing more to do if the parent is gone
  ::_exit(kChildCannotRunStatus);
}

// Opens where stream `name` goes: a file into `owned`, a capture into
// `capture_fd`; `child_fd` is what the child dup2's (-1: inherited).
Error open_output(const Output& o, const char* name, Fd& owned, int& capture_fd, int& child_fd) {
  child_fd = -1;
  if (o.kind == Output::Kind::file) {
    owned.reset(::open(o.path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644));
    if (owned.get() < 0) return Error{errno, std::string(name) + " to " + o.path + ": open: " + errno_text(errno)};
    child_fd = owned.get();
  } else if (o.kind == Output::Kind::capture) {
    capture_fd = ::memfd_create(name, MFD_CLOEXEC);
    if (capture_fd < 0) return Error{errno, std::string("capturing ") + name + ": memfd_create: " + errno_text(errno)};
    child_fd = capture_fd;
  }
  return Error{};
}

std::string read_captured(int fd) {
  if (fd < 0) return "";
  struct stat st {};
  if (::fstat(fd, &st) != 0) return "";
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t done = 0;
  for (std::uint32_t i = 0; i < kReadsMax && done < text.size(); i++) {
    const ssize_t n = ::pread(fd, text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  text.resize(done);
  return text;
}

std::uint64_t cpu_ns(const timeval& t) {
  return static_cast<std::uint64_t>(t.tv_sec) * kNsPerSecond + static_cast<std::uint64_t>(t.tv_usec) * 1000;
}

}  // namespace

// --- WaitStatus ------------------------------------------------------------------

bool WaitStatus::exited() const { return reaped && WIFEXITED(status); }
int WaitStatus::exit_code() const { return exited() ? WEXITSTATUS(status) : -1; }
bool WaitStatus::signaled() const { return reaped && WIFSIGNALED(status); }
int WaitStatus::term_signal() const { return signaled() ? WTERMSIG(status) : 0; }

double WaitStatus::cpu_seconds() const {
  return static_cast<double>(cpu_ns(usage.ru_utime) + cpu_ns(usage.ru_stime)) / static_cast<double>(kNsPerSecond);
}

std::string WaitStatus::text() const {
  std::string out;
  if (!reaped) {
    out = "not reaped: wait4: " + errno_text(error);
  } else if (exited()) {
    out = "exited with status " + std::to_string(exit_code());
  } else if (signaled()) {
    out = "ended by signal " + std::to_string(term_signal());
  } else {
    out = "wait status " + std::to_string(status);
  }
  return timed_out ? out + " (killed at the deadline)" : out;
}

// --- Process ---------------------------------------------------------------------

Process::~Process() {
  if (started() && !reaped_) {
    close_go();
    ::kill(pid_, SIGKILL);
    wait();
  }
  for (int* fd : {&pidfd_, &go_fd_, &exec_fd_, &out_capture_fd_, &err_capture_fd_}) close_fd(*fd);
}

Error Process::start(const std::vector<std::string>& argv, const ProcessOptions& options) {
  VERIFY_MSG(!argv.empty(), "Process::start with no command");
  return launch(argv, nullptr, options);
}

Error Process::start_function(std::function<int()> body, const ProcessOptions& options) {
  VERIFY_MSG(static_cast<bool>(body), "Process::start_function with no function");
  return launch({}, std::move(body), options);
}

Error Process::launch(const std::vector<std::string>& argv, std::function<int()> body, const ProcessOptions& options) {
  VERIFY_MSG(!started(), "a Process starts one child");
  name_ = body ? "a forked function" : argv.front();
  ChildPlan plan;
  Fd out_file, err_file;
  if (Error e = open_output(options.out, "stdout", out_file, out_capture_fd_, plan.out); !e.ok()) return e;
  const bool shared = options.err.kind == Output::Kind::file && options.out.kind == Output::Kind::file &&
                      options.err.path == options.out.path;
  if (shared) {
    plan.err = plan.out;
  } else if (Error e = open_output(options.err, "stderr", err_file, err_capture_fd_, plan.err); !e.ok()) {
    return e;
  }
  // The hold channel is a socket: release() sends with MSG_NOSIGNAL, so a
  // child that died meanwhile is an error, not a SIGPIPE.
  int go[2] = {-1, -1};
  if (options.hold && ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, go) != 0) {
    return Error{errno, "socketpair: " + errno_text(errno)};
  }
  Fd go_parent(go[0]), go_child(go[1]);
  int report[2] = {-1, -1};
  if (!body && ::pipe2(report, O_CLOEXEC) != 0) return Error{errno, "pipe2: " + errno_text(errno)};
  Fd report_read(report[0]), report_write(report[1]);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  plan.go = go_child.get();
  plan.parent_ends[0] = go_parent.get();
  plan.parent_ends[1] = report_read.get();
  plan.exec_report = report_write.get();
  plan.args = args.data();
  plan.prepare = &options.prepare;
  plan.body = body ? &body : nullptr;
  // Every signal blocked across fork: one sent to the child before it has
  // reset the handlers it inherits stays pending until then, and then
  // acts as it would after exec (run_child).
  sigset_t all;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &plan.mask);
  const pid_t pid = ::fork();
  if (pid == 0) run_child(plan);
  ::pthread_sigmask(SIG_SETMASK, &plan.mask, nullptr);
  // The child's ends: closed here, so that EOF on the exec-error pipe means
  // the exec succeeded.
  for (Fd* fd : {&out_file, &err_file, &go_child, &report_write}) fd->reset(-1);
  if (pid < 0) return Error{errno, "fork for " + name_ + ": " + errno_text(errno) + ": too many processes? (ulimit -u)"};
  pid_ = pid;
  pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd_ < 0) {
    const int error = errno;
    wait(0);  // kills and reaps it: a child that cannot be watched is not run
    return Error{error, "pidfd_open: " + errno_text(error) + ": needs Linux 5.3 or later"};
  }
  // A held child's ready byte: it is past fork (a ThreadSanitizer build's
  // child starts a thread of its own in fork) and its prepare. Until then
  // no event may be opened on it: a thread the child starts after an event
  // group's leader was opened inherits a copy of the task's perf context,
  // the kernel swaps the two contexts when the threads switch on a CPU,
  // and the group's next member, opened on the task, meets another context
  // than its leader's: EINVAL (perf_event_open's group leader check). EOF
  // (the child exited: its prepare failed) is seen again by release().
  if (options.hold) static_cast<void>(read_one_byte(go_parent.get()));
  go_fd_ = go_parent.release();
  exec_fd_ = report_read.release();
  return options.hold || exec_fd_ < 0 ? Error{} : await_exec();
}

Error Process::await_exec() {
  int error = 0;
  ssize_t got = -1;
  for (std::uint32_t i = 0; i < kEintrRetriesMax && got < 0; i++) {
    got = ::read(exec_fd_, &error, sizeof error);
    if (got < 0 && errno != EINTR) break;
  }
  close_fd(exec_fd_);
  // EOF: the exec succeeded (the pipe is close-on-exec).
  if (got != static_cast<ssize_t>(sizeof error)) return Error{};
  exec_error_ = error;
  return Error{error, "cannot run " + name_ + ": " + errno_text(error) +
                          (error == ENOENT ? ": check the command name and PATH" : "")};
}

Error Process::release() {
  const Error sent = release_without_waiting();
  if (!sent.ok()) return sent;
  return exec_outcome();
}

Error Process::exec_outcome() { return exec_fd_ >= 0 ? await_exec() : Error{}; }

Error Process::release_without_waiting() {
  VERIFY_MSG(go_fd_ >= 0, "release() of a child that is not held");
  ssize_t sent = -1;
  for (std::uint32_t i = 0; i < kEintrRetriesMax && sent < 0; i++) {
    sent = ::send(go_fd_, "g", 1, MSG_NOSIGNAL);
    if (sent < 0 && errno != EINTR) break;
  }
  const int error = errno;
  close_go();
  if (sent != 1) return Error{error, "releasing " + name_ + ": send: " + errno_text(error)};
  return Error{};
}

void Process::close_go() { close_fd(go_fd_); }

int Process::signal(int number) {
  if (!started() || reaped_) return ESRCH;
  return ::kill(pid_, number) == 0 ? 0 : errno;
}

bool Process::poll_exit(std::uint64_t timeout_ns) const {
  const std::uint64_t start_ns = monotonic_ns();
  for (std::uint32_t i = 0; i < kEintrRetriesMax; i++) {
    int wait_ms = -1;
    bool last = false;
    if (timeout_ns != kNoDeadline) {
      const std::uint64_t spent_ns = monotonic_ns() - start_ns;
      last = spent_ns >= timeout_ns;
      const std::uint64_t left_ms = last ? 0 : (timeout_ns - spent_ns + kNsPerMs - 1) / kNsPerMs;
      wait_ms = static_cast<int>(std::min<std::uint64_t>(left_ms, INT_MAX));
    }
    pollfd p{pidfd_, POLLIN, 0};
    const int rc = ::poll(&p, 1, wait_ms);
    if (rc > 0) return true;
    if (rc < 0 && errno != EINTR) return false;
    if (last) return false;
  }
  return false;
}

bool Process::has_exited() const { return started() && pidfd_ >= 0 && poll_exit(0); }

bool Process::wait_until_exited() const { return started() && pidfd_ >= 0 && poll_exit(kNoDeadline); }

WaitStatus Process::wait(std::uint64_t timeout_ns) {
  VERIFY_MSG(started(), "wait() before start()");
  if (reaped_) return result_;
  close_go();  // a held child never released exits now
  WaitStatus w;
  if (pidfd_ < 0 || !poll_exit(timeout_ns)) {
    w.timed_out = pidfd_ >= 0;
    ::kill(pid_, SIGKILL);
  }
  pid_t got = -1;
  for (std::uint32_t i = 0; i < kEintrRetriesMax && got < 0; i++) {
    got = ::wait4(pid_, &w.status, 0, &w.usage);
    if (got < 0 && errno != EINTR) break;
  }
  w.reaped = got == pid_;
  if (!w.reaped) w.error = errno;
  reaped_ = true;
  result_ = w;
  return w;
}

std::string Process::captured_out() const { return read_captured(out_capture_fd_); }
std::string Process::captured_err() const { return read_captured(err_capture_fd_); }

}  // namespace ringsim::real
