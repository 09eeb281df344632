// libringsim_interpose.so: loaded with LD_PRELOAD into an unmodified
// consumer by ringsim-run (sim/interpose/run_main.cc). It routes the
// consumer's perf calls to the simulated kernel (sim/call_kernel.h)
// and its output file's writes to the simulated disk; everything else goes
// to the real system.
//
//   perf_event_open (through syscall())  an eventfd stands for the event
//   mmap/mmap64, munmap                  a memfd holds the ring: the kernel
//                                        writes one view, the consumer maps
//                                        another with its own protection
//   ioctl, read, close                   the kernel's answers
//   poll                                 the kernel's revents for its
//                                        descriptors, the real ones for the
//                                        rest; the kernel steps while
//                                        nothing is ready
//   write, writev, pwrite64 (output)     short writes, EINTR, EAGAIN, EIO,
//                                        ENOSPC and latency (kernel steps)
//   aio_write64/error/return/suspend     the same, completed in virtual time
//   clock_gettime, gettimeofday, time    virtual time (every clock -k takes)
//   signal, sigaction (SIGCHLD, SIGINT)  delivered when the kernel says
//   kill of the started workload         passed on once the real one exited
//   open, openat, fopen of               a fixed file (perf's NUMA_TOPOLOGY)
//     /sys/devices/system/node/node<N>/meminfo
//   SIGUSR2 (to a target handling it)    raised at drawn virtual times
//   rename, renameat2 of the output      logged (perf --switch-output,
//                                        ringsim-record --timestamp-filename)
//   unlink, unlinkat, remove of an       kept (a hard link) and logged
//     output file                        (--switch-max-files)
//   alarm                                refused (a real-time timer)
//
// Only the process named by RINGSIM_TARGET_PID is simulated (its forked
// children and the workload they exec pass through), and only its main
// thread advances the kernel: a call of another thread that would have to
// is refused (the run stops with one line). Determinism follows: the
// kernel draws only inside the main thread's calls, in their order.
// The interposer defines read() and poll() itself: glibc's fortified
// inline wrappers of them (_FORTIFY_SOURCE, which Bazel's default flags
// set in opt builds) would be a second definition, which clang refuses.
#undef _FORTIFY_SOURCE
#include <aio.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <ucontext.h>
#include <stdarg.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sim/decisions.h"
#include "sim/call_kernel.h"
#include "sim/interpose/run_log.h"

// --interleave's SIGSEGV and SIGTRAP handlers (defined below, outside the
// shim's namespace, beside the interposed functions).
void ringsim_install_trap_handlers();

namespace ringsim::sim::interpose {
namespace {

// Exit statuses of a target stopped by the shim (ringsim-run names them).
constexpr int kExitRefused = 125;
constexpr int kExitLiveness = 124;

constexpr std::uint64_t kLivenessTicks = 40'000;
constexpr std::uint64_t kAioCallsWithoutStepMax = 1'000'000;  // a busy loop, not a pause
constexpr std::size_t kPageBytes = 4096;
constexpr unsigned long long kTrapFlag = 0x100;  // x86-64 EFLAGS.TF: a trap after the next instruction   // 10 s of virtual time after the workload's end
constexpr std::uint64_t kPollStepsMax = 1'000'000;  // steps one poll may take
constexpr int kRealExitWaitS = 30;
constexpr std::uint64_t kRealtimeBaseNs = 1'790'000'000'000'000'000ull;

template <typename F>
F real(const char* name) {
  void* p = dlsym(RTLD_NEXT, name);
  if (p == nullptr) {
    std::fprintf(stderr, "ringsim-interpose: no %s in libc\n", name);
    std::abort();
  }
  return reinterpret_cast<F>(p);
}

#define REAL(name, type) static const auto real_##name = ::ringsim::sim::interpose::real<type>(#name)

struct Mapping {
  int ring = -1;
  int memfd = -1;
  void* kernel_view = nullptr;
  std::size_t len = 0;
  bool aux = false;  // the ring's AUX area
};

struct AioRequest {
  ssize_t result = 0;  // bytes, or -errno
  std::uint64_t done_ns = 0;
};

struct Handler {
  bool set = false;
  struct sigaction action {};
};

class Shim {
 public:
  static Shim* get();

  bool active() const { return active_ && ::getpid() == pid_; }
  bool main_thread() const { return ::gettid() == pid_; }
  std::recursive_mutex& mutex() { return mutex_; }

  // The calls.
  long perf_event_open(const perf_event_attr* attr, int pid, int cpu, int group_fd, unsigned long flags);
  bool is_event(int fd) const { return fd >= 0 && events_.count(fd) > 0; }
  // pidfd_open of the workload: an eventfd that polls readable once the
  // simulated workload ended (and the real one exited).
  long pidfd_open(int pid, unsigned flags);
  bool is_exit_fd(int fd) const { return fd >= 0 && exit_fds_.count(fd) > 0; }
  bool is_output(int fd) const { return fd >= 0 && outputs_.count(fd) > 0; }
  void* mmap(void* addr, std::size_t len, int prot, int flags, int fd, off_t off);
  void* mmap_aux(void* addr, std::size_t len, int prot, int flags, int event, off_t off);
  // A new memfd of `len` bytes mapped twice (the kernel's view, the
  // target's with its protection), given to the kernel by `attach` (a ring
  // index, or -errno: then undone and MAP_FAILED with that errno).
  void* map_new(void* addr, std::size_t len, int prot, int flags, const char* name, bool aux,
                const std::function<long(std::span<std::byte>)>& attach);
  bool munmap(void* addr, std::size_t len, int& result);
  long ioctl(int fd, unsigned long request, unsigned long arg);
  ssize_t read(int fd, void* buf, std::size_t n);
  void close(int fd);
  int poll(struct pollfd* fds, nfds_t n, int timeout_ms);
  ssize_t write_output(int fd, const void* buf, std::size_t n, off_t offset, bool positioned);
  // ftruncate (`truncate`) or fsync/fdatasync of the output: 0, or the
  // errno the disk's faults draw (ftruncate: EINTR, EIO; fsync: EIO,
  // ENOSPC; a full disk: ENOSPC for fsync).
  int file_op_fault(int fd, bool truncate);
  int aio_write(struct aiocb* cb);
  bool aio_known(const struct aiocb* cb) const { return aio_.count(cb) > 0; }
  int aio_error(const struct aiocb* cb);
  ssize_t aio_return(struct aiocb* cb);
  int aio_suspend(const struct aiocb* const list[], int n, const struct timespec* timeout);
  void note_open(int fd, const char* path);
  // rename() of the output (perf record --switch-output): the new name,
  // in order, for the oracle.
  void note_rename(const char* from, const char* to);
  // unlink() of one of the output's files (--switch-max-files): kept
  // under <output>.removed.K (a hard link) before it goes, for the oracle.
  void keep_before_unlink(const std::string& path);
  // `path` relative to directory `dir` (AT_FDCWD: the working one), made
  // absolute.
  static std::string path_at(int dir, const char* path);
  void forget(int fd) {
    outputs_.erase(fd);
    exit_fds_.erase(fd);
    epolls_.erase(fd);
    for (auto& [epfd, set] : epolls_) set.erase(fd);
  }
  // epoll over simulated descriptors: the set's simulated members are the
  // shim's (the real epoll instance holds the real ones); epoll_wait waits
  // as poll does, on the simulated members and the epoll fd itself.
  bool epoll_ctl(int epfd, int op, int fd, const struct epoll_event* ev, int& result);
  int epoll_wait(int epfd, struct epoll_event* events, int max, int timeout_ms);
  // The target kills its workload (perf: kill(workload, SIGTERM) at its
  // end when no SIGCHLD came). The simulated tasks exit at the next step.
  void workload_killed(int pid);
  std::uint64_t now_ns() const { return kernel_->now_ns(); }
  bool sigaction(int sig, const struct sigaction* act, struct sigaction* old, int& result);

  void refuse(const std::string& what);
  void finish();

 private:
  Shim();
  // A step of the kernel; only a wait for records (poll) may start the
  // workload.
  void step(bool may_start = false);
  void deliver_due_signals(bool& interrupted);

 public:
  // --interleave's fault and single-step handlers: whether the signal was
  // the shim's (else the target's handler runs, or the default action).
  bool on_control_fault(std::uintptr_t address, ucontext_t* context);
  bool on_single_step(ucontext_t* context);
  const Handler& target_handler(int sig) const { return sig == SIGSEGV ? segv_ : trap_; }
  void trap_control_page(void* view, int prot);
  void untrap(void* view);

 private:
  void deliver(int sig, int pid, int status);
  void liveness();
  // Waits (at most kRealExitWaitS, else the run is refused) for the real
  // workload `pid` to exit, without reaping it: `info` is its end.
  // `after`: what it was to exit after, for the refusal.
  void wait_real_exit(int pid, siginfo_t& info, const char* after);
  void write_log();
  int event_of(int fd) const { return events_.at(fd); }

