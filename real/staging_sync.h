// core::Staging's Sync policy for two threads: a priority-inheritance mutex
// and a semaphore per side (one waiter each: the reading and the writing
// thread).
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
#include <atomic>
#include <cstdint>
#include <mutex>
#include <semaphore>

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

  // Tries for up to kSpinNs (a bounded number of tries) before it blocks.
  // Why: the locks are held for a chunk's copy and bookkeeping (about a
  // microsecond), and a PI mutex that is taken blocks in the kernel at
  // once (FUTEX_LOCK_PI: the waiter sleeps, the holder is boosted, its
  // unlock wakes the waiter): two context switches, which cost the reading
  // threads more than their reading (measured at the benchmark's fp point,
  // docs/recorder.md "Locks that spin before they sleep"). A holder that is
  // not running (preempted, its CPU not run by the host) is still waited
  // for with priority inheritance, after the spin.
  void lock() {
    if (try_lock() || spin_for_lock()) return;  // (no clock read when the lock is free)
    VERIFY(::pthread_mutex_lock(&mutex_) == 0);
  }
  bool try_lock() { return ::pthread_mutex_trylock(&mutex_) == 0; }
  void unlock() { VERIFY(::pthread_mutex_unlock(&mutex_) == 0); }

 private:
  static void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }
  static constexpr std::uint64_t kSpinNs = 10'000;
  static constexpr int kSpinTriesMax = 4096;  // bounds the spin if the clock stalls
  bool spin_for_lock() {
    const std::uint64_t deadline = monotonic_ns() + kSpinNs;
    for (int tries = 0; tries < kSpinTriesMax; tries++) {
      for (int i = 0; i < 8; i++) cpu_relax();
      if (try_lock()) return true;
      if ((tries & 7) == 7 && monotonic_ns() >= deadline) return false;
    }
    return false;
  }

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

  // With the guard held (the caller has just seen it must wait): lets go,
  // waits for a notify of `side` or the timeout, takes the lock again.
  bool wait(Guard& guard, core::StagingSide side, std::uint64_t timeout_ns) {
    Signal& s = signal(side);
    s.raised.store(false, std::memory_order_relaxed);  // a notify from now on releases the semaphore
    guard.lock_.unlock();
    s.semaphore.try_acquire_for(std::chrono::nanoseconds(timeout_ns));
    guard.lock_.lock();
    return true;
  }
  // With the guard held. Lock-free (an atomic exchange, at most one futex
  // wake): the SCHED_FIFO reading thread never waits on a lock the writing
  // thread could hold while preempted, as it would inside a condition
  // variable's own mutex.
  void notify(core::StagingSide side) {
    Signal& s = signal(side);
    if (!s.raised.exchange(true, std::memory_order_relaxed)) s.semaphore.release();
  }
  std::uint64_t now_ns() { return monotonic_ns(); }

 private:
  // A wakeup that is never lost: raised is cleared (under the lock) before
  // the waiter lets go of the lock; a notify after that releases the
  // semaphore once. Its count stays at most 2 (a stale one, consumed by the
  // next wait as a spurious wakeup, plus one).
  struct Signal {
    std::atomic<bool> raised{false};
    std::counting_semaphore<4> semaphore{0};
  };
  Signal& signal(core::StagingSide side) { return side == core::StagingSide::space ? space_ : data_; }

  PriorityInheritingMutex mutex_;
  Signal space_;
  Signal data_;
};

}  // namespace ringsim::real
