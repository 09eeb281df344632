#include "sim/commands.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>

#include "sim/cli.h"

namespace ringsim::sim {
namespace {

constexpr std::uint32_t kJobsMax = 256;

// A path option given as "": refused, where "" would otherwise mean the
// option was not given (no JSON, no trace, replays nowhere) and the output
// asked for would silently not be written.
const CLI::Validator kPathGiven(
    [](std::string& path) { return path.empty() ? std::string("an empty path (leave the option out instead)") : std::string(); },
    "PATH");

// A whole number 0..10^9 in `text`, or false.
bool shard_number(const std::string& text, std::uint64_t& out) {
  if (text.empty() || text.size() > 10 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  out = std::strtoull(text.c_str(), nullptr, 10);
  return out <= 1'000'000'000;
}

// "I/N": shard I of N ("" or the problem).
std::string parse_shard(const std::string& text, CampaignOptions& options) {
  const std::size_t slash = text.find('/');
  std::uint64_t i = 0, n = 0;
  if (slash == std::string::npos || !shard_number(text.substr(0, slash), i) || !shard_number(text.substr(slash + 1), n) ||
      n == 0) {
    return "--shard: " + text + " is not I/N (shard I of N, 0 <= I < N)";
  }
  if (i >= n) return "--shard: " + text + ": the index must be below the count (0 <= I < N)";
  options.shard_index = i;
  options.shard_count = n;
  return "";
}

// The engines' own shard variables, when --shard is not given: Bazel's test
// sharding (TEST_SHARD_INDEX of TEST_TOTAL_SHARDS), a Slurm array job
// (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT), a
// Kubernetes Indexed Job (JOB_COMPLETION_INDEX of RINGSIM_SHARDS, which the
// manifest sets to its completions). Returns an error line or "".
std::string read_sharding(CampaignOptions& options) {
  const auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v == nullptr ? "" : v;
  };
  const auto take = [&](const char* index_name, const char* count_name, std::uint64_t index_base) -> std::string {
    std::uint64_t i = 0, n = 0;
    if (!shard_number(env(count_name), n) || n == 0) {
      return std::string(count_name) + " is not a positive number: " + env(count_name);
    }
    if (!shard_number(env(index_name), i) || i < index_base || i - index_base >= n) {
      return std::string(index_name) + " is out of range: " + env(index_name) + " (" + count_name + " " +
             env(count_name) + ")";
    }
    options.shard_index = i - index_base;
    options.shard_count = n;
    return "";
  };
  if (!env("TEST_TOTAL_SHARDS").empty() && !env("TEST_SHARD_INDEX").empty()) {
    if (std::string e = take("TEST_SHARD_INDEX", "TEST_TOTAL_SHARDS", 0); !e.empty()) return e;
    if (const char* status = std::getenv("TEST_SHARD_STATUS_FILE")) std::ofstream{status};
    return "";
  }
  if (!env("SLURM_ARRAY_TASK_ID").empty() && !env("SLURM_ARRAY_TASK_COUNT").empty()) {
    std::uint64_t base = 0;
    if (!env("SLURM_ARRAY_TASK_MIN").empty() && !shard_number(env("SLURM_ARRAY_TASK_MIN"), base)) {
      return "SLURM_ARRAY_TASK_MIN is not a number: " + env("SLURM_ARRAY_TASK_MIN");
    }
    return take("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", base);
  }
  if (!env("JOB_COMPLETION_INDEX").empty()) {
    if (env("RINGSIM_SHARDS").empty()) {
      return "JOB_COMPLETION_INDEX is set but RINGSIM_SHARDS (the Indexed Job's completions) is not";
    }
    return take("JOB_COMPLETION_INDEX", "RINGSIM_SHARDS", 0);
  }
  return "";
}

constexpr std::uint64_t kSeedMax = UINT64_MAX / 2;

// "" if `text` is a seed (0..kSeedMax) or "random"; else the problem.
std::string check_seed(const std::string& text) {
  if (text == "random") return "";
  if (text.empty() || text.size() > 20 || text.find_first_not_of("0123456789") != std::string::npos) {
    return "--seed: " + text + " is neither a number nor `random`";
  }
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno != 0 || v > kSeedMax) return "--seed: " + text + " is above " + std::to_string(kSeedMax);
  return "";
}

// --seed random: a first seed from the clock, in 10^9 .. 10^9 + 10^15
// (above every fixed range CI and the docs run), mixed so that two
// campaigns started close together draw far-apart ranges.
std::uint64_t seed_from_clock() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  std::uint64_t x = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count());
  x += 0x9e3779b97f4a7c15ull;  // splitmix64
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return 1'000'000'000ull + x % 1'000'000'000'000'000ull;
}

