// The model's statement of Linux's sampling rules for software events
// (kernel/events/core.c: perf_swevent_event, perf_swevent_set_period,
// __perf_event_account_interrupt, perf_adjust_period), replayed on the
// simulated kernel's log of occurrences (CpuLog::hits): property
// sampling_periods.
//
// Stated on its own, not with the simulator's code (sim/sampling.h), so a
// mistake in either shows as a difference. Per event, the rules for
// occurrences of weight 1 (page faults, context switches; the campaign's
// only weight):
//   - enabling arms a countdown of sample_period occurrences (period mode)
//     or of 1 (frequency mode: the period starts at 1);
//   - period mode with PERF_SAMPLE_PERIOD: every occurrence is a sample,
//     its PERIOD 1 (the occurrence's weight);
//   - period mode, period 1: every occurrence, PERIOD 1;
//   - otherwise the sample's PERIOD is the period in force before this
//     occurrence (last_period); the countdown runs out at the occurrence
//     that is sampled, and is re-armed with that same period; the period
//     chosen at this sample is used only from the next one;
//   - frequency mode, at each sample but the event's first (its time
//     stamp starts at 0, and perf_clock counts from boot): if the time
//     since the previous sample is positive and under two ticks, the
//     target period is period * 10^9 / (ns * sample_freq), and the period
//     moves an eighth of the way there (the difference rounded away from
//     zero by 7 before the division), and never below 1.
// Not replayed (nor simulated): the tick's own adjustment, throttling,
// context switches (sched-in resynchronises last_period).
#pragma once

#include <vector>

#include "model/log.h"
#include "model/properties.h"

namespace ringsim::model {

inline constexpr std::uint64_t kModelTickNs = 4'000'000;  // HZ 250

std::vector<Violation> check_sampling(const KernelLog& log);

}  // namespace ringsim::model