  bool active_ = false;
  int pid_ = 0;
  std::string log_path_;
  std::string output_path_;
  std::unique_ptr<DecisionSource> decisions_;
  std::unique_ptr<CallKernel> kernel_;
  std::recursive_mutex mutex_;
  std::map<int, int> events_;       // fd -> event
  std::map<int, int> rings_;        // event -> ring (its own mapping)
  std::map<void*, Mapping> maps_;   // consumer view -> mapping
  std::map<int, std::size_t> outputs_;  // output fds
  std::map<int, int> exit_fds_;         // pidfd_open's stand-ins -> pid
  std::map<const struct aiocb*, AioRequest> aio_;
  std::map<int, std::map<int, struct epoll_event>> epolls_;  // epfd -> its simulated members
  Handler chld_, intr_, term_;
  std::uint32_t disk_faults_ = 0;  // 0 none, 1 soft (short, EINTR, EAGAIN), 2 soft and hard (EIO, ENOSPC)
  std::uint64_t latency_ticks_max_ = 0;
  bool trace_disk_ = false;  // RINGSIM_TRACE_DISK=1: each fault on stderr
  // RINGSIM_INTERLEAVE=1 (ringsim-run --interleave): the target's views of
  // its control pages are kept PROT_NONE; each load or store there faults,
  // the kernel may step inside the fault (between the target's load of
  // data_head and its store of data_tail: while it copies), then that one
  // access runs, single-stepped (the trap flag), and the page is closed
  // again.
  bool interleave_ = false;
  struct Trapped {
    std::uintptr_t page = 0;
    int prot = 0;
  };
  std::vector<Trapped> trapped_;
  Trapped reopened_;           // the page the single-stepped access uses (page 0: none)
  Handler segv_, trap_;        // the target's own handlers, chained to
  bool disk_full_mode_ = false;  // RINGSIM_DISK_FULL=1 (ringsim-run --disk-full): an ENOSPC stays
  bool disk_full_ = false;       // ... and it came: every later write fails with ENOSPC
  std::uint64_t ended_steps_ = 0;
  // AIO calls (aio_write, aio_error, aio_return) since the kernel last
  // stepped: a target that resubmits and polls without ever waiting keeps
  // virtual time still, and the liveness check above never comes.
  std::uint64_t aio_calls_without_step_ = 0;
  void aio_busy_check();
  bool sigint_done_ = false;
  std::size_t sigusr2_next_ = 0;  // the first drawn SIGUSR2 not yet delivered
  bool sigchld_done_ = false;
  bool finished_ = false;
  RunLog log_;
};

// Set while the shim is being made: the calls it makes itself (reading
// the tape goes through read()) pass through.
std::atomic<bool> constructing{false};

Shim* Shim::get() {
  static Shim* shim = [] {
    constructing = true;
    Shim* made = new Shim();  // never destroyed: atexit writes the log
    constructing = false;
    return made;
  }();
  return shim;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

void at_exit() {
  Shim* s = Shim::get();
  if (s->active()) s->finish();
}

Shim::Shim() {
  const std::string target = env("RINGSIM_TARGET_PID");
  if (target.empty() || std::atoi(target.c_str()) != ::getpid()) return;
  pid_ = ::getpid();
  log_path_ = env("RINGSIM_LOG");
  output_path_ = env("RINGSIM_OUTPUT");
  const std::uint64_t seed = std::strtoull(env("RINGSIM_SEED").c_str(), nullptr, 10);
  log_.seed = seed;
  const std::string tape_path = env("RINGSIM_TAPE");
  if (!tape_path.empty()) {
    std::ifstream in(tape_path);
    std::vector<Decision> tape;
    Decision d;
    while (in >> d.bound >> d.value) tape.push_back(d);
    const bool strict = env("RINGSIM_TAPE_MODE") == "strict";
    decisions_ = std::make_unique<DecisionSource>(std::move(tape), strict ? DecisionSource::Mode::replay_strict
                                                                          : DecisionSource::Mode::replay_lenient,
                                                  true);
  } else {
    decisions_ = std::make_unique<DecisionSource>(seed, true);
  }
  KernelParams params;
  kernel_ = std::make_unique<CallKernel>(*decisions_, params);
  disk_faults_ = static_cast<std::uint32_t>(decisions_->draw(3));
  latency_ticks_max_ = decisions_->draw(5);
  trace_disk_ = env("RINGSIM_TRACE_DISK") == "1";
  disk_full_mode_ = env("RINGSIM_DISK_FULL") == "1";
  interleave_ = env("RINGSIM_INTERLEAVE") == "1";
  if (interleave_) ringsim_install_trap_handlers();
  active_ = true;
  std::atexit(at_exit);
}

void Shim::refuse(const std::string& what) {
  log_.refused.push_back(what);
  std::fprintf(stderr, "ringsim-run: refused: %s\n", what.c_str());
  finish();
  _exit(kExitRefused);
}

long Shim::perf_event_open(const perf_event_attr* user, int pid, int cpu, int group_fd, unsigned long flags) {
  if (!main_thread()) refuse("perf_event_open from a second thread: only single-thread consumers are deterministic");
  perf_event_attr attr{};
  const std::uint32_t size = user->size == 0 ? PERF_ATTR_SIZE_VER0 : user->size;
  std::memcpy(&attr, user, std::min<std::size_t>(size, sizeof attr));
  if (size > sizeof attr) {
    // Bytes past what this kernel knows must be zero (perf_copy_attr: E2BIG).
    const auto* extra = reinterpret_cast<const unsigned char*>(user) + sizeof attr;
    for (std::size_t i = 0; i < size - sizeof attr; i++) {
      if (extra[i] != 0) return -E2BIG;
    }
  }
  int group = -1;
  if (group_fd >= 0) {
    if (!is_event(group_fd)) return -EBADF;
    group = event_of(group_fd);
  }
  const long event = kernel_->open(attr, pid, cpu, group, flags, pid_);
  if (event < 0) return event;
  REAL(eventfd, int (*)(unsigned, int));
  const int fd = real_eventfd(0, EFD_NONBLOCK | ((flags & PERF_FLAG_FD_CLOEXEC) ? EFD_CLOEXEC : 0));
  if (fd < 0) {
    kernel_->close(static_cast<int>(event));
    return -errno;
  }
  events_[fd] = static_cast<int>(event);
  return fd;
}

long Shim::pidfd_open(int pid, unsigned flags) {
  if (pid != kernel_->workload_pid() && kernel_->workload_pid() != 0) return -2;  // not the workload: real
  REAL(eventfd, int (*)(unsigned, int));
  const int fd = real_eventfd(0, EFD_CLOEXEC | ((flags & O_NONBLOCK) ? EFD_NONBLOCK : 0));
  if (fd < 0) return -errno;
  exit_fds_[fd] = pid;
  return fd;
}

void* Shim::mmap(void* addr, std::size_t len, int prot, int flags, int fd, off_t off) {
  const int event = event_of(fd);
  if (!(flags & MAP_SHARED)) {
    errno = EINVAL;
    return MAP_FAILED;
  }
  if (off != 0) return mmap_aux(addr, len, prot, flags, event, off);
  REAL(mmap, void* (*)(void*, std::size_t, int, int, int, off_t));
  const auto own = rings_.find(event);
  if (own != rings_.end()) {
    for (auto& [view, m] : maps_) {
      if (m.ring != own->second || m.aux) continue;
      if (m.len != len) {
        errno = EINVAL;
        return MAP_FAILED;
      }
      void* again = real_mmap(addr, len, prot, flags, m.memfd, 0);
      if (again == MAP_FAILED) return again;
      kernel_->map_again(m.ring);
      Mapping copy = m;
      copy.kernel_view = nullptr;  // owned by the first
      maps_[again] = copy;
      trap_control_page(again, prot);
      return again;
    }
  }
  void* view = map_new(addr, len, prot, flags, "ringsim-ring", false, [&](std::span<std::byte> memory) {
    return kernel_->map(event, memory, (prot & PROT_WRITE) != 0);
  });
  if (view == MAP_FAILED) return view;
  rings_[event] = maps_.at(view).ring;
  trap_control_page(view, prot);
  return view;
}

void* Shim::map_new(void* addr, std::size_t len, int prot, int flags, const char* name, bool aux,
                    const std::function<long(std::span<std::byte>)>& attach) {
  REAL(mmap, void* (*)(void*, std::size_t, int, int, int, off_t));
  REAL(munmap, int (*)(void*, std::size_t));
  const int memfd = static_cast<int>(::syscall(SYS_memfd_create, name, 1u /* MFD_CLOEXEC */));
  if (memfd < 0 || ::ftruncate(memfd, static_cast<off_t>(len)) != 0) {
    if (memfd >= 0) ::close(memfd);
    errno = ENOMEM;
    return MAP_FAILED;
  }
  void* kernel_view = real_mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
  void* view = kernel_view == MAP_FAILED ? MAP_FAILED : real_mmap(addr, len, prot, flags, memfd, 0);
  const long ring = view == MAP_FAILED ? -errno : attach({static_cast<std::byte*>(kernel_view), len});
  if (ring < 0) {
    if (view != MAP_FAILED) real_munmap(view, len);
    if (kernel_view != MAP_FAILED) real_munmap(kernel_view, len);
    ::close(memfd);
    errno = static_cast<int>(-ring);
    return MAP_FAILED;
  }
  maps_[view] = Mapping{static_cast<int>(ring), memfd, kernel_view, len, aux};
  return view;
}

// mmap of the AUX area (a non-zero offset): its own memfd, mapped twice
// as the ring's is (the kernel's view, the target's); a second mapping of
// an area maps the same memfd. The kernel checks the offset and size
// against the control page (CallKernel::map_aux).
void* Shim::mmap_aux(void* addr, std::size_t len, int prot, int flags, int event, off_t off) {
  if (!(prot & PROT_WRITE)) {
    refuse("a read-only AUX mapping (AUX overwrite mode, as Intel PT snapshots use) is not simulated");
  }
  REAL(mmap, void* (*)(void*, std::size_t, int, int, int, off_t));
  const auto own = rings_.find(event);
  for (auto& [view, m] : maps_) {
    if (!m.aux || own == rings_.end() || m.ring != own->second || m.kernel_view == nullptr) continue;
    const long again = kernel_->map_aux(event, {static_cast<std::byte*>(m.kernel_view), len},
                                        static_cast<std::uint64_t>(off), true, log_.seed);
    if (again < 0) {
      errno = static_cast<int>(-again);
      return MAP_FAILED;
    }
    void* second = real_mmap(addr, len, prot, flags, m.memfd, 0);
    if (second == MAP_FAILED) {
      kernel_->unmap_aux(static_cast<int>(again));
      return second;
    }
    maps_[second] = Mapping{m.ring, m.memfd, nullptr, len, true};
    return second;
  }
  return map_new(addr, len, prot, flags, "ringsim-aux", true, [&](std::span<std::byte> memory) {
    return kernel_->map_aux(event, memory, static_cast<std::uint64_t>(off), true, log_.seed);
  });
}

// --interleave: the target's view of a control page is closed (PROT_NONE)
// from its mapping on; every access faults (on_control_fault).
void Shim::trap_control_page(void* view, int prot) {
  if (!interleave_) return;
  const auto page = reinterpret_cast<std::uintptr_t>(view);
  if (::mprotect(view, kPageBytes, PROT_NONE) != 0) refuse(std::string("--interleave: mprotect: ") + std::strerror(errno));
  trapped_.push_back(Trapped{page, prot});
}

void Shim::untrap(void* view) {
  const auto page = reinterpret_cast<std::uintptr_t>(view);
  std::erase_if(trapped_, [page](const Trapped& t) { return t.page == page; });
  if (reopened_.page == page) reopened_ = Trapped{};
}

// A fault on a closed control page: the kernel may step here (0 to 3
// ticks, drawn; none before the workload started, which waits for the
// target's first wait), then the page opens for this one access, which
// runs single-stepped: the trap (on_single_step) closes it again.
bool Shim::on_control_fault(std::uintptr_t address, ucontext_t* context) {
  for (const Trapped& t : trapped_) {
    if (address < t.page || address >= t.page + kPageBytes) continue;
    log_.control_traps++;
    if (kernel_->started()) {
      const std::uint64_t steps = decisions_->draw(4);
      for (std::uint64_t k = 0; k < steps; k++) {
        step();
        log_.interleaved_steps++;
      }
    }
    if (::mprotect(reinterpret_cast<void*>(t.page), kPageBytes, t.prot) != 0) {
      refuse(std::string("--interleave: mprotect: ") + std::strerror(errno));
    }
    reopened_ = t;
    context->uc_mcontext.gregs[REG_EFL] |= kTrapFlag;
    return true;
  }
  return false;
}

bool Shim::on_single_step(ucontext_t* context) {
  if (reopened_.page == 0) return false;
  if (::mprotect(reinterpret_cast<void*>(reopened_.page), kPageBytes, PROT_NONE) != 0) {
    refuse(std::string("--interleave: mprotect: ") + std::strerror(errno));
  }
  reopened_ = Trapped{};
  context->uc_mcontext.gregs[REG_EFL] &= ~kTrapFlag;
  return true;
}

bool Shim::munmap(void* addr, std::size_t len, int& result) {
  const auto it = maps_.find(addr);
  if (it == maps_.end()) return false;
  REAL(munmap, int (*)(void*, std::size_t));
  const Mapping m = it->second;
  maps_.erase(it);
  untrap(addr);
  result = real_munmap(addr, len);
  if (m.aux) {
    kernel_->unmap_aux(m.ring);
  } else {
    kernel_->unmap(m.ring);
  }
  bool last = true;
  for (const auto& [view, other] : maps_) last &= other.ring != m.ring || other.aux != m.aux;
  if (last) {
    for (auto& [event, ring] : rings_) {
      if (ring == m.ring && !m.aux) ring = -1;
    }
    // The kernel view outlives the consumer's first view if that was not
    // the last: find it by the memfd.
    if (m.kernel_view != nullptr) real_munmap(m.kernel_view, m.len);
    ::close(m.memfd);
  } else if (m.kernel_view != nullptr) {
    for (auto& [view, other] : maps_) {
      if (other.ring == m.ring && other.aux == m.aux && other.kernel_view == nullptr) {
        other.kernel_view = m.kernel_view;
        break;
      }
    }
  }
  return true;
}

long Shim::ioctl(int fd, unsigned long request, unsigned long arg) {
  const int event = event_of(fd);
  switch (request) {
    case PERF_EVENT_IOC_ID: {
      const std::uint64_t id = kernel_->events().at(static_cast<std::size_t>(event)).id;
      std::memcpy(reinterpret_cast<void*>(arg), &id, sizeof id);
      return 0;
    }
    case PERF_EVENT_IOC_SET_OUTPUT: {
      const int target = static_cast<int>(arg);
      if (target != -1 && !is_event(target)) return -EINVAL;
      return kernel_->set_output(event, target == -1 ? -1 : event_of(target));
    }
    case PERF_EVENT_IOC_ENABLE:
    case PERF_EVENT_IOC_DISABLE:
    case PERF_EVENT_IOC_RESET:
    case PERF_EVENT_IOC_PAUSE_OUTPUT:
      return kernel_->ioctl(event, request, arg);
    default:
      break;
  }
  if (_IOC_TYPE(request) == '$') {
    char what[96];
    std::snprintf(what, sizeof what, "ioctl 0x%lx on a perf event is not simulated", request);
    refuse(what);
  }
  return -ENOTTY;
}

ssize_t Shim::read(int fd, void* buf, std::size_t n) {
  const long r = kernel_->read(event_of(fd), {static_cast<std::byte*>(buf), n});
  if (r < 0) {
    errno = static_cast<int>(-r);
    return -1;
  }
  return r;
}

void Shim::close(int fd) {
  kernel_->close(event_of(fd));
  events_.erase(fd);
}

void Shim::aio_busy_check() {
  if (++aio_calls_without_step_ < kAioCallsWithoutStepMax) return;
  log_.findings.push_back("liveness: the target made " + std::to_string(kAioCallsWithoutStepMax) +
                          " AIO calls (aio_write, aio_error, aio_return) without waiting: a busy loop in one "
                          "instant of virtual time");
  finish();
  _exit(kExitLiveness);
}

void Shim::liveness() {
  if (!kernel_->ended()) return;
  if (++ended_steps_ < kLivenessTicks) return;
  log_.findings.push_back("liveness: the target still calls in " +
                          std::to_string(kLivenessTicks * KernelParams{}.tick_ns / 1'000'000'000) +
                          " virtual seconds after its workload ended");
  finish();
  _exit(kExitLiveness);
}

// Whether `sig` has a handler (neither SIG_DFL nor SIG_IGN).
bool handled(int sig) {
  REAL(sigaction, int (*)(int, const struct sigaction*, struct sigaction*));
  struct sigaction current {};
  if (real_sigaction(sig, nullptr, &current) != 0) return false;
  return (current.sa_flags & SA_SIGINFO) != 0 || (current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN);
}

void Shim::step(bool may_start) {
  if (!main_thread()) refuse("a second thread waited on the simulated kernel: only single-thread consumers are deterministic");
  if (!kernel_->started()) kernel_->set_sigusr2_handled(handled(SIGUSR2));
  if (may_start && !kernel_->started() && kernel_->workload_pid() > 0) {
    // The real workload (released by now) exits before the simulated one
    // starts: what the target reads of it later in /proc is then the same
    // every run (a zombie). perf --switch-output synthesizes it from
    // /proc/<pid> at each switch: its maps while alive, none once exited.
    siginfo_t info{};
    wait_real_exit(kernel_->workload_pid(), info, "the simulated one's start");
  }
  kernel_->step(may_start);
  aio_calls_without_step_ = 0;
  liveness();
}

// The signals the kernel's clock says are due, delivered to the target's
// handlers in this call (as Linux delivers them on the way back to user
// space): SIGINT at its drawn time, SIGCHLD once the workload ended (after
// its real process exited: the target waits for it).
void Shim::deliver_due_signals(bool& interrupted) {
  if (!sigint_done_ && kernel_->sigint_at_ns() != 0 && kernel_->now_ns() >= kernel_->sigint_at_ns()) {
    sigint_done_ = true;
    log_.sigint = true;
    log_.sigint_handled = intr_.set && ((intr_.action.sa_flags & SA_SIGINFO) != 0 || (intr_.action.sa_handler != SIG_DFL &&
                                                                             intr_.action.sa_handler != SIG_IGN));
    deliver(SIGINT, 0, 0);
    interrupted = true;
  }
  // SIGUSR2 (perf --switch-output, --overwrite snapshots), raised for
  // real: its handler runs before this call returns.
  const std::vector<std::uint64_t>& usr2 = kernel_->sigusr2_at_ns();
  while (sigusr2_next_ < usr2.size() && kernel_->now_ns() >= usr2[sigusr2_next_]) {
    sigusr2_next_++;
    if (!handled(SIGUSR2)) continue;
    log_.sigusr2++;
    REAL(raise, int (*)(int));
    real_raise(SIGUSR2);
    interrupted = true;
  }
  if (!sigchld_done_ && kernel_->ended()) {
    sigchld_done_ = true;
    const int pid = kernel_->workload_pid();
    siginfo_t info{};
    // The real workload must have exited too (the target waits for it).
    if (pid > 0) wait_real_exit(pid, info, "the simulated one's end");
    if (pid > 0 && info.si_pid == pid) {
      log_.sigchld = true;
      deliver(SIGCHLD, pid, info.si_status);
      interrupted = true;
    }
  }
}

void Shim::wait_real_exit(int pid, siginfo_t& info, const char* after) {
  for (int tries = 0;; tries++) {
    info = siginfo_t{};
    const int r = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
    if (r != 0 || info.si_pid == pid) return;
    if (tries >= kRealExitWaitS * 100) {
      refuse("the real workload (pid " + std::to_string(pid) + ") did not exit within " +
             std::to_string(kRealExitWaitS) + " s of " + after);
    }
    ::usleep(10'000);
  }
}

// The real process is let run to its own exit before the kill is passed
// on (it is a zombie then: the kill changes nothing), so what the target
// reaps does not depend on real time. Otherwise perf 6.1 ended by SIGTERM
// or by SIGINT at random after a drawn SIGINT: its kill(workload, SIGTERM)
// found the real workload alive or not, and when the wait() that follows
// says WIFSIGNALED, perf sets signr = WTERMSIG (SIGTERM) and
// record__sig_exit() re-raises that instead of the SIGINT. Before the
// simulated workload started, the real one is not released yet (perf's
// cork pipe): it dies of the kill, as it always would.
void Shim::workload_killed(int pid) {
  if (pid <= 0 || pid != kernel_->workload_pid()) return;
  if (kernel_->started()) {
    siginfo_t info{};
    wait_real_exit(pid, info, "the target's kill of it");
  }
  kernel_->kill_workload();
}

void Shim::deliver(int sig, int pid, int status) {
  const Handler& h = sig == SIGCHLD ? chld_ : sig == SIGINT ? intr_ : term_;
  if (!h.set) {
    if (sig != SIGCHLD) ::kill(::getpid(), sig);  // the default action, for real
    return;
  }
  const struct sigaction& a = h.action;
  if ((a.sa_flags & SA_SIGINFO) != 0) {
    siginfo_t info{};
    info.si_signo = sig;
    info.si_code = sig == SIGCHLD ? static_cast<int>(CLD_EXITED) : static_cast<int>(SI_USER);
    info.si_pid = pid;
    info.si_status = status;
    a.sa_sigaction(sig, &info, nullptr);
  } else if (a.sa_handler != SIG_IGN && a.sa_handler != SIG_DFL) {
    a.sa_handler(sig);
  } else if (a.sa_handler == SIG_DFL && sig != SIGCHLD) {
    ::kill(::getpid(), sig);
  }
}

bool Shim::sigaction(int sig, const struct sigaction* act, struct sigaction* old, int& result) {
  if (interleave_ && (sig == SIGSEGV || sig == SIGTRAP)) {
    // The shim's handlers stay installed; the target's is called for the
    // faults and traps that are not the shim's.
    Handler& h = sig == SIGSEGV ? segv_ : trap_;
    if (old != nullptr) {
      *old = h.action;
      if (!h.set) {
        std::memset(old, 0, sizeof *old);
        old->sa_handler = SIG_DFL;
      }
    }
    if (act != nullptr) h = Handler{true, *act};
    result = 0;
    return true;
  }
  if (sig != SIGCHLD && sig != SIGINT && sig != SIGTERM) return false;
  Handler& h = sig == SIGCHLD ? chld_ : sig == SIGINT ? intr_ : term_;
  REAL(sigaction, int (*)(int, const struct sigaction*, struct sigaction*));
  if (sig != SIGCHLD) {
    // The real one too: a user can still stop the target.
    result = real_sigaction(sig, act, old);
    if (result == 0 && act != nullptr) h = Handler{true, *act};
    return true;
  }
  if (old != nullptr) {
    if (h.set) {
      *old = h.action;
    } else {
      real_sigaction(sig, nullptr, old);
    }
  }
  if (act != nullptr) {
    h = Handler{true, *act};
    // The real SIGCHLD comes when the real workload exits; the target
    // hears of it when the simulated one does.
    struct sigaction quiet {};
    quiet.sa_handler = [](int) {};
    quiet.sa_flags = SA_RESTART;
    sigemptyset(&quiet.sa_mask);
    real_sigaction(sig, &quiet, nullptr);
  }
  result = 0;
  return true;
}

int Shim::poll(struct pollfd* fds, nfds_t n, int timeout_ms) {
  REAL(poll, int (*)(struct pollfd*, nfds_t, int));
  std::vector<struct pollfd> real_fds;
  std::vector<std::size_t> real_index;
  bool any_sim = false;
  for (nfds_t i = 0; i < n; i++) {
    if (is_event(fds[i].fd) || is_exit_fd(fds[i].fd)) {
      any_sim = true;
    } else {
      real_fds.push_back(fds[i]);
      real_index.push_back(i);
    }
  }
  if (!any_sim) return -2;  // not ours
  const bool stepping = main_thread();
  const std::uint64_t deadline =
      timeout_ms < 0 ? UINT64_MAX : kernel_->now_ns() + static_cast<std::uint64_t>(timeout_ms) * 1'000'000;
  for (std::uint64_t steps = 0;; steps++) {
    int ready = 0;
    for (nfds_t i = 0; i < n; i++) {
      if (is_exit_fd(fds[i].fd)) {
        fds[i].revents = static_cast<short>(sigchld_done_ ? (fds[i].events & POLLIN) : 0);
        ready += fds[i].revents != 0 ? 1 : 0;
        continue;
      }
      if (!is_event(fds[i].fd)) continue;
      const short r = kernel_->poll(event_of(fds[i].fd));
      fds[i].revents = static_cast<short>(r & (fds[i].events | POLLHUP | POLLERR));
      ready += fds[i].revents != 0 ? 1 : 0;
    }
    if (!real_fds.empty()) {
      const int r = real_poll(real_fds.data(), real_fds.size(), 0);
      if (r < 0) return -1;
      for (std::size_t k = 0; k < real_fds.size(); k++) {
        fds[real_index[k]].revents = real_fds[k].revents;
        ready += real_fds[k].revents != 0 ? 1 : 0;
      }
    }
    if (ready > 0 || timeout_ms == 0) return ready;
    if (!stepping) {
      for (nfds_t i = 0; i < n; i++) {
        if (is_exit_fd(fds[i].fd) || (is_event(fds[i].fd) && kernel_->can_fire(event_of(fds[i].fd)))) {
          refuse("a second thread waits on the simulated kernel: only single-thread consumers are deterministic "
                 "(ringsim-record: --staging off)");
        }
      }
      // Another thread (perf's side-band thread): it never advances the
      // kernel; it waits for real on the real descriptors, as long as
      // its timeout, then looks again.
      std::vector<struct pollfd> all(fds, fds + n);
      mutex_.unlock();
      real_poll(all.data(), n, timeout_ms < 0 ? 100 : std::min(timeout_ms, 100));
      mutex_.lock();
      if (timeout_ms >= 0) return 0;
      continue;
    }
    if (kernel_->now_ns() >= deadline) return 0;
    if (steps >= kPollStepsMax) {
      refuse("one poll took a million steps of the simulated kernel");
    }
    step(true);
    bool interrupted = false;
    deliver_due_signals(interrupted);
    if (interrupted) {
      errno = EINTR;
      return -1;
    }
  }
}

bool Shim::epoll_ctl(int epfd, int op, int fd, const struct epoll_event* ev, int& result) {
  if (!is_event(fd) && !is_exit_fd(fd)) return false;
  std::map<int, struct epoll_event>& set = epolls_[epfd];
  result = 0;
  switch (op) {
    case EPOLL_CTL_ADD:
    case EPOLL_CTL_MOD:
      if (ev == nullptr || (op == EPOLL_CTL_ADD) == (set.count(fd) > 0)) {
        errno = ev == nullptr ? EFAULT : op == EPOLL_CTL_ADD ? EEXIST : ENOENT;
        result = -1;
        return true;
      }
      if ((ev->events & (EPOLLONESHOT | EPOLLEXCLUSIVE | EPOLLWAKEUP)) != 0) {
        refuse("epoll_ctl with EPOLLONESHOT, EPOLLEXCLUSIVE or EPOLLWAKEUP on a simulated descriptor");
      }
      set[fd] = *ev;
      return true;
    case EPOLL_CTL_DEL:
      if (set.erase(fd) == 0) {
        errno = ENOENT;
        result = -1;
      }
      return true;
    default:
      errno = EINVAL;
      result = -1;
      return true;
  }
}

int Shim::epoll_wait(int epfd, struct epoll_event* events, int max, int timeout_ms) {
  REAL(epoll_wait, int (*)(int, struct epoll_event*, int, int));
  const auto it = epolls_.find(epfd);
  if (it == epolls_.end() || it->second.empty()) return -2;  // not ours
  if (max <= 0) {
    errno = EINVAL;
    return -1;
  }
  // The simulated members, then the epoll fd itself (readable when a real
  // member is ready), waited on as one poll: the same steps of the kernel.
  std::vector<struct pollfd> fds;
  std::vector<struct epoll_event> data;
  for (const auto& [fd, ev] : it->second) {
    fds.push_back({fd, static_cast<short>(((ev.events & EPOLLIN) ? POLLIN : 0) | ((ev.events & EPOLLOUT) ? POLLOUT : 0)), 0});
    data.push_back(ev);
  }
  fds.push_back({epfd, POLLIN, 0});
  const int ready = poll(fds.data(), fds.size(), timeout_ms);
  if (ready <= 0) return ready;
  int n = 0;
  for (std::size_t k = 0; k + 1 < fds.size() && n < max; k++) {
    if (fds[k].revents == 0) continue;
    const short r = fds[k].revents;
    std::uint32_t e = 0;
    if (r & POLLIN) e |= EPOLLIN;
    if (r & POLLOUT) e |= EPOLLOUT;
    if (r & POLLHUP) e |= EPOLLHUP;
    if (r & POLLERR) e |= EPOLLERR;
    events[n].events = e;
    events[n].data = data[k].data;
    n++;
  }
  if (fds.back().revents != 0 && n < max) {
    const int real = real_epoll_wait(epfd, events + n, max - n, 0);
    if (real > 0) n += real;
  }
  return n;
}

// `path` from the working directory ("" if that is unknown).
std::string absolute(const char* path) {
  std::string p = path;
  if (!p.empty() && p[0] != '/') {
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof cwd) == nullptr) return "";
    p = std::string(cwd) + "/" + p;
  }
  return p;
}

void Shim::note_rename(const char* from, const char* to) {
  if (from == nullptr || to == nullptr || output_path_.empty()) return;
  const std::string source = absolute(from);
  if (source == output_path_) {
    log_.renamed.push_back(absolute(to));
    return;
  }
  // ringsim-record --timestamp-filename renames its numbered files too, each
  // when finished: the same file, judged under its new name in its place
  // among the numbered ones (which may carry copies of earlier side-band
  // records: sim/interpose/oracle.cc).
  const auto numbered = std::find(log_.numbered.begin(), log_.numbered.end(), source);
  if (numbered != log_.numbered.end()) *numbered = absolute(to);
}

void Shim::keep_before_unlink(const std::string& path) {
  if (output_path_.empty() || path.empty()) return;
  const bool output = path == output_path_ ||
                      std::find(log_.renamed.begin(), log_.renamed.end(), path) != log_.renamed.end() ||
                      std::find(log_.numbered.begin(), log_.numbered.end(), path) != log_.numbered.end();
  if (!output) return;
  const std::string kept = output_path_ + ".removed." + std::to_string(log_.removed.size() + 1);
  if (::link(path.c_str(), kept.c_str()) != 0) {
    // Gone already (perf removes a name twice when two of its files got
    // it: finding 3): the unlink finds nothing either.
    if (errno == ENOENT) return;
    refuse("unlink of " + path + ": keeping it as " + kept + " for the oracle: link: " + std::strerror(errno));
    return;
  }
  log_.removed.push_back(RunLog::Removed{path, kept});
}

// A path relative to directory `dir` (AT_FDCWD: the working one) made
// absolute through /proc/self/fd; "" if the directory cannot be named.
std::string Shim::path_at(int dir, const char* path) {
  if (path == nullptr) return "";
  if (dir == AT_FDCWD || path[0] == '/') return absolute(path);
  char target[PATH_MAX];
  const ssize_t n = ::readlink(("/proc/self/fd/" + std::to_string(dir)).c_str(), target, sizeof target - 1);
  if (n <= 0) return "";
  return std::string(target, static_cast<std::size_t>(n)) + "/" + path;
}

// OUTPUT.N with N a number from 1 (ringsim-record's --switch-output files).
static bool numbered_output(const std::string& path, const std::string& output) {
  if (path.size() <= output.size() + 1 || path.compare(0, output.size(), output) != 0 || path[output.size()] != '.') {
    return false;
  }
  const std::string n = path.substr(output.size() + 1);
  return n.size() <= 9 && n[0] != '0' && std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; });
}

void Shim::note_open(int fd, const char* path) {
  if (fd < 0 || path == nullptr || output_path_.empty()) return;
  const std::string p = absolute(path);
  if (p == output_path_) {
    outputs_[fd] = 0;
  } else if (numbered_output(p, output_path_)) {
    outputs_[fd] = 0;
    if (std::find(log_.numbered.begin(), log_.numbered.end(), p) == log_.numbered.end()) log_.numbered.push_back(p);
  } else {
    outputs_.erase(fd);
  }
}

// The simulated disk under one write to the output: its latency first
// (the kernel goes on meanwhile: rings fill), then what it returns.
ssize_t Shim::write_output(int fd, const void* buf, std::size_t n, off_t offset, bool positioned) {
  REAL(write, ssize_t (*)(int, const void*, std::size_t));
  REAL(pwrite64, ssize_t (*)(int, const void*, std::size_t, off_t));
  if (!main_thread()) refuse("a second thread wrote the output: only single-thread consumers are deterministic");
  DiskStats& d = log_.disk;
  d.writes++;
  const std::uint64_t latency = decisions_->draw(latency_ticks_max_ + 1);
  for (std::uint64_t k = 0; k < latency; k++) step();
  // A signal due now runs its handler; the write itself goes on (the
  // handlers consumers install restart: SA_RESTART).
  bool interrupted = false;
  deliver_due_signals(interrupted);
  std::size_t todo = n;
  const off_t at = positioned ? offset : ::lseek(fd, 0, SEEK_CUR);
  const auto trace = [&](const char* what) {
    if (trace_disk_) {
      std::fprintf(stderr, "ringsim-disk: write %llu of %zu bytes at offset %lld: %s\n",
                   static_cast<unsigned long long>(d.writes), n, static_cast<long long>(at), what);
    }
  };
  if (disk_full_ && n > 0) {
    d.enospc++;
    trace("ENOSPC (the disk is full)");
    errno = ENOSPC;
    return -1;
  }
  if (disk_faults_ >= 1 && n > 0) {
    switch (decisions_->draw(disk_faults_ == 2 ? 64 : 32)) {
      case 1:
        d.eintr++;
        trace("EINTR");
        errno = EINTR;
        return -1;
      case 2:
        // EAGAIN only where Linux returns it for a file: O_NONBLOCK.
        if ((::fcntl(fd, F_GETFL) & O_NONBLOCK) != 0) {
          d.eagain++;
          trace("EAGAIN");
          errno = EAGAIN;
          return -1;
        }
        break;
      case 3:
      case 4:
        if (n > 1) {
          todo = decisions_->between(1, n - 1);
          d.short_writes++;
          trace(("short: " + std::to_string(todo) + " bytes").c_str());
        }
        break;
      case 5:
        if (disk_faults_ == 2) {
          d.eio++;
          trace("EIO");
          errno = EIO;
          return -1;
        }
        break;
      case 6:
        if (disk_faults_ == 2) {
          d.enospc++;
          disk_full_ = disk_full_mode_;
          trace(disk_full_ ? "ENOSPC (the disk is full from now on)" : "ENOSPC");
          errno = ENOSPC;
          return -1;
        }
        break;
      default:
        break;
    }
  }
  const ssize_t r = positioned ? real_pwrite64(fd, buf, todo, offset) : real_write(fd, buf, todo);
  if (r > 0) d.bytes += static_cast<std::uint64_t>(r);
  return r;
}

int Shim::file_op_fault(int fd, bool truncate) {
  DiskStats& d = log_.disk;
  const char* what = truncate ? "ftruncate" : "fsync";
  const auto fault = [&](int error, std::uint64_t& count) {
    count++;
    if (trace_disk_) std::fprintf(stderr, "ringsim-disk: %s of fd %d: %s\n", what, fd, std::strerror(error));
    return error;
  };
  if (disk_full_ && !truncate) return fault(ENOSPC, d.enospc);
  if (disk_faults_ == 0) return 0;
  switch (decisions_->draw(disk_faults_ == 2 ? 64 : 32)) {
    case 1:
      if (truncate) return fault(EINTR, d.eintr);  // interrupted while it waited (ftruncate(2))
      break;
    case 5:
      if (disk_faults_ == 2) return fault(EIO, d.eio);
      break;
    case 6:
      if (disk_faults_ == 2 && !truncate) return fault(ENOSPC, d.enospc);
      break;
    default:
      break;
  }
  return 0;
}

int Shim::aio_write(struct aiocb* cb) {
  aio_busy_check();
  REAL(pwrite64, ssize_t (*)(int, const void*, std::size_t, off_t));
  if (!main_thread()) refuse("aio_write from a second thread: only single-thread consumers are deterministic");
  DiskStats& d = log_.disk;
  if (disk_faults_ >= 1 && decisions_->draw(32) == 1) {
    d.eagain++;
    errno = EAGAIN;  // not queued
    return -1;
  }
  d.aio_submitted++;
  AioRequest req;
  const std::size_t n = cb->aio_nbytes;
  std::size_t todo = n;
  int error = disk_full_ && n > 0 ? ENOSPC : 0;
  if (error == 0 && disk_faults_ >= 1 && n > 1) {
    switch (decisions_->draw(disk_faults_ == 2 ? 64 : 32)) {
      case 3:
      case 4:
        todo = decisions_->between(1, n - 1);
        d.aio_short++;
        break;
      case 5:
        if (disk_faults_ == 2) error = EIO;
        break;
      case 6:
        if (disk_faults_ == 2) error = ENOSPC;
        disk_full_ = disk_full_mode_ && error == ENOSPC;
        break;
      default:
        break;
    }
  }
  if (error != 0) {
    d.aio_errors++;
    req.result = -error;
  } else {
    const ssize_t r = real_pwrite64(cb->aio_fildes, const_cast<void*>(cb->aio_buf), todo, cb->aio_offset);
    req.result = r < 0 ? -errno : r;
    if (r > 0) d.bytes += static_cast<std::uint64_t>(r);
  }
  req.done_ns = kernel_->now_ns() + KernelParams{}.tick_ns * decisions_->draw(latency_ticks_max_ * 2 + 1);
  aio_[cb] = req;
  return 0;
}

int Shim::aio_error(const struct aiocb* cb) {
  aio_busy_check();
  const AioRequest& r = aio_.at(cb);
  if (kernel_->now_ns() < r.done_ns) return EINPROGRESS;
  return r.result < 0 ? static_cast<int>(-r.result) : 0;
}

ssize_t Shim::aio_return(struct aiocb* cb) {
  aio_busy_check();
  const AioRequest r = aio_.at(cb);
  if (kernel_->now_ns() < r.done_ns) {
    errno = EINVAL;  // undefined before completion; glibc returns the in-progress state
    return -1;
  }
  aio_.erase(cb);
  if (r.result < 0) {
    errno = static_cast<int>(-r.result);
    return -1;
  }
  return r.result;
}

int Shim::aio_suspend(const struct aiocb* const list[], int n, const struct timespec* timeout) {
  const std::uint64_t deadline =
      timeout == nullptr ? UINT64_MAX
                         : kernel_->now_ns() + static_cast<std::uint64_t>(timeout->tv_sec) * 1'000'000'000 +
                               static_cast<std::uint64_t>(timeout->tv_nsec);
  for (std::uint64_t steps = 0; steps < kPollStepsMax; steps++) {
    bool pending = false;
    for (int i = 0; i < n; i++) {
      if (list[i] == nullptr) continue;
      const auto it = aio_.find(list[i]);
      if (it == aio_.end()) continue;
      pending = true;
      if (kernel_->now_ns() >= it->second.done_ns) return 0;
    }
    if (!pending) return 0;
    if (kernel_->now_ns() >= deadline) {
      errno = EAGAIN;
      return -1;
    }
    step();
    bool interrupted = false;
    deliver_due_signals(interrupted);
    if (interrupted) {
      errno = EINTR;
      return -1;
    }
  }
  refuse("one aio_suspend took a million steps of the simulated kernel");
  return -1;
}

void Shim::finish() {
  if (finished_) return;
  finished_ = true;
  kernel_->sync_tails();
  write_log();
}

void Shim::write_log() {
  const KernelStats& s = kernel_->stats();
  log_.steps = s.steps;
  log_.samples = s.samples;
  log_.sideband = s.sideband;
  log_.bursts = s.bursts;
  log_.started = kernel_->started();
  log_.ended = kernel_->ended();
  log_.virtual_ns = kernel_->now_ns();
  for (const OpenedEvent& e : kernel_->events()) {
    log_.events.push_back(LoggedEvent{e.id, e.attr.type, e.attr.config, e.attr.sample_type, e.pid, e.cpu,
                                      e.lost_samples});
  }
  for (const std::unique_ptr<MappedRing>& r : kernel_->rings()) {
    LoggedRing out;
    out.owner_id = kernel_->events().at(static_cast<std::size_t>(r->owner)).id;
    out.writable = r->writable;
    out.size_bytes = r->data.size();
    if (r->ring) {
      out.size_bytes = r->ring->data_size_bytes();
      out.head = r->ring->head();
      out.tail = r->ring->tail();
    }
    out.dropped = r->log.dropped();
    out.dropped_unreported = r->log.dropped_unreported + (r->ring ? r->ring->lost_pending() : 0);
    out.lost_reported = r->log.lost_reported;
    out.bad_tail = r->bad_tail;
    out.pauses = r->pauses;
    out.backward = r->ring && core::backward(r->ring->mode());
    if (!r->bad_tail.empty()) log_.findings.push_back("tail: " + r->bad_tail);
    if (r->aux) {
      const CallAux& a = *r->aux;
      out.aux = LoggedRing::Aux{a.size_bytes, a.owner_id, a.head, a.tail_seen,
                                a.transactions, a.truncated, a.truncated_bytes, a.full_disables, a.bad_tail};
      if (!a.bad_tail.empty()) log_.findings.push_back("tail: " + a.bad_tail);
    }
    for (const model::WrittenRecord& w : r->log.written) {
      LoggedRecord rec;
      rec.type = w.type;
      rec.time_ns = w.time_ns;
      rec.event = w.event;
      rec.lost = w.lost;
      rec.position = w.position;
      rec.bytes.assign(r->log.bytes.begin() + static_cast<std::ptrdiff_t>(w.offset),
                       r->log.bytes.begin() + static_cast<std::ptrdiff_t>(w.offset + w.size));
      out.records.push_back(std::move(rec));
    }
    log_.rings.push_back(std::move(out));
  }
  log_.tape = decisions_->recorded();
  if (decisions_->diverged()) log_.findings.push_back("replay diverged: " + decisions_->divergence());
  if (log_path_.empty()) return;
  const std::string problem = write_run_log(log_path_, log_);
  if (!problem.empty()) std::fprintf(stderr, "ringsim-interpose: %s\n", problem.c_str());
}

}  // namespace
}  // namespace ringsim::sim::interpose

