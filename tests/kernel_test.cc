// The simulated kernel's ring semantics (sim/kernel.h), one rule per test.
#include <gtest/gtest.h>

#include "tests/test_util.h"

namespace ringsim::sim {
namespace {

using testing::RingFixture;

TEST(SimRing, DropsWhenFullAndReportsLostOnlyWhenRoomAppears) {
  RingFixture f(4096);
  // 4096 / 512 = 8 records fill the ring exactly.
  for (int i = 0; i < 8; i++) ASSERT_EQ(f.put(512), SimRing::Output::written);
  EXPECT_EQ(f.put(512), SimRing::Output::dropped_full);
  EXPECT_EQ(f.put(48), SimRing::Output::dropped_full);
  EXPECT_EQ(f.ring->lost_pending(), 2u);
  EXPECT_EQ(f.log.written.size(), 8u);  // nothing written for the drops, not even LOST
  // Free room for the LOST record but not for LOST + a 512-byte record.
  f.ring->store_tail(512);
  EXPECT_EQ(f.put(512), SimRing::Output::dropped_full);
  EXPECT_EQ(f.ring->lost_pending(), 3u);
  // Room for both: LOST {lost=3} first, then the record.
  f.ring->store_tail(2048);
  ASSERT_EQ(f.put(512), SimRing::Output::written);
  ASSERT_EQ(f.log.written.size(), 10u);
  EXPECT_EQ(f.log.written[8].type, PERF_RECORD_LOST);
  EXPECT_EQ(f.log.written[8].lost, 3u);
  EXPECT_EQ(f.log.written[9].type, PERF_RECORD_SAMPLE);
  EXPECT_EQ(f.log.lost_reported, 3u);
  EXPECT_EQ(f.log.dropped_full, 3u);
  EXPECT_EQ(f.ring->lost_pending(), 0u);
}

TEST(SimRing, RecordLargerThanTheRingNeverFits) {
  RingFixture f(4096);
  EXPECT_EQ(f.put(4096 + 8), SimRing::Output::dropped_too_big);
  EXPECT_EQ(f.log.dropped_too_big, 1u);
  EXPECT_EQ(f.put(4096 - 56), SimRing::Output::written);  // LOST (56) + record fill it exactly
  EXPECT_EQ(f.log.written.front().lost, 1u);
  EXPECT_EQ(f.probes.count(Probe::record_never_fits), 1u);
}

TEST(SimRing, PausedOutputDropsAndCounts) {
  RingFixture f(4096);
  f.ring->set_paused(true);
  EXPECT_EQ(f.put(64), SimRing::Output::dropped_paused);
  EXPECT_FALSE(f.ring->flush_lost(0));  // still paused
  f.ring->set_paused(false);
  EXPECT_TRUE(f.ring->flush_lost(0));
  ASSERT_EQ(f.log.written.size(), 1u);
  EXPECT_EQ(f.log.written[0].lost, 1u);
  EXPECT_EQ(f.log.dropped_paused, 1u);
}

TEST(SimRing, RecordBodyWrapsButHeaderNeverStraddles) {
  RingFixture f(4096);
  ASSERT_EQ(f.put(4000), SimRing::Output::written);
  f.ring->store_tail(4000);
  ASSERT_EQ(f.put(200), SimRing::Output::written);  // 4000..4200 crosses 4096
  EXPECT_EQ(f.probes.count(Probe::wrap_inside_record), 1u);
  for (const model::WrittenRecord& r : f.log.written) {
    EXPECT_LE((r.position & 4095) + 8, 4096u) << "header straddles at " << r.position;
  }
  // The bytes in the ring, read in two parts, are the record.
  std::vector<std::byte> copy(200);
  const auto data = f.ring->data();
  std::memcpy(copy.data(), data.data() + 4000, 96);
  std::memcpy(copy.data() + 96, data.data(), 104);
  EXPECT_EQ(0, std::memcmp(copy.data(), f.log.bytes.data() + f.log.written[1].offset, 200));
}

TEST(SimRing, WakeupEveryNRecords) {
  RingFixture f(65536, core::RingMode::normal, 3, 65536);
  int wakeups = 0;
  for (int i = 0; i < 9; i++) {
    f.put(64);
    wakeups += f.ring->take_wakeup();
  }
  EXPECT_EQ(wakeups, 3);
  EXPECT_EQ(f.probes.count(Probe::wakeup_events), 3u);
}

TEST(SimRing, WakeupWhenBytesPassTheWatermark) {
  // Default watermark: half of 8192. A wakeup fires once the bytes written
  // pass the mark by more than the watermark; the mark then moves up by one
  // watermark.
  RingFixture f(8192);
  std::vector<int> woke_at;
  for (int i = 1; i <= 150; i++) {
    f.put(64);
    if (f.ring->take_wakeup()) woke_at.push_back(i * 64);
    f.ring->store_tail(f.ring->head());
  }
  EXPECT_EQ(woke_at, (std::vector<int>{4096 + 64, 8192 + 64}));
  EXPECT_EQ(f.probes.count(Probe::wakeup_watermark), 2u);
}

TEST(SimRing, BackwardWritesDownFromHeadAndOverwrites) {
  RingFixture f(4096, core::RingMode::backward);
  ASSERT_EQ(f.put(64), SimRing::Output::written);
  EXPECT_EQ(f.ring->head(), std::uint64_t{0} - 64);
  ASSERT_EQ(f.put(128), SimRing::Output::written);
  EXPECT_EQ(f.ring->head(), std::uint64_t{0} - 192);
  EXPECT_EQ(f.log.written[1].position, f.ring->head());
  // No tail: it keeps writing past one ring size, overwriting.
  for (int i = 0; i < 100; i++) ASSERT_EQ(f.put(64), SimRing::Output::written);
  EXPECT_GT(f.probes.count(Probe::overwrite_unread), 0u);
  EXPECT_EQ(f.log.dropped(), 0u);
}

TEST(SimRing, DisableReportsPendingDropsIfTheyFitElseLogsThem) {
  RingFixture f(4096);
  for (int i = 0; i < 8; i++) f.put(512);
  f.put(512);
  f.ring->disable(0);
  EXPECT_EQ(f.log.dropped_unreported, 1u);
  EXPECT_EQ(f.log.lost_reported, 0u);

  RingFixture g(4096);
  for (int i = 0; i < 8; i++) g.put(512);
  g.put(512);
  g.ring->store_tail(512);
  g.ring->disable(0);
  EXPECT_EQ(g.log.dropped_unreported, 0u);
  EXPECT_EQ(g.log.lost_reported, 1u);
}

}  // namespace
}  // namespace ringsim::sim
