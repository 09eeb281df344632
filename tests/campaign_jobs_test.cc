// The campaign sharded over threads (--jobs): the same seeds give the same
// summary, JSON and failure reports whatever the number of threads (apart
// from the wall time), because outcomes are merged in seed order.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/campaign.h"
#include "sim/params.h"
#include "sim/run.h"

namespace ringsim::sim {
namespace {

struct Outcome {
  int code = -1;
  std::string summary;  // without the wall-time line
  std::string log;      // failures, as printed
  nlohmann::json json;  // without wall_s
};

Outcome run_with_jobs(CampaignOptions options, std::uint32_t jobs, const std::string& name) {
  options.jobs = jobs;
  options.progress = false;
  options.json_path = ::testing::TempDir() + "/" + name + ".json";
  options.replay_dir = ::testing::TempDir() + "/replays";  // the same files whatever the jobs
  std::ostringstream out, log;
  Outcome o;
  o.code = run_campaign(options, out, log);
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);) {
    if (line.find("wall time") == std::string::npos) o.summary += line + "\n";
  }
  o.log = log.str();
  std::ifstream json(options.json_path);
  o.json = nlohmann::json::parse(json);
  o.json.erase("wall_s");
  return o;
}

void expect_same(const Outcome& a, const Outcome& b) {
  EXPECT_EQ(a.code, b.code);
  EXPECT_EQ(a.summary, b.summary);
  EXPECT_EQ(a.log, b.log);
  EXPECT_EQ(a.json, b.json);
}

TEST(CampaignJobs, SameSummaryWhateverTheThreads) {
  CampaignOptions options;
  options.first_seed = 100;
  options.runs = 48;
  options.determinism_every = 5;
  const Outcome one = run_with_jobs(options, 1, "one");
  ASSERT_EQ(one.code, 0) << one.log;
  EXPECT_NE(one.summary.find("48 runs from seed 100, 0 failed"), std::string::npos) << one.summary;
  EXPECT_EQ(one.json["properties"]["determinism"]["checked"], 10);
  expect_same(one, run_with_jobs(options, 2, "two"));
  expect_same(one, run_with_jobs(options, 5, "five"));
}

// Failures too: reported in seed order, the same ones, and the campaign
// stops after --max-failures at the same seed.
TEST(CampaignJobs, SameFailuresWhateverTheThreads) {
  CampaignOptions options;
  options.runs = 40;
  options.shrink_s = 0;  // shrinking has a wall-clock budget
  options.failures_max = 3;
  Overrides overrides;
  overrides.set(*find_param("mutant"), 3);  // drop_lost
  options.overrides = overrides;
  ASSERT_EQ(campaign_config(options, 1).mutant, Mutant::drop_lost);
  const Outcome one = run_with_jobs(options, 1, "one");
  EXPECT_EQ(one.code, 1);
  EXPECT_EQ(one.json["failures"].size(), 3u) << one.log;
  EXPECT_LT(one.json["runs"].get<int>(), 40);
  expect_same(one, run_with_jobs(options, 2, "two"));
  expect_same(one, run_with_jobs(options, 4, "four"));
}

// core::StagingOptions::notify_rounds (ringsim-record's, with
// --switch-output=signal: each round the reading side ends wakes the
// writing side) under the simulator: the staged runs among seeds 1.. pass
// every property with it, and it reaches the core (some staged run's
// schedule differs from the same seed's without it). Never drawn, so that
// every seed's decisions stay as they were.
TEST(CampaignJobs, StagingNotifyRoundsKeepsEveryPropertyAndChangesTheSchedule) {
  std::uint64_t staged = 0;
  std::uint64_t differs = 0;
  for (std::uint64_t seed = 1; seed <= 2000 && staged < 60; seed++) {
    RunConfig config = random_config(seed);
    if (config.staging_bytes == 0) continue;
    staged++;
    const RunResult plain = run_simulation(config);
    config.staging_notify_rounds = 1;
    const RunResult notified = run_simulation(config);
    EXPECT_TRUE(notified.ok()) << "seed " << seed << ": " << notified.first_property()
                               << "; reproduce: bazel run //sim:campaign -- --seed " << seed
                               << " --runs 1 --staging-notify-rounds 1";
    differs += plain.trace_hash != notified.trace_hash ? 1 : 0;
  }
  EXPECT_EQ(staged, 60u);
  EXPECT_GT(differs, 0u) << "notify_rounds changed no staged run's schedule";
}

}  // namespace
}  // namespace ringsim::sim
