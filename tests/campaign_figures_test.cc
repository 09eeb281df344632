// Every figure the campaign prints is checked against an independent count,
// so that a wrong counter cannot ship:
//   - per run, the core's own counters (what the record loop committed, the
//     writer's retries, files and bytes) against the simulated disk's and
//     kernel's own accounting, the oracle, and the files read back with the
//     model's parser;
//   - the campaign's summary (its JSON, which carries every printed figure)
//     against the same seeds run again and added up here from those
//     independent sources.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "model/records.h"
#include "sim/campaign.h"
#include "sim/params.h"
#include "sim/run.h"

namespace ringsim::sim {
namespace {

constexpr std::uint64_t kRuns = 160;

// Records and LOST counts of the delivered bytes, walked with the model's
// own walker (not the core's, not the oracle's counters).
struct Delivered {
  std::uint64_t records = 0;
  std::uint64_t samples = 0;
  std::uint64_t lost_sum = 0;
};

Delivered delivered(const model::RunOutput& output) {
  Delivered d;
  for (const model::CpuOutput& cpu : output.cpus) {
    const std::string problem = model::walk_records(cpu.bytes, [&](const model::PerfRecord& r) {
      d.records++;
      if (r.type == model::kTypeSample) d.samples++;
      if (r.type == model::kTypeLost) d.lost_sum += model::load<std::uint64_t>(r.bytes.data() + model::kLostFieldOffset);
    });
    EXPECT_EQ(problem, "");
  }
  return d;
}

// The core's counters of one run against independent counts.
void check_run(const RunResult& r) {
  SCOPED_TRACE("seed " + std::to_string(r.config.seed) + ": " + reproduce_command(r.config));
  ASSERT_TRUE(r.ok()) << r.first_property() << ": " << r.violations.front().detail;
  const Delivered d = delivered(r.output);
  const bool cut = r.writer.error != 0;
  const bool disk = r.config.output != Output::memory;
  if (!cut) {
    // What the loop committed is what the output holds.
    EXPECT_EQ(r.loop.records.records - r.loop.records.auxtrace_records, d.records);
    EXPECT_EQ(r.loop.records.samples, d.samples);
    EXPECT_EQ(r.loop.records.lost_sum, d.lost_sum);
  }
  EXPECT_EQ(d.records, r.oracle.records_delivered);
  EXPECT_EQ(d.lost_sum, r.oracle.lost_delivered);
  if (!disk) return;
  // The writer's retries against the disk's own fault counts.
  EXPECT_EQ(r.writer.eagain_retries, r.disk.eagain_single + r.disk.eagain_burst + r.disk.eagain_queue_full);
  EXPECT_EQ(r.writer.eintr_retries + r.writer.suspend_interrupted, r.disk.eintr_writes + r.disk.eintr_suspends);
  EXPECT_EQ(r.writer.short_writes_restarted, r.disk.async_short);
  EXPECT_LE(r.writer.eagain_sync_fallbacks * r.config.eagain_attempts_max, r.writer.eagain_retries);
  if (!cut) {
    EXPECT_EQ(r.writer.files, r.files);
    // Completed = committed + the FINISHED_ROUND markers the files hold.
    EXPECT_EQ(r.writer.bytes_completed, r.writer.bytes_committed + 8 * r.rounds_in_file);
    EXPECT_EQ(r.writer.rounds_marked, r.rounds_in_file);
    EXPECT_EQ(r.writer.drops[core::DropCause::output_error].events, 0u);
  }
  EXPECT_EQ(r.writer.error != 0, r.disk.first_hard_error != 0 || r.config.disk_open_fails != 0);
}

// The summary's figures, added up from the runs' independent counts.
struct Expected {
  nlohmann::json j = nlohmann::json::object();
  void add(const char* key, std::uint64_t v) { j[key] = j.value(key, std::uint64_t{0}) + v; }
};

void add_expected(Expected& e, const RunResult& r) {
  std::uint64_t written = 0, full = 0, too_big = 0, paused = 0, reported = 0, unreported = 0, bytes = 0, samples = 0;
  for (const model::CpuLog& cpu : r.log.cpus) {
    written += cpu.written.size();
    bytes += cpu.bytes.size();
    samples += cpu.samples_attempted;
    full += cpu.dropped_full;
    too_big += cpu.dropped_too_big;
    paused += cpu.dropped_paused;
    reported += cpu.lost_reported;
    unreported += cpu.dropped_unreported;
  }
  const Delivered d = delivered(r.output);
  e.add("runs", 1);
  e.add("samples_generated", samples);
  e.add("records_written", written);
  e.add("records_delivered", d.records);
  e.add("bytes_written", bytes);
  e.add("ring_full", full);
  e.add("never_fits", too_big);
  e.add("paused", paused);
  e.add("reported_by_lost_records", reported);
  e.add("delivered_in_lost_records", d.lost_sum);
  e.add("unreported", unreported);
  e.add("overwritten_records", r.oracle.records_overwritten);
  e.add(core::to_string(r.config.mode), 1);
  e.add(to_string(r.config.scope), 1);
  e.add(to_string(r.config.output), 1);
  e.add("files", r.files);
  e.add("file_bytes", r.file_bytes);
  e.add("short_writes", r.disk.short_writes);
  e.add("eio", r.disk.eio);
  e.add("enospc", r.disk.enospc);
  e.add("eagain_retries", r.disk.eagain_single + r.disk.eagain_burst + r.disk.eagain_queue_full);
  e.add("hard_error_runs", r.disk.first_hard_error != 0 || r.config.disk_open_fails != 0 ? 1 : 0);
  e.add("aux_runs", r.config.aux_pages > 0 ? 1 : 0);
  e.add("aux_written", r.oracle.aux_written);
  e.add("aux_delivered", r.oracle.aux_delivered);
  e.add("aux_overwritten", r.oracle.aux_overwritten);
  e.add("overwritten_bytes", r.oracle.bytes_overwritten);
  // The oracle sees an AUX gap only through the AUXTRACE record after it,
  // which an output error may have cut off: there, the reader's own count
  // (checked to be at least the oracle's by clean_finish).
  e.add("aux_gap_bytes", r.writer.error == 0 ? r.oracle.aux_overwritten
                                             : r.loop.aux_drops[core::DropCause::overwritten].records.bytes);
  // Staged runs: every record the loop committed went through the staging.
  if (r.config.staging_bytes > 0) {
    e.add("staged_runs", 1);
    e.add("staged_records", r.loop.records.records);
  }
  e.add("lost_time_ns", r.loss.lost_time_ns);
  e.add("elapsed_ns", r.loss.last_time_ns - r.loss.first_time_ns);
  for (const std::string& p : r.properties) e.add(("checked " + p).c_str(), 1);
  for (std::size_t i = 0; i < kProbeCount; i++) {
    e.add(("probe " + std::string(kProbeInfo[i].name)).c_str(), r.probes.count(i));
  }
}

TEST(CampaignFigures, EachRunsCountersMatchIndependentCounts) {
  for (std::uint64_t seed = 1; seed <= kRuns; seed++) check_run(run_simulation(random_config(seed)));
}

TEST(CampaignFigures, TheSummaryAddsUpTheIndependentCounts) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  CampaignOptions options;
  options.runs = kRuns;
  options.progress = false;
  options.shrink_s = 0;
  options.json_path = std::string(tmp ? tmp : "/tmp") + "/campaign_figures.json";
  options.replay_dir = std::string(tmp ? tmp : "/tmp") + "/replays";
  std::ostringstream out, log;
  ASSERT_EQ(run_campaign(options, out, log), kExitOk) << log.str();
  std::ifstream in(options.json_path);
  const nlohmann::json j = nlohmann::json::parse(in);

