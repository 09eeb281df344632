// Each deliberately broken consumer (sim/mutants.h), and the simulated
// kernel without the PERF_SAMPLE_PERIOD rule, is caught by the
// property meant to catch it, within a few dozen seeds, and the failing run
// replays exactly from its tape. The correct consumer passes the same seeds.
#include <gtest/gtest.h>

#include "sim/config.h"
#include "sim/replay.h"
#include "sim/params.h"
#include "sim/run.h"

namespace ringsim::sim {
namespace {

RunConfig mutant_config(std::uint64_t seed, Mutant mutant) {
  RunConfig c = random_config(seed);
  set_mutant(c, mutant, false);
  return c;
}

struct Case {
  Mutant mutant;
  std::vector<std::string> properties;  // any of these catches it
  int seeds_min;                        // caught in at least this many of 60 seeds
};

class MutantCaught : public ::testing::TestWithParam<Case> {};

TEST_P(MutantCaught, WithinSixtySeedsAndReplaysExactly) {
  const Case c = GetParam();
  int caught = 0;
  std::uint64_t first_seed = 0;
  for (std::uint64_t seed = 1; seed <= 60; seed++) {
    RunConfig clean_config = mutant_config(seed, c.mutant);
    clean_config.mutant = Mutant::none;
    const RunResult clean = run_simulation(clean_config);
    ASSERT_TRUE(clean.ok()) << "seed " << seed << " fails without the mutant: " << clean.first_property() << ": "
                            << clean.violations.front().detail;
    const RunResult broken = run_simulation(mutant_config(seed, c.mutant));
    bool expected = false;
    for (const model::Violation& v : broken.violations) {
      for (const std::string& p : c.properties) expected |= v.property == p;
    }
    if (expected) {
      caught++;
      if (first_seed == 0) first_seed = seed;
    }
  }
  EXPECT_GE(caught, c.seeds_min) << to_string(c.mutant) << " caught by " << ::testing::PrintToString(c.properties)
                                 << " in only " << caught << " of 60 seeds";
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
                         ::testing::Values(Case{Mutant::early_release, {"exactly_once"}, 3},
                                           Case{Mutant::no_pause, {"exactly_once", "no_torn_records", "clean_finish"}, 3},
                                           Case{Mutant::drop_lost, {"lost_accounting"}, 3},
                                           Case{Mutant::shared_offset, {"no_overlap"}, 10},
                                           Case{Mutant::reuse_buffer, {"buffer_stable", "release_safety"}, 10},
                                           Case{Mutant::eagain_busy_loop, {"liveness"}, 3},
                                           Case{Mutant::error_resubmit, {"liveness", "release_safety", "hard_error_handled"}, 3},
                                           Case{Mutant::aux_early_tail, {"aux_delivery"}, 2},
                                           Case{Mutant::aux_no_reenable, {"aux_truncation"}, 2},
                                           // A kernel bug, not a consumer's: the model's own
                                           // statement of the rules (model/sampling.h) catches it.
                                           Case{Mutant::period_rule_ignored, {"sampling_periods"}, 50},
                                           // A counter wrong and nothing else: only
                                           // counters_agree sees it.
                                           Case{Mutant::eintr_retry_hidden, {"counters_agree"}, 20},
                                           // A reading fiber per CPU whose gate marks every
                                           // drained round: perf's round order breaks.
                                           Case{Mutant::gate_marks_every_round, {"round_order"}, 20},
                                           // Reading fibers that help each other, staging a
                                           // helped chunk after the ring's lock is given back:
                                           // a CPU's records out of order.
                                           Case{Mutant::help_staged_late, {"exactly_once"}, 20}),
                         [](const auto& param_info) { return std::string(to_string(param_info.param.mutant)); });

}  // namespace
}  // namespace ringsim::sim
