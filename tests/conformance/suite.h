// The whole suite: each scenario on both kernels, compared, and the table
// `bazel run //tests/conformance:conformance` prints.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tests/conformance/backend.h"
#include "tests/conformance/observation.h"
#include "tests/conformance/scenario.h"

namespace ringsim::conformance {

// foreign: the real kernel's log shows another process's doing (an
// observable that machine-wide state changes), neither a match nor a
// difference of the simulated kernel.
enum class Status { match, differ, known, unstable, skipped, foreign };
const char* to_string(Status status);

struct Outcome {
  const Scenario* scenario = nullptr;
  Status status = Status::skipped;
  std::size_t observables = 0;
  std::string difference;  // the first one (differ, known, unstable)
};

// The files the scenarios use (the executable mapped for MMAP2: this
// program's own file).
SuiteFiles suite_files();

// "" or why the real kernel's log cannot be the scenario's own: an MMAP2
// whose misc says build-id when no event of the scenario asked for one
// (another process records with attr.build_id: fidelity row 20).
std::string foreign_influence(const Scenario& scenario, const Log& real_log);

// Runs `scenario` on both kernels (the real one `repeat` times: every run
// must log the same) and compares. `real_log` and `sim_log` keep the last
// logs.
Outcome run_scenario(const Scenario& scenario, Backend& real, Backend& simulated, int repeat, Log& real_log,
                     Log& sim_log);

// The table: a row per scenario, a total line, then the rows of
// fidelity.md not produced here, then the first difference of each
// scenario that did not match. `skipped_why`: one line when the real
// kernel could not be used.
std::string table(const std::vector<Outcome>& outcomes, const std::string& skipped_why);

}  // namespace ringsim::conformance
