#include "sim/scheduler.h"

#include <deque>
#include <boost/fiber/algo/algorithm.hpp>
#include <boost/fiber/context.hpp>
#include <boost/fiber/fiber.hpp>
#include <boost/fiber/operations.hpp>
#include <boost/fiber/protected_fixedsize_stack.hpp>

#include "core/sanitizers.h"
#if RINGSIM_ASAN
#include <sanitizer/asan_interface.h>
#endif

#include <algorithm>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "core/verify.h"

namespace ringsim::sim {

struct Waiter {
  boost::fibers::context* context = nullptr;
  std::uint64_t id = 0;
  std::uint64_t deadline_ns = kNoDeadline;
  WaitQueue* queue = nullptr;
  Wake result = Wake::notified;
};

struct Scheduler::Fibers {
  std::vector<std::string> names;
  // A deque: a fiber spawned by a fiber is appended while run() joins an
  // earlier one, which must not move.
  std::deque<boost::fibers::fiber> fibers;
};

namespace {
bool by_id(const Waiter* a, std::uint64_t id) { return a->id < id; }
// Timers in descending (deadline, id) order.
bool later(const Waiter* a, const Waiter* b) {
  return std::pair{a->deadline_ns, a->id} > std::pair{b->deadline_ns, b->id};
}

// Fiber stacks: guard-paged, and large enough for sanitizer builds.
constexpr std::size_t kStackBytes = 256 * 1024;
constexpr std::size_t kFibersMax = 256;

// A guard-paged fiber stack whose shadow memory starts clean under
// AddressSanitizer. A stack is mmap'ed where an earlier run's fiber stack
// may have been; that fiber's last frames never returned (it ended with a
// context switch), so their redzones are still poisoned in the shadow, and
// a new frame laid over them would be reported as an overflow.
//
// Stacks are kept for later fibers (of this run or another, on any thread)
// up to kStacksKept, instead of being mapped, guarded and unmapped again
// for each fiber of each run (4% of a campaign's time).
class CleanStack {
 public:
  explicit CleanStack(std::size_t bytes) : inner_(bytes) {}
  boost::context::stack_context allocate() {
    boost::context::stack_context stack;
    if (!take_kept(stack)) stack = inner_.allocate();
#if RINGSIM_ASAN
    ASAN_UNPOISON_MEMORY_REGION(static_cast<char*>(stack.sp) - stack.size, stack.size);
#endif
    return stack;
  }
  void deallocate(boost::context::stack_context& stack) noexcept {
    {
      const std::lock_guard<std::mutex> lock(kept_mutex());
      if (kept().size() < kStacksKept) {
        kept().push_back(stack);
        return;
      }
    }
    inner_.deallocate(stack);
  }

 private:
  static constexpr std::size_t kStacksKept = 64;
  static std::mutex& kept_mutex() {
    static std::mutex mutex;
    return mutex;
  }
  // Never destroyed: fibers may end after static destruction began.
  static std::vector<boost::context::stack_context>& kept() {
    static auto* stacks = new std::vector<boost::context::stack_context>;
    return *stacks;
  }
  static bool take_kept(boost::context::stack_context& stack) {
    const std::lock_guard<std::mutex> lock(kept_mutex());
    if (kept().empty()) return false;
    stack = kept().back();
    kept().pop_back();
    VERIFY(stack.size >= kStackBytes);
    return true;
  }
  boost::fibers::protected_fixedsize_stack inner_;
};
}  // namespace

// The Boost.Fiber algorithm: forwards to the scheduler, which keeps the
// ready fibers in arrival order and lets the decision source pick one.
class SimAlgorithm final : public boost::fibers::algo::algorithm {
 public:
  explicit SimAlgorithm(Scheduler& scheduler) : scheduler_(scheduler) {}
  void awakened(boost::fibers::context* context) noexcept override {
    scheduler_.awakened(context);
  }
  boost::fibers::context* pick_next() noexcept override { return scheduler_.pick_next(); }
  bool has_ready_fibers() const noexcept override { return scheduler_.has_ready(); }
  void suspend_until(std::chrono::steady_clock::time_point const&) noexcept override {
    scheduler_.stalled();
  }
  void notify() noexcept override {}

