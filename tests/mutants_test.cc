// Each deliberately broken consumer (sim/mutants.h) is caught by the
// property meant to catch it, within a few dozen seeds, and the failing run
// replays exactly from its tape. The correct consumer passes the same seeds.
#include <gtest/gtest.h>

#include "sim/config.h"
#include "sim/replay.h"
#include "sim/run.h"

namespace ringsim::sim {
namespace {

RunConfig mutant_config(std::uint64_t seed, Mutant mutant) {
  RunConfig c = random_config(seed);
  c.mutant = mutant;
  if (mutant == Mutant::early_release) {
    c.mode = core::RingMode::normal;
    c.snapshot_interval_ns = 0;
  }
  if (mutant == Mutant::no_pause) {
    c.mode = core::RingMode::backward;
    c.snapshot_interval_ns = 20'000 + 1'000 * (seed % 50);
    c.copy_interrupt_per_million = 200'000;
  }
  return c;
}

struct Case {
  Mutant mutant;
  const char* property;
};

class MutantCaught : public ::testing::TestWithParam<Case> {};

TEST_P(MutantCaught, WithinSixtySeedsAndReplaysExactly) {
  const Case c = GetParam();
  int caught = 0;
  std::uint64_t first_seed = 0;
  for (std::uint64_t seed = 1; seed <= 60; seed++) {
    const RunResult clean = run_simulation(mutant_config(seed, Mutant::none));
    ASSERT_TRUE(clean.ok()) << "seed " << seed << " fails without the mutant: " << clean.first_property() << ": "
                            << clean.violations.front().detail;
    const RunResult broken = run_simulation(mutant_config(seed, c.mutant));
    bool expected = false;
    for (const model::Violation& v : broken.violations) expected |= v.property == c.property;
    if (expected) {
      caught++;
      if (first_seed == 0) first_seed = seed;
    }
  }
  EXPECT_GE(caught, 3) << to_string(c.mutant) << " caught by " << c.property << " in only " << caught
                       << " of 60 seeds";
  ASSERT_NE(first_seed, 0u);

  // Record, write, read back, replay strictly: the same run.
  const RunConfig config = mutant_config(first_seed, c.mutant);
  DecisionSource recording(first_seed, true);
  const RunResult recorded = run_simulation(config, recording);
  ReplayFile replay;
  replay.config = config;
  replay.tape = recording.recorded();
  replay.property = recorded.first_property();
  replay.trace_hash = recorded.trace_hash;
  replay.output_hash = recorded.output_hash;
  ReplayFile back;
  ASSERT_EQ(replay_from_text(replay_to_text(replay), back), "");
  DecisionSource replaying(back.tape, DecisionSource::Mode::replay_strict);
  const RunResult replayed = run_simulation(back.config, replaying);
  EXPECT_EQ(replayed.trace_hash, recorded.trace_hash);
  EXPECT_EQ(replayed.output_hash, recorded.output_hash);
  EXPECT_EQ(replayed.first_property(), recorded.first_property());
  for (const model::Violation& v : replayed.violations) EXPECT_NE(v.property, kReplayFaithful) << v.detail;
}

INSTANTIATE_TEST_SUITE_P(Mutants, MutantCaught,
                         ::testing::Values(Case{Mutant::early_release, "exactly_once"},
                                           Case{Mutant::no_pause, "clean_finish"},
                                           Case{Mutant::drop_lost, "lost_accounting"}),
                         [](const auto& param_info) { return std::string(to_string(param_info.param.mutant)); });

}  // namespace
}  // namespace ringsim::sim
