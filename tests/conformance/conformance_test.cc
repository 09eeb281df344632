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
#include "tests/conformance/builders.h"
#include "tests/conformance/call_backend.h"
#include "tests/conformance/generator.h"
#include "tests/conformance/real_kernel.h"
#include "tests/conformance/runner.h"
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
  CallBackend sim;
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
  CallBackend& sim = kernels().sim;
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


// ---------------------------------------------------------------------------
// Generated scenarios (generator.h).

// The sequences CI runs: a few hundred, about 15 s here.
constexpr std::uint64_t kGeneratedSeed = 20240917;
constexpr std::uint64_t kGeneratedSequences = 300;

TEST(Generated, SequencesLogTheSameOnBothKernels) {
  Kernels& k = kernels();
  if (!k.available) GTEST_SKIP() << k.why;
  const GenerateReport r = generate(kGeneratedSequences, kGeneratedSeed, *k.real, k.sim);
  std::printf("%s", format(r).c_str());
  EXPECT_TRUE(r.differences.empty()) << "seed " << kGeneratedSeed << ":\n" << format(r);
  EXPECT_GE(r.matched, kGeneratedSequences * 9 / 10) << format(r);
}

TEST(Generated, TheSameSeedDrawsTheSameScenarios) {
  std::size_t differ_by_seed = 0;
  for (std::uint64_t i = 0; i < 50; i++) {
    const std::optional<Scenario> a = generated_scenario(1, i), b = generated_scenario(1, i);
    const std::optional<Scenario> other = generated_scenario(2, i);
    ASSERT_EQ(a.has_value(), b.has_value());
    if (!a) continue;
    EXPECT_EQ(scenario_source(*a), scenario_source(*b));
    differ_by_seed += !other || scenario_source(*other).substr(60) != scenario_source(*a).substr(60);
  }
  EXPECT_GE(differ_by_seed, 45u);
}

// Every generated scenario keeps the backends' preconditions (a broken
// one stops at a VERIFY) and the simulated rings keep the kernel's rules.
TEST(Generated, ScenariosRunOnTheSimulatedKernelKeepingItsRules) {
  CallBackend& sim = kernels().sim;
  Log log;
  std::size_t steps = 0;
  for (std::uint64_t i = 0; i < 2000; i++) {
    const std::optional<Scenario> s = generated_scenario(3, i);
    if (!s) continue;
    steps += s->steps.size();
    run(*s, sim, log);
    for (const model::KernelLog& ring : sim.ring_logs()) {
      const std::vector<model::Violation> v = model::check_kernel_rules(ring);
      ASSERT_TRUE(v.empty()) << v.front().detail << "\n" << scenario_source(*s);
    }
  }
  EXPECT_GT(steps, 2000u * 8);
}

// A simulated kernel with one rule broken on purpose: PAUSE_OUTPUT
// succeeds and does nothing. Held against the correct one, the generator finds it and
// shrinks it to the few steps that show it.
class PauseIgnored final : public Backend {
 public:
  explicit PauseIgnored(Backend& inner) : in_(inner) {}
  void begin(const Scenario& s) override { in_.begin(s); }
  const SuiteFiles& files() const override { return in_.files(); }
  void end() override { in_.end(); }
  int open(std::size_t e) override { return in_.open(e); }
  std::uint64_t id(std::size_t e) override { return in_.id(e); }
  int map(std::size_t e, std::uint32_t pages, bool writable) override { return in_.map(e, pages, writable); }
  void unmap(std::size_t e) override { in_.unmap(e); }
  int map_aux(std::size_t e, const AuxAsk& ask, bool writable) override { return in_.map_aux(e, ask, writable); }
  int set_output(std::size_t e, std::size_t target) override { return in_.set_output(e, target); }
  int control(std::size_t e, Op op) override {
    const int rc = in_.control(e, op);
    if (op == Op::pause && rc == 0) in_.control(e, Op::resume);  // the ioctl succeeds, the ring goes on
    return rc;
  }
  void act(Action a, bool by_child, const std::string& name) override { in_.act(a, by_child, name); }
  void spawn_child() override { in_.spawn_child(); }
  void child_exit() override { in_.child_exit(); }
  short child_exit_polling(std::size_t e) override { return in_.child_exit_polling(e); }
  short poll(std::size_t e) override { return in_.poll(e); }
  std::uint64_t head(std::size_t o) override { return in_.head(o); }
  std::span<const std::byte> data(std::size_t o) override { return in_.data(o); }
  void store_tail(std::size_t o, std::uint64_t tail) override { in_.store_tail(o, tail); }
  ReadValues read_values(std::size_t e) override { return in_.read_values(e); }
  ControlPage control_page(std::size_t o) override { return in_.control_page(o); }
  Who who(std::uint32_t pid) override { return in_.who(pid); }
  bool scenario_mapping(std::uint64_t address) override { return in_.scenario_mapping(address); }