using ringsim::sim::interpose::Handler;
using ringsim::sim::interpose::Shim;

namespace {

Shim* active_shim() {
  if (ringsim::sim::interpose::constructing) return nullptr;
  Shim* s = Shim::get();
  return s->active() ? s : nullptr;
}

// The target's handler for a fault or trap that is not the shim's, or the
// default action (the access runs again and the signal kills the target).
void chain(int sig, siginfo_t* info, void* context, const Handler& h) {
  REAL(sigaction, int (*)(int, const struct sigaction*, struct sigaction*));
  if (h.set && (h.action.sa_flags & SA_SIGINFO) != 0) {
    h.action.sa_sigaction(sig, info, context);
  } else if (h.set && h.action.sa_handler != SIG_DFL && h.action.sa_handler != SIG_IGN) {
    h.action.sa_handler(sig);
  } else {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    real_sigaction(sig, &dfl, nullptr);
  }
}

void on_sigsegv(int sig, siginfo_t* info, void* context) {
  Shim* s = active_shim();
  if (s != nullptr) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    if (s->on_control_fault(reinterpret_cast<std::uintptr_t>(info->si_addr), static_cast<ucontext_t*>(context))) {
      return;
    }
  }
  chain(sig, info, context, s != nullptr ? s->target_handler(sig) : Handler{});
}

