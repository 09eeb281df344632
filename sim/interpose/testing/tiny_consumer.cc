// A tiny perf ring consumer, written as anyone would write one against
// the kernel's documented interface and nothing of ringsim's: it forks a
// workload (/bin/true, held until its events are ready), opens cpu-clock on
// it with enable_on_exec, maps 8 data pages, and copies every record from
// the ring to OUT (records back to back), writing straight from the ring's
// pages as perf does, then storing data_tail. It exits 0 when the workload
// hung up and everything was written, 1 on a write error.
//
//   tiny_consumer OUT [--bug=early_tail|short_write|head_twice|early_aux_tail|aux_twice|aux_no_last]
//                 [--epoll] [--aux=TYPE]
//                 [--aux-read-only]
//
// --epoll waits with epoll_wait (epoll_create1, epoll_ctl) instead of poll.
// --aux=TYPE opens an event of the AUX PMU of that type (perf_event_attr's
// type, as /sys/bus/event_source/devices/PMU/type gives it) instead of
// cpu-clock, maps a 16-page AUX area above the ring (aux_offset, aux_size
// in the control page, then mmap at that offset) and, after each pass over
// the ring, copies the new AUX bytes [aux_tail, aux_head) to OUT behind a
// PERF_RECORD_AUXTRACE header as perf does (whole words until the last
// read, which pads with zeros), stores aux_tail, and re-enables the event
// (the PMU disables it when the area is full or a transaction was cut).
// --aux-read-only maps the AUX area read-only (the kernel's overwrite
// mode, for snapshots) and reads nothing of it.
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
//   early_aux_tail stores aux_tail before writing the AUX bytes out
//   aux_twice      writes each AUXTRACE record (and its bytes) twice
//   aux_no_last    leaves out the last read of the AUX area (at the end)
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kDataPages = 8;
constexpr long kPollsMax = 10'000'000;

enum class Bug { none, early_tail, short_write, head_twice, early_aux_tail, aux_twice, aux_no_last };

constexpr std::size_t kAuxPages = 16;
constexpr std::uint32_t kRecordAuxtrace = 71;  // PERF_RECORD_AUXTRACE (perf.data's)

// perf's struct perf_record_auxtrace: the header of the bytes that follow.
struct Auxtrace {
  perf_event_header header;
  std::uint64_t size;
  std::uint64_t offset;
  std::uint64_t reference;
  std::uint32_t idx;
  std::uint32_t tid;
  std::uint32_t cpu;
  std::uint32_t reserved;
};
static_assert(sizeof(Auxtrace) == 48);

// The AUX area as the reader sees it.
struct AuxView {
  perf_event_mmap_page* control = nullptr;  // nullptr: no AUX area
  const char* area = nullptr;
  std::uint64_t size = 0;
  std::uint64_t tail = 0;
  int fd = -1;
  std::uint32_t tid = 0;
  void* area_kept = nullptr;  // the mapping, for munmap
};

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

// The AUX bytes [tail, aux_head) to `out` behind an AUXTRACE header
// (whole words, or everything padded to a word at the last read); false
// after one line on an error.
bool copy_aux(AuxView& a, int out, bool last, Bug bug) {
  if (a.control == nullptr || (last && bug == Bug::aux_no_last)) return true;
  const std::uint64_t head = std::atomic_ref<__u64>(a.control->aux_head).load(std::memory_order_acquire);
  const std::uint64_t available = head - a.tail;
  if (available > a.size) {
    std::fprintf(stderr, "tiny_consumer: aux_head %llu is more than the area past aux_tail %llu\n",
                 static_cast<unsigned long long>(head), static_cast<unsigned long long>(a.tail));
    return false;
  }
  const std::uint64_t taken = last ? available : available & ~std::uint64_t{7};
  if (taken == 0) return true;
  const std::uint64_t padded = (taken + 7) & ~std::uint64_t{7};
  Auxtrace ev{};
  ev.header.type = kRecordAuxtrace;
  ev.header.size = sizeof ev;
  ev.size = padded;
  ev.offset = a.tail;
  ev.tid = a.tid;
  if (bug == Bug::early_aux_tail) {
    std::atomic_ref<__u64>(a.control->aux_tail).store(a.tail + taken, std::memory_order_release);
  }
  const std::uint64_t from = a.tail & (a.size - 1);
  const std::uint64_t first = std::min(taken, a.size - from);
  const char zeros[8] = {};
  for (int copies = bug == Bug::aux_twice ? 2 : 1; copies > 0; copies--) {
    if (!write_all(out, reinterpret_cast<const char*>(&ev), sizeof ev, Bug::none) ||
        !write_all(out, a.area + from, first, Bug::none) || !write_all(out, a.area, taken - first, Bug::none) ||
        !write_all(out, zeros, padded - taken, Bug::none)) {
      return false;
    }
  }
  a.tail += taken;
  std::atomic_ref<__u64>(a.control->aux_tail).store(a.tail, std::memory_order_release);
  if (!last && ::ioctl(a.fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
    std::fprintf(stderr, "tiny_consumer: PERF_EVENT_IOC_ENABLE: %s\n", std::strerror(errno));
    return false;
  }
  return true;
}

int copy_until_hangup(int fd, int epfd, perf_event_mmap_page* control, const char* data, std::uint64_t size, int out,
                      Bug bug, AuxView& aux) {
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
    const bool drained =
        hung_up && std::atomic_ref<__u64>(control->data_head).load(std::memory_order_acquire) == tail;
    if (!copy_aux(aux, out, drained, bug)) return 1;
    if (drained) break;
  }
  return 0;
}

}  // namespace

