// Generated conformance scenarios (docs/conformance.md, "Generated
// scenarios"): RapidCheck draws scenarios from the suite's vocabulary
// (events and their attributes, then steps), each is run on both kernels
// (suite.h's run_scenario) and a difference is shrunk, with RapidCheck's
// shrink tree of the drawn value, to the shortest scenario that still
// differs, printed as C++ that pastes into scenarios.cc.
//
// Deterministic: sequence i of seed S is drawn from rc::Random({S, i, ...})
// at a size fixed by i, so `--generate N --seed S` runs the same sequences
// every time (RapidCheck's own RC_PARAMS are not read). What is drawn is a
// value of plain choices (generator.cc's Draft); a legaliser turns it into
// a scenario that keeps every precondition the backends and the runner
// VERIFY (an event is opened once and only while its task lives; mapped
// only without a ring; read, consumed and its control page read only with a
// mapping of its own with data pages; child steps only while the child
// lives; ...), so every shrink of it is a scenario too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tests/conformance/backend.h"
#include "tests/conformance/scenario.h"

namespace ringsim::conformance {

struct GenerateOptions {
  std::uint64_t first = 0;             // the first sequence's index (to replay one: first = i, count 1)
  int confirm_runs = 3;                // real runs that must log the same before a difference counts
  double shrink_seconds = 120;         // per difference
  std::size_t shrink_runs_max = 3000;  // per difference: candidates run
  std::uint64_t progress_every = 0;    // print a line to stderr every so many sequences (0: never)
  std::size_t differences_max = 0;     // stop after so many differences (0: never)
};

struct GeneratedDifference {
  std::uint64_t sequence = 0;
  std::size_t steps = 0;         // of the drawn scenario
  std::size_t shrunk_steps = 0;  // of the shrunk one
  std::size_t shrink_runs = 0;   // candidates run while shrinking
  bool confirmed = false;        // the shrunk scenario differs in every one of confirm_runs real runs
  std::string first_difference;  // of the shrunk scenario
  std::string source;            // the shrunk scenario as C++ for scenarios.cc
};

struct GenerateReport {
  std::uint64_t seed = 0;
  std::uint64_t sequences = 0;    // run on both kernels
  std::uint64_t steps = 0;
  std::uint64_t observables = 0;  // compared
  std::uint64_t matched = 0;
  std::uint64_t empty = 0;        // drew no event that could be opened: not run
  std::uint64_t foreign = 0;      // discarded: another process's side-band in the real log
  std::uint64_t not_permitted = 0;
  std::uint64_t unstable = 0;     // discarded: the real kernel did not log the same twice
  std::vector<GeneratedDifference> differences;
  double seconds = 0;
};

// Runs sequences [first, first + count) of `seed` on both kernels.
GenerateReport generate(std::uint64_t count, std::uint64_t seed, Backend& real, Backend& sim,
                        const GenerateOptions& options = {});

// The figures and every difference (its shrunk source and first difference).
std::string format(const GenerateReport& report);

// Sequence `sequence` of `seed` as a scenario (nullopt: no event could be
// opened).
std::optional<Scenario> generated_scenario(std::uint64_t seed, std::uint64_t sequence);

// A scenario as C++ that scenarios.cc takes as it is: events as EventSpec
// designated initializers, steps with builders.h's builders.
std::string scenario_source(const Scenario& scenario);

}  // namespace ringsim::conformance