void on_sigtrap(int sig, siginfo_t* info, void* context) {
  Shim* s = active_shim();
  if (s != nullptr) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    if (s->on_single_step(static_cast<ucontext_t*>(context))) return;
  }
  chain(sig, info, context, s != nullptr ? s->target_handler(sig) : Handler{});
}

}  // namespace

void ringsim_install_trap_handlers() {
  REAL(sigaction, int (*)(int, const struct sigaction*, struct sigaction*));
  for (const auto& [sig, handler] : {std::pair{SIGSEGV, &on_sigsegv}, std::pair{SIGTRAP, &on_sigtrap}}) {
    struct sigaction a {};
    a.sa_sigaction = handler;
    a.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&a.sa_mask);
    if (real_sigaction(sig, &a, nullptr) != 0) {
      std::fprintf(stderr, "ringsim-interpose: --interleave: sigaction(%d): %s\n", sig, std::strerror(errno));
      _exit(ringsim::sim::interpose::kExitRefused);
    }
  }
}

namespace {

// perf writes a NUMA node's total and free memory into its NUMA_TOPOLOGY
// feature, from /sys/devices/system/node/node<N>/meminfo: the free memory
// changes from run to run, and so does the total on a host whose memory is
// hot-plugged (this one's node 0: 6383820 kB, then 7956684 kB). The target
// reads a fixed file there instead, in the kernel's format: 8 GiB, half of
// it free. A memfd at offset 0 for such a path opened for reading; -1 for
// any other path (it goes to the real system).
int fixed_node_meminfo(const char* path, bool for_writing, bool cloexec) {
  int node = -1;
  int end = 0;
  if (path == nullptr || for_writing ||
      std::sscanf(path, "/sys/devices/system/node/node%d/meminfo%n", &node, &end) != 1 || end == 0 ||
      path[end] != '\0' || node < 0) {
    return -1;
  }
  constexpr unsigned long long kTotalKb = 8ull << 20;
  char text[256];
  const int n = std::snprintf(text, sizeof text,
                              "Node %d MemTotal:       %8llu kB\nNode %d MemFree:        %8llu kB\n"
                              "Node %d MemUsed:        %8llu kB\n",
                              node, kTotalKb, node, kTotalKb / 2, node, kTotalKb / 2);
  const unsigned memfd_flags = cloexec ? 1u /* MFD_CLOEXEC */ : 0u;
  const int fd = static_cast<int>(::syscall(SYS_memfd_create, "ringsim-meminfo", memfd_flags));
  if (fd < 0) return -1;
  REAL(write, ssize_t (*)(int, const void*, size_t));
  if (n <= 0 || real_write(fd, text, static_cast<std::size_t>(n)) != n || ::lseek(fd, 0, SEEK_SET) != 0) {
    ::syscall(SYS_close, fd);
    return -1;
  }
  return fd;
}

}  // namespace

