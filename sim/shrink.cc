#include "sim/shrink.h"

#include <chrono>
#include <optional>
#include <tuple>

#include "core/verify.h"
#include "sim/params.h"
#include "sim/run.h"

namespace ringsim::sim {
namespace {

using Clock = std::chrono::steady_clock;

std::tuple<std::uint64_t, std::uint64_t, std::uint64_t> size_of(const std::vector<Decision>& tape) {
  std::uint64_t nonzero = 0, sum = 0;
  for (const Decision& d : tape) {
    nonzero += d.value != 0;
    sum += d.value;
  }
  return {tape.size(), nonzero, sum};
}

class Shrinker {
 public:
  Shrinker(const ReplayFile& failing, const ShrinkOptions& options, ShrinkStats& stats)
      : best_(failing), options_(options), stats_(stats), start_(Clock::now()) {}

  ReplayFile run() {
    stats_.decisions_before = best_.tape.size();
    for (int round = 0; round < 20 && !out_of_budget(); round++) {
      const std::uint64_t accepted = stats_.accepted;
      shrink_config();
      shrink_prefix();
      shrink_blocks();
      if (stats_.accepted == accepted) break;
    }
    stats_.decisions_after = best_.tape.size();
    return best_;
  }

 private:
  bool out_of_budget() {
    if (stats_.attempts >= options_.attempts_max) stats_.budget_exhausted = true;
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    if (elapsed >= options_.budget_s) stats_.budget_exhausted = true;
    return stats_.budget_exhausted;
  }

  // Replays (config, tape) leniently; keeps it if it fails the same way and
  // is no larger. `must_shrink`: the tape has to get strictly smaller.
  bool attempt(const RunConfig& config, const std::vector<Decision>& tape, bool must_shrink) {
    if (out_of_budget()) return false;
    if (!validate(config).empty()) return false;
    stats_.attempts++;
    DecisionSource decisions(tape, DecisionSource::Mode::replay_lenient, true);
    const RunResult result = run_simulation(config, decisions);
    const model::Violation* match = nullptr;
    for (const model::Violation& v : result.violations) {
      if (v.property == best_.property) {
        match = &v;
        break;
      }
    }
    if (match == nullptr) return false;
    const auto new_size = size_of(decisions.recorded());
    const auto old_size = size_of(best_.tape);
    if (must_shrink ? !(new_size < old_size) : std::get<0>(new_size) > std::get<0>(old_size)) return false;
    best_.config = config;
    best_.tape = decisions.recorded();
    best_.detail = match->detail;
    best_.trace_hash = result.trace_hash;
    best_.output_hash = result.output_hash;
    stats_.accepted++;
    return true;
  }

  // The table's edits (sim/params.h), row by row, each repeated while it
  // keeps the failure.
  void shrink_config() {
    for (const Param& param : params()) {
      for (bool (*step)(RunConfig&) : param.shrink) {
        for (int repeat = 0; repeat < 16 && !out_of_budget(); repeat++) {
          RunConfig candidate = best_.config;
          if (!step(candidate)) break;
          if (!attempt(candidate, best_.tape, false)) break;
        }
      }
    }
  }

  void shrink_prefix() {
    for (int repeat = 0; repeat < 64 && !out_of_budget(); repeat++) {
      const std::size_t n = best_.tape.size();
      bool shortened = false;
      for (std::size_t keep : {n / 8, n / 4, n / 2, n * 3 / 4, n * 7 / 8, n - 1}) {
        if (keep >= n) continue;
        std::vector<Decision> prefix(best_.tape.begin(), best_.tape.begin() + static_cast<std::ptrdiff_t>(keep));
        if (attempt(best_.config, prefix, true)) {
          shortened = true;
          break;
        }
      }
      if (!shortened) return;
    }
  }

  void shrink_blocks() {
    for (std::size_t block = std::max<std::size_t>(best_.tape.size() / 4, 1); block >= 1 && !out_of_budget();
         block /= 2) {
      for (std::size_t start = 0; start < best_.tape.size() && !out_of_budget(); start += block) {
        std::vector<Decision> candidate = best_.tape;
        bool changed = false;
        for (std::size_t i = start; i < std::min(start + block, candidate.size()); i++) {
          changed |= candidate[i].value != 0;
          candidate[i].value = 0;
        }
        if (changed) attempt(best_.config, candidate, true);
      }
      if (block == 1) break;
    }
  }

  ReplayFile best_;
  const ShrinkOptions options_;
  ShrinkStats& stats_;
  const Clock::time_point start_;
};

}  // namespace

ReplayFile shrink(const ReplayFile& failing, const ShrinkOptions& options, ShrinkStats& stats) {
  VERIFY(!failing.property.empty());
  return Shrinker(failing, options, stats).run();
}

}  // namespace ringsim::sim
