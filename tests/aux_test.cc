// AUX areas: the simulated PMU driver's rules (sim/aux.h) and the core's
// AUX reader (core/aux_reader.h).
#include <gtest/gtest.h>

#include <cstring>

#include "core/aux_reader.h"
#include "model/aux_content.h"
#include "sim/kernel.h"
#include "sim/scheduler.h"

namespace ringsim::sim {
namespace {

// A kernel with one CPU and an AUX area, driven by hand inside a
// simulation (the PMU fiber is not started).
struct AuxFixture {
  explicit AuxFixture(AuxConfig aux) : decisions(1, false), scheduler(decisions, SchedulerLimits{}) {
    config.cpus = 1;
    config.ring_bytes = 64 * 4096;
    config.aux = aux;
    kernel = std::make_unique<Kernel>(scheduler, config, log, probes);
  }
  // A transaction of n bytes by the PMU: begin (reference), write, end.
  void transaction(std::uint64_t n, std::uint64_t flags = 0) {
    SimAux& a = kernel->aux(0);
    a.refcount++;
    for (std::uint64_t i = 0; i < n; i++) {
      const std::uint64_t p = a.head + a.pending + i;
      a.data[p & (a.config.size_bytes - 1)] = model::aux_byte(0, 0, p);
    }
    a.log.attempted_bytes += n;
    kernel->aux_end(0, n, flags, true, false);
  }
  template <class F>
  void in_sim(F f) {
    scheduler.run([&] { scheduler.spawn("test", f); });
  }
  DecisionSource decisions;
  Scheduler scheduler;
  KernelConfig config;
  model::KernelLog log;
  Probes probes;
  std::unique_ptr<Kernel> kernel;
};

AuxConfig aux_config(std::uint64_t size, bool overwrite, std::uint64_t watermark = 0, bool late = false) {
  AuxConfig c;
  c.size_bytes = size;
  c.overwrite = overwrite;
  c.watermark_bytes = watermark;
  c.late_reports = late;
  return c;
}

TEST(Aux, DefaultWatermarkIsHalfTheAreaAndZeroInOverwriteMode) {
  AuxFixture normal(aux_config(16384, false));
  EXPECT_EQ(normal.kernel->aux(0).watermark_bytes, 8192u);
  AuxFixture snapshot(aux_config(16384, true));
  EXPECT_EQ(snapshot.kernel->aux(0).watermark_bytes, 0u);
  AuxFixture explicit_mark(aux_config(16384, false, 1000));
  EXPECT_EQ(explicit_mark.kernel->aux(0).watermark_bytes, 1000u);
}

TEST(Aux, WakeupWhenHeadPassesTheMarkThenRoundedDown) {
  AuxFixture f(aux_config(16384, false, 1000));
  f.in_sim([&] {
    f.transaction(800);  // head 800: no wakeup
    f.transaction(400);  // head 1200 >= 0 + 1000: wakeup, aux_wakeup = 1000
    f.kernel->aux(0).tail = f.kernel->aux(0).head;
    f.transaction(2900);  // head 4100: 4100 - 1000 >= 1000: wakeup, aux_wakeup = 4000
  });
  const auto& ends = f.log.cpus[0].aux.ends;
  ASSERT_EQ(ends.size(), 3u);
  EXPECT_FALSE(ends[0].woke);
  EXPECT_EQ(ends[0].wakeup_after, 0u);
  EXPECT_TRUE(ends[1].woke);
  EXPECT_EQ(ends[1].wakeup_after, 1000u);
  EXPECT_TRUE(ends[2].woke);
  EXPECT_EQ(ends[2].wakeup_after, 4000u);  // not 2000: never behind the last boundary below head
  EXPECT_TRUE(f.kernel->ring(0).take_wakeup());
}

TEST(Aux, LateReportingHoldsTheHeadUntilAPageBoundary) {
  AuxFixture f(aux_config(4 * 4096, false, 512, true));
  f.in_sim([&] {
    f.transaction(1000);
    f.transaction(1000);
    EXPECT_EQ(f.kernel->aux(0).head, 0u);  // bytes are there, the head is not
    f.transaction(3000);                    // crosses 4096: all 5000 reported at once
    EXPECT_EQ(f.kernel->aux(0).head, 5000u);
  });
  const auto& ends = f.log.cpus[0].aux.ends;
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(ends[0].size, 5000u);
  EXPECT_TRUE(ends[0].woke);
  EXPECT_EQ(ends[0].wakeup_after, 4608u);  // 5000 rounded down to 512
  EXPECT_GT(f.probes.count(Probe::aux_late_report), 0u);
}

TEST(Aux, OverwriteModeKeepsNoWakeupBookkeeping) {
  AuxFixture f(aux_config(8192, true));
  f.in_sim([&] {
    for (int i = 0; i < 10; i++) f.transaction(4096);  // far past the area
  });
  for (const auto& e : f.log.cpus[0].aux.ends) {
    EXPECT_FALSE(e.woke);
    EXPECT_EQ(e.wakeup_after, 0u);
    EXPECT_TRUE(e.flags & PERF_AUX_FLAG_OVERWRITE);
  }
  EXPECT_EQ(f.kernel->aux(0).head, 40960u);
}

TEST(Aux, TruncatedRecordDisablesAndWakes) {
  AuxFixture f(aux_config(8192, false, 8192));
  f.in_sim([&] { f.transaction(100, PERF_AUX_FLAG_TRUNCATED); });
  EXPECT_FALSE(f.kernel->aux(0).enabled);
  ASSERT_EQ(f.log.cpus[0].aux.ends.size(), 1u);
  EXPECT_TRUE(f.log.cpus[0].aux.ends[0].woke);
  EXPECT_TRUE(f.kernel->ring(0).take_wakeup());
}

// The PMU disables the event and nobody but the consumer turns it back on:
// bursts meanwhile go nowhere; ENABLE after a read brings it back.
TEST(Aux, TruncationLeavesTheEventOffUntilTheConsumerReenablesIt) {
  AuxFixture f(aux_config(8192, false, 8192));
  f.in_sim([&] {
    f.transaction(100, PERF_AUX_FLAG_TRUNCATED);
    SimAux& a = f.kernel->aux(0);
    EXPECT_FALSE(a.enabled);
    f.kernel->aux_check_reenabled(0);  // the consumer has not moved aux_tail: nothing to say yet
    EXPECT_TRUE(a.consumer_violations.empty());
    a.tail = a.published;              // it read...
    f.kernel->aux_check_reenabled(0);  // ...and went back to poll without ENABLE
    ASSERT_EQ(a.consumer_violations.size(), 1u);
    f.kernel->aux_set_enabled(0, true);
    EXPECT_TRUE(a.enabled);
  });
  EXPECT_EQ(f.log.cpus[0].aux.reenables, std::vector<std::size_t>{1});
  EXPECT_EQ(f.probes.count(Probe::aux_reenabled), 1u);
}

// CIRC_SPACE never hands out the last byte; heads move by bytes.
TEST(Aux, SpaceIsCircSpaceAndHeadsMoveByBytes) {
  AuxFixture f(aux_config(4096, false, 4096));
  f.in_sim([&] {
    SimAux& a = f.kernel->aux(0);
    EXPECT_EQ(a.space(), 4095u);
    f.transaction(4001);
    EXPECT_EQ(a.head, 4001u);
    EXPECT_EQ(a.published, 4001u);
    EXPECT_EQ(a.space(), 94u);
    a.tail = 4001;
    EXPECT_EQ(a.space(), 4095u);
  });
}

// perf_aux_output_end: the offset is the old head in non-overwrite mode,
// the new one in overwrite mode; with offset heads (Intel PT snapshots) an
// index inside the area, and the size the whole area. Format bits and
// COLLISION ride along.
TEST(Aux, RecordOffsetsAndSizesAsTheDriversGiveThem) {
  AuxConfig normal = aux_config(4096, false, 4096);
  normal.format_flags = 0x300;
  AuxFixture n(normal);
  n.in_sim([&] {
    n.transaction(100);
    n.transaction(50, PERF_AUX_FLAG_COLLISION);
  });
  const auto& ne = n.log.cpus[0].aux.ends;
  ASSERT_EQ(ne.size(), 2u);
  EXPECT_EQ(ne[1].offset, 100u);
  EXPECT_EQ(ne[1].size, 50u);
  EXPECT_EQ(ne[1].flags, 0x300u | PERF_AUX_FLAG_COLLISION);
  EXPECT_EQ(n.probes.count(Probe::aux_collision), 1u);

  AuxConfig pt = aux_config(4096, true);
  pt.offset_heads = true;
  AuxFixture o(pt);
  o.in_sim([&] {
    o.transaction(3000);
    o.transaction(3000);
  });
  const auto& oe = o.log.cpus[0].aux.ends;
  ASSERT_EQ(oe.size(), 2u);
  EXPECT_EQ(oe[0].offset, 3000u);
  EXPECT_EQ(oe[1].offset, 6000u - 4096);
  EXPECT_EQ(oe[1].size, 4096u);
  EXPECT_EQ(oe[1].written, 3000u);
  EXPECT_EQ(o.kernel->aux(0).user_head(o.kernel->aux(0).published), 6000u - 4096);
}

TEST(Aux, PartialDoesNotImplyAWakeup) {
  AuxFixture f(aux_config(8192, false, 8192));
  f.in_sim([&] { f.transaction(100, PERF_AUX_FLAG_PARTIAL); });
  ASSERT_EQ(f.log.cpus[0].aux.ends.size(), 1u);
  EXPECT_FALSE(f.log.cpus[0].aux.ends[0].woke);
  EXPECT_TRUE(f.kernel->aux(0).enabled);
}

// Unmapping while a transaction is open: the output is stopped from the
// unmapping context, so the last reference goes there, not in the writer.
TEST(Aux, UnmapStopsTheOutputSoTheWriterNeverDropsTheLastReference) {
  AuxFixture f(aux_config(8192, false));
  f.in_sim([&] {
    SimAux& a = f.kernel->aux(0);
    a.refcount++;  // begin
    a.handle_open = true;
    a.handle_bytes = 64;
    f.kernel->aux_unmap(0);
    EXPECT_EQ(a.refcount, 0u);
    EXPECT_TRUE(a.freed);
    EXPECT_FALSE(a.handle_open);
  });
  EXPECT_TRUE(f.kernel->aux(0).violations.empty());
  EXPECT_EQ(f.probes.count(Probe::aux_output_stop), 1u);
}

// Without the output stop (the bug the kernel fixed), the writer ends its
// transaction later and drops the last reference itself: caught.
TEST(Aux, WithoutTheOutputStopTheWriterDropsTheLastReference) {
  AuxConfig c = aux_config(8192, false);
  c.output_stop_on_unmap = false;
  AuxFixture f(c);
  f.in_sim([&] {
    SimAux& a = f.kernel->aux(0);
    a.refcount++;
    a.handle_open = true;
    f.kernel->aux_unmap(0);
    EXPECT_EQ(a.refcount, 1u);
    a.handle_open = false;
    f.kernel->aux_end(0, 64, 0, true, false);
  });
  ASSERT_EQ(f.kernel->aux(0).violations.size(), 1u);
  EXPECT_NE(f.kernel->aux(0).violations[0].find("writer"), std::string::npos);
}

// --- the core's reader, over a hand-made AUX mapping ---

struct FakeAux {
  std::vector<std::byte> area;
  std::uint64_t head = 0, tail = 0;
  bool overwrite = false;
  bool offset_heads = false;
  int enabled_calls = 0;
  int enable_result = 0;  // what PERF_EVENT_IOC_ENABLE/DISABLE return
  std::uint64_t aux_size_bytes() const { return area.size(); }
  bool aux_overwrite() const { return overwrite; }
  bool aux_offset_heads() const { return offset_heads; }
  std::uint32_t aux_cpu() const { return 0; }
  std::uint64_t load_aux_head() { return offset_heads ? head & (area.size() - 1) : head; }
  void store_aux_tail(std::uint64_t t) { tail = t; }
  void copy_aux(std::uint64_t p, std::span<std::byte> d) {
    const std::uint64_t i = p & (area.size() - 1);
    ASSERT_LE(i + d.size(), area.size());
    std::memcpy(d.data(), area.data() + i, d.size());
  }
  int set_aux_enabled(bool) {
    enabled_calls++;
    return enable_result;
  }
  void write(std::uint64_t n) {
    for (std::uint64_t k = 0; k < n; k++, head++) area[head & (area.size() - 1)] = model::aux_byte(7, 2, head);
  }
};
static_assert(core::AuxMapping<FakeAux>);

// A reader over a FakeAux of `size` bytes, and a destination for it.
struct ReaderOver {
  explicit ReaderOver(std::uint64_t size, bool overwrite = false, bool offset_heads = false)
      : m(make(size, overwrite, offset_heads)), reader(m, 2), buffer(reader.record_bytes_max()) {}
  static FakeAux make(std::uint64_t size, bool overwrite, bool offset_heads) {
    FakeAux f;
    f.area.resize(size);
    f.overwrite = overwrite;
    f.offset_heads = offset_heads;
    return f;
  }
  FakeAux m;
  core::AuxReader<FakeAux> reader;
  std::vector<std::byte> buffer;
};

void expect_content(std::span<const std::byte> record, std::uint64_t offset, std::uint64_t length) {
  core::AuxtraceHeader h;
  std::memcpy(&h, record.data(), sizeof h);
  EXPECT_EQ(h.header.type, core::kRecordAuxtrace);
  EXPECT_EQ(h.offset, offset);
  EXPECT_EQ(h.cpu, 2u);
  EXPECT_EQ(h.size % 8, 0u);
  for (std::uint64_t i = 0; i < length; i++) {
    ASSERT_EQ(record[core::kAuxtraceHeaderBytes + i], model::aux_byte(7, 2, offset + i)) << i;
  }
}

TEST(AuxReader, CopiesAcrossTheEndAndReleasesWholeEights) {
  ReaderOver t(4096);
  t.m.write(4000);
  core::AuxRead r = t.reader.read(t.buffer, false);
  ASSERT_EQ(r.status, core::ReadStatus::ready);
  expect_content(t.buffer, 0, 4000);
  EXPECT_EQ(t.m.tail, 4000u);
  t.m.write(203);  // crosses the end; 203 is not a multiple of 8
  r = t.reader.read(t.buffer, false);
  ASSERT_EQ(r.status, core::ReadStatus::ready);
  EXPECT_EQ(r.record_bytes, core::kAuxtraceHeaderBytes + 200);
  expect_content(t.buffer, 4000, 200);
  EXPECT_EQ(t.m.tail, 4200u);
  EXPECT_EQ(t.reader.stats().wrapped, 1u);
  r = t.reader.read(t.buffer, true);  // final: the last 3 bytes, padded
  ASSERT_EQ(r.status, core::ReadStatus::ready);
  EXPECT_EQ(r.record_bytes, core::kAuxtraceHeaderBytes + 8);
  expect_content(t.buffer, 4200, 3);
  for (int i = 3; i < 8; i++) EXPECT_EQ(t.buffer[core::kAuxtraceHeaderBytes + i], std::byte{0});
}

TEST(AuxReader, HeadMoreThanAnAreaAheadIsCorrupt) {
  ReaderOver t(4096);
  t.m.head = 4096 + 8;
  EXPECT_EQ(t.reader.read(t.buffer, false).status, core::ReadStatus::head_past_ring);
  EXPECT_EQ(t.m.tail, 0u);
}

TEST(AuxReader, SnapshotTakesNewDataAndReportsWhatWasOverwritten) {
  ReaderOver t(4096, true);
  t.m.write(1000);
  core::AuxRead r = t.reader.snapshot(t.buffer, false);
  ASSERT_EQ(r.status, core::ReadStatus::ready);
  EXPECT_EQ(r.gap.bytes(), 0u);
  expect_content(t.buffer, 0, 1000);
  EXPECT_EQ(t.m.enabled_calls, 2);  // stopped and restarted
  t.m.write(10'000);               // more than the area since
  r = t.reader.snapshot(t.buffer, false);
  ASSERT_EQ(r.status, core::ReadStatus::ready);
  EXPECT_EQ(r.gap.begin, 1000u);
  EXPECT_EQ(r.gap.end, 11'000u - 4096);
  expect_content(t.buffer, 11'000 - 4096, 4096);
  EXPECT_EQ(t.reader.snapshot(t.buffer, false).status, core::ReadStatus::empty);
}

TEST(AuxReader, ReadsTurnTheEventBackOnAfterMakingRoom) {
  ReaderOver t(4096);
  t.m.write(100);
  ASSERT_EQ(t.reader.read(t.buffer, false).status, core::ReadStatus::ready);
  EXPECT_EQ(t.m.enabled_calls, 1);  // after the tail moved
  EXPECT_EQ(t.reader.read(t.buffer, false).status, core::ReadStatus::empty);
  EXPECT_EQ(t.m.enabled_calls, 1);  // nothing taken: nothing to re-enable for
}

// An ENABLE that fails is counted, and the data read is still delivered
// (the event stays off: the next read tries again).
TEST(AuxReader, AFailedReenableIsCountedAndTheDataKept) {
  ReaderOver t(4096);
  t.m.write(100);
  t.m.enable_result = -EIO;
  ASSERT_EQ(t.reader.read(t.buffer, false).status, core::ReadStatus::ready);
  expect_content(t.buffer, 0, 96);
  EXPECT_EQ(t.m.tail, 96u);
  EXPECT_EQ(t.reader.stats().enable_failures, 1u);
  t.m.write(4);
  ASSERT_EQ(t.reader.read(t.buffer, false).status, core::ReadStatus::ready);
  EXPECT_EQ(t.reader.stats().enable_failures, 2u);
}

// Byte heads: a snapshot takes whole words, the rest at the next one or
// the final one.
TEST(AuxReader, SnapshotsWithByteHeadsTakeWholeWords) {
  ReaderOver t(4096, true);
  t.m.write(1003);
  ASSERT_EQ(t.reader.snapshot(t.buffer, false).status, core::ReadStatus::ready);
  expect_content(t.buffer, 0, 1000);
  t.m.write(9'000);  // head 10003: the area holds [5907, 10003)
  core::AuxRead r = t.reader.snapshot(t.buffer, false);
  ASSERT_EQ(r.status, core::ReadStatus::ready);
  // Ends at 1000 + 9000 = 10000, starts a whole number of words after 5907.
  EXPECT_EQ(r.gap.begin, 1000u);
  EXPECT_EQ(r.gap.end, 10'000u - 4088);
  EXPECT_EQ(r.record_bytes, core::kAuxtraceHeaderBytes + 4088);
  expect_content(t.buffer, 10'000 - 4088, 4088);
  r = t.reader.snapshot(t.buffer, true);  // final: the last 3 bytes
  ASSERT_EQ(r.status, core::ReadStatus::ready);
  EXPECT_EQ(r.record_bytes, core::kAuxtraceHeaderBytes + 8);
  expect_content(t.buffer, 10'000, 3);
}

// An area of one word that went round with an unaligned head holds no
// whole word ending where the reader would stop: nothing until the final
// snapshot (the fuzz target found the empty record this made).
TEST(AuxReader, ATinyAreaWithAnUnalignedHeadWaitsForTheFinalSnapshot) {
  ReaderOver t(8, true);
  t.m.write(13);
  core::AuxRead r = t.reader.snapshot(t.buffer, false);
  EXPECT_EQ(r.status, core::ReadStatus::empty);
  EXPECT_EQ(r.gap.bytes(), 0u);
  r = t.reader.snapshot(t.buffer, true);
  ASSERT_EQ(r.status, core::ReadStatus::ready);
  EXPECT_EQ(r.gap, (core::PositionRange{0, 5}));
  expect_content(t.buffer, 5, 8);
}

// Offset heads: new bytes until the driver goes round the area (perf's
// test: a non-zero word in the area's last 4 KiB, or the head moving
// back), then the whole area each time, oldest first, at offsets that are
// indexes.
TEST(AuxReader, OffsetHeadsTakeTheWholeAreaOnceItWrapped) {
  ReaderOver t(16384, true, true);
  t.m.write(1000);
  ASSERT_EQ(t.reader.snapshot(t.buffer, false).status, core::ReadStatus::ready);
  expect_content(t.buffer, 0, 1000);
  t.m.write(2000);
  ASSERT_EQ(t.reader.snapshot(t.buffer, false).status, core::ReadStatus::ready);
  expect_content(t.buffer, 1000, 2000);
  EXPECT_EQ(t.reader.stats().wrapped_snapshots, 0u);
  t.m.write(16384 + 200);  // head 19584, index 3200: ahead of 3000, but the area's end is written
  core::AuxRead r = t.reader.snapshot(t.buffer, false);
  ASSERT_EQ(r.status, core::ReadStatus::ready);
  EXPECT_EQ(r.record_bytes, core::kAuxtraceHeaderBytes + 16384);
  core::AuxtraceHeader h;
  std::memcpy(&h, t.buffer.data(), sizeof h);
  EXPECT_EQ(h.offset, 3200u);  // an index
  for (std::uint64_t i = 0; i < 16384; i++) {
    ASSERT_EQ(t.buffer[core::kAuxtraceHeaderBytes + i], model::aux_byte(7, 2, 19584 - 16384 + i)) << i;
  }
  EXPECT_EQ(t.reader.stats().wrapped_snapshots, 1u);
  t.m.head = 20000;  // an index past the area: corrupt
  t.m.offset_heads = false;
  EXPECT_EQ(t.reader.snapshot(t.buffer, false).status, core::ReadStatus::head_past_ring);
}

// The campaign's seed 6916605654348: the driver went round an 8 KiB area
// and stopped one byte before its end, on a byte it wrote as zero. Looking
// only past the head saw a fresh area and took [0, 8191) as new bytes at
// index 0; perf's test sees the written end and takes the whole area.
TEST(AuxReader, OffsetHeadsSeeALapThatEndsOnAZeroByte) {
  ReaderOver t(8192, true, true);
  t.m.write(3 * 8192 + 8191);
  t.m.area[8191] = std::byte{0};
  ASSERT_EQ(t.reader.snapshot(t.buffer, true).status, core::ReadStatus::ready);
  core::AuxtraceHeader h;
  std::memcpy(&h, t.buffer.data(), sizeof h);
  EXPECT_EQ(h.offset, 8191u);
  EXPECT_EQ(h.size, 8192u);
  EXPECT_EQ(t.reader.stats().wrapped_snapshots, 1u);
}

// Before the first lap, with the head inside the area's last 4 KiB, perf's
// test already says wrapped: the whole area, the zeros past the head first.
TEST(AuxReader, OffsetHeadsErrTowardsTheWholeArea) {
  ReaderOver t(8192, true, true);
  t.m.write(5000);
  ASSERT_EQ(t.reader.snapshot(t.buffer, false).status, core::ReadStatus::ready);
  core::AuxtraceHeader h;
  std::memcpy(&h, t.buffer.data(), sizeof h);
  EXPECT_EQ(h.offset, 5000u);
  EXPECT_EQ(h.size, 8192u);
  for (std::uint64_t i = 0; i < 8192 - 5000; i++) ASSERT_EQ(t.buffer[core::kAuxtraceHeaderBytes + i], std::byte{0}) << i;
  for (std::uint64_t i = 0; i < 5000; i++) {
    ASSERT_EQ(t.buffer[core::kAuxtraceHeaderBytes + 8192 - 5000 + i], model::aux_byte(7, 2, i)) << i;
  }
}

}  // namespace
}  // namespace ringsim::sim
