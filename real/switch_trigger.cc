#include "real/switch_trigger.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/verify.h"
#include "real/real_backend.h"

namespace ringsim::real {
namespace {

// A round budget no recording reaches: the loop stays bounded.
constexpr std::uint64_t kRoundsMax = std::uint64_t{1} << 62;
// Without a record or a stop the thread looks again after this long.
constexpr int kPollTimeoutMs = 1000;

}  // namespace

SwitchTrigger::~SwitchTrigger() {
  stop();
  if (stop_fd_ >= 0) ::close(stop_fd_);
}

Error SwitchTrigger::open(const std::vector<perf_event_attr>& attrs, const std::vector<std::string>& names,
                          const std::vector<EventTarget>& targets) {
  VERIFY(attrs.size() == names.size());
  VERIFY(!thread_.joinable());
  for (std::size_t e = 0; e < attrs.size(); e++) {
    for (const EventTarget& target : targets) {
      PerfEvent event;
      if (Error error = PerfEvent::open(attrs[e], target, event); !error.ok()) {
        error.message = "--switch-output-event " + names[e] + ": " + error.message;
        return error;
      }
      if (Error error = event.map(1); !error.ok()) {
        error.message = "--switch-output-event " + names[e] + ": " + error.message;
        return error;
      }
      events_.push_back(std::move(event));
    }
  }
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd_ < 0) return Error{errno, std::string("--switch-output-event: eventfd: ") + std::strerror(errno)};
  return Error{};
}

Error SwitchTrigger::start() {
  VERIFY(stop_fd_ >= 0);
  for (PerfEvent& event : events_) {
    if (Error error = event.enable(); !error.ok()) {
      error.message = "--switch-output-event: " + error.message;
      return error;
    }
  }
  thread_ = std::thread([this] { run(); });
  return Error{};
}

void SwitchTrigger::stop() {
  if (thread_.joinable()) {
    const std::uint64_t one = 1;
    const ssize_t written = ::write(stop_fd_, &one, sizeof one);
    VERIFY(written == sizeof one);  // an eventfd counter far from its maximum
    thread_.join();
  }
  for (PerfEvent& event : events_) {
    if (event.is_open()) static_cast<void>(event.disable());  // the events are closed with the object anyway
  }
}

SwitchTrigger::Stats SwitchTrigger::stats() const {
  Stats s;
  s.records = records_.load(std::memory_order_relaxed);
  s.requests = requests_.load(std::memory_order_relaxed);
  s.hangups = hangups_.load(std::memory_order_relaxed);
  return s;
}

std::uint64_t SwitchTrigger::drain(PerfEvent& event) {
  perf_event_mmap_page* control = event.control_page();
  const std::uint64_t head = std::atomic_ref<__u64>(control->data_head).load(std::memory_order_acquire);
  std::uint64_t tail = control->data_tail;  // only this thread stores it
  const std::uint64_t size = event.data_size_bytes();
  VERIFY(head - tail <= size);  // a normal (writable) ring never overwrites
  std::uint64_t records = 0;
  // Bounded: every record is at least a header (8 bytes).
  for (std::uint64_t n = 0; tail < head && n <= size / sizeof(perf_event_header); n++) {
    perf_event_header header;
    // Records are 8-byte aligned and so is the area: a header never wraps.
    std::memcpy(&header, event.data() + (tail & (size - 1)), sizeof header);
    if (header.size < sizeof header || header.size % 8 != 0) break;  // not a record: skip what is left
    tail += header.size;
    records++;
  }
  std::atomic_ref<__u64>(control->data_tail).store(head, std::memory_order_release);
  return records;
}

void SwitchTrigger::run() {
  std::vector<pollfd> fds(events_.size() + 1);
  for (std::size_t i = 0; i < events_.size(); i++) fds[i] = pollfd{events_[i].fd(), POLLIN, 0};
  fds.back() = pollfd{stop_fd_, POLLIN, 0};
  for (std::uint64_t round = 0; round < kRoundsMax; round++) {
    const int ready = ::poll(fds.data(), fds.size(), kPollTimeoutMs);
    if (ready < 0 && errno != EINTR) return;  // EINVAL, ENOMEM: nothing a retry would change
    if (fds.back().revents != 0) return;     // stop()
    std::uint64_t records = 0;
    for (std::size_t i = 0; i < events_.size(); i++) {
      if (fds[i].fd < 0) continue;
      records += drain(events_[i]);
      if ((fds[i].revents & (POLLHUP | POLLERR)) != 0) {
        fds[i].fd = -1;  // its task exited: nothing more will come
        hangups_.fetch_add(1, std::memory_order_relaxed);
      }
    }
    if (records == 0) continue;
    records_.fetch_add(records, std::memory_order_relaxed);
    requests_.fetch_add(1, std::memory_order_relaxed);
    signal_snapshot_request();
  }
}

}  // namespace ringsim::real
