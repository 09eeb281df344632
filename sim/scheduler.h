// The simulation's scheduler: Boost.Fiber with a scheduling algorithm that
// draws every choice from the run's decision source, and virtual time.
//
// One simulation runs on one OS thread of its own (run() starts it and
// waits for it), so each run gets a fresh Boost.Fiber scheduler and no
// other thread touches it. Boost.Fiber's own timed waits and sleep_for read
// std::chrono::steady_clock; they are never used here. Time is the
// scheduler's virtual clock, which moves only when no fiber is ready: then
// the earliest timer fires and the clock jumps to its deadline.
//
// Waiting: a fiber blocks only in WaitQueue::wait() or sleep_*(), which
// suspend it and register it with the scheduler. That lets the scheduler
// cancel a run (liveness budget exhausted, deadlock, a failed check): every
// waiter wakes with Wake::cancelled, every later wait returns it at once, and
// the fibers unwind and return. Nothing is ever left suspended forever.
//
// Limits (each one ends the run as a liveness failure): fiber switches,
// virtual time, and a stall (no fiber ready, no timer pending, yet fibers
// still waiting: a deadlock).
#pragma once

#include <xxhash.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/decisions.h"

namespace boost::fibers {
class context;
}

namespace ringsim::sim {

inline constexpr std::uint64_t kNoDeadline = UINT64_MAX;

enum class Wake : std::uint8_t { notified, timed_out, cancelled };

struct SchedulerLimits {
  std::uint64_t switches_max = 50'000'000;
  std::uint64_t virtual_ns_max = 3600ull * 1'000'000'000ull;
  std::uint32_t yield_per_million = 0;  // maybe_yield() yields this often
  bool operator==(const SchedulerLimits&) const = default;
};

// Kinds of events folded into the run's trace hash. Numbered, never reused.
enum class TraceKind : std::uint32_t {
  switch_to = 1,
  timer_fired = 2,
  cancelled = 3,
  record_written = 10,
  record_dropped = 11,
  lost_emitted = 12,  // (cpu, lost count)
  wakeup = 13,
  hangup = 14,
  pause = 15,
  head_loaded = 20,
  tail_stored = 21,
  copied = 22,
  polled = 23,
  released = 24,
  committed = 25,
  gap = 26,
  corrupt = 27,
  fault = 30,
  aio_submit = 40,
  aio_complete = 41,
  sync_write = 42,
  file_opened = 43,
  file_closed = 44,
  aux_end = 50,     // (cpu, aux_head after, flags)
  aux_wakeup = 51,  // (cpu, aux_head)
  aux_copied = 52,  // (cpu, position, bytes)
};

// TraceKind::fault's first argument.
enum class FaultCode : std::uint64_t {
  poll_eintr = 1,
  disk_eio = 10,
  disk_eintr_write = 11,
  disk_short_write = 12,
  disk_enospc = 13,
  disk_eintr_wait = 14,
  disk_stall = 15,
  disk_eagain_burst_start = 20,
  disk_eagain = 21,
  disk_queue_full = 22,
  disk_eagain_in_burst = 23,
};
const char* to_string(FaultCode code);

// One traced event, when a run keeps them (for the Chrome trace export).
struct TraceEvent {
  TraceKind kind;
  std::uint64_t time_ns;
  std::uint64_t a, b, c;
};

class Scheduler;
struct Waiter;

class WaitQueue {
 public:
  explicit WaitQueue(Scheduler& scheduler) : scheduler_(scheduler) {}
  WaitQueue(const WaitQueue&) = delete;
  WaitQueue& operator=(const WaitQueue&) = delete;
  ~WaitQueue();

  // Blocks the calling fiber until notify_all(), the deadline (virtual ns;
  // kNoDeadline: none) or cancellation.
  Wake wait(std::uint64_t deadline_ns = kNoDeadline);
  void notify_all();
  bool empty() const { return waiters_.empty(); }

