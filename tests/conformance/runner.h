// Runs one scenario on one backend and logs what a reader observes: after
// each step the data_head of every ring and the poll of every open event,
// and what the step itself shows (its result, the records read, the lost
// count, ...). The same code reads both kernels' rings, so the two logs
// differ only where the kernels do.
#pragma once

#include "tests/conformance/backend.h"
#include "tests/conformance/observation.h"
#include "tests/conformance/scenario.h"

namespace ringsim::conformance {

// Clears `log` and fills it. Allocates nothing between the backend's
// begin() and end().
void run(const Scenario& scenario, Backend& backend, Log& log);

}  // namespace ringsim::conformance
