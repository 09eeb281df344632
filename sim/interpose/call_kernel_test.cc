// The simulated kernel behind the system-call surface, driven directly
// (no preloading, so it runs under the sanitizers too): a consumer's
// loop over its ring reads every record the kernel logged, in order, and
// the event hangs up when the workload ends.
#include <linux/perf_event.h>
#include <poll.h>

#include <cstring>
#include <span>
#include <vector>

#include "gtest/gtest.h"
#include "sim/decisions.h"
#include "model/aux_content.h"
#include "sim/call_kernel.h"

namespace ringsim::sim::interpose {
namespace {

// A consumer's loop over `event`'s 8-page ring mapped at `memory`: steps
// the kernel, copies out what each step published and gives it back,
// until the event hangs up (at most 100,000 steps). What was read, and
// whether it hung up.
std::vector<std::byte> read_until_hangup(CallKernel& k, long event, std::vector<std::byte>& memory, bool& hung_up) {
  auto* control = reinterpret_cast<perf_event_mmap_page*>(memory.data());
  std::vector<std::byte> read;
  hung_up = false;
  for (int steps = 0; steps < 100'000 && !hung_up; steps++) {
    k.step();
    hung_up = (k.poll(static_cast<int>(event)) & POLLHUP) != 0;
    const std::uint64_t head = control->data_head;
    for (std::uint64_t at = control->data_tail; at < head; at++) read.push_back(memory[4096 + (at & (8 * 4096 - 1))]);
    control->data_tail = head;
  }
  return read;
}

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
    bool hung_up = false;
    const std::vector<std::byte> read = read_until_hangup(k, event, memory, hung_up);
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

// PERF_SAMPLE_READ (perf record's leader sampling, {cpu-clock,page-faults}:S):
// each of the leader's samples carries the group's values as the real
// kernel writes them (perf_output_read_group: nr, then value, id and lost
// per member, leader first; ringsim-record's file on this machine's kernel
// holds "group nr 2" in every sample), the counts never going back, the
// member's at most its count at the end; an inherited event samples READ
// only with TID (EINVAL without, as this machine's 6.18).
TEST(CallKernel, SamplesReadTheGroupsCountersAsLinuxWritesThem) {
  std::uint64_t samples = 0;
  for (std::uint64_t seed = 1; seed <= 20; seed++) {
    SCOPED_TRACE(seed);
    DecisionSource d(seed, false);
    CallKernel k(d, KernelParams{});
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attr.sample_period = 100'000;
    attr.sample_type = PERF_SAMPLE_READ | PERF_SAMPLE_IDENTIFIER;
    attr.inherit = 1;
    EXPECT_EQ(k.open(attr, 200, -1, -1, 0, 100), -EINVAL) << "inherit and READ without TID";
    attr.inherit = 0;
    attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_READ;
    attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST;
    attr.sample_id_all = attr.comm = attr.task = 1;
    attr.disabled = attr.enable_on_exec = 1;
    const long leader = k.open(attr, 200, -1, -1, 0, 100);
    ASSERT_GE(leader, 0);
    perf_event_attr member = attr;
    member.config = PERF_COUNT_SW_PAGE_FAULTS;
    member.sample_period = 0;
    member.comm = member.task = member.disabled = member.enable_on_exec = 0;
    const long faults = k.open(member, 200, -1, static_cast<int>(leader), 0, 100);
    ASSERT_GE(faults, 0);
    std::vector<std::byte> memory((1 + 8) * 4096);
    ASSERT_GE(k.map(static_cast<int>(leader), memory, true), 0);
    bool hung_up = false;
    const std::vector<std::byte> read = read_until_hangup(k, leader, memory, hung_up);
    ASSERT_TRUE(hung_up);
    const std::uint64_t leader_id = k.events()[static_cast<std::size_t>(leader)].id;
    const std::uint64_t faults_id = k.events()[static_cast<std::size_t>(faults)].id;
    std::uint64_t last[2] = {0, 0};
    for (std::size_t at = 0; at + 8 <= read.size();) {
      perf_event_header h{};
      std::memcpy(&h, read.data() + at, sizeof h);
      ASSERT_GE(h.size, 8u);
      if (h.type == PERF_RECORD_SAMPLE) {
        std::uint64_t w[9] = {};
        ASSERT_EQ(h.size, 8u + sizeof w) << "IDENTIFIER, TID, nr, then {value, id, lost} x 2";
        std::memcpy(w, read.data() + at + 8, sizeof w);
        EXPECT_EQ(w[0], leader_id);
        EXPECT_EQ(w[2], 2u);
        EXPECT_EQ(w[4], leader_id);
        EXPECT_EQ(w[7], faults_id);
        EXPECT_GE(w[3], last[0]);
        EXPECT_GE(w[6], last[1]);
        EXPECT_GT(w[3], 0u) << "the sampled clock has counted";
        last[0] = w[3];
        last[1] = w[6];
        samples++;
      }
      at += h.size;
    }
    std::uint64_t words[7] = {};
    ASSERT_EQ(k.read(static_cast<int>(faults), std::as_writable_bytes(std::span(words))), long{sizeof words});
    EXPECT_EQ(words[0], 2u);
    EXPECT_LE(last[1], words[4]);
  }
  EXPECT_GT(samples, 20u);
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

// An event of the simulated AUX PMU on task 200, its ring of 2 data pages
// mapped; `memory` the control page, the data pages, then room for an
// AUX area of up to 8 pages.
struct AuxSetup {
  DecisionSource d{7, false};
  CallKernel k{d, KernelParams{}};
  std::vector<std::byte> memory = std::vector<std::byte>((1 + 2 + 8) * 4096);
  int event = -1;
  int ring = -1;
  perf_event_mmap_page* control() { return reinterpret_cast<perf_event_mmap_page*>(memory.data()); }
  std::span<std::byte> aux(std::size_t pages) { return {memory.data() + 3 * 4096, pages * 4096}; }
  void open(std::uint32_t type) {
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = type;
    attr.config = type == kAuxPmuType ? 0 : PERF_COUNT_SW_CPU_CLOCK;
    attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID;
    attr.sample_id_all = 1;
    attr.disabled = attr.enable_on_exec = 1;
    event = static_cast<int>(k.open(attr, 200, -1, -1, 0, 100));
    ASSERT_GE(event, 0);
    ring = static_cast<int>(k.map(event, {memory.data(), 3 * 4096}, true));
    ASSERT_GE(ring, 0);
  }
};

// perf_mmap's AUX checks, in Linux's order: the control page's aux_offset
// above the data pages and equal to the mapping's offset, aux_size the
// mapping's length, a power of two of pages; only then does rb_alloc_aux
// ask whether the PMU has an AUX area (a software event: EOPNOTSUPP).
TEST(CallKernel, TheAuxAreaIsMappedAsPerfMmapChecksIt) {
  AuxSetup s;
  s.open(kAuxPmuType);
  perf_event_mmap_page* c = s.control();
  c->aux_offset = 2 * 4096;  // inside the data pages
  c->aux_size = 4 * 4096;
  EXPECT_EQ(s.k.map_aux(s.event, s.aux(4), 2 * 4096, true, 1), -EINVAL);
  c->aux_offset = 3 * 4096;
  EXPECT_EQ(s.k.map_aux(s.event, s.aux(4), 4 * 4096, true, 1), -EINVAL);  // not the mapping's offset
  EXPECT_EQ(s.k.map_aux(s.event, s.aux(2), 3 * 4096, true, 1), -EINVAL);  // not aux_size
  c->aux_size = 3 * 4096;
  EXPECT_EQ(s.k.map_aux(s.event, s.aux(3), 3 * 4096, true, 1), -EINVAL);  // 3 pages
  c->aux_size = 4 * 4096;
  EXPECT_EQ(s.k.map_aux(s.event, s.aux(4), 3 * 4096, true, 1), s.ring);
  EXPECT_EQ(s.k.map_aux(s.event, s.aux(8), 3 * 4096, true, 1), -EINVAL);  // again, another size
  EXPECT_EQ(s.k.map_aux(s.event, s.aux(4), 3 * 4096, true, 1), s.ring);   // again, the same
  s.k.unmap_aux(s.ring);
  s.k.unmap_aux(s.ring);
  AuxSetup software;
  software.open(PERF_TYPE_SOFTWARE);
  software.control()->aux_offset = 3 * 4096;
  software.control()->aux_size = 4 * 4096;
  EXPECT_EQ(software.k.map_aux(software.event, software.aux(4), 3 * 4096, true, 1), -EOPNOTSUPP);
}

// The PMU's transactions: each writes the bytes model::aux_byte names at
// aux_head and PERF_RECORD_AUX {old head, size, flags} into the ring; a
// consumer that never moves aux_tail sees a transaction cut short
// (TRUNCATED), the event disabled and a wakeup, then nothing more until
// it re-enables the event; a tail past aux_head is a finding.
TEST(CallKernel, AuxTransactionsWriteTheNamedBytesAndATruncationDisablesTheEvent) {
  AuxSetup s;
  s.open(kAuxPmuType);
  s.control()->aux_offset = 3 * 4096;
  s.control()->aux_size = 2 * 4096;
  ASSERT_EQ(s.k.map_aux(s.event, s.aux(2), 3 * 4096, true, 99), s.ring);
  const MappedRing& r = *s.k.rings().at(static_cast<std::size_t>(s.ring));
  bool truncated = false;
  for (int steps = 0; steps < 100'000 && !truncated && !s.k.ended(); steps++) {
    s.k.step();
    truncated = r.aux->truncated > 0 || r.aux->full_disables > 0;
    s.control()->data_tail = s.control()->data_head;  // the ring's records: skipped
  }
  ASSERT_TRUE(truncated) << "no transaction was cut short in a 2-page area nobody reads";
  const std::uint64_t head = s.control()->aux_head;
  EXPECT_EQ(head, r.aux->head);
  EXPECT_LT(head, 2u * 4096);
  EXPECT_EQ(model::aux_mismatch(99, static_cast<std::uint32_t>(r.aux->owner_id), 0, s.aux(2).data(), head), head);
  EXPECT_FALSE(s.k.events().at(static_cast<std::size_t>(s.event)).enabled);
  EXPECT_NE(s.k.poll(s.event) & POLLIN, 0);
  const std::uint64_t transactions = r.aux->transactions;
  for (int steps = 0; steps < 50 && !s.k.ended(); steps++) s.k.step();
  EXPECT_EQ(r.aux->transactions, transactions) << "a disabled event ran transactions";
  // The records: PERF_RECORD_AUX, each at the old head, adding up to it.
  std::uint64_t reported = 0;
  std::uint64_t cut = 0;
  for (const model::WrittenRecord& w : r.log.written) {
    if (w.type != PERF_RECORD_AUX) continue;
    std::uint64_t offset = 0, size = 0, flags = 0;
    std::memcpy(&offset, r.log.bytes.data() + w.offset + 8, 8);
    std::memcpy(&size, r.log.bytes.data() + w.offset + 16, 8);
    std::memcpy(&flags, r.log.bytes.data() + w.offset + 24, 8);
    EXPECT_EQ(offset, reported);
    reported += size;
    cut += (flags & PERF_AUX_FLAG_TRUNCATED) != 0 ? 1 : 0;
  }
  EXPECT_EQ(reported, head);
  EXPECT_EQ(cut, r.aux->truncated);
  s.control()->aux_tail = head + 8;
  s.k.sync_tails();
  EXPECT_NE(r.aux->bad_tail.find("aux_tail " + std::to_string(head + 8)), std::string::npos) << r.aux->bad_tail;
}

}  // namespace
}  // namespace ringsim::sim::interpose