// --- The interposed functions ---------------------------------------------

extern "C" {

long syscall(long number, ...) {
  va_list ap;
  va_start(ap, number);
  long a[6];
  for (long& x : a) x = va_arg(ap, long);
  va_end(ap);
  if (number == SYS_pidfd_open) {
    if (Shim* s = active_shim()) {
      std::lock_guard<std::recursive_mutex> lock(s->mutex());
      const long r = s->pidfd_open(static_cast<int>(a[0]), static_cast<unsigned>(a[1]));
      if (r != -2) {
        if (r < 0) {
          errno = static_cast<int>(-r);
          return -1;
        }
        return r;
      }
    }
  }
  if (number == SYS_perf_event_open) {
    if (Shim* s = active_shim()) {
      std::lock_guard<std::recursive_mutex> lock(s->mutex());
      const long r = s->perf_event_open(reinterpret_cast<const perf_event_attr*>(a[0]), static_cast<int>(a[1]),
                                        static_cast<int>(a[2]), static_cast<int>(a[3]),
                                        static_cast<unsigned long>(a[4]));
      if (r < 0) {
        errno = static_cast<int>(-r);
        return -1;
      }
      return r;
    }
  }
  REAL(syscall, long (*)(long, ...));
  return real_syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

void* mmap64(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  if (Shim* s = active_shim()) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    if (s->is_event(fd)) return s->mmap(addr, len, prot, flags, fd, off);
  }
  REAL(mmap64, void* (*)(void*, size_t, int, int, int, off_t));
  return real_mmap64(addr, len, prot, flags, fd, off);
}

void* mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  return mmap64(addr, len, prot, flags, fd, off);
}