  Expected e;
  for (std::uint64_t seed = 1; seed <= kRuns; seed++) add_expected(e, run_simulation(campaign_config(options, seed)));
  const nlohmann::json& x = e.j;
  EXPECT_EQ(j["runs"], x["runs"]);
  EXPECT_EQ(j["failed"], 0);
  for (const char* k : {"samples_generated", "records_written", "records_delivered", "bytes_written",
                        "overwritten_records"}) {
    EXPECT_EQ(j[k], x[k]) << k;
  }
  for (const char* k : {"ring_full", "never_fits", "paused", "reported_by_lost_records", "delivered_in_lost_records",
                        "unreported"}) {
    EXPECT_EQ(j["dropped"][k], x[k]) << k;
  }
  for (const char* m : {"normal", "backward", "forward_overwrite", "backward_writable"}) {
    EXPECT_EQ(j["modes"][m], x.value(m, 0)) << m;
  }
  for (const char* scope : {"task", "system_wide"}) EXPECT_EQ(j["scopes"][scope], x.value(scope, 0)) << scope;
  for (const char* k : {"memory", "serial", "aio"}) EXPECT_EQ(j["outputs"][k], x.value(k, 0)) << k;
  EXPECT_EQ(j["files"]["count"], x["files"]);
  EXPECT_EQ(j["files"]["bytes"], x["file_bytes"]);
  EXPECT_EQ(j["disk_faults"]["short_writes"], x["short_writes"]);
  EXPECT_EQ(j["disk_faults"]["eio"], x["eio"]);
  EXPECT_EQ(j["disk_faults"]["enospc"], x["enospc"]);
  EXPECT_EQ(j["writer"]["eagain_retries"], x["eagain_retries"]);
  EXPECT_EQ(j["writer"]["hard_error_runs"], x["hard_error_runs"]);
  EXPECT_EQ(j["aux"]["runs"], x["aux_runs"]);
  EXPECT_EQ(j["staging"]["runs"], x.value("staged_runs", 0));
  EXPECT_EQ(j["staging"]["records"], x.value("staged_records", 0));
  EXPECT_GT(x.value("staged_runs", 0), 0) << "the campaign draws staged runs";
  for (const char* k : {"written", "delivered", "overwritten"}) {
    EXPECT_EQ(j["aux"][k], x[std::string("aux_") + k]) << k;
  }
  EXPECT_EQ(j["consumer_drops"]["data"]["overwritten"]["bytes"], x["overwritten_bytes"]);
  EXPECT_EQ(j["consumer_drops"]["aux"]["overwritten"]["bytes"], x["aux_gap_bytes"]);
  const double metric = x["elapsed_ns"].get<std::uint64_t>() == 0
                            ? 0.0
                            : static_cast<double>(x["lost_time_ns"].get<std::uint64_t>()) /
                                  static_cast<double>(x["elapsed_ns"].get<std::uint64_t>());
  EXPECT_DOUBLE_EQ(j["data_loss_metric"].get<double>(), metric);
  for (const auto& [name, counts] : j["properties"].items()) {
    if (name == model::kDeterminism) {
      EXPECT_EQ(counts["checked"], (kRuns + options.determinism_every - 1) / options.determinism_every);
      continue;
    }
    EXPECT_EQ(counts["checked"], x["checked " + name]) << name;
    EXPECT_EQ(counts["passed"], counts["checked"]) << name;
  }
  for (std::size_t i = 0; i < kProbeCount; i++) {
    const std::string name = kProbeInfo[i].name;
    EXPECT_EQ(j["probes"][name]["hits"], x["probe " + name]) << name;
  }
  // The printed summary says the same as the JSON.
  const std::string text = out.str();
  EXPECT_NE(text.find(std::to_string(kRuns) + " runs from seed 1, 0 failed"), std::string::npos) << text;
}

}  // namespace
}  // namespace ringsim::sim
