// The simulated kernel behind the system-call surface, driven directly
// (no preloading, so it runs under the sanitizers too): a consumer's
// loop over its ring reads every record the kernel logged, in order, and
// the event hangs up when the workload ends.
#include <linux/perf_event.h>
#include <poll.h>

#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "sim/decisions.h"
#include "sim/call_kernel.h"

namespace ringsim::sim::interpose {
namespace {

TEST(CallKernel, AReaderLoopGetsEveryLoggedRecordInOrderThenAHangup) {
  for (std::uint64_t seed = 1; seed <= 20; seed++) {
    SCOPED_TRACE(seed);
    DecisionSource d(seed, false);
    CallKernel k(d, KernelParams{});
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attr.sample_period = 100'000;
    attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID;
    attr.sample_id_all = attr.comm = attr.mmap = attr.task = 1;
    attr.disabled = attr.enable_on_exec = 1;
    EXPECT_EQ(k.open(attr, -1, -1, -1, 0, 100), -EINVAL);  // no task, no CPU
    attr.type = PERF_TYPE_HARDWARE;
    EXPECT_EQ(k.open(attr, 200, -1, -1, 0, 100), -ENOENT);  // no PMU
    attr.type = PERF_TYPE_SOFTWARE;
    const long event = k.open(attr, 200, -1, -1, 0, 100);
    ASSERT_GE(event, 0);
    std::vector<std::byte> memory((1 + 8) * 4096);
    EXPECT_EQ(k.map(static_cast<int>(event), {memory.data(), 4 * 4096}, true), -EINVAL);  // 3 data pages
    const long ring = k.map(static_cast<int>(event), memory, true);
    ASSERT_GE(ring, 0);
    auto* control = reinterpret_cast<perf_event_mmap_page*>(memory.data());
    ASSERT_EQ(control->data_offset, 4096u);
    ASSERT_EQ(control->data_size, 8u * 4096);
    std::vector<std::byte> read;
    bool hung_up = false;
    for (int steps = 0; steps < 100'000 && !hung_up; steps++) {
      k.step();
      hung_up = (k.poll(static_cast<int>(event)) & POLLHUP) != 0;
      const std::uint64_t head = control->data_head;
      for (std::uint64_t at = control->data_tail; at < head; at++) {
        read.push_back(memory[4096 + (at & (8 * 4096 - 1))]);
      }
      control->data_tail = head;
    }
    EXPECT_TRUE(hung_up);
    EXPECT_TRUE(k.ended());
    k.sync_tails();
    const model::CpuLog& log = k.rings().at(static_cast<std::size_t>(ring))->log;
    ASSERT_FALSE(log.written.empty());
    EXPECT_EQ(log.bytes.size(), read.size());
    EXPECT_TRUE(std::memcmp(log.bytes.data(), read.data(), read.size()) == 0);
    EXPECT_TRUE(k.rings().at(static_cast<std::size_t>(ring))->bad_tail.empty());
  }
}

TEST(CallKernel, ATailAheadOfTheHeadIsAFindingNotACrash) {
  DecisionSource d(3, false);
  CallKernel k(d, KernelParams{});
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_period = 100'000;
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TIME;
  const long event = k.open(attr, 200, -1, -1, 0, 100);
  ASSERT_GE(event, 0);
  std::vector<std::byte> memory((1 + 2) * 4096);
  const long ring = k.map(static_cast<int>(event), memory, true);
  ASSERT_GE(ring, 0);
  k.step();
  reinterpret_cast<perf_event_mmap_page*>(memory.data())->data_tail = 1'000'000;
  k.step();
  EXPECT_NE(k.rings().at(static_cast<std::size_t>(ring))->bad_tail.find("data_tail 1000000"), std::string::npos);
}

}  // namespace
}  // namespace ringsim::sim::interpose
