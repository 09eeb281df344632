// The conformance suite in CI: one test per scenario, each run on the real
// kernel and the simulated one; a difference fails (a known divergence of
// the simulated kernel is printed and passes). Where perf_event_open or
// tracefs cannot be used, one line says why and every scenario is SKIPPED.
#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <string>

#include "model/kernel_rules.h"
#include "tests/conformance/real_kernel.h"
#include "tests/conformance/runner.h"
#include "tests/conformance/sim_kernel.h"
#include "tests/conformance/suite.h"

namespace ringsim::conformance {
namespace {

struct Kernels {
  Kernels() : files(suite_files()), sim(files) {
    available = RealKernel::available(why);
    if (available) {
      real.emplace(files);
    } else {
      std::printf("conformance: the real kernel cannot be used here, every scenario is skipped: %s\n", why.c_str());
    }
  }
  SuiteFiles files;
  SimKernel sim;
  std::optional<RealKernel> real;
  bool available = false;
  std::string why;
};

Kernels& kernels() {
  static Kernels k;
  return k;
}

class Conformance : public ::testing::TestWithParam<std::size_t> {};

TEST_P(Conformance, RealAndSimulatedKernelsLogTheSame) {
  const Scenario& s = scenarios()[GetParam()];
  Kernels& k = kernels();
  if (!k.available) GTEST_SKIP() << k.why;
  Log real_log, sim_log;
  const Outcome o = run_scenario(s, *k.real, k.sim, 1, real_log, sim_log);
  if (o.status == Status::skipped) GTEST_SKIP() << o.difference;
  if (o.status == Status::known) {
    std::printf("%s: known divergence: %s\n", s.name.c_str(), o.difference.c_str());
    return;
  }
  EXPECT_EQ(o.status, Status::match) << s.name << ": " << o.difference << "\nreal kernel:\n"
                                     << format(s, real_log) << "simulated kernel:\n"
                                     << format(s, sim_log);
}

std::string test_name(const ::testing::TestParamInfo<std::size_t>& info) {
  std::string name = scenarios()[info.param].name;
  for (char& c : name) c = c == '-' ? '_' : c;
  return name;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, Conformance, ::testing::Range<std::size_t>(0, scenarios().size()), test_name);

TEST(ConformanceSuite, HasAtLeast25Scenarios) { EXPECT_GE(scenarios().size(), 25u); }

// Without the real kernel too: every ring the simulated side wrote keeps
// the rules the model states for Linux (model/kernel_rules.h).
TEST(ConformanceSuite, TheSimulatedRingsKeepTheKernelRules) {
  SimKernel& sim = kernels().sim;
  Log log;
  for (const Scenario& s : scenarios()) {
    run(s, sim, log);
    EXPECT_FALSE(log.entries().empty()) << s.name;
    for (const model::KernelLog& ring : sim.ring_logs()) {
      const std::vector<model::Violation> v = model::check_kernel_rules(ring);
      EXPECT_TRUE(v.empty()) << s.name << ": " << v.front().detail;
    }
  }
}

// A difference is reported with the step, the observable and both values.
TEST(ConformanceSuite, ADifferenceNamesStepObservableAndBothValues) {
  const Scenario& s = scenarios().front();
  Log real_log, sim_log;
  run(s, kernels().sim, real_log);
  run(s, kernels().sim, sim_log);
  EXPECT_TRUE(compare(s, real_log, sim_log).match);
  Log changed;
  for (Observation o : sim_log.entries()) {
    if (o.kind == Kind::head && o.value == 320) o.value = 328;
    changed.add(o);
  }
  const Comparison c = compare(s, real_log, changed);
  EXPECT_FALSE(c.match);
  EXPECT_NE(c.first_difference.find("data_head A: real 320, simulated 328"), std::string::npos) << c.first_difference;
  EXPECT_NE(c.first_difference.find("step 4 (getpid x10)"), std::string::npos) << c.first_difference;
}

}  // namespace
}  // namespace ringsim::conformance
