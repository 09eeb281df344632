#include "sim/explore.h"

#include <filesystem>
#include <ostream>
#include <set>
#include <utility>
#include <vector>

#include "core/verify.h"
#include "sim/decisions.h"
#include "sim/replay.h"
#include "sim/run.h"

namespace ringsim::sim {
namespace {

// A schedule to run: the picks up to its last deviation (0s after), how
// many deviations it has, and the first point a child may deviate at.
struct Pending {
  std::vector<std::uint64_t> picks;
  std::uint32_t deviations = 0;
  std::size_t children_from = 0;
};

std::string schedule_text(const std::vector<std::uint64_t>& picks) {
  std::string out;
  for (std::size_t i = 0; i < picks.size(); i++) {
    if (picks[i] == 0) continue;
    out += (out.empty() ? "" : ", ") + std::string("point ") + std::to_string(i) + " -> fiber " +
           std::to_string(picks[i]);
  }
  return out.empty() ? "the plain schedule" : out;
}

// The failure's line and its replay file (the whole tape: it replays
// strictly, without exploring).
void report(const ExploreOptions& options, std::uint64_t number, const RunResult& r, const DecisionSource& d,
            const std::vector<std::uint64_t>& picks, std::ostream& log) {
  const model::Violation& first = r.violations.front();
  log << "FAIL schedule " << number << " (" << schedule_text(picks) << ") property=" << first.property << ": "
      << first.detail << "\n";
  std::error_code ec;
  std::filesystem::create_directories(options.replay_dir, ec);
  ReplayFile replay;
  replay.config = r.config;
  replay.tape = d.recorded();
  replay.property = first.property;
  replay.detail = first.detail;
  replay.trace_hash = r.trace_hash;
  replay.output_hash = r.output_hash;
  replay.note = "recorded by campaign explore: seed " + std::to_string(options.seed) + ", schedule " +
                std::to_string(number) + " (" + schedule_text(picks) + ")";
  const std::string path = (std::filesystem::path(options.replay_dir) /
                            ("explore-seed-" + std::to_string(options.seed) + "-schedule-" + std::to_string(number) +
                             ".replay.json"))
                               .string();
  const std::string error = write_replay(path, replay);
  if (!error.empty()) {
    log << "  could not write the replay: " << error << "\n";
  } else {
    log << "  replay: " << options.replay_command << " " << std::filesystem::absolute(path).string() << "\n";
  }
}

void print_summary(const ExploreOptions& options, const RunConfig& config, const ExploreStats& s, std::ostream& out) {
  out << "ringsim explore: seed " << options.seed << ", every schedule with at most " << options.deviations
      << " deviations from the first ready fiber (delay-bounded search)\n";
  out << "  configuration  " << describe(config) << "\n";
  out << "  schedules      " << s.runs << " run (";
  for (std::uint32_t k = 0; k <= options.deviations; k++) {
    out << (k > 0 ? ", " : "") << s.by_deviations[k] << " with " << k;
  }
  out << " deviations), " << s.distinct_traces << " distinct traces\n";
  out << "  points         up to " << s.points_max << " scheduling points a run, up to " << s.ready_max
      << " fibers ready at one\n";
  out << "  result         " << (s.exhaustive ? "exhaustive" : "NOT exhaustive: stopped at the budget of runs")
      << ", " << s.failed << " failed\n";
}

}  // namespace

int run_exploration(const ExploreOptions& options, std::ostream& out, std::ostream& log, ExploreStats& stats) {
  VERIFY(options.deviations <= 4);
  RunConfig config = random_config(options.seed);
  options.overrides.apply(config);
  config.seed = options.seed;
  if (const std::string error = validate(config); !error.empty()) {
    log << "campaign explore: seed " << options.seed << " with these options: invalid configuration: " << error
        << "\n";
    return kExitUsage;
  }
  std::vector<Pending> stack{Pending{}};
  std::set<std::uint64_t> traces;
  int exit_code = kExitOk;
  // Bounded: each iteration runs one schedule, and there are at most runs_max.
  while (!stack.empty()) {
    if (stats.runs >= options.runs_max || stats.failed >= options.failures_max) {
      stats.exhaustive = false;
      break;
    }
    Pending p = std::move(stack.back());
    stack.pop_back();
    DecisionSource d(options.seed, p.picks);
    const RunResult r = run_simulation(config, d);
    stats.runs++;
    stats.by_deviations[p.deviations]++;
    traces.insert(r.trace_hash);
    const std::vector<Decision>& taken = d.schedule_taken();
    stats.points_max = std::max<std::uint64_t>(stats.points_max, taken.size());
    for (const Decision& pick : taken) stats.ready_max = std::max(stats.ready_max, pick.bound);
    if (!r.ok()) {
      stats.failed++;
      std::vector<std::uint64_t> picks;
      for (const Decision& pick : taken) picks.push_back(pick.value);
      report(options, stats.runs, r, d, picks, log);
      const bool safety = model::is_safety(r.violations.front().property);
      if (safety) exit_code = kExitCorrectness;
      if (!safety && exit_code == kExitOk) exit_code = kExitLiveness;
    }
    if (p.deviations == options.deviations) continue;
    // Children, pushed last point first so that they run in point order.
    for (std::size_t j = taken.size(); j-- > p.children_from;) {
      for (std::uint64_t v = taken[j].bound - 1; v >= 1; v--) {
        Pending child;
        child.picks.reserve(j + 1);
        for (std::size_t i = 0; i < j; i++) child.picks.push_back(taken[i].value);
        child.picks.push_back(v);
        child.deviations = p.deviations + 1;
        child.children_from = j + 1;
        stack.push_back(std::move(child));
      }
    }
  }
  stats.distinct_traces = traces.size();
  print_summary(options, config, stats, out);
  return exit_code;
}

}  // namespace ringsim::sim
