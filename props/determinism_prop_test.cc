// Determinism: the same seed gives byte-identical output and the same hash
// of the run's event trace, twice in one process; recording the decisions
// does not change the run; the recorded tape replays it exactly.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "props/run_gen.h"
#include "sim/params.h"
#include "sim/run.h"

namespace ringsim {
namespace {

RC_GTEST_PROP(Determinism, SameSeedSameBytesSameTrace, ()) {
  const sim::RunConfig config = *props::gen_run_config(600);
  sim::DecisionSource recording(config.seed, true);
  const sim::RunResult first = sim::run_simulation(config, recording);
  const sim::RunResult second = sim::run_simulation(config);
  RC_ASSERT(first.trace_hash == second.trace_hash);
  RC_ASSERT(first.trace_events == second.trace_events);
  RC_ASSERT(first.decisions == second.decisions);
  RC_ASSERT(first.output.cpus.size() == second.output.cpus.size());
  for (std::size_t cpu = 0; cpu < first.output.cpus.size(); cpu++) {
    RC_ASSERT(first.output.cpus[cpu].bytes == second.output.cpus[cpu].bytes);
  }
  RC_ASSERT(first.log.cpus.size() == second.log.cpus.size());
  for (std::size_t cpu = 0; cpu < first.log.cpus.size(); cpu++) {
    RC_ASSERT(first.log.cpus[cpu].bytes == second.log.cpus[cpu].bytes);
  }

  sim::DecisionSource replaying(recording.recorded(), sim::DecisionSource::Mode::replay_strict);
  const sim::RunResult replayed = sim::run_simulation(config, replaying);
  RC_ASSERT(!replaying.diverged());
  RC_ASSERT(replayed.trace_hash == first.trace_hash);
  RC_ASSERT(replayed.output_hash == first.output_hash);
}

// Different seeds do give different runs (the hash is not a constant).
TEST(Determinism, SeedsDiffer) {
  sim::RunConfig config = sim::random_config(5);
  const std::uint64_t a = sim::run_simulation(config).trace_hash;
  config.seed = 6;
  EXPECT_NE(a, sim::run_simulation(config).trace_hash);
}

// Batched producers (replay format version 5, producer_batch > 1) are as
// deterministic as the finest interleaving, their tape replays strictly,
// and they are another run, with fewer switches.
TEST(Determinism, BatchedProducersSameSeedSameRun) {
  sim::RunConfig config = sim::random_config(11);
  config.records_per_cpu = 400;
  config.producer_batch = 1;
  const sim::RunResult fine = sim::run_simulation(config);
  for (const std::uint32_t batch : {2u, 16u, 4096u}) {
    config.producer_batch = batch;
    sim::DecisionSource recording(config.seed, true);
    const sim::RunResult first = sim::run_simulation(config, recording);
    const sim::RunResult second = sim::run_simulation(config);
    EXPECT_TRUE(first.ok()) << batch << ": " << first.first_property();
    EXPECT_EQ(first.trace_hash, second.trace_hash) << batch;
    EXPECT_EQ(first.output_hash, second.output_hash) << batch;
    EXPECT_EQ(first.decisions, second.decisions) << batch;
    sim::DecisionSource replaying(recording.recorded(), sim::DecisionSource::Mode::replay_strict);
    const sim::RunResult replayed = sim::run_simulation(config, replaying);
    EXPECT_FALSE(replaying.diverged()) << batch << ": " << replaying.divergence();
    EXPECT_EQ(replayed.trace_hash, first.trace_hash) << batch;
    EXPECT_EQ(replayed.output_hash, first.output_hash) << batch;
    EXPECT_NE(first.trace_hash, fine.trace_hash) << batch;
    EXPECT_LT(first.context_switches, fine.context_switches) << batch;
  }
}

}  // namespace
}  // namespace ringsim
