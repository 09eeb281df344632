// Property counters_agree (sim/counters.h, model/counters.h): each counter
// the campaign prints that has an independent count is checked against it.
// Each check is shown to fail: a real run's counters agree, and the same
// result with one counter off by one (or more) gives exactly one
// violation, one line naming the counter, both counts and the CPU.
#include <algorithm>
#include <cerrno>
#include <functional>
#include <string>

#include "gtest/gtest.h"
#include "model/counters.h"
#include "sim/counters.h"
#include "sim/params.h"
#include "sim/run.h"

namespace ringsim::sim {
namespace {

// The first of seeds 1..200 whose run (the seed's configuration, changed
// by `shape`) passes and has what `wanted` asks for.
RunResult find_run(const std::function<void(RunConfig&)>& shape, const std::function<bool(const RunResult&)>& wanted) {
  for (std::uint64_t seed = 1; seed <= 200; seed++) {
    RunConfig c = random_config(seed);
    shape(c);
    if (!validate(c).empty()) continue;
    RunResult r = run_simulation(c);
    if (r.ok() && wanted(r)) return r;
  }
  ADD_FAILURE() << "no seed in 1..200 gives the run wanted";
  return RunResult{};
}

// A memory run of a backward overwrite ring whose reader reported gaps.
RunResult overwrite_run() {
  return find_run(
      [](RunConfig& c) {
        set_mode(c, core::RingMode::backward);
        set_output(c, Output::memory);
        clear_aux(c);
        c.ring_pages = 1;
        c.stop_at_ns = 0;
        c.mutant = Mutant::none;
      },
      [](const RunResult& r) { return r.oracle.gaps > 0; });
}

// A one-page normal ring written to an AIO writer through a staging
// buffer, on a disk that refuses, interrupts and shortens writes (AUX
// areas as the seed draws them).
void faulty_disk(RunConfig& c) {
  set_mode(c, core::RingMode::normal);
  set_output(c, Output::aio);
  c.stop_at_ns = 0;
  c.mutant = Mutant::none;
  c.ring_pages = 1;
  c.disk_short_per_million = 200'000;
  c.disk_eagain_per_million = 200'000;
  c.disk_eintr_per_million = 50'000;
  c.disk_suspend_eintr_per_million = 50'000;
  c.disk_eio_per_million = 0;
  c.disk_capacity_bytes = 0;
  c.disk_open_fails = 0;
  c.staging_bytes = (4 * c.chunk_bytes_max() + 7) / 8 * 8;
}

RunResult disk_run() {
  return find_run(faulty_disk, [](const RunResult& r) {
    return r.writer.short_writes_restarted > 0 && r.writer.eagain_retries > 0 && r.writer.eintr_retries > 0 &&
           r.log.cpus[0].dropped_full > 0 && r.staging.writes > 0 && r.oracle.samples_delivered > 0;
  });
}

// The same, cut short by EIO after the writer wrote records.
RunResult cut_run() {
  return find_run(
      [](RunConfig& c) {
        faulty_disk(c);
        c.disk_eio_per_million = 30'000;
      },
      [](const RunResult& r) {
        return r.writer.error == EIO && r.writer_started && r.writer.records.records > 0 &&
               r.writer.drops[core::DropCause::output_error].records.records > 0;
      });
}

// Exactly one violation, of counters_agree, one line, with every part of
// `expected` in it.
void expect_one(const RunResult& wrong, std::initializer_list<std::string> expected) {
  const std::vector<model::Violation> v = check_counters(wrong);
  ASSERT_EQ(v.size(), 1u) << (v.empty() ? "no violation" : v[0].detail + " ... and more");
  EXPECT_EQ(v[0].property, model::kCountersAgree);
  EXPECT_EQ(v[0].detail.find('\n'), std::string::npos) << v[0].detail;
  for (const std::string& part : expected) EXPECT_NE(v[0].detail.find(part), std::string::npos) << v[0].detail;
}

TEST(CountersAgree, EveryCounterAgreesInRealRuns) {
  for (const RunResult& r : {overwrite_run(), disk_run(), cut_run()}) {
    SCOPED_TRACE(r.config.seed);
    for (const model::Violation& v : r.violations) ADD_FAILURE() << v.property << ": " << v.detail;
    EXPECT_TRUE(check_counters(r).empty());
    EXPECT_NE(std::find(r.properties.begin(), r.properties.end(), model::kCountersAgree), r.properties.end());
  }
}

TEST(CountersAgree, AKernelCounterOffByOneNamesItsCpuAndBothCounts) {
  const RunResult good = disk_run();
  ASSERT_GT(good.log.cpus.size(), 0u);
  const model::CpuLog& c = good.log.cpus[0];
  const auto off = [&](std::uint64_t model::CpuLog::*field, const char* name, std::uint64_t kernel) {
    SCOPED_TRACE(name);
    RunResult wrong = good;
    wrong.log.cpus[0].*field += 1;
    expect_one(wrong, {"cpu 0: kernel " + std::string(name) + " is " + std::to_string(kernel + 1),
                       "its logged steps give " + std::to_string(kernel)});
  };
  off(&model::CpuLog::dropped_full, "dropped_full", c.dropped_full);
  off(&model::CpuLog::dropped_paused, "dropped_paused", c.dropped_paused);
  off(&model::CpuLog::dropped_too_big, "dropped_too_big", c.dropped_too_big);
  off(&model::CpuLog::lost_reported, "lost_reported", c.lost_reported);
  off(&model::CpuLog::dropped_unreported, "dropped_unreported", c.dropped_unreported);
  RunResult more_records = good;
  more_records.log.cpus[0].written.push_back(model::WrittenRecord{});
  expect_one(more_records, {"cpu 0: kernel records written is " + std::to_string(c.written.size() + 1)});
  RunResult more_bytes = good;
  more_bytes.log.cpus[0].bytes.resize(c.bytes.size() + 8);
  expect_one(more_bytes, {"cpu 0: kernel bytes written is " + std::to_string(c.bytes.size() + 8)});
  // A drop logged as full but counted as paused: two counters wrong.
  RunResult swapped = good;
  swapped.log.cpus[0].dropped_full--;
  swapped.log.cpus[0].dropped_paused++;
  EXPECT_EQ(model::check_kernel_counters(swapped.log).size(), 2u);
}

TEST(CountersAgree, TheConsumersGapsRecordsAndLossesAgainstTheOracle) {
  const RunResult memory = overwrite_run();
  RunResult gap = memory;
  gap.loop.drops.add_bytes(core::DropCause::overwritten, 0);  // a gap counted twice
  expect_one(gap, {"overwritten gaps (data rings): the readers counted " + std::to_string(memory.oracle.gaps + 1),
                   "the oracle checked " + std::to_string(memory.oracle.gaps)});
  RunResult record = memory;
  record.loop.records.records++;
  expect_one(record, {"records delivered: the record loop committed", std::to_string(memory.oracle.records_delivered)});
  RunResult sample = memory;
  sample.loop.records.samples--;
  expect_one(sample, {"samples delivered", std::to_string(memory.oracle.samples_delivered)});
  const RunResult disk = disk_run();
  RunResult lost = disk;
  lost.writer.records.lost_sum++;
  expect_one(lost, {"lost delivered: the writer took " + std::to_string(disk.writer.records.lost_sum + 1),
                    "the oracle found " + std::to_string(disk.oracle.lost_delivered)});
  RunResult loss = disk;
  loss.loss.lost_sum++;
  expect_one(loss, {"loss metric's lost count", std::to_string(disk.oracle.lost_delivered)});
  RunResult aux = disk;
  aux.loop.aux_drops.add_bytes(core::DropCause::overwritten, 0);
  expect_one(aux, {"overwritten gaps (AUX)", std::to_string(disk.oracle.aux_gaps)});
}

TEST(CountersAgree, TheWritersRetriesAgainstTheDisksFaults) {
  const RunResult good = disk_run();
  const core::WriterStats& w = good.writer;
  const auto off = [&](std::uint64_t core::WriterStats::*field, std::uint64_t by, const std::string& part) {
    SCOPED_TRACE(part);
    RunResult wrong = good;
    wrong.writer.*field += by;
    expect_one(wrong, {part});
  };
  off(&core::WriterStats::short_writes_restarted, 1,
      "short writes restarted: the writer counted " + std::to_string(w.short_writes_restarted + 1) +
          ", the disk completed short " + std::to_string(good.disk.async_short));
  off(&core::WriterStats::eagain_retries, 1, "EAGAIN retries: the writer counted " + std::to_string(w.eagain_retries + 1));
  off(&core::WriterStats::eintr_retries, 1, "EINTR retries: the writer counted");
  off(&core::WriterStats::suspend_interrupted, 1, "EINTR retries: the writer counted");
  off(&core::WriterStats::files, 1, "files: the writer opened " + std::to_string(w.files + 1));
  off(&core::WriterStats::writes_completed, 1, "chunk writes completed: the writer counted");
  // More fallbacks than the refusals allow.
  off(&core::WriterStats::eagain_sync_fallbacks, w.eagain_retries / good.config.eagain_attempts_max + 1,
      "synchronous fallbacks");
}

TEST(CountersAgree, TheStagingAndTheCutAgainstTheWritingFiberAndTheOracle) {
  const RunResult staged = disk_run();
  RunResult writes = staged;
  writes.staging.writes++;
  expect_one(writes, {"staged writes: the staging counted " + std::to_string(staged.staging.writes + 1),
                      "the writing fiber took " + std::to_string(staged.staging_batches)});
  RunResult records = staged;
  records.staging.records.records++;
  expect_one(records, {"staged records: the staging counted " + std::to_string(staged.staging.records.records + 1)});
  const RunResult cut = cut_run();
  core::RecordCounts counted = cut.writer.drops[core::DropCause::output_error].records;
  counted.add(cut.staging.drops[core::DropCause::output_error].records);
  ASSERT_GT(counted.records, 0u);
  // The oracle finds one record fewer missing than the consumer counted.
  RunResult fewer_missing = cut;
  fewer_missing.oracle.records_cut = counted.records - 1;
  expect_one(fewer_missing, {"records cut off: the writer and the staging counted " + std::to_string(counted.records),
                             std::to_string(counted.records - 1)});
  // With nothing abandoned in a writable ring, every missing record must
  // be counted: one more missing than counted is a violation...
  RunResult uncounted = cut;
  uncounted.loop.drops = core::Drops{};  // nothing abandoned (normal mode: no gaps either)
  uncounted.oracle.records_cut = counted.records + 1;
  expect_one(uncounted, {"records cut off: the writer and the staging counted " + std::to_string(counted.records),
                         "the oracle found missing " + std::to_string(counted.records + 1)});
  // ... but not in a read-only ring, whose unread records nobody counts.
  RunResult read_only = uncounted;
  read_only.config.mode = core::RingMode::backward;
  EXPECT_TRUE(check_counters(read_only).empty());
}

// An overwrite ring's last content at an output error: the bytes written
// since its last snapshot that the area still holds are counted abandoned
// (before 2026-11-26 nobody counted them), and clean_finish holds them to
// at most the bytes the oracle finds missing.
TEST(CountersAgree, AnOverwriteRingLeftAtAnOutputErrorIsCountedAbandoned) {
  const RunResult r = find_run(
      [](RunConfig& c) {
        set_mode(c, core::RingMode::backward);
        if (c.snapshot_interval_ns == 0) c.snapshot_interval_ns = 50'000;
        set_output(c, Output::serial);
        c.staging_bytes = 0;
        c.rotate_bytes = 0;
        c.disk_capacity_bytes = 4096 * 8;  // ENOSPC early, with the rings still written
        c.stop_at_ns = 0;
      },
      [](const RunResult& run) {
        return run.writer.error != 0 && run.loop.drops[core::DropCause::abandoned].records.bytes > 0;
      });
  const std::uint64_t abandoned = r.loop.drops[core::DropCause::abandoned].records.bytes;
  ASSERT_GT(abandoned, 0u);
  EXPECT_LE(abandoned, r.oracle.bytes_cut);
  EXPECT_LE(abandoned, std::uint64_t{r.config.ring_bytes()} * r.config.cpus);
}

}  // namespace
}  // namespace ringsim::sim
