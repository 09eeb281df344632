// RapidCheck properties of the staging buffer (core/staging.h), driven by
// random sequences of stage (a chunk of whole records), end a round, note
// a gap, and write (the writing side takes one batch), with a buffer small
// enough that chunks wrap and the reading side meets backpressure (its
// waits let the writing side take a batch, as the writer thread would):
//   - the writing side gets exactly the staged bytes, in order, each batch
//     whole records that walk to the counts it carries (never torn at the
//     buffer's end);
//   - a finished-round marker is written only at a data position where the
//     reading side ended a round that read every ring up to its head;
//   - notes arrive in order; stats count chunks, bytes, and every wait for
//     room (checked against the waits the test saw);
//   - after the writer fails, the reading side stops and every staged,
//     unwritten chunk is counted as dropped.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <rapidcheck/state.h>

#include <cstring>
#include <functional>
#include <set>
#include <vector>

#include "core/records.h"
#include "core/staging.h"

namespace ringsim {
namespace {

using core::StagedBatch;
using core::StagedKind;
using core::StagingSide;

// Single-threaded: a wait for room lets the writing side take one batch.
struct TestSync {
  struct Guard {
    explicit Guard(TestSync&) {}
  };
  std::function<bool()> on_space_wait;  // false: give up (as a cancelled wait)
  std::uint64_t space_waits = 0;
  std::uint64_t now = 0;
  bool wait(Guard&, StagingSide side, std::uint64_t timeout_ns) {
    now += timeout_ns;
    if (side == StagingSide::data) return false;  // the test never lets the writer wait
    space_waits++;
    return on_space_wait ? on_space_wait() : false;
  }
  void notify(StagingSide) {}
  std::uint64_t now_ns() { return ++now; }
};

using TestStaging = core::Staging<TestSync>;

// The writing side's view, and what the reading side did.
struct World {
  TestSync sync;
  std::unique_ptr<TestStaging> staging;
  std::vector<std::byte> staged;                 // every staged byte, in order
  std::vector<std::byte> written;                // what the writing side got
  std::set<std::uint64_t> drained_round_ends;    // data positions of rounds that read everything
  std::vector<std::uint64_t> markers;            // data positions of the markers written
  std::vector<std::uint64_t> gaps_staged, gaps_written;
  std::uint64_t next_value = 1;
  core::RecordCounts staged_counts;

