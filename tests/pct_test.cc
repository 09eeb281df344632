// PCT for the scheduler's picks (sim/decisions.h PctSettings, sim/
// scheduler.cc): a run is the same run again from its seed, its tape
// replays it strictly without PCT, and its picks are not the uniform ones.
#include <sstream>

#include "gtest/gtest.h"
#include "sim/campaign.h"
#include "sim/decisions.h"
#include "sim/run.h"

namespace ringsim::sim {
namespace {

TEST(Pct, ARunRepeatsFromItsSeedAndItsTapeReplaysWithoutPct) {
  int differs_from_uniform = 0;
  for (std::uint64_t seed = 1; seed <= 12; seed++) {
    SCOPED_TRACE(seed);
    const RunConfig config = random_config(seed);
    const PctSettings pct{3, 200};
    DecisionSource recording(seed, true, pct);
    const RunResult first = run_simulation(config, recording);
    DecisionSource again(seed, false, pct);
    const RunResult second = run_simulation(config, again);
    EXPECT_EQ(first.trace_hash, second.trace_hash);
    EXPECT_EQ(first.output_hash, second.output_hash);
    DecisionSource strict(recording.recorded(), DecisionSource::Mode::replay_strict);
    const RunResult replayed = run_simulation(config, strict);
    EXPECT_EQ(replayed.trace_hash, first.trace_hash);
    EXPECT_FALSE(strict.diverged()) << strict.divergence();
    EXPECT_EQ(first.ok(), replayed.ok());
    DecisionSource uniform(seed, false);
    differs_from_uniform += run_simulation(config, uniform).trace_hash != first.trace_hash ? 1 : 0;
    EXPECT_GT(first.schedule_points, 0u);
  }
  EXPECT_GE(differs_from_uniform, 10) << "PCT picked as the uniform draws did";
}

TEST(Pct, TheCampaignPrintsTheBoundAndReproductionsNameIt) {
  CampaignOptions o;
  o.first_seed = 1;
  o.runs = 20;
  o.progress = false;
  o.shrink_s = 0;
  o.pct = PctSettings{2, 50};
  o.replay_dir = std::string(std::getenv("TEST_TMPDIR") != nullptr ? std::getenv("TEST_TMPDIR") : "/tmp") + "/pct";
  std::ostringstream out, log;
  EXPECT_EQ(run_campaign(o, out, log), 0) << log.str();
  const std::string s = out.str();
  EXPECT_NE(s.find("  search           PCT, depth 2, change points among the first 50 scheduling points: a bug of "
                   "depth 2 shows in a run with probability >= 1/(n*k^1) = "),
            std::string::npos)
      << s;
  o.overrides = Overrides{};
  o.runs = 40;
  o.json_path = o.replay_dir + "/summary.json";
  for (const Param& p : params()) {
    if (std::string(p.name) == "mutant") {
      std::uint64_t value = 0;
      ASSERT_TRUE(p.parse("early_release", value));
      o.overrides.set(p, value);
    }
  }
  std::ostringstream out2, log2;
  EXPECT_EQ(run_campaign(o, out2, log2), 1);
  EXPECT_NE(log2.str().find(" --pct-depth=2 --pct-steps=50\n"), std::string::npos) << log2.str();
}

}  // namespace
}  // namespace ringsim::sim
