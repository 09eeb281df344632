// The core's ring reader (core/ring_reader.h) against a simulated kernel
// ring, driven step by step.
#include <gtest/gtest.h>

#include <cstring>

#include "core/records.h"
#include "core/ring_reader.h"
#include "core/testing/direct_mapping.h"
#include "core/testing/scripted_mapping.h"
#include "model/oracle.h"
#include "tests/test_util.h"

namespace ringsim::core {
namespace {

using DirectMapping = testing::DirectMapping<sim::SimRing>;
using ringsim::testing::RingFixture;

TEST(RingReader, ChunkAcrossTheEndIsCopiedInTwoPartsByteForByte) {
  RingFixture f(4096);
  DirectMapping m(*f.ring);
  RingReader<DirectMapping> reader(m, RingMode::normal);
  ASSERT_EQ(f.put(4000), sim::SimRing::Output::written);
  PositionRange chunk;
  std::vector<std::byte> buffer(4096);
  ASSERT_EQ(reader.available(chunk), ReadStatus::ready);
  reader.copy(chunk, buffer);
  reader.consume(chunk.end);
  EXPECT_EQ(f.ring->tail(), 4000u);
  ASSERT_EQ(f.put(200), sim::SimRing::Output::written);  // straddles the end
  ASSERT_EQ(f.put(48), sim::SimRing::Output::written);
  ASSERT_EQ(reader.available(chunk), ReadStatus::ready);
  EXPECT_EQ(chunk.begin, 4000u);
  EXPECT_EQ(chunk.end, 4248u);
  reader.copy(chunk, buffer);
  EXPECT_EQ(reader.stats().wrapped_chunks, 1u);
  EXPECT_EQ(0, std::memcmp(buffer.data(), f.log.bytes.data() + f.log.written[1].offset, 248));
  RecordCounts counts;
  const WalkResult walk = walk_records(std::span<const std::byte>(buffer.data(), chunk.bytes()), counts);
  EXPECT_EQ(walk.error, RecordError::none);
  EXPECT_EQ(counts.samples, 2u);
  reader.consume(chunk.end);
  EXPECT_EQ(reader.available(chunk), ReadStatus::empty);
}

TEST(RingReader, ReleasesSpaceOnlyWhenConsumed) {
  RingFixture f(4096);
  DirectMapping m(*f.ring);
  RingReader<DirectMapping> reader(m, RingMode::normal);
  // CIRC_SPACE leaves one byte free, so 8-aligned records fill 4088 of 4096.
  for (int i = 0; i < 7; i++) ASSERT_EQ(f.put(512), sim::SimRing::Output::written);
  ASSERT_EQ(f.put(504), sim::SimRing::Output::written);
  PositionRange chunk;
  std::vector<std::byte> buffer(4096);
  ASSERT_EQ(reader.available(chunk), ReadStatus::ready);
  EXPECT_EQ(chunk.bytes(), 4088u);
  reader.copy(chunk, buffer);
  EXPECT_EQ(m.tail_stores, 0);
  EXPECT_EQ(f.put(64), sim::SimRing::Output::dropped_full);  // copied is not released
  reader.consume(chunk.end);
  EXPECT_EQ(m.tail_stores, 1);
  EXPECT_EQ(f.put(64), sim::SimRing::Output::written);
}

TEST(RingReader, CorruptHeadIsReportedNotRead) {
  RingFixture f(4096);
  DirectMapping m(*f.ring);
  RingReader<DirectMapping> reader(m, RingMode::normal);
  PositionRange chunk;
  f.ring->set_head_for_test(12);
  EXPECT_EQ(reader.available(chunk), ReadStatus::head_unaligned);
  f.ring->set_head_for_test(4096 + 8);  // more than one ring ahead of tail 0
  EXPECT_EQ(reader.available(chunk), ReadStatus::head_past_ring);
  EXPECT_EQ(m.copies, 0);
  EXPECT_FALSE(reader.drops().any());  // the record loop counts a corrupt ring, once
}

// Backward: writes n records of `size`, returns their bytes newest last.
std::vector<std::vector<std::byte>> fill_backward(RingFixture& f, int n, std::uint32_t size) {
  std::vector<std::vector<std::byte>> records;
  for (int i = 0; i < n; i++) {
    EXPECT_EQ(f.put(size), sim::SimRing::Output::written);
    const model::WrittenRecord& r = f.log.written.back();
    records.emplace_back(f.log.bytes.begin() + static_cast<std::ptrdiff_t>(r.offset),
                         f.log.bytes.begin() + static_cast<std::ptrdiff_t>(r.offset + r.size));
  }
  return records;
}

TEST(RingReader, SnapshotReturnsNewRecordsOldestFirstThenOnlyNewerOnes) {
  RingFixture f(4096, RingMode::backward);
  DirectMapping m(*f.ring);
  RingReader<DirectMapping> reader(m, RingMode::backward);
  std::vector<std::byte> buffer(4096);
  const auto first = fill_backward(f, 5, 64);
  Snapshot s = reader.snapshot(buffer);
  ASSERT_EQ(s.status, ReadStatus::ready);
  EXPECT_EQ(s.records, 5u);
  EXPECT_EQ(s.gap.bytes(), 0u);
  for (int i = 0; i < 5; i++) EXPECT_EQ(0, std::memcmp(buffer.data() + 64 * i, first[i].data(), 64)) << i;
  EXPECT_EQ(m.pause_calls, 2);  // paused and resumed
  EXPECT_FALSE(f.ring->paused());
  const auto second = fill_backward(f, 3, 128);
  s = reader.snapshot(buffer);
  ASSERT_EQ(s.status, ReadStatus::ready);
  EXPECT_EQ(s.records, 3u);
  for (int i = 0; i < 3; i++) EXPECT_EQ(0, std::memcmp(buffer.data() + 128 * i, second[i].data(), 128)) << i;
  s = reader.snapshot(buffer);
  EXPECT_EQ(s.status, ReadStatus::empty);
}

TEST(RingReader, SnapshotAfterFallingBehindReportsTheOverwrittenRange) {
  RingFixture f(4096, RingMode::backward);
  DirectMapping m(*f.ring);
  RingReader<DirectMapping> reader(m, RingMode::backward);
  std::vector<std::byte> buffer(4096);
  fill_backward(f, 100, 96);  // 9600 bytes: more than two rings
  const Snapshot s = reader.snapshot(buffer);
  ASSERT_EQ(s.status, ReadStatus::ready);
  // 4096 / 96 = 42 whole records fit within one ring from head.
  EXPECT_EQ(s.records, 42u);
  EXPECT_EQ(s.bytes, 42u * 96);
  EXPECT_EQ(s.gap.begin, s.head + 42 * 96);
  EXPECT_EQ(s.gap.end, 0u);  // back to where writing started
  EXPECT_EQ(reader.drops()[DropCause::overwritten].events, 1u);
  EXPECT_EQ(reader.drops()[DropCause::overwritten].records.bytes, s.gap.bytes());
  // The newest record is last in the buffer and is the last one written.
  EXPECT_EQ(0, std::memcmp(buffer.data() + 41 * 96, f.log.bytes.data() + f.log.written.back().offset, 96));
}

// A header no writer could have left (overwriting reached it, or it was
// damaged): what lies above it cannot be walked, so it is reported as an
// overwritten gap, not as a corrupt ring (perf's own backward walk stops
// there too).
TEST(RingReader, SnapshotStopsAtADamagedHeaderAndReportsTheRestAsAGap) {
  RingFixture f(4096, RingMode::backward);
  DirectMapping m(*f.ring);
  RingReader<DirectMapping> reader(m, RingMode::backward);
  std::vector<std::byte> buffer(4096);
  const auto records = fill_backward(f, 4, 64);
  // Damage the size of the second-newest record: 12 is not 8-aligned.
  const std::uint64_t index = (f.ring->head() + 64) & 4095;
  const std::uint16_t bad = 12;
  std::memcpy(f.ring->data_for_test().data() + index + 6, &bad, 2);
  const Snapshot s = reader.snapshot(buffer);
  ASSERT_EQ(s.status, ReadStatus::ready);
  EXPECT_EQ(s.records, 1u);
  EXPECT_EQ(0, std::memcmp(buffer.data(), records.back().data(), 64));  // the newest, intact
  EXPECT_EQ(s.gap.begin, f.ring->head() + 64);
  EXPECT_EQ(s.gap.end, 0u);
  EXPECT_EQ(reader.stats().damaged_headers, 1u);
  EXPECT_EQ(reader.drops()[DropCause::overwritten].records.bytes, 192u);
  EXPECT_FALSE(f.ring->paused());
}

// A nested writer's 8 KiB record (two areas) under a 1528-byte record whose
// writer it interrupted: that writer copies last, onto the nested record's
// place, header on header. The reader meets the outer record at head and
// cannot tell it from one written there (the ring holds the same bytes
// either way): it delivers it and reports the gap from where it ends. The
// oracle accepts that (its aliased_record) and counts it; it found the
// shape in the soak on d247f50 (seed 576891404678857).
TEST(RingReader, ANestedRecordOfWholeAreasLeavesItsWritersRecordAtItsPlace) {
  RingFixture f(4096, RingMode::backward);
  const std::vector<std::byte> outer = ringsim::testing::sample(1528, 1);
  const std::vector<std::byte> inner = ringsim::testing::sample(8192, 2);
  const sim::SimRing::Handle h = f.ring->begin(f.event, outer.size(), true, 0);
  ASSERT_EQ(f.ring->output(f.event, inner, 1), sim::SimRing::Output::written);  // nested
  f.ring->write(h, outer, 2);
  f.ring->end(h, 3);
  DirectMapping m(*f.ring);
  RingReader<DirectMapping> reader(m, RingMode::backward);
  std::vector<std::byte> buffer(4096);
  const Snapshot s = reader.snapshot(buffer);
  ASSERT_EQ(s.status, ReadStatus::ready);
  EXPECT_EQ(s.head, 0 - std::uint64_t{1528 + 8192});
  ASSERT_EQ(s.bytes, 1528u);
  EXPECT_EQ(0, std::memcmp(buffer.data(), outer.data(), outer.size()));
  EXPECT_EQ(s.gap.begin, s.head + 1528);  // inside the nested record
  EXPECT_EQ(s.gap.end, 0u);
  model::RunOutput out;
  out.cpus.resize(1);
  out.cpus[0].bytes.assign(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(s.bytes));
  out.cpus[0].gaps.push_back(model::Gap{s.gap.begin, s.gap.end, s.gap_head});
  const model::OracleReport report = model::check(f.kernel_log(), out);
  for (const model::Violation& v : report.violations) ADD_FAILURE() << v.property << ": " << v.detail;
  EXPECT_EQ(report.records_aliased, 1u);
  EXPECT_EQ(report.bytes_overwritten, 8192u);  // the nested record, all the gap holds
}

TEST(RingReader, SnapshotRefusesWhenPauseFails) {
  RingFixture f(4096, RingMode::backward);
  DirectMapping m(*f.ring);
  m.fail_pause = true;
  RingReader<DirectMapping> reader(m, RingMode::backward);
  std::vector<std::byte> buffer(4096);
  fill_backward(f, 4, 64);
  EXPECT_EQ(reader.snapshot(buffer).status, ReadStatus::pause_failed);
  EXPECT_EQ(m.copies, 0);
}

// A write that lands during the copy (a writer past its pause check, or a
// ring that was never paused) may overwrite the oldest records being
// copied. The reader loads head again after the copy and drops the oldest
// records the move could have reached, reporting them as a gap: what it
// returns is intact.
TEST(RingReader, AWriteDuringTheCopyDropsTheOldestRecordsItMayHaveReached) {
  RingFixture f(4096, RingMode::backward);
  DirectMapping m(*f.ring);
  RingReader<DirectMapping> reader(m, RingMode::backward);
  std::vector<std::byte> buffer(4096);
  fill_backward(f, 60, 64);  // a full ring and more
  bool wrote = false;
  m.on_copy = [&](std::size_t length) {
    if (!wrote && length > 8) {  // a record copy, not a header read of the walk
      wrote = true;
      f.ring->set_paused(false);
      for (int i = 0; i < 8; i++) f.put(64);
    }
  };
  const Snapshot s = reader.snapshot(buffer);
  ASSERT_EQ(s.status, ReadStatus::ready);
  ASSERT_TRUE(wrote);
  EXPECT_EQ(reader.stats().late_writes, 1u);
  EXPECT_EQ(s.records, 64u - 8);  // one area of 64-byte records, less the 8 the writes could reach
  EXPECT_EQ(s.gap_head, f.ring->head());
  for (std::uint64_t i = 0; i < s.records; i++) {
    bool found = false;
    for (const model::WrittenRecord& r : f.log.written) {
      found |= std::memcmp(buffer.data() + 64 * i, f.log.bytes.data() + r.offset, 64) == 0;
    }
    EXPECT_TRUE(found) << "record " << i << " of the snapshot is torn";
  }
}

// Found by //tests/fuzz:ring_reader_fuzz (corpus entry
// crash-backward-lost-too-small): the overwrite walk accepted a
// PERF_RECORD_LOST of 8 bytes, which the record walker refuses, so the
// record loop's walk of the copy failed and the whole snapshot was dropped
// as a ring that moved (snapshot_changed). The walk now stops at any header
// the walker refuses (core::header_error), as at any other header
// overwriting reached: the records before it are delivered and walk, the
// rest is a gap.
TEST(RingReader, SnapshotWalkStopsAtHeadersTheRecordWalkerRefuses) {
  for (const std::uint32_t type : {std::uint32_t{PERF_RECORD_LOST}, kRecordAuxtrace}) {
    SCOPED_TRACE(type);
    testing::ScriptedMapping m(128, 0, false);
    const auto put = [&](std::uint64_t position, std::uint32_t record_type, std::uint16_t size) {
      const perf_event_header h{record_type, 0, size};
      std::memcpy(m.data.data() + (position & 127), &h, sizeof h);
    };
    // Newest at head: a 40-byte sample; older, above it, the bad header.
    const std::uint16_t bad_size = type == PERF_RECORD_LOST ? 8 : 48;
    m.head = 0 - 40 - bad_size;
    put(m.head, PERF_RECORD_SAMPLE, 40);
    put(m.head + 40, type, bad_size);
    RingReader<testing::ScriptedMapping> reader(m, RingMode::backward);
    std::vector<std::byte> buffer(128);
    const Snapshot s = reader.snapshot(buffer);
    ASSERT_EQ(s.status, ReadStatus::ready);
    EXPECT_EQ(s.records, 1u);
    EXPECT_EQ(s.bytes, 40u);
    EXPECT_EQ(s.gap, (PositionRange{m.head + 40, 0}));
    EXPECT_EQ(reader.stats().damaged_headers, 1u);
    RecordCounts counts;
    EXPECT_EQ(walk_records(std::span<const std::byte>(buffer.data(), s.bytes), counts).error, RecordError::none);
    EXPECT_EQ(counts.records, s.records);
    EXPECT_FALSE(m.paused());
  }
}

}  // namespace
}  // namespace ringsim::core
