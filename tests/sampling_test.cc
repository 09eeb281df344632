// The sampling rules (sim/sampling.h) on occurrences whose outcome follows
// from kernel/events/core.c by hand, and the model's replay of them
// (model/sampling.h) against a log with one thing wrong.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "model/sampling.h"
#include "sim/sampling.h"

namespace ringsim {
namespace {

using sim::PeriodState;
using sim::SamplingAttr;

constexpr std::uint64_t kUs = 1000;

// Which of `n` occurrences (1-based), `gap_ns` apart, were sampled, and
// the PERIOD of each sample.
struct Samples {
  std::vector<std::uint64_t> at;
  std::vector<std::uint64_t> periods;
};
Samples run(PeriodState& s, std::uint64_t n, std::uint64_t gap_ns, std::uint64_t start_ns = 0) {
  Samples out;
  for (std::uint64_t k = 1; k <= n; k++) {
    const PeriodState::Hit h = s.event(1, sim::perf_clock(start_ns + k * gap_ns));
    for (std::uint64_t i = 0; i < h.samples; i++) {
      out.at.push_back(k);
      out.periods.push_back(h.period);
    }
  }
  return out;
}

TEST(Sampling, PeriodModeSamplesEveryNthWithTheNthAsPeriod) {
  PeriodState s(SamplingAttr{.sample_period = 3});
  s.add();  // perf_event_alloc left period_left 3; perf_swevent_set_period makes it -3
  EXPECT_EQ(s.period_left(), -3);
  const Samples got = run(s, 10, kUs);
  EXPECT_EQ(got.at, (std::vector<std::uint64_t>{3, 6, 9}));
  EXPECT_EQ(got.periods, (std::vector<std::uint64_t>{3, 3, 3}));
  EXPECT_EQ(s.count(), 10u);
}

TEST(Sampling, ThePeriodFieldSamplesEveryOccurrenceWithItsWeight) {
  PeriodState s(SamplingAttr{.sample_period = 3, .period_field = true});
  s.add();
  const Samples got = run(s, 4, kUs);
  EXPECT_EQ(got.at, (std::vector<std::uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(got.periods, (std::vector<std::uint64_t>{1, 1, 1, 1}));
  const PeriodState::Hit heavy = s.event(5, sim::perf_clock(10 * kUs));
  EXPECT_EQ(heavy.samples, 1u);
  EXPECT_EQ(heavy.period, 5u);  // data->period = nr
  EXPECT_EQ(s.period_left(), -3);  // untouched by the rule
}

TEST(Sampling, PeriodOneSamplesEveryOccurrence) {
  PeriodState s(SamplingAttr{.sample_period = 1});
  s.add();
  const Samples got = run(s, 5, kUs);
  EXPECT_EQ(got.at.size(), 5u);
  EXPECT_EQ(got.periods, (std::vector<std::uint64_t>{1, 1, 1, 1, 1}));
}

TEST(Sampling, AHeavyOccurrenceOverflowsSeveralTimes) {
  // period_left -4 + 9 = 5 >= 0: set_period gives (4 + 5) / 4 = 2
  // overflows, period_left 5 - 8 = -3.
  PeriodState s(SamplingAttr{.sample_period = 4});
  s.add();
  const PeriodState::Hit h = s.event(9, sim::perf_clock(kUs));
  EXPECT_EQ(h.samples, 2u);
  EXPECT_EQ(h.period, 4u);
  EXPECT_EQ(s.period_left(), -3);
}

TEST(Sampling, ADisableKeepsTheCountTowardsThePeriod) {
  PeriodState s(SamplingAttr{.sample_period = 4});
  s.add();
  EXPECT_TRUE(run(s, 3, kUs).at.empty());
  s.add();  // enabled again: period_left -1 is negative, kept
  EXPECT_EQ(s.period_left(), -1);
  EXPECT_EQ(run(s, 1, kUs).at, (std::vector<std::uint64_t>{1}));
}

// perf_adjust_period's step, as the source writes it.
std::uint64_t adjusted(std::uint64_t period, std::uint64_t count, std::uint64_t ns, std::uint64_t freq) {
  const std::int64_t target = static_cast<std::int64_t>(count * 1'000'000'000 / (ns * freq));
  std::int64_t delta = target - static_cast<std::int64_t>(period);
  delta = (delta >= 0 ? delta + 7 : delta - 7) / 8;
  const std::int64_t next = static_cast<std::int64_t>(period) + delta;
  return next < 1 ? 1 : static_cast<std::uint64_t>(next);
}

TEST(Sampling, FrequencyModeSamplesTheFirstFourThenWaitsForTheAdaptedPeriod) {
  PeriodState s(SamplingAttr{.sample_freq = 250, .period_field = true});  // the field changes nothing here
  s.add();
  EXPECT_EQ(s.sample_period(), 1u);
  // 1st sample: no adjustment (its time stamp was 0, the clock counts
  // from boot); 2nd: 1 occurrence in 1 us; 3rd: reported last_period 1,
  // reload 1, then adjust with count = the 2nd's period.
  const std::uint64_t s2 = adjusted(1, 1, kUs, 250);
  const std::uint64_t s3 = adjusted(s2, s2, kUs, 250);
  ASSERT_GT(s2, 8u);
  const Samples got = run(s, 4 + s2, kUs);
  EXPECT_EQ(got.at, (std::vector<std::uint64_t>{1, 2, 3, 4, 4 + s2}));
  EXPECT_EQ(got.periods, (std::vector<std::uint64_t>{1, 1, 1, s2, s3}));
}

TEST(Sampling, FrequencyModeDoesNotAdaptToSamplesTwoTicksApart) {
  PeriodState s(SamplingAttr{.sample_freq = 1000});
  s.add();
  const Samples got = run(s, 6, 2 * sim::kTickNs);
  EXPECT_EQ(got.at.size(), 6u);  // every one, the period still 1
  EXPECT_EQ(s.sample_period(), 1u);
}

TEST(Sampling, TheLowPassFilterRoundsSmallNegativeStepsAwayFromZero) {
  PeriodState s(SamplingAttr{.sample_freq = 1000});
  s.add();
  s.event(1, sim::perf_clock(kUs));
  // 1 occurrence in 200 us at 1000 Hz: target 5, 1 + (4 + 7) / 8 = 2.
  s.event(1, sim::perf_clock(201 * kUs));
  ASSERT_EQ(s.sample_period(), 2u);
  // 2 occurrences (last_period) in 1.5 ms: target 1, delta -1: (-1 - 7) / 8
  // = -1, back to 1 (Linux 6.1's (delta + 7) / 8 = 0 kept 2).
  const PeriodState::Hit h = s.event(1, sim::perf_clock(1701 * kUs));
  EXPECT_EQ(h.samples, 1u);
  EXPECT_EQ(s.sample_period(), 1u);
}

TEST(Sampling, CalculatePeriodIsTheExactQuotientWhereNothingOverflows) {
  for (const std::uint64_t count : {1ull, 7ull, 1000ull, 123456789ull}) {
    for (const std::uint64_t ns : {1ull, 999ull, 4'000'000ull}) {
      for (const std::uint64_t freq : {1ull, 250ull, 100'000ull}) {
        const unsigned __int128 exact = static_cast<unsigned __int128>(count) * 1'000'000'000 / (ns * freq);
        EXPECT_EQ(sim::calculate_period(freq, ns, count), static_cast<std::uint64_t>(exact))
            << count << " " << ns << " " << freq;
      }
    }
  }
  // count * 10^9 above 64 bits: precision is dropped, not the result's size.
  const std::uint64_t big = sim::calculate_period(1000, 1'000'000, 1ull << 40);
  const double exact = static_cast<double>(1ull << 40) * 1e9 / (1e6 * 1000);
  EXPECT_NEAR(static_cast<double>(big), exact, exact / 1e6);
}

// The model replays the rules on a log and names what differs.
model::KernelLog sampled_log(std::uint64_t period, bool field) {
  model::KernelLog log;
  log.sampling.sample_period = period;
  log.sampling.period_field = field;
  log.sampling.period_offsets = {0};
  log.sampling.sequence_offsets = {8};
  log.cpus.resize(1);
  log.cpus[0].unsampled_after = {0};
  return log;
}

void add_sample(model::KernelLog& log, std::uint64_t unsampled, std::uint64_t period) {
  model::SampleHit h;
  h.id = 1000;
  h.unsampled = unsampled;
  h.clock_ns = sim::perf_clock(log.cpus[0].hits.size() * kUs);
  h.samples = 1;
  h.period = period;
  h.sequence = log.cpus[0].hits.size();
  log.cpus[0].hits.push_back(h);
  log.cpus[0].samples_attempted++;
}

TEST(SamplingModel, AcceptsWhatTheRulesSay) {
  model::KernelLog log = sampled_log(3, false);
  add_sample(log, 2, 3);
  add_sample(log, 2, 3);
  log.cpus[0].unsampled_after = {2};
  EXPECT_TRUE(model::check_sampling(log).empty());
}

TEST(SamplingModel, NamesASampleTakenTooLate) {
  // PERIOD rule on: every occurrence is a sample; the log skipped two.
  model::KernelLog log = sampled_log(3, true);
  add_sample(log, 2, 1);
  const std::vector<model::Violation> v = model::check_sampling(log);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.front().property, model::kSamplingPeriods);
}

TEST(SamplingModel, NamesAWrongPeriodAndAMissedSampleAtTheEnd) {
  model::KernelLog wrong = sampled_log(3, false);
  add_sample(wrong, 2, 1);
  EXPECT_FALSE(model::check_sampling(wrong).empty());
  model::KernelLog missed = sampled_log(3, false);
  missed.cpus[0].unsampled_after = {3};  // the 3rd should have been a sample
  EXPECT_FALSE(model::check_sampling(missed).empty());
}

}  // namespace
}  // namespace ringsim
