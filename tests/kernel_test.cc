// The simulated kernel's ring (sim/ring.h), one Linux rule per test, each
// as observed on this machine's kernel (docs/fidelity.md). Every test's log
// also replays cleanly through the model's own statement of the rules
// (model/kernel_rules.h), and a log with one thing wrong does not.
#include <gtest/gtest.h>

#include "model/kernel_rules.h"
#include "sim/kernel.h"
#include "sim/scheduler.h"
#include "tests/test_util.h"

namespace ringsim::sim {
namespace {

using ringsim::testing::RingFixture;

void expect_rules_hold(const RingFixture& f) {
  const std::vector<model::Violation> v = model::check_kernel_rules(f.kernel_log());
  EXPECT_TRUE(v.empty()) << v.front().detail;
}

TEST(SimRing, AtMostSizeMinusOneBytesInUse) {
  RingFixture f(4096);
  // 512-byte records: 7 fit (3584); an 8th would fill the area exactly,
  // which CIRC_SPACE never allows.
  for (int i = 0; i < 7; i++) ASSERT_EQ(f.put(512), SimRing::Output::written);
  EXPECT_EQ(f.put(512), SimRing::Output::dropped_full);
  // 8-byte steps: the ring holds 4088 bytes at most.
  EXPECT_EQ(f.put(504), SimRing::Output::dropped_full);  // the pending LOST (56) must fit with it
  f.ring->store_tail(f.ring->head());
  EXPECT_EQ(f.put(4040 - 8), SimRing::Output::written);  // LOST 56 + 4032 = 4088
  EXPECT_EQ(f.log.written.back().size, 4032u);
  EXPECT_EQ(f.log.written[7].lost, 2u);
  expect_rules_hold(f);
}

TEST(SimRing, ARecordOfTheDataSizeNeverFits) {
  RingFixture f(4096);
  EXPECT_EQ(f.put(4096), SimRing::Output::dropped_too_big);
  EXPECT_EQ(f.put(4096 + 8), SimRing::Output::dropped_too_big);
  EXPECT_EQ(f.log.dropped_too_big, 2u);
  // A record of size - 8 fits into an empty ring, but not with a LOST
  // record before it: it stays dropped while drops are pending.
  EXPECT_EQ(f.put(4088), SimRing::Output::dropped_full);
  EXPECT_EQ(f.put(48), SimRing::Output::written);  // carries LOST {lost = 3}
  EXPECT_EQ(f.log.written.front().lost, 3u);
  f.ring->store_tail(f.ring->head());
  EXPECT_EQ(f.put(4088), SimRing::Output::written);
  EXPECT_EQ(f.probes.count(Probe::record_never_fits), 2u);
  expect_rules_hold(f);
}

TEST(SimRing, PausedOutputDropsAndTheNextRecordAfterResumeReports) {
  RingFixture f(4096);
  f.ring->set_paused(true);
  EXPECT_EQ(f.put(64), SimRing::Output::dropped_paused);
  EXPECT_EQ(f.put(64), SimRing::Output::dropped_paused);
  f.ring->set_paused(false);
  EXPECT_TRUE(f.log.written.empty());  // resuming writes nothing
  ASSERT_EQ(f.put(64), SimRing::Output::written);
  ASSERT_EQ(f.log.written.size(), 2u);
  EXPECT_EQ(f.log.written[0].type, PERF_RECORD_LOST);
  EXPECT_EQ(f.log.written[0].lost, 2u);
  EXPECT_EQ(f.log.dropped_paused, 2u);
  expect_rules_hold(f);
}

TEST(SimRing, PendingDropsWithNothingAfterThemStayUnreported) {
  RingFixture f(4096);
  for (int i = 0; i < 7; i++) f.put(512);
  f.put(512);
  f.ring->abandon_pending();  // the event exited: nothing waits for room
  EXPECT_EQ(f.log.dropped_unreported, 1u);
  EXPECT_EQ(f.log.lost_reported, 0u);
  expect_rules_hold(f);
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
  std::vector<std::byte> copy(200);
  const auto data = f.ring->data();
  std::memcpy(copy.data(), data.data() + 4000, 96);
  std::memcpy(copy.data() + 96, data.data(), 104);
  EXPECT_EQ(0, std::memcmp(copy.data(), f.log.bytes.data() + f.log.written[1].offset, 200));
  expect_rules_hold(f);
}

TEST(SimRing, WakeupEventsCountSamplesAndMoveTheByteMarkByOne) {
  // wakeup_events = 5 with the default half-area byte watermark: the two
  // share the ring's wakeup mark (as seen on this machine's kernel: the
  // byte wakeups come one byte later per event wakeup).
  RingFixture f(4096, core::RingMode::normal, 5);
  std::vector<int> woke;
  for (int i = 1; i <= 100; i++) {
    f.put(48);
    if (f.ring->take_wakeup()) woke.push_back(i);
    if (f.ring->head() - f.ring->tail() > 3000) f.ring->store_tail(f.ring->head());
  }
  // Samples 5, 10, ... by count; by bytes when 48 * k - mark > 2048, the
  // mark having moved one byte per count wakeup: at 43 (2064 - 8) and 86.
  std::vector<int> expected;
  for (int i = 5; i <= 100; i += 5) expected.push_back(i);
  expected.insert(expected.begin() + 8, 43);
  expected.insert(expected.begin() + 18, 86);
  EXPECT_EQ(woke, expected);
  EXPECT_EQ(f.probes.count(Probe::wakeup_events), 20u);
  expect_rules_hold(f);
}

TEST(SimRing, WakeupEventsCountOnlySamples) {
  RingFixture f(65536, core::RingMode::normal, 1);
  EventIdentity id;
  id.id = 1000;
  std::vector<std::byte> comm(sideband_bytes(PERF_RECORD_COMM, id.layout));
  build_sideband(comm, PERF_RECORD_COMM, id, 0, 0);
  for (int i = 0; i < 10; i++) EXPECT_EQ(f.ring->output(f.event, comm, 0), SimRing::Output::written);
  EXPECT_FALSE(f.ring->take_wakeup());
  f.put(48);
  EXPECT_TRUE(f.ring->take_wakeup());
  expect_rules_hold(f);
}

TEST(SimRing, WatermarkIsAUnionWithWakeupEvents) {
  // attr.watermark: wakeup_events is ignored; wake when the bytes pass the
  // mark by more than the watermark (strictly), then the mark moves by one
  // watermark.
  RingFixture f(8192, core::RingMode::normal, 1, 100);
  std::vector<std::uint64_t> woke_at;
  for (int i = 1; i <= 20; i++) {
    f.put(48);
    if (f.ring->take_wakeup()) woke_at.push_back(f.ring->head());
  }
  EXPECT_EQ(woke_at, (std::vector<std::uint64_t>{144, 240, 336, 432, 528, 624, 720, 816, 912}));
  expect_rules_hold(f);
}

TEST(SimRing, PollIsEdgeTriggeredAndHangupComesAlone) {
  RingFixture f(4096, core::RingMode::normal, 1);
  f.put(48);
  EXPECT_TRUE(f.ring->poll(false, true, false));
  EXPECT_FALSE(f.ring->poll(false, true, false));  // taken
  f.put(48);
  EXPECT_FALSE(f.ring->poll(true, true, true));  // POLLHUP alone, even with a wakeup pending
  expect_rules_hold(f);
}

TEST(SimRing, BackwardOverwriteWritesDownAndOverwritesEvenOversizedRecords) {
  RingFixture f(4096, core::RingMode::backward);
  ASSERT_EQ(f.put(64), SimRing::Output::written);
  EXPECT_EQ(f.ring->head(), std::uint64_t{0} - 64);
  ASSERT_EQ(f.put(128), SimRing::Output::written);
  EXPECT_EQ(f.ring->head(), std::uint64_t{0} - 192);
  EXPECT_EQ(f.log.written[1].position, f.ring->head());
  for (int i = 0; i < 100; i++) ASSERT_EQ(f.put(64), SimRing::Output::written);
  EXPECT_GT(f.probes.count(Probe::overwrite_unread), 0u);
  // A record larger than the area goes in too, its copy wrapping onto its
  // own start; head moves by its whole size.
  const std::uint64_t before = f.ring->head();
  ASSERT_EQ(f.put(6000), SimRing::Output::written);
  EXPECT_EQ(before - f.ring->head(), 6000u);
  EXPECT_EQ(f.log.dropped(), 0u);
  expect_rules_hold(f);
}

TEST(SimRing, BackwardWritableHonoursTheTailAndPutsLostBelowTheRecord) {
  RingFixture f(4096, core::RingMode::backward_writable);
  for (int i = 0; i < 200; i++) f.put(24 + 24);
  EXPECT_EQ(std::uint64_t{0} - f.ring->head(), 4080u);  // 85 records of 48
  EXPECT_GT(f.log.dropped_full, 0u);
  f.ring->store_tail(f.ring->head());
  ASSERT_EQ(f.put(48), SimRing::Output::written);
  // The log keeps a backward ring's records as a reader delivers them,
  // highest position first: the sample, then its LOST record below it.
  const model::WrittenRecord& sample = f.log.written[f.log.written.size() - 2];
  const model::WrittenRecord& lost = f.log.written.back();
  EXPECT_EQ(lost.type, PERF_RECORD_LOST);
  EXPECT_EQ(lost.position + lost.size, sample.position);  // LOST at the lower address
  EXPECT_EQ(f.ring->head(), lost.position);
  expect_rules_hold(f);
}

TEST(SimRing, ForwardOverwriteIsSilent) {
  RingFixture f(4096, core::RingMode::forward_overwrite);
  for (int i = 0; i < 200; i++) ASSERT_EQ(f.put(48), SimRing::Output::written);
  EXPECT_EQ(f.ring->head(), 200u * 48);
  EXPECT_EQ(f.log.dropped(), 0u);
  expect_rules_hold(f);
}

TEST(SimRing, OnlyTheOutermostWriterPublishesHead) {
  RingFixture f(4096);
  const std::vector<std::byte> outer = ringsim::testing::sample(64, 1);
  const std::vector<std::byte> inner = ringsim::testing::sample(96, 2);
  const SimRing::Handle h = f.ring->begin(f.event, outer.size(), true, 0);
  EXPECT_EQ(f.ring->output(f.event, inner, 1), SimRing::Output::written);  // nested
  EXPECT_EQ(f.ring->head(), 0u);                                           // not yet published
  f.ring->write(h, outer, 0);
  f.ring->end(h, 5);
  EXPECT_EQ(f.ring->head(), 160u);
  EXPECT_EQ(f.log.written[0].size, 64u);  // ring order: the outer reserved first
  // The inner record, written at 1, was published with the outer at 5.
  EXPECT_EQ(f.log.written[0].published_ns, 5u);
  EXPECT_EQ(f.log.written[1].published_ns, 5u);
  EXPECT_EQ(f.probes.count(Probe::nested_writer), 1u);
  expect_rules_hold(f);
}

TEST(SimRing, AWriteAlreadyPastItsCheckLandsAfterThePause) {
  RingFixture f(4096, core::RingMode::backward);
  const std::vector<std::byte> record = ringsim::testing::sample(64, 1);
  const SimRing::Handle h = f.ring->begin(f.event, record.size(), true, 0);
  f.ring->set_paused(true);  // the reader's PAUSE_OUTPUT returns now
  f.ring->write(h, record, 0);
  f.ring->end(h, 0);
  EXPECT_EQ(f.ring->head(), std::uint64_t{0} - 64);  // it landed anyway
  EXPECT_EQ(f.put(64), SimRing::Output::dropped_paused);
  expect_rules_hold(f);
}

TEST(KernelRules, ALogWithOneThingWrongIsCaught) {
  RingFixture f(4096);
  for (int i = 0; i < 8; i++) f.put(512);
  model::KernelLog log = f.kernel_log();
  ASSERT_TRUE(model::check_kernel_rules(log).empty());
  // The old rule (a ring can be exactly full) would have written the 8th.
  for (model::RingOp& op : log.cpus[0].ops) {
    if (op.kind == model::RingOp::Kind::begin && op.result == model::RingOp::full) op.result = model::RingOp::written;
  }
  EXPECT_FALSE(model::check_kernel_rules(log).empty());
  // A hangup for a system-wide event, and POLLIN with POLLHUP.
  model::KernelLog polls = f.kernel_log();
  model::RingOp hup;
  hup.kind = model::RingOp::Kind::poll;
  hup.hangup = true;
  hup.per_task = false;
  hup.all_exited = true;
  polls.cpus[0].ops.push_back(hup);
  EXPECT_FALSE(model::check_kernel_rules(polls).empty());
}

}  // namespace
}  // namespace ringsim::sim

