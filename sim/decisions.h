// The one source of every nondeterministic choice in a simulation.
//
// A run draws each choice (which fiber runs next, whether a fault happens,
// how long a latency is, how big a record is) from here, as a value in
// [0, bound). By convention value 0 is the plain choice: the first ready
// fiber, no fault, the shortest delay, the smallest record. That is what
// makes shrinking work: a replay whose decisions were pushed towards 0 is a
// simpler run.
//
// Modes:
//   random   values from a PRNG seeded by the run's seed (optionally
//            recorded on a tape);
//   replay   values from a recorded tape. Strict replay checks that every
//            draw asks for the bound the tape recorded, and reports the
//            first divergence; lenient replay (used by the shrinker, whose
//            edited tapes no longer match the run) reduces a value modulo
//            the bound and draws 0 past the end of the tape;
//   explore  (campaign explore, sim/explore.h) the scheduler's picks from a
//            given list of values (0 past its end: the first ready fiber),
//            every other choice from a PRNG seeded by the run's seed;
//            everything recorded, so a run replays strictly from its tape.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/verify.h"

namespace ringsim::sim {

// PCT (probabilistic concurrency testing: Burckhardt, Kothari, Musuvathi,
// Nagarakatte, ASPLOS 2010) for the scheduler's picks (sim/scheduler.h):
// depth d, change points drawn among the first `steps` scheduling points.
// depth 0: off (uniform picks).
struct PctSettings {
  std::uint32_t depth = 0;
  std::uint64_t steps = 0;
  bool operator==(const PctSettings&) const = default;
};

struct Decision {
  std::uint64_t bound = 0;
  std::uint64_t value = 0;
  bool operator==(const Decision&) const = default;
};

class DecisionSource {
 public:
  enum class Mode : std::uint8_t { random, replay_strict, replay_lenient, explore };

  // Random mode; records a tape when `record` is set.
  DecisionSource(std::uint64_t seed, bool record);
  // Replay mode; records the decisions actually taken (after lenient
  // reduction) when `record` is set, which is how the shrinker turns an
  // edited tape back into one that replays strictly.
  DecisionSource(std::vector<Decision> tape, Mode mode, bool record = false);
  // Random mode whose scheduler picks by PCT (`pct.depth` > 0): the picks
  // are recorded like any draw, so the tape replays without PCT.
  DecisionSource(std::uint64_t seed, bool record, const PctSettings& pct);
  // Explore mode: the scheduler's picks are `schedule` (then 0s), the rest
  // random from `seed`; records the tape and the picks.
  DecisionSource(std::uint64_t seed, std::vector<std::uint64_t> schedule);

  // A value in [0, bound). bound >= 1; a bound of 1 is not a choice and
  // is neither drawn nor recorded.
  std::uint64_t draw(std::uint64_t bound);

  // The scheduler's pick among `bound` ready fibers: draw(bound), except in
  // explore mode.
  std::uint64_t draw_schedule(std::uint64_t bound);
  // Explore mode: the picks made (bound > 1 only), in order.
  const std::vector<Decision>& schedule_taken() const { return schedule_taken_; }
  // PCT: its settings (depth 0: off), the seed of its own stream, and a
  // pick it made among `bound` ready fibers, taken as a decision.
  const PctSettings& pct() const { return pct_; }
  std::uint64_t pct_seed() const { return pct_seed_; }
  void take_pick(std::uint64_t bound, std::uint64_t value);

  // True with probability per_million / 1e6. A draw of 0 means "no".
  bool chance(std::uint32_t per_million);

  // A value in [low, high], low <= high.
  std::uint64_t between(std::uint64_t low, std::uint64_t high);

  // Strict replay: notes a divergence if the run left decisions unused.
  void check_fully_used();

  Mode mode() const { return mode_; }
  std::uint64_t draws() const { return draws_; }
  // The decisions taken so far, when recording.
  const std::vector<Decision>& recorded() const { return recorded_; }
  // Strict replay only: the first draw that did not match the tape.
  bool diverged() const { return !divergence_.empty(); }
  const std::string& divergence() const { return divergence_; }

 private:
  std::uint64_t next_random(std::uint64_t bound);
  std::uint64_t next_replayed(std::uint64_t bound);
  [[noreturn]] static void rejected_too_often();

  Mode mode_;
  bool record_ = false;
  std::mt19937_64 rng_;
  std::vector<Decision> tape_;      // replay input
  std::vector<Decision> recorded_;  // what was drawn, when recording
  std::vector<std::uint64_t> schedule_;     // explore: the picks to make
  std::vector<Decision> schedule_taken_;    // explore: the picks made
  PctSettings pct_;
  std::uint64_t pct_seed_ = 0;
  std::uint64_t cursor_ = 0;
  std::uint64_t draws_ = 0;
  std::string divergence_;
};

// draw, chance and between are here, inline: a run draws tens of millions
// of times, and a constant bound (chance's million, a draw among 100) then
// divides by multiplication.

inline std::uint64_t DecisionSource::next_random(std::uint64_t bound) {
  // Rejection sampling: unbiased, and defined by this code alone (the
  // standard distributions differ between library implementations). The
  // threshold (0 - bound) % bound is below bound: a value at or above
  // bound is kept without computing it.
  for (int attempt = 0; attempt < 1000; attempt++) {
    const std::uint64_t r = rng_();
    if (r >= bound || r >= (0 - bound) % bound) return r % bound;
  }
  rejected_too_often();
}

inline std::uint64_t DecisionSource::draw(std::uint64_t bound) {
  VERIFY(bound >= 1);
  if (bound == 1) return 0;
  draws_++;
  const bool random = mode_ == Mode::random || mode_ == Mode::explore;
  const std::uint64_t value = random ? next_random(bound) : next_replayed(bound);
  VERIFY(value < bound);
  if (record_) recorded_.push_back(Decision{bound, value});
  return value;
}

inline bool DecisionSource::chance(std::uint32_t per_million) {
  VERIFY(per_million <= 1'000'000);
  if (per_million == 0) return false;
  if (per_million == 1'000'000) return true;
  // Drawn as "which of the million outcomes": 0..per_million-1 is "yes",
  // so value 0 would be yes; flip it so 0 is the plain choice (no).
  const std::uint64_t value = draw(1'000'000);
  return value >= 1'000'000 - per_million;
}

inline std::uint64_t DecisionSource::between(std::uint64_t low, std::uint64_t high) {
  VERIFY(low <= high);
  const std::uint64_t span = high - low;
  VERIFY(span < UINT64_MAX);
  return low + draw(span + 1);
}

}  // namespace ringsim::sim
