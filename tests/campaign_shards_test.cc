// A campaign split into shards (--shard I/N, or the engines' variables) and
// folded back by `campaign merge`: the merged summary, failure reports and
// JSON are those of one run of all the seeds (the wall time aside), for 1,
// 2, 4 and 16 shards; a merge that would lose or double seeds is refused.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/campaign.h"
#include "sim/params.h"

namespace ringsim::sim {
namespace {

struct Outcome {
  int code = -1;
  std::string summary;  // without the wall-time line
  std::string log;      // failures, as printed
  nlohmann::json json;  // without wall_s
};

std::string without_wall_time(const std::string& text) {
  std::istringstream lines(text);
  std::string kept;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("wall time") == std::string::npos) kept += line + "\n";
  }
  return kept;
}

// The FAIL and reproduce lines of a log (the replay paths differ between a
// campaign's files and a merge's report of them only by their directory).
std::string failure_lines(const std::string& log) {
  std::istringstream lines(log);
  std::string kept;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("FAIL ", 0) == 0 || line.rfind("  reproduce: ", 0) == 0) kept += line + "\n";
  }
  return kept;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  nlohmann::json j = nlohmann::json::parse(in);
  j.erase("wall_s");
  return j;
}

// The whole campaign in one run: its summary as main() prints it (the seeds
// line first), its failures and its JSON.
Outcome whole(CampaignOptions options) {
  options.progress = false;
  options.json_path = ::testing::TempDir() + "/whole.json";
  options.replay_dir = ::testing::TempDir() + "/replays";
  std::ostringstream out, log;
  Outcome o;
  out << "ringsim campaign: seeds " << options.first_seed << ".." << options.first_seed + options.runs - 1
      << (options.overrides.empty() ? "" : ", fixed: " + options.overrides.as_args()) << "\n";
  o.code = run_campaign(options, out, log);
  o.summary = without_wall_time(out.str());
  o.log = failure_lines(log.str());
  o.json = read_json(options.json_path);
  return o;
}

// The shards' JSON files (shard i of n each run on its own).
std::vector<std::string> run_shards(CampaignOptions options, std::uint64_t n, const std::string& tag = "") {
  std::vector<std::string> files;
  for (std::uint64_t i = 0; i < n; i++) {
    options.shard_index = i;
    options.shard_count = n;
    options.progress = false;
    options.jobs = 1 + static_cast<std::uint32_t>(i % 2);
    options.json_path = ::testing::TempDir() + "/" + tag + "shard-" + std::to_string(i) + "-of-" + std::to_string(n) + ".json";
    options.replay_dir = ::testing::TempDir() + "/replays";
    std::ostringstream out, log;
    run_campaign(options, out, log);
    files.push_back(options.json_path);
  }
  return files;
}

Outcome merged(const std::vector<std::string>& files, std::string* error = nullptr) {
  std::ostringstream out, log;
  Outcome o;
  const std::string json_path = ::testing::TempDir() + "/merged.json";
  std::remove(json_path.c_str());
  o.code = merge_campaign_files(files, json_path, out, log);
  o.summary = without_wall_time(out.str());
  o.log = failure_lines(log.str());
  if (error != nullptr) *error = log.str();
  if (o.code != 65) o.json = read_json(json_path);
  return o;
}

void expect_same(const Outcome& a, const Outcome& b, std::uint64_t shards) {
  EXPECT_EQ(a.code, b.code) << shards << " shards";
  EXPECT_EQ(a.summary, b.summary) << shards << " shards";
  EXPECT_EQ(a.log, b.log) << shards << " shards";
  EXPECT_EQ(a.json, b.json) << shards << " shards";
}

TEST(CampaignShards, MergedSummaryIsOneRunsFor1To16Shards) {
  CampaignOptions options;
  options.first_seed = 500;
  options.runs = 64;
  options.determinism_every = 3;
  const Outcome one = whole(options);
  ASSERT_EQ(one.code, 0) << one.log;
  EXPECT_NE(one.summary.find("64 runs from seed 500, 0 failed"), std::string::npos) << one.summary;
  for (const std::uint64_t n : {1, 2, 4, 16}) expect_same(one, merged(run_shards(options, n)), n);
}

TEST(CampaignShards, FailuresMergeInSeedOrder) {
  CampaignOptions options;
  options.runs = 40;
  options.shrink_s = 0;
  options.failures_max = 1000;
  Overrides overrides;
  overrides.set(*find_param("mutant"), 3);  // drop_lost: some seeds fail
  options.overrides = overrides;
  const Outcome one = whole(options);
  EXPECT_EQ(one.code, 1);
  ASSERT_GT(one.json["failures"].size(), 2u);
  ASSERT_LT(one.json["failures"].size(), 40u);
  for (const std::uint64_t n : {2, 4}) expect_same(one, merged(run_shards(options, n)), n);
}

TEST(CampaignShards, AMergeThatWouldLoseOrDoubleSeedsIsRefused) {
  CampaignOptions options;
  options.first_seed = 900;
  options.runs = 12;
  const std::vector<std::string> four = run_shards(options, 4);
  std::string error;
  EXPECT_EQ(merged({four[0], four[1], four[3]}, &error).code, 65);
  EXPECT_NE(error.find("shard 2 of 4 is missing"), std::string::npos) << error;
  EXPECT_EQ(merged({four[0], four[1], four[2], four[3], four[1]}, &error).code, 65);
  EXPECT_NE(error.find("shard 1 of 4 given twice"), std::string::npos) << error;
  // Another campaign's shard (other seeds).
  CampaignOptions other = options;
  other.first_seed = 1000;
  const std::vector<std::string> elsewhere = run_shards(other, 4, "other-");
  EXPECT_EQ(merged({four[0], four[1], four[2], elsewhere[3]}, &error).code, 65);
  EXPECT_NE(error.find("another campaign"), std::string::npos) << error;
  // A shard stopped by its budget: its last seeds never ran.
  CampaignOptions stopped = options;
  stopped.budget_s = 1e-9;
  const std::vector<std::string> cut = run_shards(stopped, 4, "stopped-");
  EXPECT_EQ(merged({four[0], four[1], four[2], cut[3]}, &error).code, 65);
  EXPECT_NE(error.find("stopped by its budget"), std::string::npos) << error;
  // Not a summary at all.
  const std::string junk = ::testing::TempDir() + "/junk.json";
  std::ofstream(junk) << "{\"runs\": 3}";
  EXPECT_EQ(merged({junk}, &error).code, 65);
  EXPECT_NE(error.find("not a campaign summary"), std::string::npos) << error;
}

}  // namespace
}  // namespace ringsim::sim
