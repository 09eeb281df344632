#include "sim/scheduler.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "core/verify.h"

namespace ringsim::sim {
namespace {

// Three fibers sleeping different virtual durations wake in deadline order,
// and the clock ends at the latest deadline.
TEST(Scheduler, VirtualTimeOrdersSleepers) {
  DecisionSource decisions(1, false);
  Scheduler scheduler(decisions, SchedulerLimits{});
  std::vector<std::uint64_t> woke;
  scheduler.run([&] {
    for (std::uint64_t d : {300u, 100u, 200u}) {
      scheduler.spawn("sleeper", [&, d] {
        EXPECT_EQ(scheduler.sleep_for(d), Wake::timed_out);
        woke.push_back(scheduler.now_ns());
      });
    }
  });
  EXPECT_EQ(woke, (std::vector<std::uint64_t>{100, 200, 300}));
  EXPECT_EQ(scheduler.now_ns(), 300u);
  EXPECT_FALSE(scheduler.cancelled());
}

// A waiter woken by notify_all sees notified; one whose deadline passes
// first sees timed_out.
TEST(Scheduler, WaitQueueNotifyAndTimeout) {
  DecisionSource decisions(2, false);
  Scheduler scheduler(decisions, SchedulerLimits{});
  WaitQueue queue(scheduler);
  Wake first = Wake::cancelled, second = Wake::cancelled;
  scheduler.run([&] {
    scheduler.spawn("waiter", [&] { first = queue.wait(1000); });
    scheduler.spawn("timed", [&] { second = queue.wait(10); });
    scheduler.spawn("notifier", [&] {
      scheduler.sleep_for(50);
      queue.notify_all();
    });
  });
  EXPECT_EQ(first, Wake::notified);
  EXPECT_EQ(second, Wake::timed_out);
  EXPECT_EQ(scheduler.now_ns(), 50u);
}

// Two fibers waiting on each other with no timer: the scheduler detects the
// deadlock and cancels the run instead of hanging.
TEST(Scheduler, DeadlockCancelsTheRun) {
  DecisionSource decisions(3, false);
  Scheduler scheduler(decisions, SchedulerLimits{});
  WaitQueue a(scheduler), b(scheduler);
  Wake wa = Wake::notified, wb = Wake::notified;
  scheduler.run([&] {
    scheduler.spawn("a", [&] { wa = a.wait(); });
    scheduler.spawn("b", [&] { wb = b.wait(); });
  });
  EXPECT_TRUE(scheduler.cancelled());
  EXPECT_NE(scheduler.cancel_reason().find("deadlock"), std::string::npos);
  EXPECT_EQ(wa, Wake::cancelled);
  EXPECT_EQ(wb, Wake::cancelled);
}

// The switch budget ends a run that never stops yielding.
TEST(Scheduler, SwitchLimitCancels) {
  DecisionSource decisions(4, false);
  SchedulerLimits limits;
  limits.switches_max = 1000;
  Scheduler scheduler(decisions, limits);
  std::uint64_t spins = 0;
  scheduler.run([&] {
    scheduler.spawn("spinner", [&] {
      for (int i = 0; i < 1'000'000 && !scheduler.cancelled(); i++) {
        scheduler.yield();
        spins++;
      }
    });
  });
  EXPECT_TRUE(scheduler.cancelled());
  EXPECT_LE(spins, 1001u);
}

// The interleaving depends on the seed and only on it.
std::string interleaving(std::uint64_t seed) {
  DecisionSource decisions(seed, false);
  Scheduler scheduler(decisions, SchedulerLimits{});
  std::string order;
  scheduler.run([&] {
    for (char c : std::string("abcd")) {
      scheduler.spawn(std::string(1, c), [&, c] {
        for (int i = 0; i < 8; i++) {
          order.push_back(c);
          scheduler.yield();
        }
      });
    }
  });
  return order;
}

TEST(Scheduler, SameSeedSameInterleaving) {
  EXPECT_EQ(interleaving(7), interleaving(7));
  bool differs = false;
  for (std::uint64_t seed = 8; seed < 16 && !differs; seed++) differs = interleaving(seed) != interleaving(7);
  EXPECT_TRUE(differs) << "the seed does not influence the schedule";
}

// A check that fails inside a run reports the context (core/verify.h) of
// the thread that started the run, though it fails on the run's own
// thread: the campaign's crash hook finds the seed there, whichever of its
// --jobs threads ran it.
void print_context_and_exit(const char*) {
  const auto* seed = static_cast<const std::uint64_t*>(core::verify_context());
  std::fprintf(stderr, "context: seed %llu\n", seed == nullptr ? 0ull : static_cast<unsigned long long>(*seed));
  std::fflush(stderr);
  std::_Exit(3);
}

void run_in_context(std::uint64_t seed, bool fail) {
  core::set_verify_context(&seed);
  DecisionSource decisions(seed, false);
  Scheduler scheduler(decisions, SchedulerLimits{});
  scheduler.run([&] {
    scheduler.spawn("sleeper", [&] {
      scheduler.sleep_for(100);
      VERIFY(!fail);
    });
  });
  core::set_verify_context(nullptr);
}

TEST(SchedulerDeathTest, AFailedCheckReportsTheContextOfTheThreadThatRanIt) {
  EXPECT_EXIT(
      {
        core::set_verify_hook(print_context_and_exit);
        std::thread passing([] { run_in_context(8, false); });
        std::thread failing([] { run_in_context(7, true); });
        passing.join();
        failing.join();
      },
      ::testing::ExitedWithCode(3), "context: seed 7");
}

}  // namespace
}  // namespace ringsim::sim
