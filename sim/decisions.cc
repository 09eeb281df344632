#include "sim/decisions.h"

#include <utility>

#include "core/verify.h"

namespace ringsim::sim {

DecisionSource::DecisionSource(std::uint64_t seed, bool record)
    : mode_(Mode::random), record_(record), rng_(seed) {}

DecisionSource::DecisionSource(std::vector<Decision> tape, Mode mode, bool record)
    : mode_(mode), record_(record), tape_(std::move(tape)) {
  VERIFY(mode_ == Mode::replay_strict || mode_ == Mode::replay_lenient);
}

DecisionSource::DecisionSource(std::uint64_t seed, bool record, const PctSettings& pct)
    : mode_(Mode::random), record_(record), rng_(seed), pct_(pct), pct_seed_(seed ^ 0x5043545043545043ull) {
  VERIFY(pct_.depth == 0 || pct_.steps >= 1);
}

void DecisionSource::take_pick(std::uint64_t bound, std::uint64_t value) {
  VERIFY(mode_ == Mode::random && pct_.depth > 0);
  VERIFY(value < bound);
  if (bound == 1) return;
  draws_++;
  if (record_) recorded_.push_back(Decision{bound, value});
}

DecisionSource::DecisionSource(std::uint64_t seed, std::vector<std::uint64_t> schedule)
    : mode_(Mode::explore), record_(true), rng_(seed), schedule_(std::move(schedule)) {}

std::uint64_t DecisionSource::draw_schedule(std::uint64_t bound) {
  if (mode_ != Mode::explore) return draw(bound);
  VERIFY(bound >= 1);
  if (bound == 1) return 0;
  const std::size_t k = schedule_taken_.size();
  const std::uint64_t value = k < schedule_.size() ? schedule_[k] : 0;
  // The explorer asks only for picks a run with the same picks before
  // offered: the same bound.
  VERIFY_MSG(value < bound, "explore: a pick beyond the ready fibers (the run is not deterministic)");
  draws_++;
  recorded_.push_back(Decision{bound, value});
  schedule_taken_.push_back(Decision{bound, value});
  return value;
}

void DecisionSource::rejected_too_often() { VERIFY_MSG(false, "PRNG rejected 1000 draws in a row"); }

std::uint64_t DecisionSource::next_replayed(std::uint64_t bound) {
  if (cursor_ >= tape_.size()) {
    if (mode_ == Mode::replay_strict && divergence_.empty()) {
      divergence_ = "the run drew more decisions than the tape holds (" +
                    std::to_string(tape_.size()) + ")";
    }
    return 0;
  }
  const Decision& taped = tape_[cursor_++];
  if (mode_ == Mode::replay_strict && taped.bound != bound && divergence_.empty()) {
    divergence_ = "decision " + std::to_string(cursor_ - 1) + " asked for bound " +
                  std::to_string(bound) + " but the tape recorded bound " +
                  std::to_string(taped.bound);
  }
  return taped.value % bound;
}

void DecisionSource::check_fully_used() {
  if (mode_ == Mode::replay_strict && cursor_ < tape_.size() && divergence_.empty()) {
    divergence_ = "the run used " + std::to_string(cursor_) + " of the tape's " + std::to_string(tape_.size()) +
                  " decisions";
  }
}

}  // namespace ringsim::sim
