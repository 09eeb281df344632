#include "sim/sampling.h"

#include "core/verify.h"

namespace ringsim::sim {
namespace {

int fls64(std::uint64_t x) { return x == 0 ? 0 : 64 - __builtin_clzll(x); }

// REDUCE_FLS: one bit less of accuracy from the larger of the two.
void reduce(std::uint64_t& a, int& a_fls, std::uint64_t& b, int& b_fls) {
  if (a_fls > b_fls) {
    a >>= 1;
    a_fls--;
  } else {
    b >>= 1;
    b_fls--;
  }
}

}  // namespace

// perf_calculate_period: count * 10^9 / (nsec * frequency), each product
// brought under 64 bits by dropping low bits of its larger factor.
std::uint64_t calculate_period(std::uint64_t frequency, std::uint64_t nsec, std::uint64_t count) {
  VERIFY(frequency > 0);
  std::uint64_t sec = 1'000'000'000;
  int count_fls = fls64(count);
  int nsec_fls = fls64(nsec);
  int frequency_fls = fls64(frequency);
  int sec_fls = 30;
  std::uint64_t dividend = 0;
  std::uint64_t divisor = 0;
  // Each round drops a bit of both products: at most 128 rounds.
  for (int i = 0; i < 128 && count_fls + sec_fls > 64 && nsec_fls + frequency_fls > 64; i++) {
    reduce(nsec, nsec_fls, frequency, frequency_fls);
    reduce(sec, sec_fls, count, count_fls);
  }
  if (count_fls + sec_fls > 64) {
    divisor = nsec * frequency;
    for (int i = 0; i < 128 && count_fls + sec_fls > 64; i++) {
      reduce(count, count_fls, sec, sec_fls);
      divisor >>= 1;
    }
    dividend = count * sec;
  } else {
    dividend = count * sec;
    for (int i = 0; i < 128 && nsec_fls + frequency_fls > 64; i++) {
      reduce(nsec, nsec_fls, frequency, frequency_fls);
      dividend >>= 1;
    }
    divisor = nsec * frequency;
  }
  if (divisor == 0) return dividend;
  return dividend / divisor;
}

PeriodState::PeriodState(const SamplingAttr& attr) : attr_(attr) {
  sample_period_ = attr.freq() ? 1 : attr.sample_period;
  last_period_ = sample_period_;
  period_left_ = static_cast<std::int64_t>(sample_period_);
}

void PeriodState::add() {
  if (!attr_.sampling()) return;
  last_period_ = sample_period_;
  set_period();
}

std::uint64_t PeriodState::set_period() {
  const std::uint64_t period = last_period_;
  VERIFY(period >= 1);
  last_period_ = sample_period_;
  if (period_left_ < 0) return 0;
  const std::uint64_t nr = (period + static_cast<std::uint64_t>(period_left_)) / period;
  period_left_ -= static_cast<std::int64_t>(nr * period);
  VERIFY(period_left_ < 0);
  return nr;
}

void PeriodState::adjust_period(std::uint64_t nsec, std::uint64_t count) {
  const std::int64_t period = static_cast<std::int64_t>(calculate_period(attr_.sample_freq, nsec, count));
  std::int64_t delta = period - static_cast<std::int64_t>(sample_period_);
  delta += delta >= 0 ? 7 : -7;
  delta /= 8;  // the low-pass filter
  std::int64_t sample_period = static_cast<std::int64_t>(sample_period_) + delta;
  if (sample_period <= 0) sample_period = 1;
  sample_period_ = static_cast<std::uint64_t>(sample_period);
  if (period_left_ > 8 * sample_period) period_left_ = 0;
}

void PeriodState::account_interrupt(std::uint64_t clock_ns) {
  if (!attr_.freq()) return;
  const std::int64_t delta = static_cast<std::int64_t>(clock_ns - freq_time_stamp_);
  freq_time_stamp_ = clock_ns;
  if (delta > 0 && delta < static_cast<std::int64_t>(2 * kTickNs)) adjust_period(static_cast<std::uint64_t>(delta), last_period_);
}

bool PeriodState::samples_next() const {
  if (!attr_.sampling()) return false;
  if (!attr_.freq() && (attr_.period_field || sample_period_ == 1)) return true;
  return period_left_ + 1 >= 0;
}

PeriodState::Hit PeriodState::event(std::uint64_t nr, std::uint64_t clock_ns) {
  VERIFY(nr >= 1);
  const bool expected = nr == 1 && samples_next();
  count_ += nr;
  Hit hit;
  if (!attr_.sampling()) return hit;  // `expected` is false
  std::uint64_t overflows = 0;
  if (attr_.period_field && !attr_.freq()) {
    hit.period = nr;
    overflows = 1;
  } else {
    hit.period = last_period_;
    if (nr == 1 && sample_period_ == 1 && !attr_.freq()) {
      overflows = 1;
    } else {
      period_left_ += static_cast<std::int64_t>(nr);
      if (period_left_ < 0) return hit;
      overflows = set_period();
    }
  }
  // perf_swevent_overflow: each overflow is a sample (throttling is not
  // modelled: sim/sampling.h).
  for (std::uint64_t k = 0; k < overflows; k++) account_interrupt(clock_ns);
  hit.samples = overflows;
  VERIFY(nr != 1 || expected == (overflows > 0));
  return hit;
}

}  // namespace ringsim::sim