int munmap(void* addr, size_t len) {
  if (Shim* s = active_shim()) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    int result = 0;
    if (s->munmap(addr, len, result)) return result;
  }
  REAL(munmap, int (*)(void*, size_t));
  return real_munmap(addr, len);
}

int ioctl(int fd, unsigned long request, ...) {
  va_list ap;
  va_start(ap, request);
  const unsigned long arg = va_arg(ap, unsigned long);
  va_end(ap);
  if (Shim* s = active_shim()) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    if (s->is_event(fd)) {
      const long r = s->ioctl(fd, request, arg);
      if (r < 0) {
        errno = static_cast<int>(-r);
        return -1;
      }
      return static_cast<int>(r);
    }
  }
  REAL(ioctl, int (*)(int, unsigned long, ...));
  return real_ioctl(fd, request, arg);
}

ssize_t read(int fd, void* buf, size_t n) {
  if (Shim* s = active_shim()) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    if (s->is_event(fd)) return s->read(fd, buf, n);
  }
  REAL(read, ssize_t (*)(int, void*, size_t));
  return real_read(fd, buf, n);
}

int close(int fd) {
  if (Shim* s = active_shim()) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    if (s->is_event(fd)) s->close(fd);
    s->forget(fd);
  }
  REAL(close, int (*)(int));
  return real_close(fd);
}

