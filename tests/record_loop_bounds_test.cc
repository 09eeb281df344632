// The record loop's bounds, reached: producers that outrun the reader
// leave a ring with more than drain_chunks_max chunks to read in a round;
// the loop reads the rest in later rounds (every run still passes every
// property) and counts each time (LoopResult::chunk_budget_spent, the
// campaign's probe chunk_budget_spent).
#include "gtest/gtest.h"
#include "sim/params.h"
#include "sim/run.h"

namespace ringsim::sim {
namespace {

RunConfig outrun(std::uint64_t seed, std::uint32_t chunks) {
  RunConfig c = random_config(seed);
  c.mode = core::RingMode::normal;
  c.snapshot_interval_ns = 0;
  set_output(c, Output::memory);
  c.ring_pages = 2;
  c.wakeup_watermark_bytes = 0;
  c.wakeup_events = 0;
  c.records_per_cpu = 2000;
  c.burst_per_million = 200'000;
  c.burst_records_max = 300;
  c.drain_chunks_max = chunks;
  return c;
}

TEST(RecordLoopBounds, ARingLeftWithMoreThanItsChunksIsReadLaterAndCounted) {
  std::uint64_t one_chunk = 0;
  std::uint64_t many_chunks = 0;
  for (std::uint64_t seed = 1; seed <= 20; seed++) {
    SCOPED_TRACE(seed);
    for (const std::uint32_t chunks : {1u, 64u}) {
      const RunConfig config = outrun(seed, chunks);
      ASSERT_EQ(validate(config), "");
      const RunResult r = run_simulation(config);
      for (const model::Violation& v : r.violations) ADD_FAILURE() << v.property << ": " << v.detail;
      EXPECT_EQ(r.probes.count(Probe::chunk_budget_spent), r.loop.chunk_budget_spent);
      (chunks == 1 ? one_chunk : many_chunks) += r.loop.chunk_budget_spent;
    }
  }
  EXPECT_GT(one_chunk, 20u) << "one chunk per round never left a ring with more to read";
  EXPECT_LT(many_chunks, one_chunk);
}

}  // namespace
}  // namespace ringsim::sim
