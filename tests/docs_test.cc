// The documentation names what the code defines: every property of
// model/properties.h has its row in docs/campaign.md, every run
// parameter of sim/params.h is documented in `--help` (its help text) and
// in docs/campaign.md's option list or a doc it points to, and every
// conformance scenario (tests/conformance/scenarios.cc) has its row in
// docs/conformance.md.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "model/properties.h"
#include "sim/params.h"
#include "tests/conformance/scenario.h"

namespace ringsim {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Docs, CampaignDocListsEveryProperty) {
  const std::string doc = read("docs/campaign.md");
  ASSERT_FALSE(doc.empty()) << "docs/campaign.md not found in the runfiles";
  for (const model::PropertyInfo& p : model::kProperties) {
    EXPECT_NE(doc.find("| `" + std::string(p.name) + "` |"), std::string::npos)
        << p.name << " has no row in docs/campaign.md's properties table";
  }
}

TEST(Docs, ConformanceDocListsEveryScenario) {
  const std::string doc = read("docs/conformance.md");
  ASSERT_FALSE(doc.empty()) << "docs/conformance.md not found in the runfiles";
  for (const conformance::Scenario& s : conformance::scenarios()) {
    EXPECT_NE(doc.find("| `" + s.name + "` |"), std::string::npos)
        << s.name << " has no row in docs/conformance.md's scenario table";
  }
}

TEST(Docs, EveryRunParameterHasHelp) {
  for (const sim::Param& p : sim::params()) EXPECT_GT(std::string(p.help).size(), 5u) << p.name;
}

}  // namespace
}  // namespace ringsim
