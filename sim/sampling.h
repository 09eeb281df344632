// Sampling periods of a software event (and of a tracepoint, which goes
// through the same code): when an occurrence becomes a sample and what its
// PERF_SAMPLE_PERIOD field says. One description of Linux's rules
// (kernel/events/core.c), used by the two simulated kernels: the
// campaign's (sim/kernel.cc) and the kernel behind the system-call surface
// (sim/call_kernel.cc: ringsim-run's, and the conformance suite's
// simulated side). The model re-derives the same rules on
// its own (model/sampling.h) from the campaign kernel's log.
//
// The state is hw_perf_event's: sample_period, last_period, period_left,
// freq_time_stamp.
//   perf_event_alloc   sample_period = attr.sample_period, or 1 in
//                      frequency mode (attr.freq with a sample_freq);
//                      last_period = sample_period; period_left =
//                      sample_period.
//   perf_swevent_add   (enable, and every sched-in of the event's context)
//                      last_period = sample_period, then
//                      perf_swevent_set_period.
//   perf_swevent_set_period  period = last_period; last_period =
//                      sample_period; if period_left >= 0: nr = (period +
//                      period_left) / period overflows, period_left -= nr *
//                      period (back to [-period, -1]). The reload uses the
//                      period of the previous overflow, the new one only
//                      from the next: in frequency mode a period lags one
//                      overflow behind the adjustment that chose it.
//   perf_swevent_event (an occurrence of weight nr; page faults, context
//                      switches: nr 1) count += nr; a sampling event then:
//                      (1) period mode with PERF_SAMPLE_PERIOD in
//                          sample_type: one sample, whatever period_left,
//                          its PERIOD field nr (not with attr.freq);
//                      (2) else the PERIOD field is last_period (before
//                          set_period); nr 1, sample_period 1, period
//                          mode: one sample;
//                      (3) else period_left += nr; still negative: none;
//                          else perf_swevent_overflow: set_period's nr
//                          samples, each with the same PERIOD field.
//   __perf_event_account_interrupt (each sample, frequency mode only)
//                      now = perf_clock(); delta = now - freq_time_stamp;
//                      freq_time_stamp = now; if 0 < delta < 2 ticks:
//                      perf_adjust_period(delta ns, last_period occurrences).
//   perf_adjust_period period = perf_calculate_period (count * 10^9 /
//                      (nsec * sample_freq), with fls-guided precision
//                      reduction); delta = period - sample_period, rounded
//                      away from zero by 7 and divided by 8 (the low-pass
//                      filter; Linux 6.1 rounds (delta + 7) / 8, which
//                      drops small negative deltas: fixed in 2024, and the
//                      machine of docs/conformance.md runs 6.18);
//                      sample_period += delta, at least 1; a period_left
//                      above 8 * sample_period restarts at 0.
// Not modelled here (docs/fidelity.md row 19): the tick's adjustment of
// every active frequency event (perf_adjust_freq_unthr_context: counts over
// TICK_NSEC), throttling (max_samples_per_tick: only the second and later
// samples of one occurrence can trip it), and the hrtimer-driven clock
// events (cpu-clock, task-clock: a frequency becomes the fixed period
// NSEC_PER_SEC / freq, perf_swevent_init_hrtimer).
#pragma once

#include <cstdint>

namespace ringsim::sim {

// The attributes that decide sampling.
struct SamplingAttr {
  std::uint64_t sample_period = 1;  // period mode: attr.sample_period (0: counting only)
  std::uint64_t sample_freq = 0;    // attr.freq with this sample_freq (Hz): frequency mode
  bool period_field = false;        // PERF_SAMPLE_PERIOD in attr.sample_type
  bool freq() const { return sample_freq > 0; }
  bool sampling() const { return freq() || sample_period > 0; }
  bool operator==(const SamplingAttr&) const = default;
};

// HZ of the kernels modelled (Debian's CONFIG_HZ_250) and TICK_NSEC.
inline constexpr std::uint64_t kHz = 250;
inline constexpr std::uint64_t kTickNs = 1'000'000'000 / kHz;

// perf_calculate_period: the period that gives sample_freq samples a second
// when `count` occurrences took `nsec`.
std::uint64_t calculate_period(std::uint64_t sample_freq, std::uint64_t nsec, std::uint64_t count);

// One event's sampling state (hw_perf_event).
class PeriodState {
 public:
  // perf_event_alloc.
  explicit PeriodState(const SamplingAttr& attr);

  // What one occurrence gave: `samples` samples (0, 1, or more for a
  // weight larger than a period), each with PERIOD field `period`.
  struct Hit {
    std::uint64_t samples = 0;
    std::uint64_t period = 0;
  };

  // perf_swevent_add: the event is enabled, or its context scheduled in.
  void add();
  // perf_swevent_event: an occurrence of weight `nr` (>= 1) at
  // perf_clock() `clock_ns`.
  Hit event(std::uint64_t nr, std::uint64_t clock_ns);
  // Whether an occurrence of weight 1 now would make a sample (whatever
  // the time: only a sample reads the clock).
  bool samples_next() const;

  std::uint64_t sample_period() const { return sample_period_; }
  std::uint64_t last_period() const { return last_period_; }
  std::int64_t period_left() const { return period_left_; }
  std::uint64_t count() const { return count_; }
  const SamplingAttr& attr() const { return attr_; }

 private:
  std::uint64_t set_period();
  void account_interrupt(std::uint64_t clock_ns);
  void adjust_period(std::uint64_t nsec, std::uint64_t count);

  SamplingAttr attr_;
  std::uint64_t sample_period_ = 1;
  std::uint64_t last_period_ = 1;
  std::int64_t period_left_ = 1;
  std::uint64_t freq_time_stamp_ = 0;
  std::uint64_t count_ = 0;
};

// perf_clock() of the simulated kernels: virtual time plus an uptime, so
// that the first sample of a frequency event, compared with a time stamp
// of 0, is never within two ticks of it (on Linux the clock counts from
// boot).
inline constexpr std::uint64_t kBootClockNs = 3'600'000'000'000;  // an hour
inline constexpr std::uint64_t perf_clock(std::uint64_t virtual_ns) { return kBootClockNs + virtual_ns; }

}  // namespace ringsim::sim
