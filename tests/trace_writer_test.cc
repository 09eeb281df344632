// The trace writer (core/trace_writer.h) against a disk whose every outcome
// the test decides (core/testing/scripted_disk.h): the control-block state machine,
// restarts, back-off, hard errors, the valid prefix, rotation.
#include "core/drops.h"
#include "core/trace_writer.h"

#include <gtest/gtest.h>

#include "model/perf_data_file.h"
#include "sim/sample.h"
#include "core/testing/scripted_disk.h"
#include "tests/test_util.h"

namespace ringsim::core {
namespace {

using ringsim::core::testing::ScriptedDisk;

PerfDataHead head(std::uint32_t cpus) {
  EventDescription e;
  e.attr.type = PERF_TYPE_SOFTWARE;
  e.attr.sample_type = sim::kSampleType;
  e.attr.sample_id_all = 1;
  for (std::uint32_t i = 0; i < cpus; i++) e.ids.push_back(1000 + i);
  return PerfDataHead({e});
}

WriterOptions options(WriteMode mode, std::uint32_t cblocks, std::uint32_t mappings = 2) {
  WriterOptions o;
  o.mode = mode;
  o.cblocks = cblocks;
  o.mappings = mappings;
  o.buffer_bytes = 4096;
  return o;
}

// A chunk of samples of these sizes, for cpu.
std::vector<std::byte> chunk(std::initializer_list<std::uint32_t> sizes, std::uint32_t cpu, std::uint64_t first = 0) {
  std::vector<std::byte> out;
  for (std::uint32_t size : sizes) {
    const auto s = ringsim::testing::sample(size, first++, cpu);
    out.insert(out.end(), s.begin(), s.end());
  }
  return out;
}

RecordCounts counts_of(const std::vector<std::byte>& bytes) {
  RecordCounts counts;
  EXPECT_EQ(walk_records(bytes, counts).error, RecordError::none);
  return counts;
}

// acquire, copy in, commit: what the record loop does.
int push(TraceWriter<ScriptedDisk>& w, std::size_t mapping, const std::vector<std::byte>& bytes) {
  const std::span<std::byte> buffer = w.acquire(mapping);
  if (buffer.empty()) return -1;
  std::memcpy(buffer.data(), bytes.data(), bytes.size());
  return w.commit(mapping, bytes.size(), counts_of(bytes));
}

// The data section of file `index`, without FINISHED_ROUND records.
std::vector<std::byte> records_in(const ScriptedDisk& disk, std::size_t index, model::PerfDataFile* parsed = nullptr) {
  model::PerfDataFile f;
  const std::string problem = model::parse_perf_data(disk.files[index], f);
  EXPECT_EQ(problem, "");
  std::vector<std::byte> out;
  EXPECT_EQ(f.for_each_record([&](const model::PerfRecord& r) {
              if (r.type != kRecordFinishedRound) out.insert(out.end(), r.bytes.begin(), r.bytes.end());
            }),
            "");
  if (parsed) *parsed = f;
  return out;
}

TEST(TraceWriter, OptionsOutOfRangeAreErrorsNotClamped) {
  EXPECT_EQ(validate(options(WriteMode::aio, 0)), "cblocks: 0 is outside 1..4");
  EXPECT_EQ(validate(options(WriteMode::aio, 5)), "cblocks: 5 is outside 1..4");
  EXPECT_EQ(validate(options(WriteMode::aio, 4)), "");
}

TEST(TraceWriter, SerialWritesInOrderMarksRoundsAndFixesTheHeader) {
  ScriptedDisk disk(2);
  TraceWriter<ScriptedDisk> w(disk, options(WriteMode::serial, 1), head(2));
  ASSERT_EQ(w.start(), 0);
  const auto a = chunk({48, 64}, 0), b = chunk({128}, 1), c = chunk({48}, 0, 2);
  ASSERT_EQ(push(w, 0, a), 0);
  ASSERT_EQ(push(w, 1, b), 0);
  ASSERT_EQ(w.end_round(), 0);
  ASSERT_EQ(push(w, 0, c), 0);
  ASSERT_EQ(w.finish(), 0);
  model::PerfDataFile f;
  std::vector<std::byte> want = a;
  want.insert(want.end(), b.begin(), b.end());
  want.insert(want.end(), c.begin(), c.end());
  EXPECT_EQ(records_in(disk, 0, &f), want);
  EXPECT_EQ(f.data_size, want.size() + 8);  // one FINISHED_ROUND
  EXPECT_EQ(disk.files[0].size(), f.data_offset + f.data_size);
  EXPECT_EQ(w.stats().rounds_marked, 1u);
  EXPECT_EQ(w.stats().records.samples, 4u);
  EXPECT_EQ(w.references(0), 0u);
  EXPECT_EQ(disk.submits, 0);
}

// ftruncate(2) may be interrupted while it waits: the cut of the file to
// its valid prefix is tried again, as a write is; a hard error fails the
// recording and names the cut. (Found by ringsim-run on ringsim-record,
// seed 400268: exit 74 after an EINTR alone.)
TEST(TraceWriter, AnInterruptedCutIsTriedAgainAHardOneFails) {
  for (const int error : {EINTR, EIO}) {
    ScriptedDisk disk(2);
    disk.truncate_results = {-error, -error};
    TraceWriter<ScriptedDisk> w(disk, options(WriteMode::serial, 1), head(2));
    ASSERT_EQ(w.start(), 0);
    ASSERT_EQ(push(w, 0, chunk({48, 64}, 0)), 0);
    if (error == EINTR) {
      EXPECT_EQ(w.finish(), 0);
      EXPECT_EQ(disk.truncates, 3);
      EXPECT_EQ(disk.truncated_to, disk.files[0].size());
      EXPECT_EQ(w.stats().eintr_retries, 2u);
    } else {
      EXPECT_EQ(w.finish(), -EIO);
      EXPECT_EQ(disk.truncates, 1);
      EXPECT_NE(w.stats().error_context.find("cutting the file to its valid prefix"), std::string::npos)
          << w.stats().error_context;
    }
  }
}

TEST(TraceWriter, ShortWriteIsRestartedWithTheRemainder) {
  ScriptedDisk disk(2);
  TraceWriter<ScriptedDisk> w(disk, options(WriteMode::aio, 1), head(2));
  ASSERT_EQ(w.start(), 0);
  const auto a = chunk({512, 512}, 0);
  ASSERT_EQ(push(w, 0, a), 0);
  ASSERT_EQ(disk.in_flight.count(0), 1u);
  const std::uint64_t offset = disk.in_flight[0].offset;
  const std::byte* buffer = disk.in_flight[0].data;
  EXPECT_EQ(w.references(0), 1u);  // the write holds the mapping
  disk.complete(0, 300);
  ASSERT_EQ(w.end_round(), 0);     // reaps: resubmits the rest
  ASSERT_EQ(disk.in_flight.count(0), 1u);
  EXPECT_EQ(disk.in_flight[0].offset, offset + 300);
  EXPECT_EQ(disk.in_flight[0].size, a.size() - 300);
  EXPECT_EQ(disk.in_flight[0].data, buffer + 300);
  EXPECT_EQ(w.references(0), 1u);
  disk.complete(0, static_cast<std::int64_t>(a.size() - 300));
  ASSERT_EQ(w.finish(), 0);
  EXPECT_EQ(w.references(0), 0u);
  EXPECT_EQ(records_in(disk, 0), a);
  EXPECT_EQ(w.stats().short_writes_restarted, 1u);
  EXPECT_EQ(disk.bytes_put_twice, 0u);
}

TEST(TraceWriter, InterruptedWriteIsResubmittedWhole) {
  ScriptedDisk disk(2);
  TraceWriter<ScriptedDisk> w(disk, options(WriteMode::aio, 1), head(2));
  ASSERT_EQ(w.start(), 0);
  const auto a = chunk({256}, 1);
  ASSERT_EQ(push(w, 1, a), 0);
  const std::uint64_t offset = disk.in_flight[1].offset;
  disk.complete(1, -EINTR);
  ASSERT_EQ(w.end_round(), 0);
  ASSERT_EQ(disk.in_flight.count(1), 1u);
  EXPECT_EQ(disk.in_flight[1].offset, offset);
  EXPECT_EQ(disk.in_flight[1].size, a.size());
  disk.complete_all_full();
  ASSERT_EQ(w.finish(), 0);
  EXPECT_EQ(w.stats().eintr_retries, 1u);
  EXPECT_EQ(records_in(disk, 0), a);
}

TEST(TraceWriter, HardErrorIsReportedOnceAndNeverResubmitted) {
  ScriptedDisk disk(4);
  TraceWriter<ScriptedDisk> w(disk, options(WriteMode::aio, 2), head(2));
  ASSERT_EQ(w.start(), 0);
  const auto a = chunk({64}, 0), b = chunk({128}, 1), c = chunk({192}, 0, 1);
  ASSERT_EQ(push(w, 0, a), 0);
  ASSERT_EQ(push(w, 1, b), 0);
  ASSERT_EQ(push(w, 0, c), 0);
  // Out of order: c and a complete, b fails.
  disk.complete(1, static_cast<std::int64_t>(c.size()));  // slot 1: mapping 0's second cblock
  disk.complete(0, static_cast<std::int64_t>(a.size()));
  disk.complete(2, -ENOSPC);                              // slot 2: mapping 1
  const int submits = disk.submits;
  EXPECT_EQ(w.end_round(), -ENOSPC);
  EXPECT_EQ(disk.submits, submits);  // no resubmission
  EXPECT_EQ(w.stats().error, ENOSPC);
  EXPECT_NE(w.stats().error_context.find("write of 128 bytes"), std::string::npos) << w.stats().error_context;
  EXPECT_EQ(w.references(0), 0u);
  EXPECT_EQ(w.references(1), 0u);
  EXPECT_TRUE(w.acquire(0).empty());  // the recording has stopped
  EXPECT_EQ(w.finish(), -ENOSPC);
  // The file holds a and nothing after the hole: c was written but is cut.
  EXPECT_EQ(records_in(disk, 0), a);
  EXPECT_EQ(w.stats().drops[core::DropCause::output_error].records.samples, 2u);
  EXPECT_EQ(w.stats().drops[core::DropCause::output_error].records.bytes, b.size() + c.size());
  EXPECT_EQ(w.stats().drops[core::DropCause::output_error].events, 1u);
  EXPECT_EQ(disk.truncated_to, disk.files[0].size());
}

TEST(TraceWriter, EagainBacksOffThenWritesSynchronously) {
  ScriptedDisk disk(2);
  WriterOptions o = options(WriteMode::aio, 1);
  o.eagain_attempts_max = 5;
  TraceWriter<ScriptedDisk> w(disk, o, head(2));
  ASSERT_EQ(w.start(), 0);
  const int sync_before = disk.sync_writes;
  for (int i = 0; i < 5; i++) disk.submit_results.push_back(-EAGAIN);
  const auto a = chunk({96}, 0);
  ASSERT_EQ(push(w, 0, a), 0);
  EXPECT_EQ(w.stats().eagain_retries, 5u);
  EXPECT_EQ(w.stats().eagain_sync_fallbacks, 1u);
  // Doubling back-off: 10 + 20 + 40 + 80 + 160 us.
  EXPECT_EQ(disk.slept_ns, 310'000u);
  EXPECT_EQ(disk.sync_writes, sync_before + 1);
  EXPECT_EQ(w.references(0), 0u);
  ASSERT_EQ(w.finish(), 0);
  EXPECT_EQ(records_in(disk, 0), a);
}

TEST(TraceWriter, AcquireWaitsForAFreeControlBlock) {
  ScriptedDisk disk(1);
  TraceWriter<ScriptedDisk> w(disk, options(WriteMode::aio, 1, 1), head(1));
  ASSERT_EQ(w.start(), 0);
  const auto a = chunk({64}, 0), b = chunk({72}, 0, 1);
  ASSERT_EQ(push(w, 0, a), 0);
  int suspends_before_completion = 0;
  disk.on_suspend = [&](std::span<const std::uint32_t> slots) {
    ASSERT_EQ(slots.size(), 1u);
    if (++suspends_before_completion == 3) disk.complete(0, static_cast<std::int64_t>(a.size()));
  };
  ASSERT_EQ(push(w, 0, b), 0);  // waits (three suspends) for a's block
  EXPECT_EQ(w.stats().waits_for_cblock, 1u);
  EXPECT_EQ(disk.suspends, 3);
  disk.on_suspend = [&](std::span<const std::uint32_t>) { disk.complete_all_full(); };
  ASSERT_EQ(w.finish(), 0);
  std::vector<std::byte> want = a;
  want.insert(want.end(), b.begin(), b.end());
  EXPECT_EQ(records_in(disk, 0), want);
}

TEST(TraceWriter, WaitingForeverIsBounded) {
  ScriptedDisk disk(1);
  WriterOptions o = options(WriteMode::aio, 1, 1);
  o.suspends_max = 7;
  TraceWriter<ScriptedDisk> w(disk, o, head(1));
  ASSERT_EQ(w.start(), 0);
  ASSERT_EQ(push(w, 0, chunk({64}, 0)), 0);
  EXPECT_TRUE(w.acquire(0).empty());  // the disk never completes
  EXPECT_EQ(w.stats().error, ETIMEDOUT);
  EXPECT_EQ(disk.suspends, 7);
  EXPECT_EQ(w.flush(), -ETIMEDOUT);
  EXPECT_EQ(w.references(0), 1u);  // still in flight: the mapping must stay
}

TEST(TraceWriter, RotationFlushesAndStartsAValidFile) {
  ScriptedDisk disk(2);
  WriterOptions o = options(WriteMode::aio, 2, 1);
  o.rotate_bytes = 256;
  TraceWriter<ScriptedDisk> w(disk, o, head(1));
  ASSERT_EQ(w.start(), 0);
  const auto a = chunk({200, 96}, 0), b = chunk({64}, 0, 2);
  ASSERT_EQ(push(w, 0, a), 0);
  disk.on_suspend = [&](std::span<const std::uint32_t>) { disk.complete_all_full(); };
  ASSERT_EQ(w.end_round(), 0);  // past 256 data bytes: flush, finish, open file 1
  EXPECT_EQ(disk.opened, 2);
  EXPECT_EQ(w.file_index(), 1u);
  ASSERT_EQ(push(w, 0, b), 0);
  ASSERT_EQ(w.finish(), 0);
  EXPECT_EQ(records_in(disk, 0), a);
  EXPECT_EQ(records_in(disk, 1), b);
}

TEST(TraceWriter, OutputThatCannotBeCreated) {
  ScriptedDisk disk(1);
  disk.open_error = EACCES;
  TraceWriter<ScriptedDisk> w(disk, options(WriteMode::aio, 1, 1), head(1));
  EXPECT_EQ(w.start(), -EACCES);
  EXPECT_NE(w.stats().error_context.find("creating output file 0"), std::string::npos);
}

TEST(TraceWriter, HeaderThatCannotBeWrittenLeavesNoFile) {
  ScriptedDisk disk(1);
  disk.sync_results.push_back(-EIO);
  TraceWriter<ScriptedDisk> w(disk, options(WriteMode::aio, 1, 1), head(1));
  EXPECT_EQ(w.start(), -EIO);
  EXPECT_EQ(disk.removed, 1);
}

}  // namespace
}  // namespace ringsim::core

namespace ringsim::core {
namespace {

// The header fix-up fails at the end: the header keeps its data size of 0,
// so every record written is out of perf's reach and counted lost to the
// error, not left uncounted in a file no reader will walk.
TEST(TraceWriter, AHeaderFixUpThatFailsLosesTheWholeFileAndSaysSo) {
  ScriptedDisk disk(2);
  TraceWriter<ScriptedDisk> w(disk, options(WriteMode::serial, 1), head(2));
  ASSERT_EQ(w.start(), 0);
  const auto a = chunk({48, 64}, 0), b = chunk({128}, 1);
  ASSERT_EQ(push(w, 0, a), 0);
  ASSERT_EQ(push(w, 1, b), 0);
  ASSERT_EQ(w.end_round(), 0);
  disk.sync_results.push_back(-EIO);  // the fix-up
  EXPECT_EQ(w.finish(), -EIO);
  const DropCount& lost = w.stats().drops[DropCause::output_error];
  EXPECT_EQ(lost.records.samples, 3u);
  EXPECT_EQ(lost.records.bytes, a.size() + b.size());
  model::PerfDataFile f;
  ASSERT_EQ(model::parse_perf_data(disk.files[0], f), "");
  EXPECT_EQ(f.data_size, 0u);  // what perf will read: nothing
}

// A checkpoint (the recorder's periodic header rewrite) covered the first
// chunk: when the final fix-up fails, only the second is lost, and the
// file's header still says the first is there.
TEST(TraceWriter, AFailedFixUpLosesOnlyWhatNoCheckpointCovers) {
  ScriptedDisk disk(2);
  const core::PerfDataHead h = head(2);
  TraceWriter<ScriptedDisk> w(disk, options(WriteMode::serial, 1), h);
  ASSERT_EQ(w.start(), 0);
  const auto a = chunk({48, 64}, 0), b = chunk({128}, 1);
  ASSERT_EQ(push(w, 0, a), 0);
  ASSERT_EQ(w.end_round(), 0);
  const std::uint64_t covered = h.data_offset() + a.size();
  w.header_covers(covered);
  ASSERT_EQ(push(w, 1, b), 0);
  ASSERT_EQ(w.end_round(), 0);
  disk.sync_results.push_back(-EIO);  // the fix-up
  EXPECT_EQ(w.finish(), -EIO);
  const DropCount& lost = w.stats().drops[DropCause::output_error];
  EXPECT_EQ(lost.records.samples, 1u);
  EXPECT_EQ(lost.records.bytes, b.size());
}

// The writer keeps a bounded list of what no header covers: past its bound
// the oldest entries merge, and no count is lost in the merging.
TEST(TraceWriter, AFailedFixUpAfterManyChunksCountsEveryOne) {
  ScriptedDisk disk(2);
  TraceWriter<ScriptedDisk> w(disk, options(WriteMode::serial, 1), head(2));
  ASSERT_EQ(w.start(), 0);
  constexpr std::uint64_t kChunks = 4096 + 50;
  const auto one = chunk({48}, 0);
  for (std::uint64_t i = 0; i < kChunks; i++) {
    ASSERT_EQ(push(w, 0, one), 0);
    ASSERT_EQ(w.end_round(), 0);
  }
  disk.sync_results.push_back(-EIO);  // the fix-up
  EXPECT_EQ(w.finish(), -EIO);
  const DropCount& lost = w.stats().drops[DropCause::output_error];
  EXPECT_EQ(lost.records.samples, kChunks);
  EXPECT_EQ(lost.records.bytes, kChunks * one.size());
}

}  // namespace
}  // namespace ringsim::core

namespace ringsim {
namespace {

// Records staged when the writer failed are cut with the writer's file:
// the summary says one file, not one per staged batch (ringsim-record's
// summary once said "in 2 files" with one file on disk).
TEST(Drops, RecordsAddedToTheLastEventAreNotAnotherEvent) {
  core::Drops d;
  core::RecordCounts cut;
  cut.records = 3;
  cut.samples = 2;
  cut.bytes = 96;
  d.add(core::DropCause::output_error, cut);
  d.add_records(core::DropCause::output_error, cut);
  EXPECT_EQ(d[core::DropCause::output_error].events, 1u);
  EXPECT_EQ(d[core::DropCause::output_error].records.records, 6u);
  EXPECT_EQ(core::describe(d), "output error 6 records (4 samples), 192 bytes in 1 files");
}

}  // namespace
}  // namespace ringsim

namespace ringsim::core {
namespace {

// Issue 23, seed 270952514591860: the header fix-up's write was short (53
// of its 104 bytes, the data size among them) and the rest failed with
// EIO. The header on disk then says the whole data section is there, and
// perf reads every record: none is lost to the error (the feature bitmap,
// not written, says no features). The writer counted every record of the
// file as cut off, one "file" per chunk.
TEST(TraceWriter, AFixUpCutShortAfterTheDataSizeLosesNoRecord) {
  ScriptedDisk disk(2);
  TraceWriter<ScriptedDisk> w(disk, options(WriteMode::serial, 1), head(2));
  ASSERT_EQ(w.start(), 0);
  const auto a = chunk({48, 64}, 0), b = chunk({128}, 1);
  ASSERT_EQ(push(w, 0, a), 0);
  ASSERT_EQ(w.end_round(), 0);
  ASSERT_EQ(push(w, 1, b), 0);
  ASSERT_EQ(w.end_round(), 0);
  disk.sync_results = {53, -EIO};  // the fix-up: its data size written, then EIO
  EXPECT_EQ(w.finish(), -EIO);
  EXPECT_EQ(w.stats().drops[DropCause::output_error], DropCount{});
  std::vector<std::byte> want = a;
  want.insert(want.end(), b.begin(), b.end());
  EXPECT_EQ(records_in(disk, 0), want);  // what perf reads: every record
}

// The fix-up's short write ended inside the data size: the size on disk is
// the new one's low byte, which ends inside the first chunk. That chunk and
// all after it are counted (a chunk is the unit the writer knows), and the
// file's section ends at the torn size.
TEST(TraceWriter, AFixUpCutShortInsideTheDataSizeLosesFromTheChunkItEndsIn) {
  ScriptedDisk disk(2);
  const PerfDataHead h = head(2);
  TraceWriter<ScriptedDisk> w(disk, options(WriteMode::serial, 1), h);
  ASSERT_EQ(w.start(), 0);
  const auto a = chunk({128, 128}, 0), b = chunk({64}, 1);
  ASSERT_EQ(push(w, 0, a), 0);
  ASSERT_EQ(w.end_round(), 0);
  ASSERT_EQ(push(w, 1, b), 0);
  ASSERT_EQ(w.end_round(), 0);  // data: 256 + 8 + 64 + 8 = 0x150 bytes
  disk.sync_results = {49, -EIO};  // the size's low byte (0x50) written
  EXPECT_EQ(w.finish(), -EIO);
  const DropCount& lost = w.stats().drops[DropCause::output_error];
  EXPECT_EQ(lost.events, 1u);
  EXPECT_EQ(lost.records.samples, 3u);
  EXPECT_EQ(lost.records.bytes, a.size() + b.size());
  std::uint64_t size_on_disk = 0;
  std::memcpy(&size_on_disk, disk.files[0].data() + 48, sizeof size_on_disk);
  EXPECT_EQ(size_on_disk, 0x50u);
}

// A file cut off is one event, however many chunks and markers it held.
TEST(TraceWriter, AFailedFixUpIsOneFileCutNotOnePerChunk) {
  ScriptedDisk disk(2);
  TraceWriter<ScriptedDisk> w(disk, options(WriteMode::serial, 1), head(2));
  ASSERT_EQ(w.start(), 0);
  const auto a = chunk({48, 64}, 0), b = chunk({128}, 1);
  for (int i = 0; i < 3; i++) {
    ASSERT_EQ(push(w, 0, a), 0);
    ASSERT_EQ(push(w, 1, b), 0);
    ASSERT_EQ(w.end_round(), 0);
  }
  disk.sync_results.push_back(-EIO);  // the fix-up
  EXPECT_EQ(w.finish(), -EIO);
  const DropCount& lost = w.stats().drops[DropCause::output_error];
  EXPECT_EQ(lost.events, 1u);
  EXPECT_EQ(lost.records.samples, 9u);
  EXPECT_EQ(describe(w.stats().drops), "output error 9 records (9 samples), " +
                                           std::to_string(3 * (a.size() + b.size())) + " bytes in 1 files");
}

// Staged (one set of control blocks): a write fails in flight, the next
// batch finds the writer failed and is counted with the file the failure
// cut, not as a file of its own.
TEST(TraceWriter, AStagedBatchAfterAFailedWriteCountsWithItsFile) {
  ScriptedDisk disk(1);
  TraceWriter<ScriptedDisk> w(disk, options(WriteMode::aio, 1, 1), head(2));
  ASSERT_EQ(w.start(), 0);
  const auto a = chunk({48, 64}, 0), b = chunk({128}, 1);
  ASSERT_EQ(w.write_staged(a, counts_of(a)), 0);
  disk.complete(0, -EIO);
  EXPECT_EQ(w.write_staged(b, counts_of(b)), -EIO);
  EXPECT_EQ(w.finish(), -EIO);
  const DropCount& lost = w.stats().drops[DropCause::output_error];
  EXPECT_EQ(lost.events, 1u);
  EXPECT_EQ(lost.records.samples, 3u);
  EXPECT_EQ(lost.records.bytes, a.size() + b.size());
}

}  // namespace
}  // namespace ringsim::core
