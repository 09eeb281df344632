// core::Staging's Sync policy for two threads: a mutex and a condition
// variable per side (one waiter each: the reading and the writing thread).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "core/staging.h"
#include "real/clock.h"

namespace ringsim::real {

class ThreadSync {
 public:
  class Guard {
   public:
    explicit Guard(ThreadSync& sync) : lock_(sync.mutex_) {}

   private:
    friend class ThreadSync;
    std::unique_lock<std::mutex> lock_;
  };

  bool wait(Guard& guard, core::StagingSide side, std::uint64_t timeout_ns) {
    condition(side).wait_for(guard.lock_, std::chrono::nanoseconds(timeout_ns));
    return true;
  }
  void notify(core::StagingSide side) { condition(side).notify_one(); }
  std::uint64_t now_ns() { return monotonic_ns(); }

 private:
  std::condition_variable& condition(core::StagingSide side) {
    return side == core::StagingSide::space ? space_ : data_;
  }
  std::mutex mutex_;
  std::condition_variable space_;
  std::condition_variable data_;
};

}  // namespace ringsim::real
