// The oracle's AUX checks (model/oracle.h) can fail: each is fed a log or
// an output with exactly one thing wrong.
#include <gtest/gtest.h>

#include "model/aux_content.h"
#include "model/oracle.h"

namespace ringsim::model {
namespace {

constexpr std::uint64_t kTruncated = 0x1;

// A correct log: non-overwrite, watermark 1000, ends at 600, 1200, 2500.
KernelLog good_log() {
  KernelLog log;
  log.seed = 3;
  log.cpus.resize(1);
  AuxLog& a = log.cpus[0].aux;
  a.present = true;
  a.size_bytes = 4096;
  a.watermark_bytes = 1000;
  std::uint64_t head = 0, wakeup = 0;
  for (std::uint64_t size : {600, 600, 1300}) {
    AuxEnd e;
    e.offset = head;
    e.size = size;
    e.written = size;
    e.record = true;
    head += size;
    e.head_after = head;
    if (head - wakeup >= 1000) {
      wakeup = head - head % 1000;
      e.woke = true;
    }
    e.wakeup_after = wakeup;
    a.ends.push_back(e);
  }
  a.head = head;
  a.attempted_bytes = head;
  return log;
}

RunOutput delivered(const KernelLog& log, std::uint64_t from, std::uint64_t to) {
  RunOutput out;
  out.cpus.resize(1);
  AuxChunk chunk;
  chunk.offset = from;
  for (std::uint64_t p = from; p < to; p++) chunk.data.push_back(aux_byte(log.seed, 0, p));
  while (chunk.data.size() % 8) chunk.data.push_back(std::byte{0});
  out.cpus[0].aux.push_back(chunk);
  return out;
}

bool violates(const OracleReport& r, const std::string& property) { return r.violated(property); }

TEST(OracleAux, ACorrectRunPasses) {
  const KernelLog log = good_log();
  const OracleReport r = check(log, delivered(log, 0, 2500));
  EXPECT_TRUE(r.ok()) << r.violations.front().detail;
}

TEST(OracleAux, WakeupBookkeepingBehindTheBoundary) {
  KernelLog log = good_log();
  log.cpus[0].aux.ends[2].wakeup_after = 1000;  // should be 2000
  EXPECT_TRUE(violates(check(log, delivered(log, 0, 2500)), kAuxWakeup));
}

TEST(OracleAux, MissingWakeup) {
  KernelLog log = good_log();
  log.cpus[0].aux.ends[1].woke = false;
  EXPECT_TRUE(violates(check(log, delivered(log, 0, 2500)), kAuxWakeup));
}

TEST(OracleAux, OverwriteModeWithBookkeeping) {
  KernelLog log = good_log();
  log.cpus[0].aux.overwrite = true;
  log.cpus[0].aux.watermark_bytes = 0;
  for (AuxEnd& e : log.cpus[0].aux.ends) {
    e.flags = 0x2;
    e.woke = false;
    e.wakeup_after = 0;
    e.offset = e.head_after;  // overwrite mode: the new head
  }
  EXPECT_TRUE(check(log, delivered(log, 0, 2500)).ok());
  log.cpus[0].aux.ends[1].wakeup_after = 1000;
  EXPECT_TRUE(violates(check(log, delivered(log, 0, 2500)), kAuxWakeup));
}

TEST(OracleAux, RecordAfterATruncatedOne) {
  KernelLog log = good_log();
  log.cpus[0].aux.ends[1].flags = kTruncated;
  log.cpus[0].aux.ends[1].woke = true;
  EXPECT_TRUE(violates(check(log, delivered(log, 0, 2500)), kAuxTruncation));
}

TEST(OracleAux, ARecordAfterTruncationNeedsTheConsumersReenable) {
  KernelLog log = good_log();
  log.cpus[0].aux.ends[1].flags = kTruncated;
  log.cpus[0].aux.ends[1].woke = true;
  log.cpus[0].aux.reenables = {2};  // after end 1, before end 2
  EXPECT_TRUE(check(log, delivered(log, 0, 2500)).ok());
  log.cpus[0].aux.reenables = {1};  // before the truncation: does not count
  EXPECT_TRUE(violates(check(log, delivered(log, 0, 2500)), kAuxTruncation));
}

TEST(OracleAux, RecordFieldsFollowTheDriversRules) {
  KernelLog log = good_log();
  log.cpus[0].aux.ends[1].offset = 1200;  // the new head: overwrite mode's rule in non-overwrite mode
  EXPECT_TRUE(violates(check(log, delivered(log, 0, 2500)), kAuxDelivery));
  log = good_log();
  log.cpus[0].aux.ends[2].record = false;  // bytes reported without a record
  EXPECT_TRUE(violates(check(log, delivered(log, 0, 2500)), kAuxDelivery));
}

// Offset heads in a 4096-byte area: ends at 3000 and 6000 (index 1904),
// snapshots at 3000 and 6000.
KernelLog offset_heads_log() {
  KernelLog log;
  log.seed = 3;
  log.cpus.resize(1);
  AuxLog& a = log.cpus[0].aux;
  a.present = true;
  a.overwrite = true;
  a.offset_heads = true;
  a.size_bytes = 4096;
  for (std::uint64_t head : {3000, 6000}) {
    AuxEnd e;
    e.flags = 0x2;
    e.record = true;
    e.written = 3000;
    e.head_after = head;
    e.offset = head % 4096;
    e.size = 4096;
    a.ends.push_back(e);
    a.snapshot_heads.push_back(head);
  }
  a.head = a.attempted_bytes = 6000;
  return log;
}

TEST(OracleAux, OffsetHeadsNewBytesThenTheWholeArea) {
  const KernelLog log = offset_heads_log();
  RunOutput out = delivered(log, 0, 3000);
  AuxChunk whole;
  whole.offset = 6000 % 4096;
  for (std::uint64_t p = 6000 - 4096; p < 6000; p++) whole.data.push_back(aux_byte(log.seed, 0, p));
  out.cpus[0].aux.push_back(whole);
  EXPECT_TRUE(check(log, out).ok());
  RunOutput stale = out;  // the area as it stood at the first snapshot, not the second
  for (std::uint64_t i = 0; i < 4096; i++) stale.cpus[0].aux[1].data[i] = aux_byte(log.seed, 0, i);
  EXPECT_TRUE(violates(check(log, stale), kAuxDelivery));
  RunOutput missing = delivered(log, 0, 3000);  // never took the newest data
  EXPECT_TRUE(violates(check(log, missing), kAuxDelivery));
}

// perf's first-wrap test can take the whole area before the first lap:
// the zeros past the head, then [0, head). Data in those zeros is a
// violation.
TEST(OracleAux, OffsetHeadsWholeAreaBeforeTheFirstLap) {
  const KernelLog log = offset_heads_log();
  RunOutput out;
  out.cpus.resize(1);
  AuxChunk early;  // at the snapshot of head 3000
  early.offset = 3000;
  early.data.assign(4096 - 3000, std::byte{0});
  for (std::uint64_t p = 0; p < 3000; p++) early.data.push_back(aux_byte(log.seed, 0, p));
  out.cpus[0].aux.push_back(early);
  AuxChunk whole;
  whole.offset = 6000 % 4096;
  for (std::uint64_t p = 6000 - 4096; p < 6000; p++) whole.data.push_back(aux_byte(log.seed, 0, p));
  out.cpus[0].aux.push_back(whole);
  EXPECT_TRUE(check(log, out).ok());
  RunOutput dirty = out;
  dirty.cpus[0].aux[0].data[5] = std::byte{1};
  EXPECT_TRUE(violates(check(log, dirty), kAuxDelivery));
  // The head one byte before the end: the record's position is -1.
  KernelLog edge = log;
  edge.cpus[0].aux.snapshot_heads = {4095};
  edge.cpus[0].aux.head = edge.cpus[0].aux.attempted_bytes = 4095;
  edge.cpus[0].aux.ends = {edge.cpus[0].aux.ends[0]};
  edge.cpus[0].aux.ends[0].written = edge.cpus[0].aux.ends[0].head_after = 4095;
  edge.cpus[0].aux.ends[0].offset = 4095;
  RunOutput last_byte;
  last_byte.cpus.resize(1);
  AuxChunk one_zero_first;
  one_zero_first.offset = 4095;
  one_zero_first.data.push_back(std::byte{0});
  for (std::uint64_t p = 0; p < 4095; p++) one_zero_first.data.push_back(aux_byte(log.seed, 0, p));
  last_byte.cpus[0].aux.push_back(one_zero_first);
  EXPECT_TRUE(check(edge, last_byte).ok()) << check(edge, last_byte).violations.front().detail;
  RunOutput shifted = out;  // the right bytes under the wrong index
  shifted.cpus[0].aux[0].offset = 2992;
  EXPECT_TRUE(violates(check(log, shifted), kAuxDelivery));
}

TEST(OracleAux, TruncatedBytesWithoutATruncatedRecord) {
  KernelLog log = good_log();
  log.cpus[0].aux.attempted_bytes += 100;
  log.cpus[0].aux.truncated_bytes = 100;
  EXPECT_TRUE(violates(check(log, delivered(log, 0, 2500)), kAuxTruncation));
}

TEST(OracleAux, WrongBytesMissingBytesAndAGap) {
  const KernelLog log = good_log();
  RunOutput out = delivered(log, 0, 2500);
  out.cpus[0].aux[0].data[1234] ^= std::byte{1};
  EXPECT_TRUE(violates(check(log, out), kAuxDelivery));
  EXPECT_TRUE(violates(check(log, delivered(log, 0, 2000)), kAuxDelivery));  // 500 bytes never delivered
  EXPECT_TRUE(violates(check(log, delivered(log, 8, 2500)), kAuxDelivery));  // a gap in non-overwrite mode
}

}  // namespace
}  // namespace ringsim::model