namespace ringsim::sim {
namespace {

// PERF_EVENT_IOC_DISABLE returns once the writes in progress are done, for
// every caller: a second disable (the reader's, after a stop request's)
// must not return while a held writer can still land a record.
TEST(Kernel, EveryDisableWaitsForTheWritesInProgress) {
  for (std::uint64_t seed = 1; seed <= 20; seed++) {
    DecisionSource decisions(seed, false);
    Scheduler scheduler(decisions, SchedulerLimits{});
    KernelConfig config;
    config.cpus = 2;
    config.ring_bytes = 1 << 16;
    config.records_per_cpu = 100'000;
    config.endless = true;
    config.late_write_per_million = 1'000'000;  // every writer is held
    config.gap_ns_max = 1'000;
    model::KernelLog log;
    Probes probes;
    Kernel kernel(scheduler, config, log, probes);
    std::uint64_t first_returned_ns = 0, second_returned_ns = 0;
    scheduler.run([&] {
      kernel.start();
      scheduler.spawn("stop", [&] {
        scheduler.sleep_for(100'000);
        kernel.disable_all();
        first_returned_ns = scheduler.now_ns();
      });
      scheduler.spawn("reader", [&] {
        scheduler.sleep_for(100'001);
        kernel.disable_all();
        second_returned_ns = scheduler.now_ns();
      });
    });
    ASSERT_GT(second_returned_ns, 0u) << "seed " << seed;
    std::uint64_t last_published_ns = 0;
    for (const model::CpuLog& cpu : log.cpus) {
      for (const model::WrittenRecord& w : cpu.written) last_published_ns = std::max(last_published_ns, w.published_ns);
    }
    EXPECT_LE(last_published_ns, first_returned_ns) << "seed " << seed;
    EXPECT_LE(last_published_ns, second_returned_ns) << "seed " << seed;
  }
}

}  // namespace
}  // namespace ringsim::sim
