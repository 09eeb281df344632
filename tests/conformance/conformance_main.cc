// bazel run //tests/conformance:conformance [-- --scenario=NAME] [--repeat=N] [-v] [--list]
//
// Runs every scenario (or one) on the real kernel and on the simulated
// one, prints the table, and exits 1 if any differs (or, with --repeat, if
// the real kernel did not log the same in every run, or another process's
// build-id recording made a scenario's real log foreign). -v prints both logs
// of every scenario that did not match (of all with --scenario). --list
// prints the scenarios as docs/conformance.md's table (name, rows, what).
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "real/testing/recording_lock.h"
#include "tests/conformance/real_kernel.h"
#include "tests/conformance/sim_kernel.h"
#include "tests/conformance/suite.h"

namespace ringsim::conformance {
namespace {

struct Options {
  std::string only;
  int repeat = 1;
  bool verbose = false;
  bool list = false;
};

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    if (a.rfind("--scenario=", 0) == 0) {
      o.only = a.substr(11);
    } else if (a.rfind("--repeat=", 0) == 0) {
      o.repeat = std::atoi(a.c_str() + 9);
      if (o.repeat < 1) return false;
    } else if (a == "-v") {
      o.verbose = true;
    } else if (a == "--list") {
      o.list = true;
    } else {
      return false;
    }
  }
  return true;
}

int main_(int argc, char** argv) {
  Options options;
  if (!parse(argc, argv, options)) {
    std::fprintf(stderr, "usage: conformance [--scenario=NAME] [--repeat=N] [-v] [--list]\n");
    return 64;
  }
  if (options.list) {
    std::printf("| scenario | fidelity.md rows | what it checks |\n| --- | --- | --- |\n");
    for (const Scenario& s : scenarios()) {
      std::printf("| `%s` | %s | %s |\n", s.name.c_str(), s.rows.c_str(), s.summary.c_str());
    }
    return 0;
  }
  // Side-band is machine-wide: not beside our own recorder tests.
  const real::testing::RecordingLockScope lock;
  const SuiteFiles files = suite_files();
  std::string why;
  const bool real_ok = RealKernel::available(why);
  std::vector<Outcome> outcomes;
  Log real_log, sim_log;
  if (!real_ok) std::printf("the real kernel cannot be used here: %s\n", why.c_str());
  std::optional<RealKernel> real;
  if (real_ok) real.emplace(files);
  SimKernel sim(files);
  bool failed = false;
  for (const Scenario& s : scenarios()) {
    if (!options.only.empty() && s.name != options.only) continue;
    Outcome o;
    o.scenario = &s;
    if (real) o = run_scenario(s, *real, sim, options.repeat, real_log, sim_log);
    failed = failed || o.status == Status::differ || o.status == Status::unstable || o.status == Status::foreign;
    if (options.verbose && real && (o.status != Status::match || !options.only.empty())) {
      std::printf("== %s: real kernel\n%s== %s: simulated kernel\n%s", s.name.c_str(), format(s, real_log).c_str(),
                  s.name.c_str(), format(s, sim_log).c_str());
    }
    outcomes.push_back(o);
  }
  if (outcomes.empty()) {
    std::fprintf(stderr, "no scenario named %s\n", options.only.c_str());
    return 64;
  }
  std::fputs(table(outcomes, real_ok ? "" : why).c_str(), stdout);
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace ringsim::conformance

int main(int argc, char** argv) { return ringsim::conformance::main_(argc, argv); }
