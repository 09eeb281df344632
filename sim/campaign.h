// A campaign: many seeded simulation runs, their properties checked, a
// summary of what was simulated and which rare paths were hit, and for each
// failure its seed, a one-line reproduction and a (shrunk) replay file.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "sim/decisions.h"
#include "sim/params.h"

namespace ringsim::sim {

struct CampaignOptions {
  std::uint64_t first_seed = 1;
  // --seed random: first_seed was drawn from the clock (printed first, so
  // the campaign can be run again with --seed first_seed).
  bool seed_from_clock = false;
  std::uint64_t runs = 2000;
  // Simulations at once, one per thread; the outcomes are merged in seed
  // order, so the summary is the same whatever the number.
  std::uint32_t jobs = 1;
  double budget_s = 600;                 // wall clock; 0: no limit
  std::string json_path;                 // summary as JSON, if set
  std::string replay_dir = "ringsim-failures";
  double shrink_s = 30;                  // per failure; 0: do not shrink
  std::uint64_t determinism_every = 10;  // run every Nth seed twice; 0: never
  std::uint64_t failures_max = 10;       // stop after this many failures
  bool progress = true;
  std::uint64_t shard_index = 0;         // run seeds i with i % shard_count == shard_index
  std::uint64_t shard_count = 1;
  // Fields fixed by options, applied to every seed's random configuration
  // (a failure's reproduction line says them again: sim/params.h).
  Overrides overrides;
  // Swarm testing: each run's fault sites on with probability 1/2
  // (sim/params.h swarm_config), before the overrides.
  bool swarm = false;
  // PCT for the scheduler's picks (sim/decisions.h PctSettings): depth 0
  // is off (uniform picks).
  PctSettings pct{0, 1000};
  // A merge's: the shards' fixed fields as their summaries wrote them
  // (overrides.as_args()), written again in the merged summary.
  std::string merged_fixed;
  std::string replay_command = "bazel run //sim:replay --";
};

// Runs the campaign, printing progress and failures to `log` and the
// summary to `out`. Returns the process exit code (sim/run.h ExitCode).
int run_campaign(const CampaignOptions& options, std::ostream& out, std::ostream& log);

// `campaign merge`: the summaries (--json) of the shards of one campaign
// (--shard I/N for I = 0..N-1), checked to be one campaign's, each shard
// once, all there and each complete (no seed lost or run twice), folded
// into the summary one run of all its seeds prints (the wall time is the
// longest shard's); the failures printed to `log` in seed order. Writes
// the merged JSON to `json_path` if set. Returns the campaign's exit code,
// or 65 (one line on `log`) when the files are not such shards.
int merge_campaign_files(const std::vector<std::string>& files, const std::string& json_path, std::ostream& out,
                         std::ostream& log);

// The configuration a campaign runs for `seed`.
RunConfig campaign_config(const CampaignOptions& options, std::uint64_t seed);

}  // namespace ringsim::sim