 private:
  friend class Scheduler;
  Scheduler& scheduler_;
  std::vector<Waiter*> waiters_;
};

class Scheduler {
 public:
  Scheduler(DecisionSource& decisions, const SchedulerLimits& limits);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Starts a thread, installs the algorithm there, calls setup() (which
  // spawns fibers), runs until every fiber has returned, joins the thread.
  // Called once.
  void run(const std::function<void()>& setup);

  // Starts a fiber (from setup() or from a fiber).
  void spawn(std::string name, std::function<void()> body);

  std::uint64_t now_ns() const { return now_ns_; }
  DecisionSource& decisions() { return decisions_; }

  // Scheduling points, called from fibers.
  void yield();
  void maybe_yield();
  Wake sleep_for(std::uint64_t duration_ns);
  Wake sleep_until(std::uint64_t deadline_ns);

  // Ends the run: wakes every waiter with Wake::cancelled. The first reason
  // is kept.
  void cancel(const std::string& reason);
  bool cancelled() const { return cancelled_; }
  const std::string& cancel_reason() const { return cancel_reason_; }

  // Folds an event into the trace hash.
  void trace(TraceKind kind, std::uint64_t a = 0, std::uint64_t b = 0, std::uint64_t c = 0);
  std::uint64_t trace_hash() const;
  // Keep every traced event in `events` too (nullptr: do not).
  void set_event_log(std::vector<TraceEvent>* events) { event_log_ = events; }
  std::uint64_t trace_events() const { return trace_events_; }

  // Picks of the next fiber to run (the switch budget's unit), Boost.Fiber's
  // dispatcher among them; and the context switches actually made, fewer
  // (see leave()).
  std::uint64_t switches() const { return switches_; }
  std::uint64_t context_switches() const { return context_switches_; }
  // Picks among two or more ready fibers (the scheduling points), and the
  // fibers the run had.
  std::uint64_t schedule_points() const { return schedule_points_; }
  std::uint64_t fibers_seen() const { return fibers_seen_; }
  const SchedulerLimits& limits() const { return limits_; }

 private:
  friend class WaitQueue;
  friend class SimAlgorithm;

  Wake block(Waiter& waiter, WaitQueue* queue, std::uint64_t deadline_ns);
  // The running fiber `self` gives up the processor (blocked, or
  // `yielding`: ready again once it is off it) to the fiber picked next.
  void leave(boost::fibers::context* self, bool yielding);
  // One pick of the fiber to run next (nullptr: none ready).
  boost::fibers::context* pick_one();
  // PCT's pick among the ready fibers (decisions_.pct().depth > 0).
  std::uint64_t pct_pick();
  std::uint64_t pct_next();
  void wake(Waiter& waiter, Wake how);
  // Algorithm callbacks.
  void awakened(boost::fibers::context* context);
  boost::fibers::context* pick_next();
  bool has_ready() const { return !ready_.empty(); }
  void stalled();

  DecisionSource& decisions_;
  const SchedulerLimits limits_;
  std::uint64_t now_ns_ = 0;
  std::uint64_t switches_ = 0;
  std::uint64_t context_switches_ = 0;
  // What leave() picked, for the Boost.Fiber call it makes to switch.
  boost::fibers::context* forced_next_ = nullptr;
  std::uint64_t schedule_points_ = 0;
  std::uint64_t fibers_seen_ = 0;
  // PCT: each fiber's priority (drawn when first ready: above the depth),
  // the change points (scheduling point number -> the priority it sets,
  // 1..depth-1, below every drawn one), its own stream.
  std::map<boost::fibers::context*, std::uint64_t> pct_priority_;
  std::map<std::uint64_t, std::uint64_t> pct_change_;
  std::uint64_t pct_rng_ = 0;
  std::uint64_t next_wait_id_ = 1;
  bool cancelled_ = false;
  bool running_ = false;
  bool finished_ = false;
  std::string cancel_reason_;
  std::vector<boost::fibers::context*> ready_;
  // The waiting fibers, by wait id (ascending: ids only grow), and those
  // with a deadline by (deadline, id) descending: the next timer is last.
  // A few fibers wait at once: sorted vectors, no allocation per wait.
  std::vector<Waiter*> waiting_;
  std::vector<Waiter*> timers_;
  struct Fibers;
  Fibers* fibers_ = nullptr;
  XXH3_state_t* trace_state_ = nullptr;
  // Traced events not yet folded into trace_state_, hashed in batches (the
  // same bytes in the same order: the same hash).
  static constexpr std::size_t kTraceBatch = 128;
  mutable std::array<std::uint64_t, 5 * kTraceBatch> trace_batch_{};
  mutable std::size_t trace_batched_ = 0;  // words of trace_batch_ in use
  void flush_trace() const;
  std::vector<TraceEvent>* event_log_ = nullptr;
  std::uint64_t trace_events_ = 0;
};

}  // namespace ringsim::sim
