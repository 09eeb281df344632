// `campaign explore`: a bounded exhaustive search over schedules.
//
// For one seed's configuration (a small one: `--cpus 1 --ring-pages 1
// --records-per-cpu 6`, ...) it runs every schedule that deviates from the
// plain one in at most D scheduling points, each once. A scheduling point
// is a pick of the fiber to run next among the ready ones
// (Scheduler::pick_next); the plain pick is the first ready fiber (value
// 0), a deviation any other. Every other choice (sizes, faults, latencies)
// is drawn from the seed, as a campaign draws it (DecisionSource's explore
// mode). This is delay-bounded search (Emmi, Qadeer, Rakamaric, "Delay-
// bounded scheduling", POPL 2011): a bug that some schedule with at most D
// deviations shows is found, with certainty, in the configuration and
// world of that seed.
//
// The enumeration: the run with no deviation first; then, from each run
// with d < D deviations whose last one is at point i, a run per point
// j > i of that run and per other pick at j (the picks before j as in that
// run, 0 after j). Each schedule with at most D deviations is one such
// path, so each runs once (the count is checked: the runs with exactly k
// deviations are counted apart). A budget of runs stops the search early,
// and the summary then says it was not exhaustive.
//
// Each failure prints its schedule number and property and writes a replay
// file of its whole tape, which replays strictly (`bazel run //sim:replay
// -- FILE`) with no exploration.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "sim/params.h"

namespace ringsim::sim {

struct ExploreOptions {
  std::uint64_t seed = 1;
  std::uint32_t deviations = 2;        // D: 0..4
  std::uint64_t runs_max = 1'000'000;  // the budget of runs
  std::uint64_t failures_max = 10;     // stop after this many failures
  Overrides overrides;                 // the configuration's fixed fields
  std::string replay_dir = "ringsim-failures";
  std::string replay_command = "bazel run //sim:replay --";
};

struct ExploreStats {
  std::uint64_t runs = 0;
  std::uint64_t by_deviations[5] = {};  // runs with exactly k deviations
  std::uint64_t failed = 0;
  std::uint64_t points_max = 0;  // scheduling points of one run (picks among two or more)
  std::uint64_t ready_max = 0;   // the most fibers ready at one point
  std::uint64_t distinct_traces = 0;
  bool exhaustive = true;  // false: the budget (or failures_max) stopped it
};

// Runs the search; prints failures to `log` and the summary to `out`.
// Returns the exit code (sim/run.h) and fills `stats`.
int run_exploration(const ExploreOptions& options, std::ostream& out, std::ostream& log, ExploreStats& stats);

}  // namespace ringsim::sim
