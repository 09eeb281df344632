#include "tests/conformance/real_kernel.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "core/verify.h"
#include "tests/conformance/layout.h"

namespace ringsim::conformance {
namespace {

constexpr std::size_t kPageBytes = 4096;
constexpr std::size_t kFreshPages = 1024;
constexpr int kChildExitPollMs = 5000;
constexpr const char* kTracing = "/sys/kernel/tracing";
constexpr const char* kTracepoints[] = {"getpid", "getppid", "getuid"};

std::string tracepoint_id_path(const char* syscall) {
  return std::string(kTracing) + "/events/syscalls/sys_enter_" + syscall + "/id";
}

std::uint64_t read_tracepoint_id(const char* syscall) {
  std::ifstream in(tracepoint_id_path(syscall));
  std::uint64_t id = 0;
  in >> id;
  return id;
}

int perf_event_open(perf_event_attr& attr, pid_t pid, int cpu) {
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

void pin_to_cpu0() {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(0, &set);
  VERIFY(sched_setaffinity(0, sizeof set, &set) == 0);
}

// The child: runs orders from the pipe with system calls only (it is a
// fork of a process that may have other threads).
[[noreturn]] void child_loop(int orders, int acks) {
  for (;;) {
    char order[8];
    if (read(orders, order, sizeof order) != static_cast<ssize_t>(sizeof order)) _exit(1);
    std::uint32_t count;
    std::memcpy(&count, order + 4, 4);
    const long call = order[0] == 'g' ? SYS_getpid : order[0] == 'p' ? SYS_getppid : SYS_getuid;
    switch (order[0]) {
      case 'x':
        _exit(0);
      case 'w': {
        const timespec wait{0, 20'000'000};  // long enough for the parent to block in poll
        nanosleep(&wait, nullptr);
        _exit(0);
      }
      default:
        for (std::uint32_t i = 0; i < count; i++) syscall(call);
        if (write(acks, "k", 1) != 1) _exit(1);
    }
  }
}

}  // namespace

bool RealKernel::available(std::string& why) {
  const std::string id_path = tracepoint_id_path("getpid");
  if (access(id_path.c_str(), R_OK) != 0) {
    const int not_readable = errno;
    if (mount("nodev", kTracing, "tracefs", 0, nullptr) != 0 || access(id_path.c_str(), R_OK) != 0) {
      why = "cannot read " + id_path + " (" + std::strerror(not_readable) + ") nor mount tracefs at " + kTracing +
            " (" + std::strerror(errno) + ")";
      return false;
    }
  }
  for (const char* syscall_name : kTracepoints) {
    if (read_tracepoint_id(syscall_name) == 0) {
      why = "no tracepoint syscalls:sys_enter_" + std::string(syscall_name) + " in tracefs";
      return false;
    }
  }
  perf_event_attr attr = attr_of(EventSpec{}, read_tracepoint_id("getpid"));
  const int fd = perf_event_open(attr, 0, -1);
  if (fd < 0) {
    why = std::string("perf_event_open of a tracepoint is not permitted: ") + std::strerror(errno);
    return false;
  }
  close(fd);
  return true;
}

RealKernel::RealKernel(const SuiteFiles& files) : files_(files) {
  for (std::size_t i = 0; i < tracepoint_ids_.size(); i++) tracepoint_ids_[i] = read_tracepoint_id(kTracepoints[i]);
  pin_to_cpu0();
}

RealKernel::~RealKernel() { end(); }

void RealKernel::begin(const Scenario& scenario) {
  VERIFY(scenario.events.size() <= kEventsMax);
  // Records name this thread by its tid and its process by its pid (an
  // EXIT's ptid is its parent's pid: perf_event_task_output): the runner is
  // its process's main thread, so both are "this thread".
  pid_ = getpid();
  VERIFY(pid_ == static_cast<pid_t>(syscall(SYS_gettid)));
  scenario_ = &scenario;
  spawned_ = forks_ = mapped_ = 0;
  VERIFY(prctl(PR_GET_NAME, name_) == 0);
  void* pages = mmap(nullptr, kFreshPages * kPageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  VERIFY(pages != MAP_FAILED);
  VERIFY(madvise(pages, kFreshPages * kPageBytes, MADV_NOHUGEPAGE) == 0);
  fresh_pages_ = static_cast<char*>(pages);
  fresh_pages_used_ = 0;
}

void RealKernel::end() {
  for (Event& e : events_) {
    if (e.mapping != nullptr) munmap(e.mapping, e.mapping_bytes);
    if (e.fd >= 0) close(e.fd);
    e = Event{};
  }
  if (child_ > 0) {
    kill(child_, SIGKILL);
    reap_child();
  }
  if (fresh_pages_ != nullptr) munmap(fresh_pages_, kFreshPages * kPageBytes);
  fresh_pages_ = nullptr;
  if (scenario_ != nullptr) prctl(PR_SET_NAME, name_);
  scenario_ = nullptr;
}

int RealKernel::open(std::size_t event) {
  const EventSpec& spec = scenario_->events[event];
  perf_event_attr attr = attr_of(spec, tracepoint(spec.source) ? tracepoint_ids_[static_cast<std::size_t>(spec.source)] : 0);
  // A CPU-wide tracepoint is filtered on the child's pid; a dummy one is not.
  const bool filtered = spec.target == Target::system_cpu0 && spec.source != Source::dummy;
  const bool on_child = spec.target == Target::child || spec.target == Target::child_cpu0 || filtered;
  if (on_child && child_ <= 0) return ESRCH;
  const pid_t pid = spec.target == Target::system_cpu0 ? -1 : on_child ? child_ : 0;
  const int cpu = spec.target == Target::self || spec.target == Target::child ? -1 : 0;
  const int fd = perf_event_open(attr, pid, cpu);
  if (fd < 0) return errno;
  events_[event].fd = fd;
  VERIFY(ioctl(fd, PERF_EVENT_IOC_ID, &events_[event].id) == 0);
  if (filtered) {
    // Only the child's calls: the rest of the machine runs on CPU 0 too.
    const std::string filter = "common_pid == " + std::to_string(child_);
    VERIFY(ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter.c_str()) == 0);
  }
  return 0;
}

std::uint64_t RealKernel::id(std::size_t event) { return events_[event].id; }

int RealKernel::map(std::size_t event, std::uint32_t data_pages, bool writable) {
  Event& e = events_[event];
  VERIFY(e.fd >= 0);
  VERIFY(e.mapping == nullptr);
  const std::size_t bytes = (1 + data_pages) * kPageBytes;
  void* p = mmap(nullptr, bytes, PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, e.fd, 0);
  if (p == MAP_FAILED) return errno;
  e.mapping = p;
  e.mapping_bytes = bytes;
  e.pages = data_pages;
  // The first store to the control page is a page fault (it is mapped
  // read-only until then): take it now, before any event is enabled.
  if (writable) store_tail(event, 0);
  return 0;
}

void RealKernel::unmap(std::size_t event) {
  Event& e = events_[event];
  VERIFY(e.mapping != nullptr);
  VERIFY(munmap(e.mapping, e.mapping_bytes) == 0);
  e.mapping = nullptr;
}

int RealKernel::map_aux(std::size_t event, const AuxAsk& ask, bool writable) {
  Event& e = events_[event];
  VERIFY(e.fd >= 0);
  if (e.mapping != nullptr) {
    auto* control = static_cast<perf_event_mmap_page*>(e.mapping);
    control->aux_offset = std::uint64_t{ask.offset} * kPageBytes;
    control->aux_size = std::uint64_t{ask.size} * kPageBytes;
  }
  const std::size_t bytes = std::size_t{ask.map_pages} * kPageBytes;
  void* p = mmap(nullptr, bytes, PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, e.fd,
                 static_cast<off_t>(ask.map_offset) * static_cast<off_t>(kPageBytes));
  if (p == MAP_FAILED) return errno;
  VERIFY(munmap(p, bytes) == 0);
  return 0;
}

int RealKernel::set_output(std::size_t event, std::size_t target) {
  return ioctl(events_[event].fd, PERF_EVENT_IOC_SET_OUTPUT, events_[target].fd) == 0 ? 0 : errno;
}

int RealKernel::control(std::size_t event, Op op) {
  const int fd = events_[event].fd;
  int rc = -1;
  switch (op) {
    case Op::enable: rc = ioctl(fd, PERF_EVENT_IOC_ENABLE, 0); break;
    case Op::disable: rc = ioctl(fd, PERF_EVENT_IOC_DISABLE, 0); break;
    case Op::pause: rc = ioctl(fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1); break;
    case Op::resume: rc = ioctl(fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0); break;
    default: VERIFY_MSG(false, "not an ioctl");
  }
  return rc == 0 ? 0 : errno;
}

// No sanitizer check on the store: ASan's shadow page of a fresh page
// would be touched too, a second page fault.
__attribute__((no_sanitize_address)) void RealKernel::touch_fresh_page() {
  VERIFY(fresh_pages_used_ < kFreshPages);
  reinterpret_cast<volatile char*>(fresh_pages_)[fresh_pages_used_++ * kPageBytes] = 1;
}

void RealKernel::act(Action action, bool by_child, const std::string& name) {
  if (by_child) {
    VERIFY(action == Action::getpid || action == Action::getppid || action == Action::getuid);
    order_child(action == Action::getpid ? 'g' : action == Action::getppid ? 'p' : 'u', 1);
    return;
  }
  switch (action) {
    case Action::getpid: syscall(SYS_getpid); break;
    case Action::getppid: syscall(SYS_getppid); break;
    case Action::getuid: syscall(SYS_getuid); break;
    case Action::comm: VERIFY(prctl(PR_SET_NAME, name.c_str()) == 0); break;
    case Action::fork: {
      const pid_t pid = fork();
      VERIFY(pid >= 0);
      if (pid == 0) _exit(0);
      VERIFY(forks_ < kForkedMax);
      forked_[forks_++] = pid;
      int status;
      VERIFY(waitpid(pid, &status, 0) == pid);
      break;
    }
    case Action::mmap_exec: {
      const int fd = ::open(files_.exec_file.c_str(), O_RDONLY | O_CLOEXEC);
      VERIFY(fd >= 0);
      void* p = mmap(nullptr, kPageBytes, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
      VERIFY(p != MAP_FAILED);
      VERIFY(mapped_ < kMappingsMax);
      mappings_[mapped_++] = reinterpret_cast<std::uint64_t>(p);
      close(fd);
      munmap(p, kPageBytes);  // makes no record
      break;
    }
    case Action::fault: touch_fresh_page(); break;
  }
}

void RealKernel::spawn_child() {
  VERIFY(child_ <= 0);
  int orders[2], acks[2];
  VERIFY(pipe2(orders, O_CLOEXEC) == 0);
  VERIFY(pipe2(acks, O_CLOEXEC) == 0);
  const pid_t pid = fork();
  VERIFY(pid >= 0);
  if (pid == 0) {
    close(orders[1]);
    close(acks[0]);
    child_loop(orders[0], acks[1]);
  }
  close(orders[0]);
  close(acks[1]);
  child_ = pid;
  to_child_ = orders[1];
  from_child_ = acks[0];
  VERIFY(spawned_ < kChildrenMax);
  children_[spawned_++] = pid;
  wait_until_child_sleeps();
}

// The child's events count time only while it runs (their context is
// scheduled in): a step ends with the child asleep in read() of its
// orders, so that what it ran is the scenario's doing, not the scheduler's
// (the times' zero-ness is an observable).
void RealKernel::wait_until_child_sleeps() {
  char path[32];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(child_));
  constexpr int kTries = 20000;
  for (int i = 0; i < kTries; i++) {
    char stat[512] = {};
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    VERIFY(fd >= 0);
    const ssize_t n = ::read(fd, stat, sizeof stat - 1);
    close(fd);
    VERIFY(n > 0);
    const char* paren = std::strrchr(stat, ')');
    VERIFY(paren != nullptr && paren[1] == ' ');
    if (paren[2] == 'S') return;
    const timespec wait{0, 50'000};
    nanosleep(&wait, nullptr);
  }
  VERIFY_MSG(false, "the child did not go back to sleep");
}

void RealKernel::order_child(char op, std::uint32_t count) {
  VERIFY(child_ > 0);
  char order[8] = {op};
  std::memcpy(order + 4, &count, 4);
  VERIFY(write(to_child_, order, sizeof order) == static_cast<ssize_t>(sizeof order));
  if (op == 'x' || op == 'w') return;
  char ack;
  VERIFY(read(from_child_, &ack, 1) == 1);
  wait_until_child_sleeps();
}

void RealKernel::reap_child() {
  int status;
  VERIFY(waitpid(child_, &status, 0) == child_);
  close(to_child_);
  close(from_child_);
  child_ = -1;
  to_child_ = from_child_ = -1;
}

void RealKernel::child_exit() {
  order_child('x', 0);
  reap_child();
}

short RealKernel::child_exit_polling(std::size_t event) {
  order_child('w', 0);
  pollfd p{events_[event].fd, POLLIN, 0};
  VERIFY(::poll(&p, 1, kChildExitPollMs) >= 0);
  reap_child();
  return p.revents;
}

short RealKernel::poll(std::size_t event) {
  pollfd p{events_[event].fd, POLLIN, 0};
  VERIFY(::poll(&p, 1, 0) >= 0);
  return p.revents;
}

std::uint64_t RealKernel::head(std::size_t owner) {
  const auto* page = static_cast<const perf_event_mmap_page*>(events_[owner].mapping);
  return __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE);
}

std::span<const std::byte> RealKernel::data(std::size_t owner) {
  const Event& e = events_[owner];
  return {static_cast<const std::byte*>(e.mapping) + kPageBytes, e.pages * kPageBytes};
}

void RealKernel::store_tail(std::size_t owner, std::uint64_t tail) {
  auto* page = static_cast<perf_event_mmap_page*>(events_[owner].mapping);
  __atomic_store_n(&page->data_tail, tail, __ATOMIC_RELEASE);
}

ReadValues RealKernel::read_values(std::size_t event) {
  ReadValues v;
  const ssize_t n = read(events_[event].fd, v.words.data(), sizeof v.words);
  VERIFY(n > 0);
  v.bytes = static_cast<std::uint32_t>(n);
  return v;
}

ControlPage RealKernel::control_page(std::size_t owner) {
  const auto* page = static_cast<const perf_event_mmap_page*>(events_[owner].mapping);
  VERIFY(page != nullptr);
  return read_control_page(page);
}

Who RealKernel::who(std::uint32_t pid) {
  if (pid == 0) return kWhoZero;
  if (static_cast<pid_t>(pid) == pid_) return kWhoThis;
  for (std::size_t n = 0; n < spawned_; n++) {
    if (static_cast<pid_t>(pid) == children_[n]) return static_cast<Who>(kWhoChild + n);
  }
  for (std::size_t k = 0; k < forks_; k++) {
    if (static_cast<pid_t>(pid) == forked_[k]) return static_cast<Who>(kWhoForked + k);
  }
  return kWhoOther;
}

bool RealKernel::scenario_mapping(std::uint64_t address) {
  for (std::size_t i = 0; i < mapped_; i++) {
    if (mappings_[i] == address) return true;
  }
  return false;
}

}  // namespace ringsim::conformance
