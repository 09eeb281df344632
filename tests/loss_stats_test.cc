// The loss figures of both perf.data readers (core/perf_data_reader.h,
// model/perf_data_file.h) stay fractions whatever the counts.
#include <gtest/gtest.h>

#include <cstdint>

#include "core/perf_data_reader.h"
#include "model/perf_data_file.h"

namespace ringsim {
namespace {

// Found by //tests/fuzz:perf_data_fuzz (corpus entry
// crash-lost-sum-overflow): a PERF_RECORD_LOST count of 2^64 - 1 wrapped
// samples + lost, and the lost fraction came out far above 1.
TEST(LossStats, LostFractionOfHugeLostCountsStaysWithinOne) {
  for (const std::uint64_t lost : {UINT64_MAX, UINT64_MAX - 5, std::uint64_t{1} << 63}) {
    model::LossStats m;
    m.samples = 10;
    m.lost_sum = lost;
    EXPECT_GE(m.lost_fraction(), 0.99) << lost;
    EXPECT_LE(m.lost_fraction(), 1.0) << lost;
    core::LossStats c;
    c.records.samples = 10;
    c.records.lost_sum = lost;
    EXPECT_EQ(c.lost_fraction(), m.lost_fraction()) << lost;
  }
}

TEST(LossStats, LostFractionOfOrdinaryCounts) {
  model::LossStats m;
  EXPECT_EQ(m.lost_fraction(), 0.0);
  m.samples = 3;
  m.lost_sum = 1;
  EXPECT_DOUBLE_EQ(m.lost_fraction(), 0.25);
  core::LossStats c;
  EXPECT_EQ(c.lost_fraction(), 0.0);
  c.records.samples = 3;
  c.records.lost_sum = 1;
  EXPECT_DOUBLE_EQ(c.lost_fraction(), 0.25);
}

}  // namespace
}  // namespace ringsim
