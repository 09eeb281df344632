// core::Staging's Sync policy for two fibers of one simulation: no lock
// (one OS thread), a wait queue per side, virtual time. Counts the reading
// fiber's waits for room on its own, for the backpressure_counted check.
#pragma once

#include <cstdint>

#include "core/staging.h"
#include "core/verify.h"
#include "sim/scheduler.h"

namespace ringsim::sim {

class FiberSync {
 public:
  explicit FiberSync(Scheduler& scheduler) : scheduler_(scheduler), space_(scheduler), data_(scheduler) {}

  struct Guard {
    explicit Guard(FiberSync&) {}
  };

  bool wait(Guard&, core::StagingSide side, std::uint64_t timeout_ns) {
    if (side == core::StagingSide::space) space_waits_++;
    return queue(side).wait(scheduler_.now_ns() + timeout_ns) != Wake::cancelled;
  }
  void notify(core::StagingSide side) { queue(side).notify_all(); }
  std::uint64_t now_ns() { return scheduler_.now_ns(); }

  std::uint64_t space_waits() const { return space_waits_; }

 private:
  WaitQueue& queue(core::StagingSide side) { return side == core::StagingSide::space ? space_ : data_; }

  Scheduler& scheduler_;
  WaitQueue space_;
  WaitQueue data_;
  std::uint64_t space_waits_ = 0;
};

// core::StagingGates' lock for the reading fibers of one simulation
// (readers_per_cpu): the fiber holding it between a chunk's acquire and
// commit can be held in its copy (virtual time, an interrupted copy) while
// another reading fiber runs, which then waits here, as a reading thread
// waits for the gates' mutex in the recorder. Counts those waits.
class FiberMutex {
 public:
  explicit FiberMutex(Scheduler& scheduler) : scheduler_(scheduler), released_(scheduler) {}
  FiberMutex(const FiberMutex&) = delete;
  FiberMutex& operator=(const FiberMutex&) = delete;

  void lock() {
    if (held_) contended_++;
    for (std::uint64_t wait = 0; held_; wait++) {
      VERIFY_MSG(wait < 100'000'000, "a staging gate's lock was never released");
      // A cancelled run's waits return at once: let the holder run.
      if (released_.wait() == Wake::cancelled) scheduler_.yield();
    }
    held_ = true;
  }
  bool try_lock() {
    if (held_) return false;
    held_ = true;
    return true;
  }
  void unlock() {
    VERIFY_MSG(held_, "a staging gate's lock released while not held");
    held_ = false;
    released_.notify_all();
  }
  std::uint64_t contended() const { return contended_; }

 private:
  Scheduler& scheduler_;
  WaitQueue released_;
  bool held_ = false;
  std::uint64_t contended_ = 0;
};

}  // namespace ringsim::sim