 private:
  Scheduler& scheduler_;
};

const char* to_string(FaultCode code) {
  switch (code) {
    case FaultCode::poll_eintr: return "poll EINTR";
    case FaultCode::disk_eio: return "write EIO";
    case FaultCode::disk_eintr_write: return "write EINTR";
    case FaultCode::disk_short_write: return "short write";
    case FaultCode::disk_enospc: return "write ENOSPC";
    case FaultCode::disk_eintr_wait: return "wait EINTR";
    case FaultCode::disk_stall: return "disk stall";
    case FaultCode::disk_eagain_burst_start: return "EAGAIN burst begins";
    case FaultCode::disk_eagain: return "submit EAGAIN";
    case FaultCode::disk_queue_full: return "submit EAGAIN (queue full)";
    case FaultCode::disk_eagain_in_burst: return "submit EAGAIN (burst)";
  }
  return "fault";
}

WaitQueue::~WaitQueue() { VERIFY(waiters_.empty()); }

Wake WaitQueue::wait(std::uint64_t deadline_ns) {
  Waiter waiter;
  return scheduler_.block(waiter, this, deadline_ns);
}

void WaitQueue::notify_all() {
  // wake() removes each waiter from waiters_; iterate over a copy, in
  // arrival order.
  const std::vector<Waiter*> waiters = waiters_;
  for (Waiter* waiter : waiters) scheduler_.wake(*waiter, Wake::notified);
  VERIFY(waiters_.empty());
}

Scheduler::Scheduler(DecisionSource& decisions, const SchedulerLimits& limits)
    : decisions_(decisions), limits_(limits), fibers_(new Fibers), trace_state_(XXH3_createState()) {
  VERIFY(trace_state_ != nullptr);
  VERIFY(XXH3_64bits_reset(trace_state_) == XXH_OK);
  VERIFY(limits_.yield_per_million <= 1'000'000);
  const PctSettings& pct = decisions_.pct();
  if (pct.depth > 0) {
    // d - 1 change points, distinct, among scheduling points 1..steps;
    // the i-th drawn sets priority i (Burckhardt et al.'s algorithm).
    pct_rng_ = decisions_.pct_seed();
    for (std::uint64_t i = 1; i < pct.depth && pct_change_.size() < pct.steps; i++) {
      for (int attempt = 0; attempt < 1000; attempt++) {
        const std::uint64_t point = 1 + pct_next() % pct.steps;
        if (pct_change_.emplace(point, i).second) break;
      }
    }
  }
}

// splitmix64: PCT's own stream (the run's decisions stay the tape's).
std::uint64_t Scheduler::pct_next() {
  std::uint64_t x = (pct_rng_ += 0x9e3779b97f4a7c15ull);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::uint64_t Scheduler::pct_pick() {
  const std::uint64_t depth = decisions_.pct().depth;
  const auto priority_of = [&](boost::fibers::context* c) -> std::uint64_t& {
    auto [it, fresh] = pct_priority_.emplace(c, 0);
    if (fresh) it->second = depth + 1 + pct_next() % (std::uint64_t{1} << 40);
    return it->second;
  };
  const auto highest = [&] {
    std::uint64_t best = 0;
    for (std::uint64_t i = 1; i < ready_.size(); i++) {
      if (priority_of(ready_[i]) > priority_of(ready_[best])) best = i;
    }
    return best;
  };
  std::uint64_t best = highest();
  const auto change = pct_change_.find(schedule_points_);
  if (change != pct_change_.end()) {
    // The fiber about to run drops below every fiber not yet changed.
    priority_of(ready_[best]) = change->second;
    best = highest();
  }
  return best;
}

Scheduler::~Scheduler() {
  VERIFY(!running_);
  VERIFY(waiting_.empty());
  delete fibers_;
  XXH3_freeState(trace_state_);
}

void Scheduler::run(const std::function<void()>& setup) {
  VERIFY(!running_);
  VERIFY(!finished_);
  std::exception_ptr failure;
  // A check that fails in the run's thread reports the run this thread
  // works on (core/verify.h).
  const void* verify_context = core::verify_context();
  std::thread thread([&] {
    core::set_verify_context(verify_context);
    boost::fibers::use_scheduling_algorithm<SimAlgorithm>(*this);
    running_ = true;
    setup();
    // Fibers may spawn fibers: join by index until none is left.
    for (std::size_t i = 0; i < fibers_->fibers.size(); i++) fibers_->fibers[i].join();
    VERIFY(waiting_.empty());
    VERIFY(timers_.empty());
    running_ = false;
    finished_ = true;
  });
  thread.join();
  VERIFY(finished_);
}

void Scheduler::spawn(std::string name, std::function<void()> body) {
  fibers_seen_++;
  VERIFY(running_);
  VERIFY(fibers_->fibers.size() < kFibersMax);
  fibers_->names.push_back(name);
  fibers_->fibers.emplace_back(
      std::allocator_arg, CleanStack(kStackBytes),
      [this, body = std::move(body), name = std::move(name)] {
        // An exception must not cross a fiber's stack boundary.
        try {
          body();
        } catch (const std::exception& e) {
          const std::string message = "fiber " + name + " threw: " + e.what();
          VERIFY_MSG(false, message.c_str());
        }
        // PCT: a later fiber may get this context's address; it is new.
        pct_priority_.erase(boost::fibers::context::active());
      });
}

void Scheduler::yield() {
  VERIFY(running_);
  leave(boost::fibers::context::active(), true);
}

// Boost.Fiber's dispatcher is a context of its own, always among the ready
// ones while a fiber runs: picked (it takes part in every pick), it would
// run one turn of its loop, with nothing to do there (no Boost.Fiber timer
// is used, no other thread schedules here), pick the next fiber and go
// back to the ready list once it switched to it. leave() makes those picks
// itself, in the same order with the same draws, and switches only to the
// fiber they end on: not at all when that is the fiber leaving (a sleeper
// whose timer is the next to fire, a yield with nothing else ready), once
// instead of twice otherwise. The dispatcher runs only when it has work: a
// stall (nothing ready, no timer), or a pick not made here (a fiber ending,
// the main context joining).
void Scheduler::leave(boost::fibers::context* self, bool yielding) {
  boost::fibers::context* next = pick_one();
  VERIFY(next != nullptr);
  if (next->is_context(boost::fibers::type::dispatcher_context)) {
    if (yielding) awakened(self);  // ready again as the switch to the dispatcher completes
    boost::fibers::context* after = pick_one();
    if (after != nullptr) {
      awakened(next);  // the dispatcher, ready again as it switches to `after`
      next = after;
      yielding = false;  // already ready
    }
  }
  if (next == self) return;
  forced_next_ = next;
  if (yielding) {
    boost::this_fiber::yield();
  } else {
    self->suspend();
  }
}

void Scheduler::maybe_yield() {
  if (decisions_.chance(limits_.yield_per_million)) yield();
}

Wake Scheduler::sleep_for(std::uint64_t duration_ns) {
  VERIFY(duration_ns <= kNoDeadline - now_ns_);
  return sleep_until(now_ns_ + duration_ns);
}

Wake Scheduler::sleep_until(std::uint64_t deadline_ns) {
  VERIFY(deadline_ns != kNoDeadline);
  Waiter waiter;
  return block(waiter, nullptr, deadline_ns);
}

Wake Scheduler::block(Waiter& waiter, WaitQueue* queue, std::uint64_t deadline_ns) {
  VERIFY(running_);
  if (cancelled_) return Wake::cancelled;
  waiter.context = boost::fibers::context::active();
  waiter.id = next_wait_id_++;
  waiter.deadline_ns = std::max(deadline_ns, now_ns_);
  waiter.queue = queue;
  VERIFY(waiter.context != nullptr);
  VERIFY(waiting_.size() <= kFibersMax);  // one wait per fiber (and the main context)
  VERIFY(waiting_.empty() || waiting_.back()->id < waiter.id);
  waiting_.push_back(&waiter);
  if (queue != nullptr) queue->waiters_.push_back(&waiter);
  if (waiter.deadline_ns != kNoDeadline) {
    timers_.insert(std::lower_bound(timers_.begin(), timers_.end(), &waiter, later), &waiter);
  }
  VERIFY(queue != nullptr || waiter.deadline_ns != kNoDeadline);  // else it never wakes
  leave(waiter.context, false);
  VERIFY(!std::binary_search(waiting_.begin(), waiting_.end(), &waiter,
                             [](const Waiter* a, const Waiter* b) { return a->id < b->id; }));
  return waiter.result;
}

void Scheduler::wake(Waiter& waiter, Wake how) {
  const auto waiting = std::lower_bound(waiting_.begin(), waiting_.end(), waiter.id, by_id);
  VERIFY(waiting != waiting_.end() && *waiting == &waiter);
  waiting_.erase(waiting);
  if (waiter.deadline_ns != kNoDeadline) {
    const auto timer = std::lower_bound(timers_.begin(), timers_.end(), &waiter, later);
    VERIFY(timer != timers_.end() && *timer == &waiter);
    timers_.erase(timer);
  }
  if (waiter.queue != nullptr) {
    auto& list = waiter.queue->waiters_;
    const auto it = std::find(list.begin(), list.end(), &waiter);
    VERIFY(it != list.end());
    list.erase(it);
  }
  waiter.result = how;
  awakened(waiter.context);
}

void Scheduler::cancel(const std::string& reason) {
  if (cancelled_) return;
  cancelled_ = true;
  cancel_reason_ = reason;
  trace(TraceKind::cancelled);
  // In wait-id order, so the wake order is deterministic.
  const std::size_t waiting_max = waiting_.size();
  for (std::size_t i = 0; i < waiting_max && !waiting_.empty(); i++) {
    wake(*waiting_.front(), Wake::cancelled);
  }
  VERIFY(waiting_.empty());
  VERIFY(timers_.empty());
}

void Scheduler::awakened(boost::fibers::context* context) {
  VERIFY(context != nullptr);
  VERIFY(ready_.size() < kFibersMax + 2);
  ready_.push_back(context);
}

// Boost.Fiber asks: from leave() (its pick made), from the dispatcher, or
// when a fiber ends or the main context waits.
boost::fibers::context* Scheduler::pick_next() {
  boost::fibers::context* next = forced_next_;
  forced_next_ = nullptr;
  if (next == nullptr) next = pick_one();
  if (next != nullptr) context_switches_++;
  return next;
}

boost::fibers::context* Scheduler::pick_one() {
  // Virtual time moves only when nothing is ready.
  if (ready_.empty() && !timers_.empty()) {
    Waiter& earliest = *timers_.back();
    const std::uint64_t deadline_ns = earliest.deadline_ns;
    if (deadline_ns > limits_.virtual_ns_max) {
      cancel("virtual time limit of " + std::to_string(limits_.virtual_ns_max) + " ns reached");
    } else {
      VERIFY(deadline_ns >= now_ns_);
      now_ns_ = deadline_ns;
      trace(TraceKind::timer_fired, earliest.id);
      wake(earliest, Wake::timed_out);
    }
  }
  if (ready_.empty()) return nullptr;
  if (ready_.size() > 1) schedule_points_++;
  std::uint64_t index = 0;
  if (decisions_.pct().depth > 0) {
    index = ready_.size() > 1 ? pct_pick() : 0;
    decisions_.take_pick(ready_.size(), index);
  } else {
    index = decisions_.draw_schedule(ready_.size());
  }
  boost::fibers::context* next = ready_[index];
  ready_.erase(ready_.begin() + static_cast<std::ptrdiff_t>(index));
  switches_++;
  if (switches_ > limits_.switches_max) {
    cancel("fiber switch limit of " + std::to_string(limits_.switches_max) + " reached");
  }
  return next;
}

void Scheduler::stalled() {
  if (!waiting_.empty()) {
    cancel("deadlock: " + std::to_string(waiting_.size()) +
           " fibers waiting, none ready and no timer pending");
    return;
  }
  VERIFY_MSG(finished_ || !running_,
             "scheduler stalled with no simulated waiter (a fiber blocked outside sim/)");
}

void Scheduler::trace(TraceKind kind, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  if (trace_batched_ == trace_batch_.size()) flush_trace();
  std::uint64_t* event = trace_batch_.data() + trace_batched_;
  event[0] = static_cast<std::uint64_t>(kind);
  event[1] = now_ns_;
  event[2] = a;
  event[3] = b;
  event[4] = c;
  trace_batched_ += 5;
  trace_events_++;
  if (event_log_ != nullptr) event_log_->push_back(TraceEvent{kind, now_ns_, a, b, c});
}

void Scheduler::flush_trace() const {
  if (trace_batched_ == 0) return;
  VERIFY(XXH3_64bits_update(trace_state_, trace_batch_.data(), trace_batched_ * sizeof(std::uint64_t)) == XXH_OK);
  trace_batched_ = 0;
}

std::uint64_t Scheduler::trace_hash() const {
  flush_trace();
  return XXH3_64bits_digest(trace_state_);
}

}  // namespace ringsim::sim
