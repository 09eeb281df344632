// bazel run //sim:campaign -- [options]
//
// Runs many seeded simulations of the perf ring consumer and checks every
// property; see docs/campaign.md. Exit status: 0 all passed, 1 a safety
// property failed, 2 a run failed liveness only, 3 a check crashed, 64 bad
// options, 74 an output file could not be written.
#include <iostream>
#include <string>

#include "core/cli/usage.h"
#include "sim/campaign.h"
#include "sim/commands.h"

int main(int argc, char** argv) {
  using namespace ringsim::sim;
  if (argc > 1 && std::string(argv[1]) == "merge") {
    MergeOptions merge;
    if (const int rc = parse_merge_command_line(argc - 1, argv + 1, merge); rc >= 0) return rc;
    return merge_campaign_files(merge.files, merge.json_path, std::cout, std::cerr);
  }
  if (argc > 1 && std::string(argv[1]) == "explore") {
    ExploreOptions explore;
    if (const int rc = parse_explore_command_line(argc - 1, argv + 1, explore); rc >= 0) return rc;
    ExploreStats stats;
    return run_exploration(explore, std::cout, std::cerr, stats);
  }
  CampaignOptions options;
  if (const int rc = parse_campaign_command_line(argc, argv, options); rc >= 0) return rc;
  if (options.seed_from_clock) {
    std::cout << "ringsim campaign: --seed random drew seed " << options.first_seed << " (from the clock; --seed "
              << options.first_seed << " runs the same seeds again)\n"
              << std::flush;
  }
  if (const std::string error = check_campaign_seeds(options); !error.empty()) {
    return ringsim::core::usage_error("campaign", error);
  }
  std::cout << "ringsim campaign: seeds " << options.first_seed << ".." << options.first_seed + options.runs - 1
            << (options.overrides.empty() ? "" : ", fixed: " + options.overrides.as_args()) << "\n"
            << std::flush;
  return run_campaign(options, std::cout, std::cerr);
}
