#include "sim/decisions.h"

#include <gtest/gtest.h>

namespace ringsim::sim {
namespace {

TEST(Decisions, SameSeedSameValuesAndRecordedTapeReplaysStrictly) {
  DecisionSource a(99, true), b(99, false);
  std::vector<std::uint64_t> values;
  for (std::uint64_t bound : {2u, 3u, 1000u, 7u, 1u, 1'000'000u}) {
    values.push_back(a.draw(bound));
    EXPECT_EQ(values.back(), b.draw(bound));
    EXPECT_LT(values.back(), bound);
  }
  EXPECT_EQ(a.recorded().size(), 5u);  // bound 1 is not a choice
  DecisionSource replay(a.recorded(), DecisionSource::Mode::replay_strict);
  std::vector<std::uint64_t> again;
  for (std::uint64_t bound : {2u, 3u, 1000u, 7u, 1u, 1'000'000u}) again.push_back(replay.draw(bound));
  EXPECT_EQ(values, again);
  replay.check_fully_used();
  EXPECT_FALSE(replay.diverged());
}

TEST(Decisions, StrictReplayReportsTheFirstDivergence) {
  DecisionSource replay({{2, 1}, {10, 4}}, DecisionSource::Mode::replay_strict);
  replay.draw(2);
  replay.draw(11);
  EXPECT_TRUE(replay.diverged());
  EXPECT_NE(replay.divergence().find("decision 1 asked for bound 11"), std::string::npos);
}

TEST(Decisions, StrictReplayReportsUnusedAndMissingDecisions) {
  DecisionSource shorter({{2, 1}, {2, 1}}, DecisionSource::Mode::replay_strict);
  shorter.draw(2);
  shorter.check_fully_used();
  EXPECT_TRUE(shorter.diverged());
  DecisionSource longer({{2, 1}}, DecisionSource::Mode::replay_strict);
  longer.draw(2);
  EXPECT_EQ(longer.draw(2), 0u);
  EXPECT_TRUE(longer.diverged());
}

TEST(Decisions, LenientReplayReducesAndPadsWithZero) {
  DecisionSource replay({{100, 57}}, DecisionSource::Mode::replay_lenient, true);
  EXPECT_EQ(replay.draw(10), 7u);  // 57 % 10
  EXPECT_EQ(replay.draw(10), 0u);  // past the end
  EXPECT_FALSE(replay.diverged());
  EXPECT_EQ(replay.recorded(), (std::vector<Decision>{{10, 7}, {10, 0}}));
}

TEST(Decisions, ZeroIsThePlainChoiceForChance) {
  DecisionSource replay({{1'000'000, 0}}, DecisionSource::Mode::replay_strict);
  EXPECT_FALSE(replay.chance(999'999));
  DecisionSource never(5, true);
  for (int i = 0; i < 100; i++) EXPECT_FALSE(never.chance(0));
  EXPECT_TRUE(never.recorded().empty());
}

TEST(Decisions, ChanceMatchesItsProbability) {
  DecisionSource d(3, false);
  int yes = 0;
  for (int i = 0; i < 100'000; i++) yes += d.chance(250'000);
  EXPECT_NEAR(yes, 25'000, 800);
}

}  // namespace
}  // namespace ringsim::sim
