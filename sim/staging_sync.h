// core::Staging's Sync policy for two fibers of one simulation: no lock
// (one OS thread), a wait queue per side, virtual time. Counts the reading
// fiber's waits for room on its own, for the backpressure_counted check.
#pragma once

#include <cstdint>

#include "core/staging.h"
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

}  // namespace ringsim::sim
