// real/staging_sync.h's PriorityInheritingMutex: it spins for a few
// microseconds before it blocks (docs/recorder.md, "Where the reading
// threads' CPU goes"); it must still exclude, and still wait for a holder
// that keeps the lock past the spin.
#include "real/staging_sync.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>

namespace ringsim::real {
namespace {

// Two threads add to a plain counter under the lock, contended all along:
// a lock that let both in would lose increments (and TSan reports the race).
TEST(PriorityInheritingMutex, Excludes) {
  PriorityInheritingMutex mutex;
  std::uint64_t counter = 0;
  constexpr int kAdds = 200'000;
  const auto add = [&] {
    for (int i = 0; i < kAdds; i++) {
      const std::lock_guard<PriorityInheritingMutex> guard(mutex);
      counter = counter + 1;
    }
  };
  std::thread other(add);
  add();
  other.join();
  EXPECT_EQ(counter, 2u * kAdds);
}

// A holder that keeps the lock for 50 ms, far past the 10 µs spin: the
// waiter gets it only after the holder lets go (it blocked, it did not
// give up or take it).
TEST(PriorityInheritingMutex, WaitsForAHolderPastTheSpin) {
  PriorityInheritingMutex mutex;
  std::atomic<bool> held{false};
  std::atomic<bool> released{false};
  std::thread holder([&] {
    mutex.lock();
    held.store(true);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    released.store(true);
    mutex.unlock();
  });
  while (!held.load()) std::this_thread::yield();
  const auto start = std::chrono::steady_clock::now();
  mutex.lock();
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(released.load());
  EXPECT_GE(waited, std::chrono::milliseconds(30));
  mutex.unlock();
  holder.join();
  EXPECT_TRUE(mutex.try_lock());
  mutex.unlock();
}

}  // namespace
}  // namespace ringsim::real