// The CPUs this process may run on (its affinity mask: taskset, a
// container's cpuset), at most --jobs' maximum: the default of --jobs.
std::uint32_t usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return static_cast<std::uint32_t>(std::clamp(CPU_COUNT(&set), 1, static_cast<int>(kJobsMax)));
}

void add_campaign_options(CLI::App& app, CampaignOptions& options, std::string& seed, bool& no_progress,
                          std::string& shard) {
  options.jobs = usable_cpus();
  app.add_option("--seed", seed, "first seed (0..2^63-1), or `random`: one drawn from the clock, printed first")
      ->check(check_seed);
  app.add_option("--runs", options.runs, "number of seeds to run")->check(CLI::Range(1, 1'000'000'000));
  app.add_option("--jobs", options.jobs,
                 "simulations run at once, one per thread (results merged in seed order: the same whatever N); "
                 "default: the CPUs this process may run on")
      ->check(CLI::Range(1u, kJobsMax));
  app.add_option("--budget-s", options.budget_s, "wall-clock budget in seconds (0: none)")
      ->check(CLI::Range(0.0, 1e7));
  app.add_option("--json", options.json_path, "write the summary as JSON to this file")->check(kPathGiven);
  app.add_option("--replay-dir", options.replay_dir, "where failing runs' replay files go")->check(kPathGiven);
  app.add_option("--shrink-s", options.shrink_s, "seconds to spend shrinking each failure (0: none)")
      ->check(CLI::Range(0.0, 3600.0));
  app.add_option("--determinism-every", options.determinism_every,
                 "run every Nth passing seed twice and compare (0: never)")
      ->check(CLI::Range(0, 1'000'000));
  app.add_option("--max-failures", options.failures_max, "stop after this many failures")
      ->check(CLI::Range(1, 1'000'000));
  app.add_flag("--no-progress", no_progress, "no progress display");
  app.add_flag("--swarm", options.swarm,
               "swarm testing: in each run every fault site (a rate per million) stays as drawn with probability 1/2, "
               "else 0 (a failure's reproduction line names the sites off)");
  app.add_option("--pct-depth", options.pct.depth,
                 "PCT for the scheduler's picks (Burckhardt et al. 2010): depth d, d - 1 priority change points a run "
                 "(0: uniform picks); the summary prints the bound it gives")
      ->check(CLI::Range(0, 8));
  app.add_option("--pct-steps", options.pct.steps, "with --pct-depth: the scheduling points the change points are drawn among")
      ->check(CLI::Range(1, 1'000'000'000));
  app.add_option("--shard", shard,
                 "I/N: run shard I of N (seeds first + I + k*N); without it, the engine's variables (Bazel, Slurm "
                 "array, Kubernetes Indexed Job: docs/scale.md). `campaign merge` folds the shards' --json files");
}

}  // namespace

int parse_campaign_command_line(int argc, char** argv, CampaignOptions& options) {
  CLI::App app("Runs seeded simulations of the perf ring consumer and checks every property.", "campaign");
  bool no_progress = false;
  std::string seed = std::to_string(options.first_seed);
  std::string shard;
  add_campaign_options(app, options, seed, no_progress, shard);
  ConfigOptions config_options;
  config_options.add_to(app);
  if (const int rc = parse_command_line(app, argc, argv); rc >= 0) return rc;
  options.seed_from_clock = seed == "random";
  options.first_seed = options.seed_from_clock ? seed_from_clock() : std::strtoull(seed.c_str(), nullptr, 10);

  options.progress = !no_progress;
  if (app.count("--pct-steps") > 0 && options.pct.depth == 0) {
    return core::usage_error("campaign", "--pct-steps: needs --pct-depth");
  }
  options.overrides = config_options.overrides();
  const std::string error = shard.empty() ? read_sharding(options) : parse_shard(shard, options);
  if (!error.empty()) return core::usage_error("campaign", error);
  if (const char* outputs = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
      outputs != nullptr && app.count("--replay-dir") == 0) {
    options.replay_dir = outputs;
    // Under `bazel test`: each shard's summary beside its replays, for
    // `campaign merge` (scripts/merge-bazel-shards.sh).
    if (app.count("--json") == 0) options.json_path = std::string(outputs) + "/campaign-summary.json";
  } else {
    options.replay_dir = user_path(options.replay_dir);
  }
  options.json_path = user_path(options.json_path);
  return -1;
}

std::string check_campaign_seeds(const CampaignOptions& options, std::uint64_t seeds_max) {
  std::uint64_t checked = 0;
  for (std::uint64_t i = options.shard_index; i < options.runs && checked < seeds_max; i += options.shard_count) {
    const std::uint64_t seed = options.first_seed + i;
    checked++;
    if (const std::string error = validate(campaign_config(options, seed)); !error.empty()) {
      return "the options give seed " + std::to_string(seed) + " an invalid configuration: " + error;
    }
  }
  return "";
}

int parse_explore_command_line(int argc, char** argv, ExploreOptions& options) {
  CLI::App app(
      "Runs every schedule of one seed's configuration that deviates from the first ready fiber at most D times "
      "(delay-bounded search), each once, and checks every property (docs/campaign.md, \"Bounded exhaustive "
      "search\").",
      "campaign explore");
  std::string seed = std::to_string(options.seed);
  app.add_option("--seed", seed, "the seed: the configuration and every choice but the schedule (0..2^63-1)");
  app.add_option("--deviations", options.deviations, "D: the most picks other than the first ready fiber in a run")
      ->check(CLI::Range(0, 4));
  app.add_option("--runs-max", options.runs_max, "the budget of runs (the summary says if it stopped the search)")
      ->check(CLI::Range(1, 1'000'000'000));
  app.add_option("--max-failures", options.failures_max, "stop after this many failures")
      ->check(CLI::Range(1, 1'000'000));
  app.add_option("--replay-dir", options.replay_dir, "where failing schedules' replay files go")->check(kPathGiven);
  ConfigOptions config_options;
  config_options.add_to(app);
  if (const int rc = parse_command_line(app, argc, argv); rc >= 0) return rc;
  if (const std::string error = check_seed(seed); !error.empty() || seed == "random") {
    return core::usage_error("campaign explore", error.empty() ? "--seed: a number (no `random` here)" : error);
  }
  options.seed = std::strtoull(seed.c_str(), nullptr, 10);
  options.overrides = config_options.overrides();
  options.replay_dir = user_path(options.replay_dir);
  return -1;
}

int parse_merge_command_line(int argc, char** argv, MergeOptions& options) {
  CLI::App app("Folds the --json summaries of a campaign's shards into the summary one run of all its seeds prints.",
               "campaign merge");
  app.add_option("files", options.files, "the shards' --json files, every shard once")->required();
  app.add_option("--json", options.json_path, "write the merged summary as JSON to this file")->check(kPathGiven);
  if (const int rc = parse_command_line(app, argc, argv); rc >= 0) return rc;
  for (std::string& f : options.files) f = user_path(f);
  if (!options.json_path.empty()) options.json_path = user_path(options.json_path);
  return -1;
}

int parse_replay_command_line(int argc, char** argv, ReplayOptions& options) {
  CLI::App app("Replays a recorded simulation run and checks every property.", "replay");
  app.add_option("file", options.file, "replay file")->required();
  app.add_flag("-v,--verbose", options.verbose, "print every violation and the run's figures");
  app.add_option("--trace", options.trace_path,
                 "write the run as a Chrome trace-event JSON file (Perfetto, chrome://tracing)")
      ->check(kPathGiven);
  if (const int rc = parse_command_line(app, argc, argv); rc >= 0) return rc;
  options.file = user_path(options.file);
  if (!options.trace_path.empty()) options.trace_path = user_path(options.trace_path);
  return -1;
}

int parse_bench_command_line(int argc, char** argv, BenchOptions& options) {
  CLI::App app("Measures the simulator's speed against memcpy.", "bench");
  app.add_option("--reps", options.reps, "repetitions per workload (median reported)")->check(CLI::Range(1, 1000));
  app.add_option("--producer-batch", options.producer_batch,
                 "records a producer writes between its sleeps (the last workload: 1)")
      ->check(CLI::Range(1, 4096));
  return parse_command_line(app, argc, argv);
}

int parse_compare_command_line(int argc, char** argv, CompareOptions& options) {
  CLI::App app("Serial write() vs AIO with 1, 2 and 4 control blocks vs staged, on the same seeds and disk model.",
               "compare");
  app.add_option("--seed", options.first_seed, "first seed")->check(CLI::Range(std::uint64_t{0}, UINT64_MAX / 2));
  app.add_option("--runs", options.runs, "seeds per mode")->check(CLI::Range(1, 1'000'000));
  app.add_option("--json", options.json_path, "write the table as JSON")->check(kPathGiven);
  ConfigOptions config_options;
  config_options.add_to(app);
  if (const int rc = parse_command_line(app, argc, argv); rc >= 0) return rc;
  options.overrides = config_options.overrides();
  if (!options.json_path.empty()) options.json_path = user_path(options.json_path);
  return -1;
}

}  // namespace ringsim::sim