namespace {

// OUT [--bug=...] [--epoll] [--aux=TYPE]: false (after one line) for
// anything else. aux_type 0: no AUX.
bool parse_options(int argc, char** argv, Bug& bug, bool& use_epoll, std::uint32_t& aux_type, bool& aux_read_only) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: tiny_consumer OUT [--bug=early_tail|short_write|head_twice|early_aux_tail|aux_twice|"
                 "aux_no_last] [--epoll] "
                 "[--aux=TYPE] [--aux-read-only]\n");
    return false;
  }
  const std::pair<const char*, Bug> bugs[] = {{"--bug=early_tail", Bug::early_tail},
                                              {"--bug=short_write", Bug::short_write},
                                              {"--bug=head_twice", Bug::head_twice},
                                              {"--bug=early_aux_tail", Bug::early_aux_tail},
                                              {"--bug=aux_twice", Bug::aux_twice},
                                              {"--bug=aux_no_last", Bug::aux_no_last}};
  for (int i = 2; i < argc; i++) {
    const std::string o = argv[i];
    bool known = o == "--epoll" || o == "--aux-read-only";
    use_epoll |= o == "--epoll";
    aux_read_only |= o == "--aux-read-only";
    for (const auto& [name, b] : bugs) {
      if (o == name) {
        bug = b;
        known = true;
      }
    }
    if (o.rfind("--aux=", 0) == 0) {
      char* end = nullptr;
      const unsigned long t = std::strtoul(o.c_str() + 6, &end, 0);
      known = end != o.c_str() + 6 && *end == '\0' && t > 0 && t <= UINT32_MAX;
      aux_type = static_cast<std::uint32_t>(t);
    }
    if (!known) {
      std::fprintf(stderr, "tiny_consumer: unknown option %s\n", argv[i]);
      return false;
    }
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

// cpu-clock on `child` (or the AUX PMU's event, aux_type != 0), enabled at
// its exec, with the side-band records.
int open_event(pid_t child, std::uint32_t aux_type) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = aux_type != 0 ? aux_type : std::uint32_t{PERF_TYPE_SOFTWARE};
  attr.config = aux_type != 0 ? 0 : PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_period = aux_type != 0 ? 0 : 100'000;
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

// The AUX area above the ring (aux_offset, aux_size, then mmap at that
// offset); false after one line on an error.
bool map_aux(int fd, perf_event_mmap_page* control, pid_t child, bool read_only, AuxView& a) {
  control->aux_offset = control->data_offset + control->data_size;
  control->aux_size = kAuxPages * kPage;
  void* area = ::mmap(nullptr, control->aux_size, read_only ? PROT_READ : PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                      static_cast<off_t>(control->aux_offset));
  if (area == MAP_FAILED) {
    std::fprintf(stderr, "tiny_consumer: mmap of the AUX area: %s\n", std::strerror(errno));
    return false;
  }
  a = AuxView{control, static_cast<const char*>(area), control->aux_size, 0, fd, static_cast<std::uint32_t>(child)};
  if (read_only) a.control = nullptr;  // mapped, never read
  a.area_kept = area;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Bug bug = Bug::none;
  bool use_epoll = false;
  std::uint32_t aux_type = 0;
  bool aux_read_only = false;
  if (!parse_options(argc, argv, bug, use_epoll, aux_type, aux_read_only)) return 2;
  int go = -1;
  const pid_t child = fork_held_workload(go);
  if (child < 0) return 1;
  const int fd = open_event(child, aux_type);
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
  AuxView aux;
  if (aux_type != 0 && !map_aux(fd, control, child, aux_read_only, aux)) return 1;
  const int out = ::open(argv[1], O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  if (out < 0) {
    std::fprintf(stderr, "tiny_consumer: %s: %s\n", argv[1], std::strerror(errno));
    return 1;
  }
  if (::write(go, "g", 1) != 1) return 1;
  ::close(go);
  const int epfd = use_epoll ? epoll_on(fd) : -1;
  if (use_epoll && epfd < 0) return 1;
  int status = copy_until_hangup(fd, epfd, control, data, size, out, bug, aux);
  if (epfd >= 0) ::close(epfd);
  if (aux.area_kept != nullptr) ::munmap(aux.area_kept, kAuxPages * kPage);
  ::munmap(base, len);
  ::close(fd);
  if (::close(out) != 0) status = 1;
  int child_status = 0;
  ::waitpid(child, &child_status, 0);
  return status;
}