  // One batch to the writer. false: nothing staged.
  bool write_one() {
    if (staging->queued() == 0) return false;
    StagedBatch b;
    RC_ASSERT(staging->next(b));
    switch (b.kind) {
      case StagedKind::chunks: {
        core::RecordCounts counts;
        const core::WalkResult walk = core::walk_records(b.data, counts);
        RC_ASSERT(walk.error == core::RecordError::none);
        RC_ASSERT(counts == b.counts);
        written.insert(written.end(), b.data.begin(), b.data.end());
        break;
      }
      case StagedKind::round:
        if (b.all_drained) markers.push_back(written.size());
        break;
      case StagedKind::gap:
        gaps_written.push_back(b.range.begin);
        break;
      case StagedKind::corrupt:
        RC_FAIL("no corrupt notes staged");
    }
    staging->done(b);
    return true;
  }
};

// The checks need no model state: the world records what it did.
struct Model {};

// Writes records of `sizes` into buffer (from acquire()) while they fit,
// and commits them as one chunk.
void stage_records(World& w, std::span<std::byte> buffer, const std::vector<std::uint16_t>& sizes) {
  std::uint64_t at = 0;
  for (const std::uint16_t size : sizes) {
    if (at + size > buffer.size()) break;
    perf_event_header h{};
    h.type = PERF_RECORD_SAMPLE;
    h.size = size;
    std::memcpy(buffer.data() + at, &h, sizeof h);
    for (std::uint64_t k = sizeof h; k < size; k += 8) {
      const std::uint64_t v = w.next_value++;
      std::memcpy(buffer.data() + at + k, &v, 8);
    }
    at += size;
  }
  core::RecordCounts counts;
  RC_ASSERT(core::walk_records(std::span<const std::byte>(buffer.data(), at), counts).error ==
            core::RecordError::none);
  w.staged.insert(w.staged.end(), buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(at));
  w.staged_counts.add(counts);
  RC_ASSERT(w.staging->commit(0, at, counts) == 0);
}

struct Stage : rc::state::Command<Model, World> {
  std::vector<std::uint16_t> sizes = *rc::gen::container<std::vector<std::uint16_t>>(
      *rc::gen::inRange(1, 6), rc::gen::map(rc::gen::inRange(1, 40), [](int k) { return std::uint16_t(8 * k); }));
  void run(const Model&, World& w) const override {
    const std::span<std::byte> buffer = w.staging->acquire(0);
    RC_ASSERT(!buffer.empty());
    stage_records(w, buffer, sizes);
  }
  void show(std::ostream& os) const override { os << "Stage(" << sizes.size() << " records)"; }
};

// Stages a chunk that fills its whole reservation (chunk_bytes_max: a full
// ring, a wrapped AUX snapshot with its header), records of up to 320
// bytes. Such chunks end exactly at the buffer's end whenever the buffer
// holds a whole number of them (issue 23).
struct StageFull : rc::state::Command<Model, World> {
  std::uint16_t record_max = static_cast<std::uint16_t>(8 * *rc::gen::inRange(1, 41));
  void run(const Model&, World& w) const override {
    const std::span<std::byte> buffer = w.staging->acquire(0);
    RC_ASSERT(!buffer.empty());
    std::vector<std::uint16_t> sizes;
    for (std::uint64_t left = buffer.size(); left > 0;) {
      sizes.push_back(static_cast<std::uint16_t>(std::min<std::uint64_t>(left, record_max)));
      left -= sizes.back();
    }
    stage_records(w, buffer, sizes);
  }
  void show(std::ostream& os) const override { os << "StageFull(records of " << record_max << " bytes)"; }
};

struct Round : rc::state::Command<Model, World> {
  bool drained = *rc::gen::arbitrary<bool>();
  void run(const Model&, World& w) const override {
    RC_ASSERT(w.staging->end_round(drained) == 0);
    if (drained) w.drained_round_ends.insert(w.staged.size());
  }
  void show(std::ostream& os) const override { os << "Round(" << drained << ")"; }
};

struct Gap : rc::state::Command<Model, World> {
  void run(const Model&, World& w) const override {
    w.gaps_staged.push_back(w.staged.size());
    w.staging->note_gap(0, core::PositionRange{w.staged.size(), w.staged.size() + 8}, 0);
  }
  void show(std::ostream& os) const override { os << "Gap"; }
};

struct Write : rc::state::Command<Model, World> {
  void run(const Model&, World& w) const override { w.write_one(); }
  void show(std::ostream& os) const override { os << "Write"; }
};

World make_world(std::uint64_t chunk_max, std::uint64_t multiple, std::uint64_t batch_max,
                 std::uint32_t full_waits_max = 4) {
  World w;
  core::StagingOptions o;
  o.chunk_bytes_max = chunk_max;
  o.bytes = chunk_max * multiple;
  o.batch_bytes_max = batch_max;
  o.full_waits_max = full_waits_max;
  w.staging = std::make_unique<TestStaging>(w.sync, o);
  return w;
}

RC_GTEST_PROP(Staging, DeliversEveryByteWholeAndInOrder, ()) {
  const std::uint64_t chunk_max = 8 * *rc::gen::inRange<std::uint64_t>(40, 300);
  const std::uint64_t multiple = *rc::gen::inRange<std::uint64_t>(2, 5);
  const std::uint64_t batch_max = chunk_max * *rc::gen::inRange<std::uint64_t>(1, 4);
  // Each wait lets the writer take one batch (notes and rounds included).
  World w = make_world(chunk_max, multiple, batch_max, 100'000);
  w.sync.on_space_wait = [&w] { return w.write_one(); };
  rc::state::check(Model{}, w, rc::state::gen::execOneOfWithArgs<Stage, Stage, StageFull, Round, Round, Gap, Write>());
  // Drain the rest.
  for (int i = 0; i < 1'000'000 && w.write_one(); i++) {
  }
  w.staging->close();
  StagedBatch end;
  RC_ASSERT(!w.staging->next(end));
  RC_ASSERT(w.written == w.staged);
  for (const std::uint64_t m : w.markers) RC_ASSERT(w.drained_round_ends.count(m) == 1);
  RC_ASSERT(w.gaps_written == w.gaps_staged);
  const core::StagingStats s = w.staging->stats();
  RC_ASSERT(s.bytes == w.staged.size());
  RC_ASSERT(s.bytes_written == w.staged.size());
  RC_ASSERT(s.chunks == s.chunks_written);
  RC_ASSERT(s.records == w.staged_counts);
  RC_ASSERT(s.full_waits == w.sync.space_waits);
  RC_ASSERT(s.fill_max <= chunk_max * multiple);
  RC_ASSERT(s.error == 0);
  RC_ASSERT(!s.drops.any());
  RC_TAG(s.wrap_skips > 0 ? "wrapped" : "no wrap");
  RC_TAG(s.full > 0 ? "backpressure" : "no backpressure");
  RC_TAG(s.end_cuts > 0 ? "batch cut at the end" : "no cut");
}

// Stages one chunk of a single record of `size` bytes.
void stage_one(World& w, std::uint16_t size) {
  const std::span<std::byte> b = w.staging->acquire(0);
  ASSERT_EQ(b.size(), w.staging->options().chunk_bytes_max);
  perf_event_header h{PERF_RECORD_SAMPLE, 0, size};
  std::memcpy(b.data(), &h, sizeof h);
  std::memset(b.data() + sizeof h, size, size - sizeof h);
  core::RecordCounts counts;
  ASSERT_EQ(core::walk_records(std::span<const std::byte>(b.data(), size), counts).error, core::RecordError::none);
  w.staged.insert(w.staged.end(), b.begin(), b.begin() + size);
  ASSERT_EQ(w.staging->commit(0, size, counts), 0);
}

// A chunk that would cross the end starts at the beginning; the skipped
// bytes are counted; every batch is whole.
TEST(Staging, ChunkNeverCrossesTheEnd) {
  World w = make_world(64, 2, 64);  // 128 bytes
  stage_one(w, 40);  // [0, 40)
  stage_one(w, 24);  // [40, 64)
  stage_one(w, 16);  // [64, 80)
  ASSERT_TRUE(w.write_one());  // [0, 64): both first chunks, one batch
  // A 64-byte reservation at 80 would cross the end: it starts at 128
  // (offset 0), skipping 48 bytes, with room since 64 bytes were freed.
  stage_one(w, 8);
  const core::StagingStats s = w.staging->stats();
  EXPECT_EQ(s.wrap_skips, 1u);
  EXPECT_EQ(s.wrap_skip_bytes, 128u - 80u);
  EXPECT_EQ(s.full, 0u);
  while (w.write_one()) {
  }
  EXPECT_EQ(w.written, w.staged);
  EXPECT_EQ(w.staging->stats().writes, 3u);
}

// A chunk of the largest size that ends exactly at the buffer's end is
// followed by one at the beginning: adjacent positions, not adjacent
// bytes. The writing side takes them in two batches, never one that runs
// past the end (issue 23: a wrapped AUX snapshot there tore the batch and
// read past the buffer).
TEST(Staging, ChunkEndingAtTheEndIsNotBatchedWithTheNext) {
  World w = make_world(64, 2, 128);  // 128 bytes, batches of up to two chunks
  stage_one(w, 64);                  // [0, 64)
  ASSERT_EQ(w.staging->end_round(true), 0);
  ASSERT_TRUE(w.write_one());  // [0, 64); the round stays queued (the buffer is not empty: no restart at 0)
  stage_one(w, 64);            // [64, 128): ends at the end
  stage_one(w, 8);             // [128, 136): offset 0
  ASSERT_TRUE(w.write_one());  // the round
  StagedBatch b;
  ASSERT_TRUE(w.staging->next(b));
  EXPECT_EQ(b.chunks, 1u);
  EXPECT_EQ(b.data.size(), 64u);
  w.written.insert(w.written.end(), b.data.begin(), b.data.end());
  w.staging->done(b);
  while (w.write_one()) {
  }
  EXPECT_EQ(w.written, w.staged);
  const core::StagingStats s = w.staging->stats();
  EXPECT_EQ(s.writes, 3u);
  EXPECT_EQ(s.end_cuts, 1u);
  EXPECT_EQ(s.wrap_skips, 0u);
}

// Full: the reading side waits while the writing side frees room (each
// wait counted); an empty buffer starts again at the beginning (no skip).
TEST(Staging, FullWaitsForTheWriter) {
  World w = make_world(64, 2, 64);
  w.sync.on_space_wait = [&w] { return w.write_one(); };
  stage_one(w, 40);  // [0, 40)
  stage_one(w, 40);  // [40, 80)
  stage_one(w, 8);   // needs both written: two waits, then starts at 128
  const core::StagingStats s = w.staging->stats();
  EXPECT_EQ(s.full, 1u);
  EXPECT_EQ(s.full_waits, 2u);
  EXPECT_EQ(w.sync.space_waits, 2u);
  EXPECT_EQ(s.wrap_skips, 0u);
  while (w.write_one()) {
  }
  EXPECT_EQ(w.written, w.staged);
}

// Full, and the writing side frees nothing: the reading side gives up
// after full_waits_max waits with ETIMEDOUT; what it staged stays queued
// for the writing side (a slow writer, not a failed one, still writes it).
TEST(Staging, BackpressureIsCountedAndBounded) {
  World w = make_world(64, 2, 64);
  w.sync.on_space_wait = [] { return true; };  // a writer that never writes
  stage_one(w, 64);
  stage_one(w, 64);
  EXPECT_TRUE(w.staging->acquire(0).empty());
  const core::StagingStats s = w.staging->stats();
  EXPECT_EQ(s.error, ETIMEDOUT);
  EXPECT_EQ(s.full, 1u);
  EXPECT_EQ(s.full_waits, 4u);
  EXPECT_EQ(w.sync.space_waits, 4u);
  EXPECT_NE(w.staging->error_context().find("freed no room"), std::string::npos);
  EXPECT_EQ(w.staging->queued(), 2u);
  while (w.write_one()) {
  }
  EXPECT_EQ(w.written, w.staged);
  w.staging->close();
  StagedBatch none;
  EXPECT_FALSE(w.staging->next(none));
}

// The writer fails: the reading side's next acquire gives nothing, a
// commit in hand is counted as dropped, and every staged chunk the writer
// then takes is counted, not written; notes still pass.
TEST(Staging, WriterFailureStopsTheReaderAndCountsWhatWasStaged) {
  World w = make_world(64, 4, 64);
  for (int i = 0; i < 3; i++) stage_one(w, 32);
  w.staging->note_gap(0, core::PositionRange{0, 8}, 0);
  StagedBatch b;
  ASSERT_TRUE(w.staging->next(b));  // the writer holds a batch (two chunks)...
  ASSERT_EQ(b.chunks, 2u);
  w.staging->fail(EIO, "test");     // ...fails writing it (its own to count)...
  w.staging->done(b, true);
  EXPECT_TRUE(w.staging->acquire(0).empty());
  EXPECT_EQ(w.staging->end_round(true), -EIO);
  EXPECT_EQ(w.staging->flush(), -EIO);
  StagedBatch rest;
  ASSERT_TRUE(w.staging->next(rest));  // ...then counts the third chunk
  EXPECT_EQ(rest.kind, StagedKind::chunks);
  w.staging->done(rest, false);
  StagedBatch gap;
  ASSERT_TRUE(w.staging->next(gap));  // the note still passes
  EXPECT_EQ(gap.kind, StagedKind::gap);
  w.staging->done(gap);
  const core::StagingStats s = w.staging->stats();
  EXPECT_EQ(s.error, EIO);
  EXPECT_EQ(s.drops[core::DropCause::output_error].records.records, 1u);
  EXPECT_EQ(s.bytes, s.bytes_written + s.drops[core::DropCause::output_error].records.bytes);
}

// The writing side's loop: a writer that fails stops the reading side;
// the rest of what is staged is counted, byte for byte.
struct FailingWriter {
  int writes_left = 1;
  std::uint64_t notes = 0;
  int write_staged(std::span<const std::byte>, const core::RecordCounts&) { return writes_left-- > 0 ? 0 : -ENOSPC; }
  int end_round(bool) { return 0; }
  void note_gap(std::size_t, core::PositionRange, std::uint64_t) { notes++; }
  void note_corrupt(std::size_t, core::PositionRange, core::ReadStatus) { notes++; }
};

TEST(Staging, DrainStopsAtTheWritersError) {
  World w = make_world(64, 16, 64);
  for (int i = 0; i < 4; i++) {
    stage_one(w, 64);
    ASSERT_EQ(w.staging->end_round(true), 0);
  }
  w.staging->note_gap(0, core::PositionRange{0, 8}, 0);
  w.staging->close();
  FailingWriter writer;
  EXPECT_EQ(core::drain_staging(*w.staging, writer), -ENOSPC);
  const core::StagingStats s = w.staging->stats();
  EXPECT_EQ(s.error, ENOSPC);
  EXPECT_EQ(s.bytes_written, 128u);  // the written batch and the failed one (the writer counts that)
  EXPECT_EQ(s.drops[core::DropCause::output_error].records.bytes, 128u);
  // One error cut one file: one event, not one per batch dropped (a
  // recorder's summary said "in N files" with one file on disk).
  EXPECT_EQ(s.drops[core::DropCause::output_error].events, 1u);
  EXPECT_EQ(writer.notes, 1u);
  EXPECT_TRUE(w.staging->acquire(0).empty());
}

}  // namespace
}  // namespace ringsim
