// The Chrome trace of a run (sim/chrome_trace.h) against the run itself:
// one slice per asynchronous write, one instant per LOST record and per
// drop and per injected fault, every track named, valid JSON.
#include "sim/chrome_trace.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "sim/params.h"
#include "sim/run.h"

namespace ringsim::sim {
namespace {

RunConfig faulty_aio(std::uint64_t seed) {
  RunConfig c = random_config(seed);
  c.mode = core::RingMode::normal;
  c.snapshot_interval_ns = 0;
  set_output(c, Output::aio);
  c.cpus = 3;
  c.cblocks = 2;
  c.records_per_cpu = 800;
  c.disk_queue_depth = 3;
  c.disk_short_per_million = 100'000;
  c.disk_eagain_per_million = 100'000;
  c.disk_eintr_per_million = 50'000;
  c.disk_suspend_eintr_per_million = 50'000;
  c.disk_stall_per_million = 20'000;
  c.poll_eintr_per_million = 50'000;
  c.disk_eio_per_million = 0;
  c.disk_capacity_bytes = 0;
  c.disk_open_fails = 0;
  if (seed % 3 == 0) {
    c.aux_pages = 2;
    c.aux_watermark_bytes = 0;
    c.aux_bursts = 100;
    c.aux_burst_bytes_max = 2048;
  }
  return c;
}

TEST(ChromeTrace, MatchesTheRun) {
  int runs_with_writes = 0, runs_with_lost = 0, runs_with_faults = 0, runs_with_aux = 0;
  for (std::uint64_t seed = 1; seed <= 12; seed++) {
    const RunConfig config = faulty_aio(seed);
    DecisionSource decisions(seed, false);
    std::vector<TraceEvent> events;
    const RunResult r = run_simulation(config, decisions, &events);
    ASSERT_TRUE(r.ok()) << r.first_property() << ": " << r.violations.front().detail
                        << "\nreproduce: " << reproduce_command(config);
    // Through text and back: what a viewer would load.
    const nlohmann::json trace = nlohmann::json::parse(chrome_trace(events, config).dump());
    ASSERT_TRUE(trace.contains("traceEvents"));
    std::map<std::string, std::uint64_t> instants;
    std::uint64_t write_slices = 0, lost_sum = 0, faults = 0, aux_records = 0;
    std::set<int> named, used;
    for (const auto& e : trace["traceEvents"]) {
      const std::string ph = e["ph"], name = e["name"];
      if (ph == "M") {
        if (name == "thread_name") named.insert(e["tid"].get<int>());
        continue;
      }
      ASSERT_GE(e["ts"].get<double>(), 0.0);
      if (e.contains("tid")) used.insert(e["tid"].get<int>());
      if (ph == "X") {
        ASSERT_GE(e["dur"].get<double>(), 0.0);
        if (name == "write") {
          write_slices++;
          EXPECT_GE(e["tid"].get<int>(), 200);
          EXPECT_LT(e["tid"].get<int>(), 200 + static_cast<int>(config.cpus * config.cblocks));
        }
      }
      if (ph == "i") {
        instants[name]++;
        if (name == "PERF_RECORD_LOST") lost_sum += e["args"]["lost"].get<std::uint64_t>();
        if (name.rfind("fault: ", 0) == 0) faults++;
        if (name.rfind("PERF_RECORD_AUX", 0) == 0) aux_records++;
      }
    }
    for (int tid : used) EXPECT_TRUE(named.count(tid)) << "track " << tid << " has no name";
    EXPECT_EQ(write_slices, r.disk.async_completed);
    std::uint64_t dropped = 0, reported = 0;
    for (const auto& cpu : r.log.cpus) {
      dropped += cpu.dropped();
      reported += cpu.lost_reported;
    }
    EXPECT_EQ(instants["drop"], dropped);
    EXPECT_EQ(instants["PERF_RECORD_LOST"], r.probes.count(Probe::lost_emitted));
    EXPECT_EQ(lost_sum, reported);
    std::uint64_t aux_ends = 0;
    for (const auto& cpu : r.log.cpus) aux_ends += cpu.aux.ends.size();
    EXPECT_EQ(aux_records, aux_ends);
    runs_with_aux += aux_ends > 0;
    const DiskStats& d = r.disk;
    EXPECT_EQ(faults, d.short_writes + d.eagain_single + d.eagain_burst + d.eagain_queue_full + d.eintr_writes +
                          d.eintr_suspends + d.stalls + d.eio + d.enospc + r.probes.count(Probe::poll_eintr));
    runs_with_writes += write_slices > 0;
    runs_with_lost += lost_sum > 0;
    runs_with_faults += faults > 0;
  }
  // The comparison above was not vacuous.
  EXPECT_GE(runs_with_writes, 10);
  EXPECT_GE(runs_with_lost, 3);
  EXPECT_GE(runs_with_faults, 10);
  EXPECT_GE(runs_with_aux, 2);
}

}  // namespace
}  // namespace ringsim::sim