int poll(struct pollfd* fds, nfds_t n, int timeout) {
  if (Shim* s = active_shim()) {
    std::unique_lock<std::recursive_mutex> lock(s->mutex());
    const int r = s->poll(fds, n, timeout);
    if (r != -2) return r;
  }
  REAL(poll, int (*)(struct pollfd*, nfds_t, int));
  return real_poll(fds, n, timeout);
}

int ppoll(struct pollfd* fds, nfds_t n, const struct timespec* timeout, const sigset_t* mask) {
  if (Shim* s = active_shim()) {
    std::unique_lock<std::recursive_mutex> lock(s->mutex());
    // The signal mask is not applied: signals come from the kernel's clock.
    const long long ms = timeout == nullptr ? -1
                                            : static_cast<long long>(timeout->tv_sec) * 1000 +
                                                  (timeout->tv_nsec + 999'999) / 1'000'000;
    const int r = s->poll(fds, n, static_cast<int>(std::min<long long>(ms, INT_MAX)));
    if (r != -2) return r;
  }
  REAL(ppoll, int (*)(struct pollfd*, nfds_t, const struct timespec*, const sigset_t*));
  return real_ppoll(fds, n, timeout, mask);
}

int epoll_ctl(int epfd, int op, int fd, struct epoll_event* ev) {
  if (Shim* s = active_shim()) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    int result = 0;
    if (s->epoll_ctl(epfd, op, fd, ev, result)) return result;
  }
  REAL(epoll_ctl, int (*)(int, int, int, struct epoll_event*));
  return real_epoll_ctl(epfd, op, fd, ev);
}

int epoll_wait(int epfd, struct epoll_event* events, int max, int timeout) {
  if (Shim* s = active_shim()) {
    std::unique_lock<std::recursive_mutex> lock(s->mutex());
    const int r = s->epoll_wait(epfd, events, max, timeout);
    if (r != -2) return r;
  }
  REAL(epoll_wait, int (*)(int, struct epoll_event*, int, int));
  return real_epoll_wait(epfd, events, max, timeout);
}

// A signal mask does not change what the simulated kernel does: the
// signals it delivers are its own.
int epoll_pwait(int epfd, struct epoll_event* events, int max, int timeout, const sigset_t* mask) {
  if (Shim* s = active_shim()) {
    std::unique_lock<std::recursive_mutex> lock(s->mutex());
    const int r = s->epoll_wait(epfd, events, max, timeout);
    if (r != -2) return r;
  }
  REAL(epoll_pwait, int (*)(int, struct epoll_event*, int, int, const sigset_t*));
  return real_epoll_pwait(epfd, events, max, timeout, mask);
}

int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? static_cast<mode_t>(va_arg(ap, int)) : 0;
  va_end(ap);
  if (active_shim() != nullptr) {
    const int fixed = fixed_node_meminfo(path, (flags & O_ACCMODE) != O_RDONLY, (flags & O_CLOEXEC) != 0);
    if (fixed >= 0) return fixed;
  }
  REAL(open64, int (*)(const char*, int, ...));
  const int fd = real_open64(path, flags, mode);
  if (Shim* s = active_shim()) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    s->note_open(fd, path);
  }
  return fd;
}

int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? static_cast<mode_t>(va_arg(ap, int)) : 0;
  va_end(ap);
  return open64(path, flags, mode);
}

int openat64(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? static_cast<mode_t>(va_arg(ap, int)) : 0;
  va_end(ap);
  if (active_shim() != nullptr) {
    const int fixed = fixed_node_meminfo(path, (flags & O_ACCMODE) != O_RDONLY, (flags & O_CLOEXEC) != 0);
    if (fixed >= 0) return fixed;
  }
  REAL(openat64, int (*)(int, const char*, int, ...));
  const int fd = real_openat64(dirfd, path, flags, mode);
  if (Shim* s = active_shim(); s != nullptr && (dirfd == AT_FDCWD || path[0] == '/')) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    s->note_open(fd, path);
  }
  return fd;
}

int openat(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? static_cast<mode_t>(va_arg(ap, int)) : 0;
  va_end(ap);
  return openat64(dirfd, path, flags, mode);
}

// glibc's fopen opens without calling open(): the fixed meminfo for it too.
FILE* fopen64(const char* path, const char* mode) {
  if (active_shim() != nullptr) {
    const bool writing = mode[0] != 'r' || std::strchr(mode, '+') != nullptr;
    const int fixed = fixed_node_meminfo(path, writing, std::strchr(mode, 'e') != nullptr);
    if (fixed >= 0) {
      FILE* f = ::fdopen(fixed, mode);
      if (f == nullptr) ::syscall(SYS_close, fixed);
      return f;
    }
  }
  REAL(fopen64, FILE* (*)(const char*, const char*));
  return real_fopen64(path, mode);
}

FILE* fopen(const char* path, const char* mode) { return fopen64(path, mode); }

int rename(const char* from, const char* to) {
  REAL(rename, int (*)(const char*, const char*));
  const int r = real_rename(from, to);
  if (Shim* s = active_shim(); s != nullptr && r == 0) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    s->note_rename(from, to);
  }
  return r;
}

// renameat2 (ringsim-record --timestamp-filename: RENAME_NOREPLACE), as
// rename, each name taken relative to its directory (before 2026-11-27
// only names relative to the working directory were logged, the others
// ignored silently).
int renameat2(int from_dir, const char* from, int to_dir, const char* to, unsigned flags) {
  REAL(renameat2, int (*)(int, const char*, int, const char*, unsigned));
  const std::string source = Shim::path_at(from_dir, from);
  const std::string target = Shim::path_at(to_dir, to);
  const int r = real_renameat2(from_dir, from, to_dir, to, flags);
  if (Shim* s = active_shim(); s != nullptr && r == 0) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    s->note_rename(source.c_str(), target.c_str());
  }
  return r;
}

// unlink, unlinkat and remove of the output's files (perf record and
// ringsim-record --switch-max-files): kept for the oracle first.
int unlink(const char* path) {
  REAL(unlink, int (*)(const char*));
  if (Shim* s = active_shim(); s != nullptr) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    s->keep_before_unlink(Shim::path_at(AT_FDCWD, path));
  }
  return real_unlink(path);
}

int unlinkat(int dir, const char* path, int flags) {
  REAL(unlinkat, int (*)(int, const char*, int));
  if (Shim* s = active_shim(); s != nullptr && (flags & AT_REMOVEDIR) == 0) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    s->keep_before_unlink(Shim::path_at(dir, path));
  }
  return real_unlinkat(dir, path, flags);
}

int remove(const char* path) {
  REAL(remove, int (*)(const char*));
  if (Shim* s = active_shim(); s != nullptr) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    s->keep_before_unlink(Shim::path_at(AT_FDCWD, path));
  }
  return real_remove(path);
}