 private:
  Backend& in_;
};

TEST(Generated, ABrokenSimulatedRuleIsFoundAndShrunk) {
  Kernels& k = kernels();
  CallBackend correct(k.files), broken_inner(k.files);
  PauseIgnored broken(broken_inner);
  GenerateOptions options;
  options.differences_max = 1;
  const GenerateReport r = generate(1000, 11, correct, broken, options);
  ASSERT_EQ(r.differences.size(), 1u) << format(r);
  const GeneratedDifference& d = r.differences.front();
  std::printf("%s", format(r).c_str());
  EXPECT_TRUE(d.confirmed);
  EXPECT_LE(d.shrunk_steps, 6u) << d.source;
  EXPECT_LT(d.shrunk_steps, d.steps) << d.source;
  EXPECT_NE(d.source.find("pause("), std::string::npos) << d.source;
  EXPECT_NE(d.first_difference.find("step"), std::string::npos) << d.first_difference;
}

// The printed source is builders.h's calls, which build the same steps.
TEST(Generated, TheSourceIsTheBuildersCalls) {
  using namespace builders;
  Scenario s;
  s.name = "n";
  s.rows = "generated";
  s.summary = "s";
  s.events = {on(Target::child, tp(Source::getppid, PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID)),
              watermark(100, with_id_all(tp(Source::dummy, PERF_SAMPLE_TID | PERF_SAMPLE_TIME)))};
  s.steps = {spawn_child(), open(0), map_read_only(0, 4), open(1), set_output(1, 0), enable(0),
             by_child(getuid(3)), watch(comm("a", 2), 0, 100), act(Action::fault), read_checking_time(0),
             consume(0), poll(0, 1), read_values(1), control_page(0), child_exit_polling(0)};
  s.events[1].read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST;
  s.poll_after_each_step = false;
  EXPECT_EQ(scenario_source(s),
            "  out.push_back({.name = \"n\",\n"
            "                 .rows = \"generated\",\n"
            "                 .summary = \"s\",\n"
            "                 .events = {EventSpec{.source = Source::getppid, .target = Target::child, .sample_type = "
            "PERF_SAMPLE_TID | PERF_SAMPLE_IDENTIFIER},\n"
            "                            EventSpec{.source = Source::dummy, .sample_type = PERF_SAMPLE_TID | "
            "PERF_SAMPLE_TIME, .sample_id_all = true, .watermark = true, .wakeup_watermark = 100, .read_format = "
            "PERF_FORMAT_ID | PERF_FORMAT_LOST}},\n"
            "                 .steps = {spawn_child(), open(A), map_read_only(A, 4), open(B), set_output(B, A), "
            "enable(A),\n"
            "                           by_child(getuid(3)), watch(comm(\"a\", 2), A, 100), act(Action::fault),\n"
            "                           read_checking_time(A), consume(A), poll(A, B), read_values(B), control_page(A),\n"
            "                           child_exit_polling(A)},\n"
            "                 .poll_after_each_step = false});\n");
}

}  // namespace
}  // namespace ringsim::conformance
