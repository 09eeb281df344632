// The command lines of the campaign and replay commands: parsed into their
// options by the same functions main() uses, so the tests and the
// command-line fuzz target (tests/fuzz/cli_fuzz.cc) exercise exactly what a
// user runs. Each returns -1 to go on, 0 after --help (printed on stdout),
// or 64 after one line on stderr, "<command>: error: ... (see --help)"
// (core/cli/command_line.h). The simulator's other mains (bench, compare)
// parse here too: CLI11 costs each translation unit that includes it about
// 10 s of compile time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/campaign.h"
#include "sim/explore.h"

namespace ringsim::sim {

// bazel run //sim:campaign -- [options]: every option of docs/campaign.md,
// plus Bazel's test sharding (TEST_TOTAL_SHARDS / TEST_SHARD_INDEX) and,
// under `bazel test`, the replay directory in the test's undeclared
// outputs. Paths are made relative to where the user ran `bazel run`.
int parse_campaign_command_line(int argc, char** argv, CampaignOptions& options);

// Every seed's configuration, with the fixed fields, must be valid before
// anything runs: "" or the first problem, naming the seed. At most
// `seeds_max` seeds are checked (the campaign checks them all).
std::string check_campaign_seeds(const CampaignOptions& options, std::uint64_t seeds_max = UINT64_MAX);

struct MergeOptions {
  std::vector<std::string> files;
  std::string json_path;
};

// bazel run //sim:campaign -- merge FILES... [--json OUT] (argv from
// "merge" on).
int parse_merge_command_line(int argc, char** argv, MergeOptions& options);

// bazel run //sim:campaign -- explore [--seed N] [--deviations D]
// [--runs-max N] [--replay-dir DIR] [configuration options] (argv from
// "explore" on).
int parse_explore_command_line(int argc, char** argv, ExploreOptions& options);

struct ReplayOptions {
  std::string file;
  bool verbose = false;
  std::string trace_path;  // "" : no Chrome trace
};

// bazel run //sim:replay -- FILE [-v] [--trace OUT.json].
int parse_replay_command_line(int argc, char** argv, ReplayOptions& options);

struct BenchOptions {
  int reps = 7;
  std::uint32_t producer_batch = 16;
};

// bazel run //sim:bench -- [--reps N] [--producer-batch N].
int parse_bench_command_line(int argc, char** argv, BenchOptions& options);

struct CompareOptions {
  std::uint64_t first_seed = 1;
  std::uint64_t runs = 200;
  std::string json_path;  // relative to where the user ran `bazel run`
  Overrides overrides;
};

// bazel run //sim:compare -- [--seed N] [--runs N] [--json OUT]
// [configuration options].
int parse_compare_command_line(int argc, char** argv, CompareOptions& options);

}  // namespace ringsim::sim
