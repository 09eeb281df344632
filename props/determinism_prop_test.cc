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

}  // namespace
}  // namespace ringsim