// A real-time timer would fire by real time, not the run's virtual clock.
unsigned alarm(unsigned seconds) {
  if (Shim* s = active_shim(); s != nullptr && seconds > 0) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    s->refuse("alarm() is a real-time timer, not simulated: the run's clock is virtual "
              "(perf record --switch-output=TIME arms one: use a size or signal)");
  }
  REAL(alarm, unsigned (*)(unsigned));
  return real_alarm(seconds);
}

int creat64(const char* path, mode_t mode) { return open64(path, O_CREAT | O_WRONLY | O_TRUNC, mode); }
int creat(const char* path, mode_t mode) { return open64(path, O_CREAT | O_WRONLY | O_TRUNC, mode); }

ssize_t write(int fd, const void* buf, size_t n) {
  if (Shim* s = active_shim()) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    if (s->is_output(fd)) return s->write_output(fd, buf, n, 0, false);
  }
  REAL(write, ssize_t (*)(int, const void*, size_t));
  return real_write(fd, buf, n);
}

ssize_t pwrite64(int fd, const void* buf, size_t n, off_t offset) {
  if (Shim* s = active_shim()) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    if (s->is_output(fd)) return s->write_output(fd, buf, n, offset, true);
  }
  REAL(pwrite64, ssize_t (*)(int, const void*, size_t, off_t));
  return real_pwrite64(fd, buf, n, offset);
}

ssize_t pwrite(int fd, const void* buf, size_t n, off_t offset) { return pwrite64(fd, buf, n, offset); }

// ftruncate, fsync and fdatasync of the output: the disk's faults first.
int ftruncate64(int fd, off_t length) {
  if (Shim* s = active_shim()) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    if (s->is_output(fd)) {
      if (const int error = s->file_op_fault(fd, true); error != 0) {
        errno = error;
        return -1;
      }
    }
  }
  REAL(ftruncate64, int (*)(int, off_t));
  return real_ftruncate64(fd, length);
}

int ftruncate(int fd, off_t length) { return ftruncate64(fd, length); }

namespace {
int sync_output(int fd, bool data_only) {
  if (Shim* s = active_shim()) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    if (s->is_output(fd)) {
      if (const int error = s->file_op_fault(fd, false); error != 0) {
        errno = error;
        return -1;
      }
    }
  }
  REAL(fsync, int (*)(int));
  REAL(fdatasync, int (*)(int));
  return data_only ? real_fdatasync(fd) : real_fsync(fd);
}
}  // namespace

int fsync(int fd) { return sync_output(fd, false); }
int fdatasync(int fd) { return sync_output(fd, true); }


ssize_t writev(int fd, const struct iovec* iov, int count) {
  if (Shim* s = active_shim()) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    if (s->is_output(fd)) {
      std::vector<char> all;
      for (int i = 0; i < count; i++) {
        const char* p = static_cast<const char*>(iov[i].iov_base);
        all.insert(all.end(), p, p + iov[i].iov_len);
      }
      return s->write_output(fd, all.data(), all.size(), 0, false);
    }
  }
  REAL(writev, ssize_t (*)(int, const struct iovec*, int));
  return real_writev(fd, iov, count);
}

// glibc's 64-bit names take struct aiocb64, the same layout on x86-64.
static_assert(sizeof(struct aiocb) == sizeof(struct aiocb64));

int aio_write(struct aiocb* cb) {
  if (Shim* s = active_shim()) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    if (s->is_output(cb->aio_fildes)) return s->aio_write(cb);
  }
  REAL(aio_write, int (*)(struct aiocb*));
  return real_aio_write(cb);
}
int aio_write64(struct aiocb64* cb) { return aio_write(reinterpret_cast<struct aiocb*>(cb)); }

int aio_error(const struct aiocb* cb) {
  if (Shim* s = active_shim()) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    if (s->aio_known(cb)) return s->aio_error(cb);
  }
  REAL(aio_error, int (*)(const struct aiocb*));
  return real_aio_error(cb);
}
int aio_error64(const struct aiocb64* cb) { return aio_error(reinterpret_cast<const struct aiocb*>(cb)); }

ssize_t aio_return(struct aiocb* cb) {
  if (Shim* s = active_shim()) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    if (s->aio_known(cb)) return s->aio_return(cb);
  }
  REAL(aio_return, ssize_t (*)(struct aiocb*));
  return real_aio_return(cb);
}
ssize_t aio_return64(struct aiocb64* cb) { return aio_return(reinterpret_cast<struct aiocb*>(cb)); }

int aio_suspend(const struct aiocb* const list[], int n, const struct timespec* timeout) {
  if (Shim* s = active_shim()) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    bool ours = false;
    for (int i = 0; i < n; i++) ours |= list[i] != nullptr && s->aio_known(list[i]);
    if (ours) return s->aio_suspend(list, n, timeout);
  }
  REAL(aio_suspend, int (*)(const struct aiocb* const[], int, const struct timespec*));
  return real_aio_suspend(list, n, timeout);
}
int aio_suspend64(const struct aiocb64* const list[], int n, const struct timespec* timeout) {
  return aio_suspend(reinterpret_cast<const struct aiocb* const*>(list), n, timeout);
}

int aio_cancel(int fd, struct aiocb* cb) {
  if (Shim* s = active_shim()) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    if (s->is_output(fd)) s->refuse("aio_cancel on the output is not simulated");
  }
  REAL(aio_cancel, int (*)(int, struct aiocb*));
  return real_aio_cancel(fd, cb);
}
int aio_cancel64(int fd, struct aiocb64* cb) { return aio_cancel(fd, reinterpret_cast<struct aiocb*>(cb)); }

int clock_gettime(clockid_t clock, struct timespec* ts) {
  if (Shim* s = active_shim()) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    std::uint64_t ns = 0;
    switch (clock) {
      case CLOCK_MONOTONIC:
      case CLOCK_MONOTONIC_RAW:
      case CLOCK_MONOTONIC_COARSE:
      case CLOCK_BOOTTIME:
        ns = s->now_ns();
        break;
      case CLOCK_REALTIME:
      case CLOCK_REALTIME_COARSE:
      case CLOCK_TAI:  // the kernel's TAI offset is 0 until set (adjtimex), as here: TAI reads as realtime
        ns = ringsim::sim::interpose::kRealtimeBaseNs + s->now_ns();
        break;
      default:
        goto pass;
    }
    ts->tv_sec = static_cast<time_t>(ns / 1'000'000'000);
    ts->tv_nsec = static_cast<long>(ns % 1'000'000'000);
    return 0;
  }
pass:
  REAL(clock_gettime, int (*)(clockid_t, struct timespec*));
  return real_clock_gettime(clock, ts);
}

int gettimeofday(struct timeval* tv, void* tz) {
  if (Shim* s = active_shim()) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    const std::uint64_t ns = ringsim::sim::interpose::kRealtimeBaseNs + s->now_ns();
    tv->tv_sec = static_cast<time_t>(ns / 1'000'000'000);
    tv->tv_usec = static_cast<suseconds_t>(ns % 1'000'000'000 / 1000);
    return 0;
  }
  REAL(gettimeofday, int (*)(struct timeval*, void*));
  return real_gettimeofday(tv, tz);
}

time_t time(time_t* out) {
  if (Shim* s = active_shim()) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    const time_t t = static_cast<time_t>((ringsim::sim::interpose::kRealtimeBaseNs + s->now_ns()) / 1'000'000'000);
    if (out != nullptr) *out = t;
    return t;
  }
  REAL(time, time_t (*)(time_t*));
  return real_time(out);
}

// A target that ends by raising a signal on itself (perf re-raises the
// one it received, from an atexit handler registered after ours) writes
// the kernel's log first.
// Whether `sig` now ends the process (its real disposition is the default).
bool ends_process(int sig) {
  REAL(sigaction, int (*)(int, const struct sigaction*, struct sigaction*));
  struct sigaction current {};
  if (real_sigaction(sig, nullptr, &current) != 0) return false;
  return (current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == SIG_DFL && sig != SIGCHLD &&
         sig != SIGURG && sig != SIGWINCH && sig != SIGCONT;
}

int raise(int sig) {
  if (Shim* s = active_shim(); s != nullptr && ends_process(sig)) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    s->finish();
  }
  REAL(raise, int (*)(int));
  return real_raise(sig);
}

int kill(pid_t pid, int sig) {
  if (Shim* s = active_shim(); s != nullptr && pid == ::getpid() && ends_process(sig)) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    s->finish();
  }
  if (Shim* s = active_shim(); s != nullptr && pid > 0 && sig != 0 && sig != SIGCHLD && sig != SIGCONT) {
    // The target stops its workload (perf: SIGTERM when it ends first):
    // the simulated tasks exit at the next step, as the real one does.
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    s->workload_killed(pid);
  }
  REAL(kill, int (*)(pid_t, int));
  return real_kill(pid, sig);
}

int sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  if (Shim* s = active_shim()) {
    std::lock_guard<std::recursive_mutex> lock(s->mutex());
    int result = 0;
    if (s->sigaction(sig, act, old, result)) return result;
  }
  REAL(sigaction, int (*)(int, const struct sigaction*, struct sigaction*));
  return real_sigaction(sig, act, old);
}

sighandler_t signal(int sig, sighandler_t handler) {
  struct sigaction act {};
  struct sigaction old {};
  act.sa_handler = handler;
  act.sa_flags = SA_RESTART;  // glibc's signal(): BSD semantics
  sigemptyset(&act.sa_mask);
  if (sigaction(sig, &act, &old) != 0) return SIG_ERR;
  return old.sa_handler;
}

}  // extern "C"
