// campaign explore (sim/explore.h): every schedule with at most D
// deviations runs once (the count is what the enumeration must give), the
// search is deterministic, a budget says it stopped early, and a failing
// schedule's replay file replays strictly to the same failure.
#include <filesystem>
#include <sstream>

#include "gtest/gtest.h"
#include "sim/decisions.h"
#include "sim/explore.h"
#include "sim/replay.h"
#include "sim/run.h"

namespace ringsim::sim {
namespace {

ExploreOptions tiny(std::uint32_t deviations, const std::string& extra = "") {
  ExploreOptions o;
  o.seed = 1;
  o.deviations = deviations;
  o.replay_dir = (std::filesystem::path(std::getenv("TEST_TMPDIR") != nullptr ? std::getenv("TEST_TMPDIR") : "/tmp") /
                  "explore")
                     .string();
  std::istringstream words("--cpus=1 --ring-pages=1 --records-per-cpu=6 --output=memory --wakeup-watermark-bytes=0 "
                           "--wakeup-events=0 " +
                           extra);
  for (std::string w; words >> w;) {
    const std::size_t eq = w.find('=');
    const std::string name = w.substr(2, eq - 2);
    bool found = false;
    for (const Param& p : params()) {
      if (p.flag() != "--" + name) continue;
      std::uint64_t value = 0;
      EXPECT_TRUE(p.parse(w.substr(eq + 1), value)) << w;
      o.overrides.set(p, value);
      found = true;
    }
    EXPECT_TRUE(found) << w;
  }
  return o;
}

TEST(Explore, EveryScheduleWithOneDeviationRunsOnceAndTheSearchRepeats) {
  const ExploreOptions o = tiny(1);
  // The plain schedule's scheduling points: one run per other pick at each.
  RunConfig config = random_config(o.seed);
  o.overrides.apply(config);
  config.seed = o.seed;
  DecisionSource plain(o.seed, std::vector<std::uint64_t>{});
  ASSERT_TRUE(run_simulation(config, plain).ok());
  std::uint64_t expected = 1;
  for (const Decision& pick : plain.schedule_taken()) expected += pick.bound - 1;
  ASSERT_GT(expected, 5u);
  std::ostringstream out, log;
  ExploreStats s;
  EXPECT_EQ(run_exploration(o, out, log, s), 0) << log.str();
  EXPECT_EQ(s.runs, expected) << out.str();
  EXPECT_EQ(s.by_deviations[0], 1u);
  EXPECT_EQ(s.by_deviations[1], expected - 1);
  EXPECT_TRUE(s.exhaustive);
  EXPECT_GT(s.distinct_traces, 1u) << "every deviation gave the same run";
  EXPECT_NE(out.str().find("result         exhaustive, 0 failed"), std::string::npos) << out.str();
  ExploreStats again;
  std::ostringstream out2;
  ASSERT_EQ(run_exploration(tiny(2), out2, log, again), 0);
  ExploreStats third;
  std::ostringstream out3;
  ASSERT_EQ(run_exploration(tiny(2), out3, log, third), 0);
  EXPECT_EQ(out2.str(), out3.str());
  EXPECT_GT(again.by_deviations[2], again.by_deviations[1]);
}

TEST(Explore, ABudgetOfRunsSaysTheSearchWasNotExhaustive) {
  ExploreOptions o = tiny(2);
  o.runs_max = 10;
  std::ostringstream out, log;
  ExploreStats s;
  EXPECT_EQ(run_exploration(o, out, log, s), 0);
  EXPECT_EQ(s.runs, 10u);
  EXPECT_FALSE(s.exhaustive);
  EXPECT_NE(out.str().find("NOT exhaustive"), std::string::npos) << out.str();
}

TEST(Explore, AFailingSchedulesReplayFileReplaysItStrictly) {
  ExploreOptions o = tiny(1, "--records-per-cpu=24 --size-mix=large --mutant=drop_lost");
  o.failures_max = 1;
  std::ostringstream out, log;
  ExploreStats s;
  EXPECT_EQ(run_exploration(o, out, log, s), 1) << out.str();
  ASSERT_EQ(s.failed, 1u);
  const std::string text = log.str();
  const std::size_t at = text.find("  replay: ");
  ASSERT_NE(at, std::string::npos) << text;
  const std::string line = text.substr(at, text.find('\n', at) - at);
  const std::string path = line.substr(line.rfind(' ') + 1);  // "  replay: bazel run //sim:replay -- PATH"
  ReplayFile replay;
  ASSERT_EQ(read_replay(path, replay), "") << path;
  DecisionSource strict(replay.tape, DecisionSource::Mode::replay_strict);
  const RunResult r = run_simulation(replay.config, strict);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.violations.front().property, replay.property);
  EXPECT_EQ(r.trace_hash, replay.trace_hash);
  EXPECT_FALSE(strict.diverged()) << strict.divergence();
}

}  // namespace
}  // namespace ringsim::sim
