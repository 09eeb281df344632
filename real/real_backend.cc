#include "real/real_backend.h"

#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>

#include "core/verify.h"
#include "real/clock.h"

// The core, compiled once more for the real backend.
template class ringsim::core::RingReader<ringsim::real::RealMapping>;

namespace ringsim::real {
namespace {

// Process-wide request state, written by the signal handlers. Lock-free
// atomics are the only shared state a handler may touch.
std::atomic<bool> g_signal_stop{false};
std::atomic<bool> g_signal_snapshot{false};
std::atomic<bool> g_signal_switch{false};  // --switch-output=signal: read by the writer
std::atomic<int> g_wake_fd{-1};
std::atomic<int> g_wake_fd_error{0};
static_assert(std::atomic<bool>::is_always_lock_free);
static_assert(std::atomic<int>::is_always_lock_free);

// The eventfd every session polls, so that a request wakes a waiting poll.
// Created once, on first use (never from a handler), and never closed: a
// handler may write to it at any time. Returns -1 if it cannot be created
// (g_wake_fd_error holds the errno).
int wake_fd() {
  static const int fd = [] {
    const int created = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (created < 0) g_wake_fd_error.store(errno);
    g_wake_fd.store(created, std::memory_order_release);
    return created;
  }();
  return fd;
}

Error wake_fd_error() {
  const int error = g_wake_fd_error.load();
  return Error{error != 0 ? error : EBADF,
               "eventfd for poll wakeups: " + errno_text(error) + ": out of file descriptors? raise the limit (ulimit -n)"};
}

// Async-signal-safe: one write(2) to the eventfd, errno preserved.
void wake() {
  const int fd = g_wake_fd.load(std::memory_order_acquire);
  if (fd < 0) return;
  const int saved_errno = errno;
  const std::uint64_t one = 1;
  // EAGAIN means the counter is saturated: a wakeup is pending anyway.
  const ssize_t written = ::write(fd, &one, sizeof one);
  static_cast<void>(written);
  errno = saved_errno;
}

// Reads the eventfd back to zero (it is non-blocking).
void drain_wake_fd(int fd) {
  std::uint64_t count = 0;
  const ssize_t got = ::read(fd, &count, sizeof count);
  // EAGAIN: another poller drained it first.
  VERIFY(got == static_cast<ssize_t>(sizeof count) || (got < 0 && errno == EAGAIN));
}

std::atomic<int> g_stop_signal{0};  // the first stop signal received

void on_stop_signal(int signal) {
  int none = 0;
  g_stop_signal.compare_exchange_strong(none, signal, std::memory_order_acq_rel);
  signal_stop_request();
}
void on_snapshot_signal(int) { signal_snapshot_request(); }

Error prefixed(std::size_t index, std::size_t count, const Error& error) {
  VERIFY(!error.ok());
  VERIFY(index < count);
  return Error{error.error,
               "event " + std::to_string(index) + " of " + std::to_string(count) + ": " + error.message};
}

}  // namespace

// --- RealMapping -----------------------------------------------------------

RealMapping::RealMapping(PerfEvent& event)
    : page_(event.control_page()),
      data_(event.data()),
      size_bytes_(event.data_size_bytes()),
      mask_(event.data_size_bytes() - 1),
      fd_(event.fd()),
      writable_(!event.overwrite()) {
  VERIFY_MSG(event.mapped(), "RealMapping over an event that is not mapped");
  VERIFY(fd_ >= 0);
  VERIFY(size_bytes_ >= core::kRecordAlignBytes);
  VERIFY((size_bytes_ & mask_) == 0);
  const auto head_address = reinterpret_cast<std::uintptr_t>(&page_->data_head);
  const auto tail_address = reinterpret_cast<std::uintptr_t>(&page_->data_tail);
  VERIFY(head_address % std::atomic_ref<__u64>::required_alignment == 0);
  VERIFY(tail_address % std::atomic_ref<__u64>::required_alignment == 0);
}

std::uint64_t RealMapping::load_head() {
  VERIFY_MSG(page_ != nullptr, "load_head on a released mapping");
  // (C) acquire: pairs with the kernel's (B), the smp_wmb() in
  // perf_output_put_handle() before it stores data_head: the record bytes
  // below the head loaded here are in memory before any copy_out() that
  // follows. (perf's tools/include/linux/ring_buffer.h does the same:
  // smp_load_acquire(&base->data_head).)
  const std::uint64_t head = std::atomic_ref<__u64>(page_->data_head).load(std::memory_order_acquire);
  return head;
}

void RealMapping::store_tail(std::uint64_t tail) {
  VERIFY_MSG(page_ != nullptr, "store_tail on a released mapping");
  VERIFY_MSG(writable_, "store_tail on a read-only (write_backward) mapping");
  // (D) release: pairs with the kernel's (A), the ordering in
  // __perf_output_begin() between its load of data_tail and its record
  // writes: every copy_out() before this store has finished reading before
  // the kernel can see the space as free. (perf: smp_store_release(
  // &base->data_tail, tail).)
  std::atomic_ref<__u64>(page_->data_tail).store(tail, std::memory_order_release);
}

void RealMapping::copy_out(std::uint64_t position, std::span<std::byte> destination) {
  VERIFY_MSG(data_ != nullptr, "copy_out on a released mapping");
  const std::uint64_t index = position & mask_;
  const std::uint64_t length = destination.size();
  VERIFY_MSG(length <= size_bytes_, "copy_out longer than the data area");
  VERIFY_MSG(index + length <= size_bytes_, "copy_out crosses the end of the data area");
  if (length == 0) return;
  // Plain bytes: the protocol (C)/(D), or PAUSE_OUTPUT in overwrite mode,
  // is what keeps the kernel away from them during the copy.
  std::memcpy(destination.data(), data_ + index, length);
}

int RealMapping::pause_output(bool paused) {
  VERIFY_MSG(page_ != nullptr, "pause_output on a released mapping");
  VERIFY(fd_ >= 0);
  if (::ioctl(fd_, PERF_EVENT_IOC_PAUSE_OUTPUT, paused ? 1 : 0) != 0) {
    const int error = errno;
    VERIFY(error > 0);
    return -error;
  }
  return 0;
}

void RealMapping::detach() {
  VERIFY_MSG(page_ != nullptr, "mapping detached twice");
  VERIFY(data_ != nullptr);
  page_ = nullptr;
  data_ = nullptr;
}

// --- CPU lists and specs ---------------------------------------------------

Error parse_cpu_list(std::string_view text, std::vector<int>& cpus_out) {
  // The kernel's cpulist format: "0-3,5,7-8" and a newline.
  constexpr int kCpuMax = 1 << 16;
  cpus_out.clear();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  const auto bad = [&](const char* why) {
    return Error{EINVAL, "cpu list \"" + std::string(text) + "\": " + why};
  };
  if (text.empty()) return bad("empty");
  const char* at = text.data();
  const char* const end = text.data() + text.size();
  // Each pass consumes at least one character.
  for (std::size_t pass = 0; pass < text.size() && at < end; pass++) {
    int first = 0;
    auto parsed = std::from_chars(at, end, first);
    if (parsed.ec != std::errc{} || first < 0 || first > kCpuMax) return bad("expected a cpu number");
    at = parsed.ptr;
    int last = first;
    if (at < end && *at == '-') {
      parsed = std::from_chars(at + 1, end, last);
      if (parsed.ec != std::errc{} || last < first || last > kCpuMax) return bad("bad range");
      at = parsed.ptr;
    }
    for (int cpu = first; cpu <= last; cpu++) cpus_out.push_back(cpu);
    if (at < end) {
      if (*at != ',') return bad("expected ','");
      at++;
      if (at == end) return bad("ends with ','");
    }
  }
  VERIFY(at == end);
  VERIFY(!cpus_out.empty());
  return Error{};
}

Error online_cpus(std::vector<int>& cpus_out) {
  const char* path = "/sys/devices/system/cpu/online";
  std::ifstream in(path);
  if (!in) return Error{ENOENT, std::string(path) + ": cannot read it (is /sys mounted?)"};
  std::ostringstream text;
  text << in.rdbuf();
  const Error error = parse_cpu_list(text.str(), cpus_out);
  if (!error.ok()) return Error{error.error, std::string(path) + ": " + error.message};
  return error;
}

std::vector<RingSpec> system_wide_specs(const perf_event_attr& attr, std::span<const int> cpus,
                                        std::uint64_t data_pages) {
  std::vector<RingSpec> specs;
  for (const int cpu : cpus) specs.push_back(RingSpec{attr, EventTarget{-1, cpu}, data_pages});
  return specs;
}

std::vector<RingSpec> command_specs(const perf_event_attr& attr, pid_t pid, std::span<const int> cpus,
                                    std::uint64_t data_pages) {
  perf_event_attr inherited = attr;
  inherited.inherit = 1;
  std::vector<RingSpec> specs;
  for (const int cpu : cpus) specs.push_back(RingSpec{inherited, EventTarget{pid, cpu}, data_pages});
  return specs;
}

std::vector<RingSpec> shared_ring_specs(std::span<const perf_event_attr> attrs, std::span<const pid_t> tasks,
                                        std::span<const int> cpus, std::uint64_t data_pages,
                                        std::span<const int> leaders, std::span<const int> cgroup_fds) {
  VERIFY(!attrs.empty());
  VERIFY(!tasks.empty());
  VERIFY(leaders.empty() || leaders.size() == attrs.size());
  VERIFY(cgroup_fds.empty() || (cgroup_fds.size() == attrs.size() && tasks.size() == 1 && tasks[0] == -1));
  const auto cgroup = [&](std::size_t e) { return cgroup_fds.empty() ? -1 : cgroup_fds[e]; };
  std::vector<RingSpec> specs;
  for (const int cpu : cpus) {
    RingSpec spec{attrs[0], EventTarget{tasks[0], cpu, cgroup(0)}, data_pages, {}};
    for (std::size_t e = 0; e < attrs.size(); e++) {
      const int leader = leaders.empty() ? -1 : leaders[e];
      VERIFY(leader < static_cast<int>(e));
      for (std::size_t t = 0; t < tasks.size(); t++) {
        if (e == 0 && t == 0) continue;
        // Events are laid out event by event, task by task: (e, t) is
        // number e * tasks + t (0: the spec's own).
        const int group_leader = leader < 0 ? -1 : static_cast<int>(static_cast<std::size_t>(leader) * tasks.size() + t);
        spec.shared.push_back(SharedEvent{attrs[e], EventTarget{tasks[t], cpu, cgroup(e)}, group_leader});
      }
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

std::vector<RingSpec> per_thread_ring_specs(std::span<const perf_event_attr> attrs, std::span<const pid_t> tasks,
                                            std::uint64_t data_pages, std::span<const int> leaders) {
  std::vector<RingSpec> specs;
  for (const pid_t task : tasks) {
    VERIFY(task >= 0);
    std::vector<RingSpec> one = shared_ring_specs(attrs, std::span<const pid_t>(&task, 1), std::array<int, 1>{-1},
                                                  data_pages, leaders);
    VERIFY(one.size() == 1);
    specs.push_back(std::move(one.front()));
  }
  return specs;
}

// --- RealSession -----------------------------------------------------------

namespace {

// Opens the events of spec `i` that share its (mapped) ring.
Error open_shared(const RingSpec& spec, const PerfEvent& owner, std::vector<PerfEvent>& shared) {
  shared.resize(spec.shared.size());
  for (std::size_t k = 0; k < spec.shared.size(); k++) {
    const int leader = spec.shared[k].group_leader;
    VERIFY(leader <= static_cast<int>(k));
    const int group_fd = leader < 0 ? -1 : leader == 0 ? owner.fd() : shared[static_cast<std::size_t>(leader - 1)].fd();
    Error error = PerfEvent::open(spec.shared[k].attr, spec.shared[k].target, shared[k], group_fd);
    if (error.ok()) error = shared[k].set_output(owner);
    if (!error.ok()) return Error{error.error, "shared event " + std::to_string(k) + ": " + error.message};
  }
  return Error{};
}

Error check_one_mode(std::span<const RingSpec> specs) {
  const bool overwrite = specs[0].attr.write_backward != 0;
  for (std::size_t i = 0; i < specs.size(); i++) {
    bool same = (specs[i].attr.write_backward != 0) == overwrite;
    for (const SharedEvent& e : specs[i].shared) same = same && (e.attr.write_backward != 0) == overwrite;
    if (!same) {
      return Error{EINVAL, "session: event " + std::to_string(i) + " and event 0 differ in write_backward: one "
                           "session reads rings of one mode"};
    }
  }
  return Error{};
}

}  // namespace

Error RealSession::open(std::span<const RingSpec> specs, std::unique_ptr<RealSession>& out) {
  out.reset();
  const std::size_t count = specs.size();
  if (count == 0) return Error{EINVAL, "session: no events to open (no CPUs given?)"};
  if (const Error e = check_one_mode(specs); !e.ok()) return e;
  if (wake_fd() < 0) return wake_fd_error();
  // A wakeup left by an earlier session's request is not this session's
  // (the requests themselves are flags, read every round).
  drain_wake_fd(wake_fd());
  std::unique_ptr<RealSession> session(new RealSession());
  // Sized once: the mappings below keep references into it.
  session->events_.resize(count);
  session->shared_.resize(count);
  for (std::size_t i = 0; i < count; i++) {
    PerfEvent& event = session->events_[i];
    Error error = PerfEvent::open(specs[i].attr, specs[i].target, event);
    if (error.ok()) error = event.map(specs[i].data_pages);
    // Shared events point at a mapped ring.
    if (error.ok()) error = open_shared(specs[i], event, session->shared_[i]);
    if (!error.ok()) return prefixed(i, count, error);
  }
  for (std::size_t i = 0; i < count; i++) {
    session->mappings_.push_back(std::make_unique<RealMapping>(session->events_[i]));
    session->polled_.push_back(Polled{i, session->events_[i].fd(), false});
    for (const PerfEvent& e : session->shared_[i]) session->polled_.push_back(Polled{i, e.fd(), false});
  }
  session->mode_ = specs[0].attr.write_backward != 0 ? core::RingMode::backward : core::RingMode::normal;
  session->released_.assign(count, 0);
  std::vector<std::size_t> all(count);
  for (std::size_t i = 0; i < count; i++) all[i] = i;
  session->own_ = session->make_poll_set(std::move(all), true, -1);
  VERIFY(session->mappings_.size() == count);
  VERIFY(session->mappings_[0]->mode() == session->mode_);
  out = std::move(session);
  return Error{};
}

void RealSession::each_event(std::size_t ring, const std::function<void(PerfEvent&)>& fn) {
  VERIFY(ring < events_.size());
  fn(events_[ring]);
  for (PerfEvent& e : shared_[ring]) fn(e);
}

Error RealSession::enable_all() {
  const std::lock_guard lock(rings_mutex_);
  for (std::size_t i = 0; i < events_.size(); i++) {
    if (released_[i]) continue;
    Error error;
    each_event(i, [&](PerfEvent& e) {
      if (error.ok()) error = e.enable();
    });
    if (!error.ok()) return prefixed(i, events_.size(), error);
  }
  return Error{};
}

Error RealSession::enable_tracking() {
  const std::lock_guard lock(rings_mutex_);
  for (std::size_t i = 0; i < events_.size(); i++) {
    if (released_[i]) continue;
    Error error;
    each_event(i, [&](PerfEvent& e) {
      if (error.ok() && e.attr().mmap != 0) error = e.enable();
    });
    if (!error.ok()) return prefixed(i, events_.size(), error);
  }
  return Error{};
}

void RealSession::enable_all_at(std::uint64_t deadline_ns) {
  VERIFY(deadline_ns > 0);
  enable_at_ns_.store(deadline_ns, std::memory_order_release);
  wake();
}

Error RealSession::delayed_enable_error() const {
  VERIFY(delayed_enable_done());
  return delayed_enable_error_;
}

// poll()'s part of enable_all_at(): at the deadline, enable; before it,
// wait no longer than until then.
void RealSession::run_delayed_enable(std::uint64_t& wait_ns) {
  const std::uint64_t at = enable_at_ns_.load(std::memory_order_acquire);
  if (at == 0 || stopped_.load(std::memory_order_acquire)) return;
  const std::uint64_t now = monotonic_ns();
  if (now < at) {
    wait_ns = std::min(wait_ns, at - now);
    return;
  }
  enable_at_ns_.store(0, std::memory_order_relaxed);
  delayed_enable_error_ = enable_all();
  delayed_enable_done_.store(true, std::memory_order_release);
}

Error RealSession::disable_all() {
  const std::lock_guard lock(rings_mutex_);
  for (std::size_t i = 0; i < events_.size(); i++) {
    if (released_[i]) continue;
    Error error;
    each_event(i, [&](PerfEvent& e) {
      if (error.ok()) error = e.disable();
    });
    if (!error.ok()) return prefixed(i, events_.size(), error);
  }
  return Error{};
}

std::uint64_t RealSession::data_size_bytes_max() const {
  std::uint64_t size_bytes = 0;
  for (const auto& mapping : mappings_) size_bytes = std::max(size_bytes, mapping->data_size_bytes());
  VERIFY(size_bytes > 0);
  return size_bytes;
}

PerfEvent& RealSession::event(std::size_t index) {
  VERIFY(index < events_.size());
  return events_[index];
}

std::size_t RealSession::shared_count(std::size_t index) const {
  VERIFY(index < shared_.size());
  return shared_[index].size();
}

PerfEvent& RealSession::shared_event(std::size_t index, std::size_t k) {
  VERIFY(index < shared_.size());
  VERIFY(k < shared_[index].size());
  return shared_[index][k];
}

bool RealSession::ring_hung(std::size_t ring) const {
  for (const Polled& p : polled_) {
    if (p.ring == ring && !p.hung) return false;
  }
  return true;
}

bool RealSession::released(std::size_t index) const {
  VERIFY(index < released_.size());
  return released_[index];
}

RealMapping& RealSession::mapping(std::size_t index) {
  VERIFY(index < mappings_.size());
  VERIFY_MSG(!released_[index], "access to a released (unmapped) ring");
  return *mappings_[index];
}

RealSession::PollSet RealSession::make_poll_set(std::vector<std::size_t> rings, bool primary, int kick_fd) const {
  PollSet set;
  set.rings = std::move(rings);
  set.primary = primary;
  set.kick_fd = kick_fd;
  for (std::size_t k = 0; k < set.rings.size(); k++) {
    VERIFY(set.rings[k] < mappings_.size());
    VERIFY(k == 0 || set.rings[k - 1] < set.rings[k]);
    for (std::size_t j = 0; j < polled_.size(); j++) {
      if (polled_[j].ring != set.rings[k]) continue;
      set.polled.push_back(j);
      set.local.push_back(k);
    }
  }
  set.fds.assign(set.polled.size() + 3, pollfd{-1, 0, 0});  // and the wake, control and exit descriptors
  return set;
}

int RealSession::poll(std::span<core::PollEvents> events, std::uint64_t timeout_ns) {
  return poll_set(own_, events, timeout_ns);
}

// Polls one set's rings (a slice's, or all of them); events are the set's.
// Only the thread that owns the set touches its entries of polled_.
int RealSession::poll_set(PollSet& set, std::span<core::PollEvents> events, std::uint64_t timeout_ns) {
  const std::size_t count = set.rings.size();
  VERIFY(events.size() == count);
  VERIFY(set.fds.size() == set.polled.size() + 3);
  // A wanted ring whose every event hung up earlier is reported at once.
  bool hung_already = false;
  for (std::size_t k = 0; k < count; k++) {
    core::PollEvents& e = events[k];
    e.readable = false;
    e.hangup = false;
    VERIFY_MSG(!e.wanted || released_[set.rings[k]] == 0, "poll of a released ring");
    if (e.wanted && ring_hung(set.rings[k])) hung_already = true;
  }
  for (std::size_t j = 0; j < set.polled.size(); j++) {
    const Polled& p = polled_[set.polled[j]];
    // A negative fd is skipped by poll(2).
    set.fds[j] = pollfd{events[set.local[j]].wanted && !p.hung ? p.fd : -1, POLLIN, 0};
  }
  const int wake = set.primary ? wake_fd() : set.kick_fd;
  VERIFY(wake >= 0);  // open() and RealSessionSlice::make made sure
  set.fds[set.polled.size()] = pollfd{wake, POLLIN, 0};
  // A negative fd (no --control, no command watched, its exit seen, a
  // secondary set) is skipped.
  set.fds[set.polled.size() + 1] = pollfd{set.primary ? control_fd_ : -1, POLLIN, 0};
  set.fds.back() = pollfd{set.primary ? exit_fd_ : -1, POLLIN, 0};
  std::uint64_t wait_ns = hung_already ? 0 : timeout_ns;
  if (set.primary) run_delayed_enable(wait_ns);
  timespec timeout{};
  timeout.tv_sec = static_cast<time_t>(wait_ns / kNsPerSecond);
  timeout.tv_nsec = static_cast<long>(wait_ns % kNsPerSecond);
  const int polled = ::ppoll(set.fds.data(), set.fds.size(), &timeout, nullptr);
  if (stop_is_requested()) disable_for_stop();
  if (polled < 0) {
    const int error = errno;
    VERIFY(error > 0);
    return -error;  // -EINTR: a signal; the caller serves the round and retries
  }
  if (polled == 0 && !hung_already) return 0;
  return poll_set_results(set, events);
}

int RealSession::poll_set_results(PollSet& set, std::span<core::PollEvents> events) {
  for (std::size_t j = 0; j < set.polled.size(); j++) {
    if (set.fds[j].fd < 0) continue;
    const short revents = set.fds[j].revents;
    VERIFY_MSG((revents & POLLNVAL) == 0, "polled a closed perf event fd");
    if ((revents & POLLIN) != 0) events[set.local[j]].readable = true;
    // POLLHUP: the event's task exited (and its children). POLLERR: a pinned
    // event went into error state; it never produces data again either.
    if ((revents & (POLLHUP | POLLERR)) != 0) polled_[set.polled[j]].hung = true;
  }
  int ready = 0;
  for (std::size_t k = 0; k < events.size(); k++) {
    if (!events[k].wanted) continue;
    // The ring hangs up when every event writing into it has.
    events[k].hangup = ring_hung(set.rings[k]);
    if (events[k].readable || events[k].hangup) ready++;
  }
  const pollfd& exit = set.fds.back();
  VERIFY_MSG((exit.revents & POLLNVAL) == 0, "polled a closed pidfd");
  if (exit.fd >= 0 && (exit.revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
    // The command exited: a stop request, as from any thread; its pidfd is
    // not polled again.
    exit_fd_ = -1;
    stop_.store(true, std::memory_order_release);
    disable_for_stop();
    if (ready == 0) return -EINTR;
  }
  const pollfd& control = set.fds[set.polled.size() + 1];
  VERIFY_MSG((control.revents & POLLNVAL) == 0, "polled a closed --control descriptor");
  if (control.fd >= 0 && (control.revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
    if (!on_control_()) control_fd_ = -1;
    if (stop_is_requested()) disable_for_stop();  // a stop command
    // A command and no ring event: an interruption, as a signal; the loop
    // serves the round and looks at a stop request.
    if (ready == 0) return -EINTR;
  }
  const short wake_revents = set.fds[set.polled.size()].revents;
  VERIFY((wake_revents & (POLLNVAL | POLLERR)) == 0);
  if ((wake_revents & POLLIN) != 0) {
    drain_wake_fd(set.fds[set.polled.size()].fd);
    // A request and no ring event: report it as an interruption, as a
    // signal would; the loop serves the round and looks at the requests.
    if (ready == 0) return -EINTR;
  }
  // ready == 0 here when the kernel set a bit the loop does not read, or
  // one of a ring's events hung up and others still run: the round is
  // served as after a timeout.
  return ready;
}

void RealSession::release(std::size_t index) {
  const std::lock_guard lock(rings_mutex_);
  VERIFY(index < mappings_.size());
  VERIFY_MSG(!released_[index], "mapping released twice");
  mappings_[index]->detach();
  for (PerfEvent& e : shared_[index]) {
    note_lost(e);
    e.close();
  }
  note_lost(events_[index]);
  events_[index].close();
  released_[index] = 1;
}

void RealSession::note_lost(const PerfEvent& e) {
  if (!e.is_open() || (e.attr().read_format & PERF_FORMAT_LOST) == 0) return;
  LostSamples l;
  if (!e.read_lost(l.lost).ok() || !e.id(l.id).ok()) {
    lost_unread_++;
    return;
  }
  released_lost_.push_back(l);
}

std::vector<RealSession::LostSamples> RealSession::lost_samples(std::uint64_t& unread) {
  VERIFY_MSG(!lost_collected_, "lost_samples() called twice: the open events would be counted again");
  lost_collected_ = true;
  const std::lock_guard lock(rings_mutex_);
  for (std::size_t ring = 0; ring < mappings_.size(); ring++) {
    if (released_[ring]) continue;
    for (const PerfEvent& e : shared_[ring]) note_lost(e);
    note_lost(events_[ring]);
  }
  unread = lost_unread_;
  return released_lost_;
}
std::uint64_t RealSession::now_ns() const { return monotonic_ns(); }

bool RealSession::stop_requested() {
  if (!stop_is_requested()) return false;
  disable_for_stop();
  return true;
}

bool RealSession::stop_is_requested() const {
  return stop_.load(std::memory_order_acquire) || g_signal_stop.load(std::memory_order_acquire);
}

// Disable before the loop's final drain, which follows stop_requested() in
// the same round: DISABLE runs on the event's CPU (an IPI) and returns when
// the event is stopped there, so no write is in flight after it. Also as a
// poll returns with a stop requested (the request is what usually wakes
// it): that round copies what the rings hold before the final one, and with
// the events still enabled an -a recording sampled the copy (the
// recorder's own samples at its end: docs/recorder.md, "Self-sampling").
//
// With slices, every reading thread comes here at its stop; the first
// disables every event and the others wait for it under the lock, so no
// thread drains its rings for the last time while their events still run.
// Then the other slices' polls are woken.
void RealSession::disable_for_stop() {
  if (stopped_.load(std::memory_order_acquire)) return;
  {
    const std::lock_guard lock(rings_mutex_);
    if (stopped_.load(std::memory_order_acquire)) return;
    for (std::size_t i = 0; i < events_.size(); i++) {
      if (released_[i]) continue;
      each_event(i, [&](PerfEvent& e) {
        const Error error = e.disable();
        if (!error.ok()) {
          disable_failures_++;
          last_disable_error_ = prefixed(i, events_.size(), error);
        }
      });
    }
    stopped_.store(true, std::memory_order_release);
  }
  kick_slices();
}

// Wakes every secondary slice's poll (one write to each eventfd).
void RealSession::kick_slices() {
  const std::lock_guard lock(rings_mutex_);
  for (const int fd : kick_fds_) {
    const std::uint64_t one = 1;
    // EAGAIN: the counter is saturated, a wakeup is pending anyway.
    const ssize_t written = ::write(fd, &one, sizeof one);
    static_cast<void>(written);
  }
}

Error RealSessionSlice::make(RealSession& session, std::vector<std::size_t> rings, bool primary,
                             std::unique_ptr<RealSessionSlice>& out) {
  out.reset();
  if (rings.empty()) return Error{EINVAL, "session slice: no rings"};
  if (session.mode() != core::RingMode::normal) return Error{EINVAL, "session slice: overwrite rings"};
  int kick = -1;
  if (!primary) {
    kick = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (kick < 0) return Error{errno, "eventfd for a reading thread's wakeups: " + errno_text(errno)};
    const std::lock_guard lock(session.rings_mutex_);
    session.kick_fds_.push_back(kick);
  }
  out.reset(new RealSessionSlice(session, session.make_poll_set(std::move(rings), primary, kick)));
  return Error{};
}

RealSessionSlice::~RealSessionSlice() {
  if (set_.kick_fd < 0) return;
  {
    const std::lock_guard lock(session_.rings_mutex_);
    auto& fds = session_.kick_fds_;
    fds.erase(std::remove(fds.begin(), fds.end(), set_.kick_fd), fds.end());
  }
  ::close(set_.kick_fd);
}

RealMapping& RealSessionSlice::mapping(std::size_t index) {
  VERIFY(index < set_.rings.size());
  return session_.mapping(set_.rings[index]);
}

void RealSessionSlice::release(std::size_t index) {
  VERIFY(index < set_.rings.size());
  session_.release(set_.rings[index]);
}

bool RealSession::take_snapshot_request() {
  // Both are read and cleared, whichever is set.
  const bool own = snapshot_.exchange(false, std::memory_order_acq_rel);
  const bool signalled = g_signal_snapshot.exchange(false, std::memory_order_acq_rel);
  if (own || signalled) snapshots_taken_.fetch_add(1, std::memory_order_acq_rel);
  return own || signalled;
}

void RealSession::watch_exit(int pidfd) {
  VERIFY(pidfd >= 0);
  exit_fd_ = pidfd;
}

void RealSession::watch_control(int fd, std::function<bool()> on_readable) {
  VERIFY(fd >= 0);
  VERIFY(on_readable);
  control_fd_ = fd;
  on_control_ = std::move(on_readable);
}

Error RealSession::enable_where(bool enable, const std::function<bool(const perf_event_attr&)>& which) {
  const std::lock_guard lock(rings_mutex_);
  if (enable && stopped_.load(std::memory_order_acquire)) return Error{};  // stopping: the events stay disabled
  for (std::size_t i = 0; i < events_.size(); i++) {
    if (released_[i]) continue;
    Error error;
    each_event(i, [&](PerfEvent& e) {
      if (error.ok() && which(e.attr())) error = enable ? e.enable() : e.disable();
    });
    if (!error.ok()) return prefixed(i, events_.size(), error);
  }
  return Error{};
}

void RealSession::request_stop() {
  stop_.store(true, std::memory_order_release);
  wake();
  kick_slices();
}

void RealSession::request_snapshot() {
  snapshot_.store(true, std::memory_order_release);
  wake();
}

// --- Signals -----------------------------------------------------------------

void signal_stop_request() {
  g_signal_stop.store(true, std::memory_order_release);
  wake();
}

int received_stop_signal() { return g_stop_signal.load(std::memory_order_acquire); }

void signal_snapshot_request() {
  g_signal_snapshot.store(true, std::memory_order_release);
  g_signal_switch.store(true, std::memory_order_release);
  wake();
}

bool take_switch_request() { return g_signal_switch.exchange(false, std::memory_order_acq_rel); }

Error install_signal_handlers() {
  if (wake_fd() < 0) return wake_fd_error();
  g_signal_stop.store(false);
  g_signal_snapshot.store(false);
  g_signal_switch.store(false);
  struct Handler {
    int signal;
    const char* name;
    void (*handler)(int);
  };
  const Handler handlers[] = {
      {SIGINT, "SIGINT", on_stop_signal},
      {SIGTERM, "SIGTERM", on_stop_signal},
      {SIGUSR2, "SIGUSR2", on_snapshot_signal},
  };
  for (const Handler& h : handlers) {
    struct sigaction action {};
    action.sa_handler = h.handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;  // no SA_RESTART: a blocked poll returns EINTR
    if (::sigaction(h.signal, &action, nullptr) != 0) {
      const int error = errno;
      return Error{error, std::string("sigaction(") + h.name + "): " + errno_text(error)};
    }
  }
  return Error{};
}

void restore_signal_handlers() {
  g_signal_stop.store(false);
  g_signal_snapshot.store(false);
  for (const int signal : {SIGINT, SIGTERM, SIGUSR2}) {
    struct sigaction action {};
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    const int rc = ::sigaction(signal, &action, nullptr);
    VERIFY(rc == 0);
  }
}

}  // namespace ringsim::real
