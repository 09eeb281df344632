// A tiny perf ring consumer, written as anyone would write one against
// the kernel's documented interface and nothing of ringsim's: it forks a
// workload (/bin/true, held until its events are ready), opens cpu-clock on
// it with enable_on_exec, maps 8 data pages, and copies every record from
// the ring to OUT (records back to back), writing straight from the ring's
// pages as perf does, then storing data_tail. It exits 0 when the workload
// hung up and everything was written, 1 on a write error.
//
//   tiny_consumer OUT [--bug=early_tail|short_write|head_twice] [--epoll]
//
// --epoll waits with epoll_wait (epoll_create1, epoll_ctl) instead of poll.
//
// The bugs are for showing that ringsim-run catches them:
//   early_tail   stores data_tail before writing the bytes out (the kernel
//                may reuse them while the write is in progress)
//   short_write  takes a short write for a whole one
//   head_twice   loads data_head twice in a row, writes up to the first
//                and stores the second as data_tail: records the kernel
//                wrote between the two loads are skipped. No call lies
//                between them: only ringsim-run --interleave (the kernel
//                running at the consumer's accesses to the control page)
//                lets the kernel write there
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kDataPages = 8;
constexpr long kPollsMax = 10'000'000;

enum class Bug { none, early_tail, short_write, head_twice };

bool write_all(int fd, const char* p, std::size_t n, Bug bug) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (w < 0) {
      std::fprintf(stderr, "tiny_consumer: write: %s\n", std::strerror(errno));
      return false;
    }
    if (bug == Bug::short_write) return true;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

// The reading loop: each time the ring has data, write it to `out` from
// the ring's pages, then store data_tail; until the workload hung up and
// everything was written. 0, or 1 on an error.
// Waits for the event with poll, or with epoll_wait on `epfd` (>= 0):
// whether it hung up, or -1 on an error.
int wait_for(int fd, int epfd) {
  if (epfd >= 0) {
    struct epoll_event ev{};
    const int n = ::epoll_wait(epfd, &ev, 1, -1);
    if (n < 0) return errno == EINTR ? 0 : -1;
    return n > 0 && (ev.events & EPOLLHUP) != 0 ? 1 : 0;
  }
  struct pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, -1) < 0) return errno == EINTR ? 0 : -1;
  return (p.revents & POLLHUP) != 0 ? 1 : 0;
}

int copy_until_hangup(int fd, int epfd, perf_event_mmap_page* control, const char* data, std::uint64_t size, int out,
                      Bug bug) {
  std::uint64_t tail = 0;
  bool hung_up = false;
  for (long polls = 0; polls < kPollsMax; polls++) {
    const int w = wait_for(fd, epfd);
    if (w < 0) return 1;
    hung_up = w > 0;
    const std::uint64_t head = std::atomic_ref<__u64>(control->data_head).load(std::memory_order_acquire);
    const std::uint64_t second =
        bug == Bug::head_twice ? std::atomic_ref<__u64>(control->data_head).load(std::memory_order_acquire) : head;
    if (head != tail) {
      const std::uint64_t from = tail & (size - 1);
      const std::uint64_t to = head & (size - 1);
      if (bug == Bug::early_tail) {
        std::atomic_ref<__u64>(control->data_tail).store(head, std::memory_order_release);
      }
      bool ok = true;
      if (from < to || head - tail == 0) {
        ok = write_all(out, data + from, to - from, bug);
      } else {
        ok = write_all(out, data + from, size - from, bug) && write_all(out, data, to, bug);
      }
      if (!ok) return 1;
      tail = second;
      std::atomic_ref<__u64>(control->data_tail).store(tail, std::memory_order_release);
    }
    if (hung_up && std::atomic_ref<__u64>(control->data_head).load(std::memory_order_acquire) == tail) break;
  }
  return 0;
}

}  // namespace

