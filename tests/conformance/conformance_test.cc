// The conformance suite in CI: one test per scenario, each run on the real
// kernel and the simulated one; a difference fails (a known divergence of
// the simulated kernel is printed and passes). Where perf_event_open or
// tracefs cannot be used, one line says why and every scenario is SKIPPED.
// Side-band is machine-wide state: the test is tagged exclusive and holds
// the recording lock (real/testing/recording_lock.h) against our own
// recorder tests; another process's build-id recording is detected
// (Status::foreign), retried, and if it lasts the scenario is SKIPPED
// saying so, never passed.
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "model/kernel_rules.h"
#include "real/testing/recording_lock.h"
#include "tests/conformance/real_kernel.h"
#include "tests/conformance/runner.h"
#include "tests/conformance/sim_kernel.h"
#include "tests/conformance/suite.h"

namespace ringsim::conformance {
namespace {

struct Kernels {
  Kernels() : lock(), files(suite_files()), sim(files) {
    available = RealKernel::available(why);
    if (available) {
      real.emplace(files);
    } else {
      std::printf("conformance: the real kernel cannot be used here, every scenario is skipped: %s\n", why.c_str());
    }
  }
  real::testing::RecordingLockScope lock;
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

constexpr int kForeignRetries = 3;

class Conformance : public ::testing::TestWithParam<std::size_t> {};

TEST_P(Conformance, RealAndSimulatedKernelsLogTheSame) {
  const Scenario& s = scenarios()[GetParam()];
  Kernels& k = kernels();
  if (!k.available) GTEST_SKIP() << k.why;
  Log real_log, sim_log;
  Outcome o = run_scenario(s, *k.real, k.sim, 1, real_log, sim_log);
  for (int retry = 0; retry < kForeignRetries && o.status == Status::foreign; retry++) {
    std::printf("%s: foreign side-band, retrying in 1 s: %s\n", s.name.c_str(), o.difference.c_str());
    sleep(1);
    o = run_scenario(s, *k.real, k.sim, 1, real_log, sim_log);
  }
  if (o.status == Status::skipped || o.status == Status::foreign) GTEST_SKIP() << to_string(o.status) << ": " << o.difference;
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

const Scenario& scenario_named(const std::string& name) {
  for (const Scenario& s : scenarios()) {
    if (s.name == name) return s;
  }
  ADD_FAILURE() << "no scenario " << name;
  return scenarios().front();
}

// Another session's build-id event, opened here as another process would:
// CPU-wide on CPU 0 (where the runner is pinned), mapped, enabled. While
// it exists a side-band scenario's MMAP2 is foreign on the real kernel,
// and the suite says so instead of matching or differing.
TEST(ConformanceSuite, AnotherSessionsBuildIdEventIsReportedAsForeign) {
  Kernels& k = kernels();
  if (!k.available) GTEST_SKIP() << k.why;
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_DUMMY;
  attr.mmap = attr.mmap2 = attr.build_id = 1;
  attr.disabled = 1;
  const int fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC));
  ASSERT_GE(fd, 0) << "perf_event_open: " << std::strerror(errno);
  const std::size_t bytes = 17 * 4096;
  void* ring = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(ring, MAP_FAILED);
  ASSERT_EQ(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
  const Scenario& s = scenario_named("sideband-interleaved");
  Log real_log, sim_log;
  const Outcome o = run_scenario(s, *k.real, k.sim, 1, real_log, sim_log);
  munmap(ring, bytes);
  close(fd);
  ASSERT_TRUE(k.files.exec_has_build_id) << k.files.exec_file << " has no build-id note in its first page";
  EXPECT_EQ(o.status, Status::foreign) << o.difference << "\nreal kernel:\n" << format(s, real_log);
  EXPECT_NE(o.difference.find("fidelity row 20"), std::string::npos) << o.difference;
  // Gone again: the same scenario matches.
  EXPECT_EQ(run_scenario(s, *k.real, k.sim, 1, real_log, sim_log).status, Status::match);
}

// The detection alone, on logs: a build-id misc is foreign unless the
// scenario asked for build-ids itself.
TEST(ConformanceSuite, ForeignInfluenceNeedsABuildIdNoEventAskedFor) {
  const Scenario& side = scenario_named("sideband-interleaved");
  Log log;
  Observation o;
  o.kind = Kind::record;
  o.type = PERF_RECORD_MMAP2;
  o.misc = PERF_RECORD_MISC_USER;
  log.add(o);
  EXPECT_EQ(foreign_influence(side, log), "");
  o.misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
  log.add(o);
  EXPECT_NE(foreign_influence(side, log), "");
  EXPECT_EQ(foreign_influence(scenario_named("mmap2-misc-from-another-session"), log), "");
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
