// The record walker (core/records.h): counts, and every kind of corrupt
// header stops the walk with its cause and the valid prefix.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/records.h"
#include "sim/sample.h"
#include "tests/test_util.h"

namespace ringsim::core {
namespace {

std::vector<std::byte> stream(std::initializer_list<std::uint32_t> sizes) {
  std::vector<std::byte> out;
  std::uint64_t sequence = 0;
  for (std::uint32_t size : sizes) {
    const auto s = testing::sample(size, sequence++);
    out.insert(out.end(), s.begin(), s.end());
  }
  return out;
}

void set_size(std::vector<std::byte>& bytes, std::size_t offset, std::uint16_t size) {
  std::memcpy(bytes.data() + offset + 6, &size, 2);
}

TEST(Records, CountsSamplesAndLostSums) {
  std::vector<std::byte> bytes = stream({48, 64, 128});
  std::vector<std::byte> lost(sim::kLostBytes);
  sim::build_lost(lost, sim::EventIdentity{}, 5, 17);
  bytes.insert(bytes.end(), lost.begin(), lost.end());
  RecordCounts counts;
  int seen = 0;
  const WalkResult walk = walk_records(bytes, counts, [&](const perf_event_header&, std::span<const std::byte>) { seen++; });
  EXPECT_EQ(walk.error, RecordError::none);
  EXPECT_EQ(walk.valid_bytes, bytes.size());
  EXPECT_EQ(seen, 4);
  EXPECT_EQ(counts.records, 4u);
  EXPECT_EQ(counts.samples, 3u);
  EXPECT_EQ(counts.lost_records, 1u);
  EXPECT_EQ(counts.lost_sum, 17u);
  EXPECT_EQ(counts.bytes, bytes.size());
}

struct Corruption {
  std::uint16_t size;
  RecordError expected;
};

class RecordsCorrupt : public ::testing::TestWithParam<Corruption> {};

TEST_P(RecordsCorrupt, StopsAtTheBadHeaderWithItsCause) {
  std::vector<std::byte> bytes = stream({48, 64, 128});
  set_size(bytes, 48, GetParam().size);  // the second record
  RecordCounts counts;
  const WalkResult walk = walk_records(bytes, counts);
  EXPECT_EQ(walk.error, GetParam().expected);
  EXPECT_EQ(walk.valid_bytes, 48u);
  EXPECT_EQ(walk.bad_header.size, GetParam().size);
  EXPECT_EQ(counts.records, 1u);
}

INSTANTIATE_TEST_SUITE_P(Sizes, RecordsCorrupt,
                         ::testing::Values(Corruption{0, RecordError::size_zero},
                                           Corruption{4, RecordError::size_too_small},
                                           Corruption{60, RecordError::size_unaligned},
                                           Corruption{65528, RecordError::size_past_end}));

TEST(Records, TruncatedHeaderAtTheEnd) {
  std::vector<std::byte> bytes = stream({48});
  bytes.resize(52);
  RecordCounts counts;
  EXPECT_EQ(walk_records(bytes, counts).error, RecordError::truncated_header);
}

TEST(Records, LostRecordTooSmallForItsFields) {
  std::vector<std::byte> bytes(16);
  perf_event_header header{PERF_RECORD_LOST, 0, 16};
  std::memcpy(bytes.data(), &header, sizeof header);
  RecordCounts counts;
  EXPECT_EQ(walk_records(bytes, counts).error, RecordError::lost_too_small);
}

// Random bytes: the walk always ends, never reads past the buffer (ASan
// checks that), and what it calls valid is whole records.
TEST(Records, GarbageNeverLoopsOrOverruns) {
  std::uint64_t state = 12345;
  for (int trial = 0; trial < 2000; trial++) {
    std::vector<std::byte> bytes(8 * (1 + trial % 64));
    for (auto& b : bytes) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      b = std::byte(state >> 56);
      if (trial % 3 == 0) b &= std::byte{0x18};  // many small even sizes
    }
    RecordCounts counts;
    const WalkResult walk = walk_records(bytes, counts);
    EXPECT_LE(walk.valid_bytes, bytes.size());
    EXPECT_EQ(counts.bytes, walk.valid_bytes);
  }
}

}  // namespace
}  // namespace ringsim::core