namespace {

// OUT [--bug=...] [--epoll]: false (after one line) for anything else.
bool parse_options(int argc, char** argv, Bug& bug, bool& use_epoll) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: tiny_consumer OUT [--bug=early_tail|short_write|head_twice] [--epoll]\n");
    return false;
  }
  if (argc > 2 && std::string(argv[argc - 1]) == "--epoll") {
    use_epoll = true;
    argc--;
  }
  if (argc <= 2) return true;
  const std::string b = argv[2];
  if (b == "--bug=early_tail") {
    bug = Bug::early_tail;
  } else if (b == "--bug=short_write") {
    bug = Bug::short_write;
  } else if (b == "--bug=head_twice") {
    bug = Bug::head_twice;
  } else {
    std::fprintf(stderr, "tiny_consumer: unknown option %s\n", argv[2]);
    return false;
  }
  return true;
}

// The workload, /bin/true, forked and held until a byte comes on `go`
// (its write end); -1 on an error.
pid_t fork_held_workload(int& go) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return -1;
  const pid_t child = ::fork();
  if (child < 0) return -1;
  if (child == 0) {
    char c;
    ::close(pipe_fds[1]);
    if (::read(pipe_fds[0], &c, 1) != 1) _exit(1);
    ::execl("/bin/true", "true", nullptr);
    _exit(127);
  }
  ::close(pipe_fds[0]);
  go = pipe_fds[1];
  return child;
}

// cpu-clock on `child`, enabled at its exec, with the side-band records.
int open_event(pid_t child) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_period = 100'000;
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID;
  attr.sample_id_all = 1;
  attr.comm = 1;
  attr.mmap = 1;
  attr.task = 1;
  attr.disabled = 1;
  attr.enable_on_exec = 1;
  const int fd = static_cast<int>(::syscall(SYS_perf_event_open, &attr, child, -1, -1, PERF_FLAG_FD_CLOEXEC));
  if (fd < 0) std::fprintf(stderr, "tiny_consumer: perf_event_open: %s\n", std::strerror(errno));
  return fd;
}

// An epoll set holding `fd` (EPOLLIN); -1 after one line on an error.
int epoll_on(int fd) {
  const int epfd = ::epoll_create1(EPOLL_CLOEXEC);
  struct epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  if (epfd < 0 || ::epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
    std::fprintf(stderr, "tiny_consumer: epoll: %s\n", std::strerror(errno));
    return -1;
  }
  return epfd;
}

}  // namespace

int main(int argc, char** argv) {
  Bug bug = Bug::none;
  bool use_epoll = false;
  if (!parse_options(argc, argv, bug, use_epoll)) return 2;
  int go = -1;
  const pid_t child = fork_held_workload(go);
  if (child < 0) return 1;
  const int fd = open_event(child);
  if (fd < 0) return 1;
  const std::size_t len = (1 + kDataPages) * kPage;
  void* base = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    std::fprintf(stderr, "tiny_consumer: mmap: %s\n", std::strerror(errno));
    return 1;
  }
  auto* control = static_cast<perf_event_mmap_page*>(base);
  const char* data = static_cast<const char*>(base) + control->data_offset;
  const std::uint64_t size = control->data_size;
  const int out = ::open(argv[1], O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  if (out < 0) {
    std::fprintf(stderr, "tiny_consumer: %s: %s\n", argv[1], std::strerror(errno));
    return 1;
  }
  if (::write(go, "g", 1) != 1) return 1;
  ::close(go);
  const int epfd = use_epoll ? epoll_on(fd) : -1;
  if (use_epoll && epfd < 0) return 1;
  int status = copy_until_hangup(fd, epfd, control, data, size, out, bug);
  if (epfd >= 0) ::close(epfd);
  ::munmap(base, len);
  ::close(fd);
  if (::close(out) != 0) status = 1;
  int child_status = 0;
  ::waitpid(child, &child_status, 0);
  return status;
}
