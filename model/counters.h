// The simulated kernel's own counters (model/log.h CpuLog: its drops by
// cause, the counts its LOST records reported, the drops never reported,
// the records and bytes it wrote), against the same counts taken again
// from the steps it logged (RingOp): each begin says what became of one
// write, so the steps are a second, independent tally of what the
// counters sum up. The campaign prints these counters (sim/campaign.cc);
// property counters_agree (model/properties.h) is that they agree. The
// consumer's counters are checked against the oracle's in
// sim/counters.h.
#pragma once

#include <vector>

#include "model/log.h"
#include "model/properties.h"

namespace ringsim::model {

// One violation of counters_agree per counter that disagrees, naming the
// counter, the CPU and both counts.
std::vector<Violation> check_kernel_counters(const KernelLog& log);

}  // namespace ringsim::model
