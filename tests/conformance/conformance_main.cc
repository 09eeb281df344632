// bazel run //tests/conformance:conformance [-- --scenario=NAME] [--repeat=N] [-v] [--list]
// bazel run //tests/conformance:conformance -- --generate N [--seed S] [--first I]
//
// Runs every scenario (or one) on the real kernel and on the simulated
// one, prints the table, and exits 1 if any differs (or, with --repeat, if
// the real kernel did not log the same in every run, or another process's
// build-id recording made a scenario's real log foreign). -v prints both logs
// of every scenario that did not match (of all with --scenario). --list
// prints the scenarios as docs/conformance.md's table (name, rows, what).
// --generate N runs N generated scenarios (generator.h) from seed S (the
// clock's if not given; printed first), sequences I to I + N - 1, prints
// the figures and every difference shrunk, as C++ for scenarios.cc, and
// exits 1 if there was one. The simulated side is the interposer's kernel
// (sim/call_kernel.h), driven through call_backend.h.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "real/testing/recording_lock.h"
#include "tests/conformance/call_backend.h"
#include "tests/conformance/generator.h"
#include "tests/conformance/real_kernel.h"
#include "tests/conformance/suite.h"

namespace ringsim::conformance {
namespace {

struct Options {
  std::string only;
  int repeat = 1;
  bool verbose = false;
  bool list = false;
  std::uint64_t generate = 0;
  std::optional<std::uint64_t> seed;
  std::uint64_t first = 0;
};

// "--name=V" or "--name V".
bool value_of(int argc, char** argv, int& i, const std::string& name, std::uint64_t& out) {
  const std::string a = argv[i];
  std::string v;
  if (a.rfind(name + "=", 0) == 0) {
    v = a.substr(name.size() + 1);
  } else if (a == name && i + 1 < argc) {
    v = argv[++i];
  } else {
    return false;
  }
  char* end = nullptr;
  out = std::strtoull(v.c_str(), &end, 10);
  return !v.empty() && *end == 0;
}

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
    } else if (std::uint64_t v = 0; value_of(argc, argv, i, "--generate", v)) {
      o.generate = v;
    } else if (value_of(argc, argv, i, "--seed", v)) {
      o.seed = v;
    } else if (value_of(argc, argv, i, "--first", v)) {
      o.first = v;
    } else {
      return false;
    }
  }
  return true;
}

int generate_(const Options& options, RealKernel& real, Backend& sim) {
  const std::uint64_t seed =
      options.seed ? *options.seed
                   : static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  std::printf("seed %llu: sequences %llu to %llu\n", static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(options.first),
              static_cast<unsigned long long>(options.first + options.generate - 1));
  std::fflush(stdout);
  GenerateOptions g;
  g.first = options.first;
  g.progress_every = 1000;
  const GenerateReport report = generate(options.generate, seed, real, sim, g);
  std::fputs(format(report).c_str(), stdout);
  return report.differences.empty() ? 0 : 1;
}

int main_(int argc, char** argv) {
  Options options;
  if (!parse(argc, argv, options)) {
    std::fprintf(stderr,
                 "usage: conformance [--scenario=NAME] [--repeat=N] [-v] [--list]\n"
                 "       conformance --generate N [--seed S] [--first I]\n");
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
  CallBackend sim(files);
  if (options.generate > 0) return real ? generate_(options, *real, sim) : 0;
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
