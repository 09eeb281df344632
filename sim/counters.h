// Property counters_agree (model/properties.h) for one run: every counter
// the campaign prints (sim/campaign.cc) that has a second count kept by
// something else, against it. The kernel's counters against its logged
// steps (model/counters.h); the consumer's (core's LoopResult, the trace
// writer's and the staging buffer's stats) against the oracle's count of
// what the output holds, the simulated disk's count of the faults it
// injected, and the sink's count of what passed through it. A counter that
// nothing else counts is listed, with the reason, in docs/campaign.md
// ("Counters and what checks them").
#pragma once

#include <vector>

#include "model/properties.h"
#include "sim/run.h"

namespace ringsim::sim {

// One violation per counter that disagrees: one line naming the counter,
// both counts and the CPU where the counter is one CPU's. The consumer's
// counters are checked only in a run whose consumer finished (a cancelled
// run stops them anywhere).
std::vector<model::Violation> check_counters(const RunResult& r);

}  // namespace ringsim::sim
