// core/stack_cut.h: samples' user stack dumps cut in place, the records
// around them untouched, and when the pressure policy cuts how much.
#include "core/stack_cut.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/records.h"

namespace ringsim::core {
namespace {

constexpr std::uint64_t kType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
                                PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
constexpr std::uint32_t kRegs = 3;

void put(std::vector<std::byte>& out, std::uint64_t v) {
  const auto* p = reinterpret_cast<const std::byte*>(&v);
  out.insert(out.end(), p, p + 8);
}
std::uint64_t get(const std::vector<std::byte>& in, std::uint64_t at) {
  std::uint64_t v = 0;
  std::memcpy(&v, in.data() + at, 8);
  return v;
}

// A sample: 6 u64 fields, a callchain of 2, `kRegs` registers (abi 2), a
// dump of `dump` bytes (byte k = k) with dyn_size `dyn`, then `after`
// (the fields a longer sample_type would put after the dump).
std::vector<std::byte> sample(std::uint64_t dump, std::uint64_t dyn, std::uint64_t abi = 2) {
  std::vector<std::byte> r(8);
  for (std::uint64_t k = 0; k < 6; k++) put(r, 100 + k);
  put(r, 2);
  put(r, 0x1000);
  put(r, 0x2000);
  put(r, abi);
  if (abi != 0) {
    for (std::uint32_t k = 0; k < kRegs; k++) put(r, 0x300 + k);
  }
  put(r, dump);
  for (std::uint64_t k = 0; k < dump; k++) r.push_back(static_cast<std::byte>(k));
  if (dump != 0) put(r, dyn);
  perf_event_header h{PERF_RECORD_SAMPLE, 0, static_cast<std::uint16_t>(r.size())};
  std::memcpy(r.data(), &h, sizeof h);
  return r;
}

std::vector<std::byte> comm_record() {
  std::vector<std::byte> r(8);
  put(r, 42);
  put(r, 0x6d6d6f63);  // "comm"
  perf_event_header h{PERF_RECORD_COMM, 0, static_cast<std::uint16_t>(r.size())};
  std::memcpy(r.data(), &h, sizeof h);
  return r;
}

constexpr std::uint64_t kStackAt = 8 + 6 * 8 + 3 * 8 + 8 + kRegs * 8;  // the dump's size field

struct Chunk {
  std::vector<std::byte> bytes;
  RecordCounts counts;
  StackCutStats stats;
  std::uint64_t cut(std::uint64_t keep) {
    counts = RecordCounts{};
    EXPECT_EQ(walk_records(bytes, counts).error, RecordError::none);
    const std::uint64_t left = cut_stacks(bytes, bytes.size(), SampleLayout{kType, kRegs}, keep, counts, stats);
    bytes.resize(left);
    return left;
  }
};

TEST(StackCut, CutsTheDumpAndKeepsEverythingElse) {
  Chunk c;
  const std::vector<std::byte> s = sample(64, 40), comm = comm_record();
  c.bytes = s;
  c.bytes.insert(c.bytes.end(), comm.begin(), comm.end());
  c.bytes.insert(c.bytes.end(), s.begin(), s.end());
  const std::uint64_t before = c.bytes.size();
  EXPECT_EQ(c.cut(16), before - 2 * 48);
  EXPECT_EQ(c.stats.samples_cut, 2u);
  EXPECT_EQ(c.stats.bytes_cut, 96u);
  EXPECT_EQ(c.counts.bytes, c.bytes.size());
  RecordCounts again;
  ASSERT_EQ(walk_records(c.bytes, again).error, RecordError::none);
  EXPECT_EQ(again.records, 3u);
  EXPECT_EQ(again.samples, 2u);
  // The first sample: fields before the dump as they were, size 16, the
  // first 16 bytes, dyn_size min(40, 16).
  EXPECT_TRUE(std::equal(s.begin() + 8, s.begin() + kStackAt, c.bytes.begin() + 8));
  EXPECT_EQ(get(c.bytes, kStackAt), 16u);
  for (std::uint64_t k = 0; k < 16; k++) EXPECT_EQ(c.bytes[kStackAt + 8 + k], static_cast<std::byte>(k));
  EXPECT_EQ(get(c.bytes, kStackAt + 8 + 16), 16u);
  // The COMM record, moved down whole.
  const std::uint64_t first = kStackAt + 8 + 16 + 8;
  EXPECT_TRUE(std::equal(comm.begin(), comm.end(), c.bytes.begin() + static_cast<std::ptrdiff_t>(first)));
}

TEST(StackCut, DynSizeBelowTheCutIsKept) {
  Chunk c;
  c.bytes = sample(64, 8);
  c.cut(32);
  EXPECT_EQ(get(c.bytes, kStackAt), 32u);
  EXPECT_EQ(get(c.bytes, kStackAt + 8 + 32), 8u);
}

TEST(StackCut, CutToNothingDropsTheDynSize) {
  Chunk c;
  c.bytes = sample(64, 64);
  EXPECT_EQ(c.cut(0), sample(0, 0).size());
  EXPECT_EQ(c.bytes, sample(0, 0));
}

TEST(StackCut, ShortDumpsAndOtherRecordsAreLeftAlone) {
  Chunk c;
  const std::vector<std::byte> s = sample(16, 16), comm = comm_record();
  c.bytes = s;
  c.bytes.insert(c.bytes.end(), comm.begin(), comm.end());
  const std::vector<std::byte> whole = c.bytes;
  EXPECT_EQ(c.cut(16), whole.size());
  EXPECT_EQ(c.bytes, whole);
  EXPECT_EQ(c.stats.samples_cut, 0u);
  EXPECT_EQ(c.stats.chunks_cut, 0u);
  EXPECT_EQ(c.stats.dumps_seen, 1u);
}

TEST(StackCut, NoRegistersWithAbiNone) {
  Chunk c;
  c.bytes = sample(64, 64, /*abi=*/0);
  const std::uint64_t before = c.bytes.size();
  EXPECT_EQ(c.cut(8), before - 56);
  EXPECT_EQ(get(c.bytes, kStackAt - kRegs * 8), 8u);
}

TEST(StackCut, LayoutsThatCannotBeCut) {
  EXPECT_EQ(stack_cut_problem(SampleLayout{kType, kRegs}), "");
  EXPECT_NE(stack_cut_problem(SampleLayout{kType & ~std::uint64_t{PERF_SAMPLE_STACK_USER}, kRegs}), "");
  EXPECT_NE(stack_cut_problem(SampleLayout{kType | PERF_SAMPLE_READ, kRegs}), "");
  EXPECT_NE(stack_cut_problem(SampleLayout{kType | PERF_SAMPLE_BRANCH_STACK, kRegs}), "");
}

TEST(StackCut, PressurePolicy) {
  StackCutPolicy p;
  p.mode = StackCutPolicy::Mode::pressure;
  p.dump_bytes = 2048;
  EXPECT_EQ(p.keep(0, 1000), UINT64_MAX);
  EXPECT_EQ(p.keep(500, 1000), UINT64_MAX);  // half full: no cut yet
  EXPECT_EQ(p.keep(750, 1000), 1024u);       // three quarters: half the dump
  EXPECT_EQ(p.keep(1000, 1000), 0u);         // full: nothing
  p.mode = StackCutPolicy::Mode::always;
  p.keep_bytes = 512;
  EXPECT_EQ(p.keep(0, 1000), 512u);
  p.mode = StackCutPolicy::Mode::off;
  EXPECT_EQ(p.keep(1000, 1000), UINT64_MAX);
}

}  // namespace
}  // namespace ringsim::core
