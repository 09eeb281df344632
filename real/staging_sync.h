// core::Staging's Sync policy for two threads: a priority-inheritance mutex
// and a condition variable per side (one waiter each: the reading and the
// writing thread).
//
// Priority inheritance: the reading thread runs SCHED_FIFO, the writing
// thread at normal priority on cores the workload saturates. With a plain
// mutex, a writer preempted while it holds the lock (for the few
// instructions of next() or done()) would keep the reader waiting until the
// fair scheduler runs it again, milliseconds in which the rings overflow;
// with PTHREAD_PRIO_INHERIT the kernel runs the writer at the reader's
// priority until it lets go.
#pragma once

#include <pthread.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "core/staging.h"
#include "core/verify.h"
#include "real/clock.h"

namespace ringsim::real {

// A pthread mutex with PTHREAD_PRIO_INHERIT (Lockable).
class PriorityInheritingMutex {
 public:
  PriorityInheritingMutex() {
    pthread_mutexattr_t attr;
    VERIFY(::pthread_mutexattr_init(&attr) == 0);
    VERIFY(::pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_INHERIT) == 0);
    VERIFY(::pthread_mutex_init(&mutex_, &attr) == 0);
    ::pthread_mutexattr_destroy(&attr);
  }
  ~PriorityInheritingMutex() { ::pthread_mutex_destroy(&mutex_); }
  PriorityInheritingMutex(const PriorityInheritingMutex&) = delete;
  PriorityInheritingMutex& operator=(const PriorityInheritingMutex&) = delete;

  void lock() { VERIFY(::pthread_mutex_lock(&mutex_) == 0); }
  bool try_lock() { return ::pthread_mutex_trylock(&mutex_) == 0; }
  void unlock() { VERIFY(::pthread_mutex_unlock(&mutex_) == 0); }

 private:
  pthread_mutex_t mutex_;
};

class ThreadSync {
 public:
  class Guard {
   public:
    explicit Guard(ThreadSync& sync) : lock_(sync.mutex_) {}

   private:
    friend class ThreadSync;
    std::unique_lock<PriorityInheritingMutex> lock_;
  };

  bool wait(Guard& guard, core::StagingSide side, std::uint64_t timeout_ns) {
    condition(side).wait_for(guard.lock_, std::chrono::nanoseconds(timeout_ns));
    return true;
  }
  void notify(core::StagingSide side) { condition(side).notify_one(); }
  std::uint64_t now_ns() { return monotonic_ns(); }

 private:
  std::condition_variable_any& condition(core::StagingSide side) {
    return side == core::StagingSide::space ? space_ : data_;
  }
  PriorityInheritingMutex mutex_;
  std::condition_variable_any space_;
  std::condition_variable_any data_;
};

}  // namespace ringsim::real
