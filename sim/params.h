// The run parameters, in one table.
//
// Every field of RunConfig (sim/config.h) is one row: its name (the option
// is --name with '-' for '_'; the JSON key of replay files is the name),
// its range or its choices, its help, how a campaign draws it from the
// seed, how the shrinker makes it simpler (or why it does not), and where
// it goes in the simulated world. Everything else is derived from the
// table:
//   - the options of campaign and compare (sim/cli.h, ConfigOptions);
//   - the random draw of a campaign (random_config);
//   - the RapidCheck generator (props/run_gen.h runs the same draws on
//     RapidCheck's source, so each choice shrinks on its own);
//   - the shrinker's configuration edits (sim/shrink.cc);
//   - validation of ranges, JSON (replay files), describe();
//   - the reproduction of a run as a command line (reproduce_args);
//   - RunPlan: the kernel, session, disk, writer, loop and scheduler
//     settings run_simulation builds the run from (plan_run).
// tests/params_test.cc proves, row by row, that every field is drawn,
// generated, shrinkable (or says why not) and goes somewhere, and that the
// reproduction of a run reproduces it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/record_loop.h"
#include "core/staging.h"
#include "core/trace_writer.h"
#include "sim/config.h"
#include "sim/disk.h"
#include "sim/kernel.h"
#include "sim/scheduler.h"
#include "sim/session.h"

namespace ringsim::sim {

// A source of random choices for the draw functions: the campaign's
// (a DecisionSource seeded by the run's seed) or RapidCheck's (props).
class Draws {
 public:
  virtual ~Draws() = default;
  // A value in [0, bound), bound >= 1.
  virtual std::uint64_t draw(std::uint64_t bound) = 0;
  // A value in [low, high], low <= high.
  virtual std::uint64_t between(std::uint64_t low, std::uint64_t high) = 0;
};

// What the draw functions share: the source, and the choices several rows
// depend on, each drawn when the first row asks for it (so the order of
// draws is the table's order).
class DrawState {
 public:
  explicit DrawState(Draws& draws) : draws_(draws) {}
  Draws& d() { return draws_; }
  // Three runs in four with disk faults.
  bool faulty();
  // A third of the runs with AUX areas.
  bool aux();
  // Issue 23's corner, in one disk run with AUX areas in eight: the area in
  // snapshot mode and at least as large as the ring (its wrapped snapshots
  // are the largest chunks), the PMU busy (1,000..2,000 transactions of up
  // to 4 KiB), the staging buffer exactly four of those chunks. First asked
  // once the output is drawn.
  bool staged_aux(const RunConfig& c);

 private:
  Draws& draws_;
  std::optional<bool> faulty_;
  std::optional<bool> aux_;
  std::optional<bool> staged_aux_;
};

// Everything a run is built from, derived from a RunConfig by the table's
// routes (plan_run).
struct RunPlan {
  std::uint64_t seed = 0;  // of the run's decisions (a replay's tape replaces them)
  KernelConfig kernel;
  SessionConfig session;
  DiskConfig disk;
  core::WriterOptions writer;
  core::StagingOptions staging;  // bytes == 0: not staged
  bool readers_per_cpu = false;  // staged: a reading fiber per CPU (RunConfig::readers_per_cpu)
  bool readers_help = false;     // ... each also draining the others' rings (core/ring_share.h)
  core::LoopOptions loop;
  SchedulerLimits limits;
  Output output = Output::memory;
  Mutant mutant = Mutant::none;
  std::uint64_t snapshot_interval_ns = 0;  // 0: snapshots at hangup and stop only
  std::uint64_t stop_at_ns = 0;            // 0: no stop request
  std::uint64_t quiet_budget_ns = 0;       // liveness: the quiet phase's budget
  bool operator==(const RunPlan&) const = default;
};

struct Param {
  const char* name;
  const char* help;
  // Integers: the range. Choices: the names (the value is an index).
  std::uint64_t min = 0;
  std::uint64_t max = 0;
  std::vector<const char*> choices;
  std::uint64_t (*get)(const RunConfig&) = nullptr;
  void (*set)(RunConfig&, std::uint64_t) = nullptr;
  // How a campaign draws it (from the rows above it and the shared
  // choices). nullptr: not drawn; `fixed` says why.
  void (*draw)(DrawState&, RunConfig&) = nullptr;
  // A second draw once every row is drawn (a choice that depends on rows
  // below it), or nullptr.
  void (*draw_after)(DrawState&, RunConfig&) = nullptr;
  const char* fixed = nullptr;
  // The shrinker's edits, simplest first: each returns false when it
  // cannot make the value simpler. Empty: `no_shrink` says why.
  std::vector<bool (*)(RunConfig&)> shrink;
  const char* no_shrink = nullptr;
  // Where it goes.
  void (*route)(const RunConfig&, RunPlan&) = nullptr;
  const char* goes_to = nullptr;

  bool is_choice() const { return !choices.empty(); }
  // "--ring-pages".
  std::string flag() const;
  // The value as text: the number, or the choice's name.
  std::string text(const RunConfig& config) const;
  // Parses text (a number in range, or a choice's name). false if invalid.
  bool parse(const std::string& text, std::uint64_t& value) const;
};

// The table, in draw order.
const std::vector<Param>& params();
const Param* find_param(const std::string& name);

// A configuration drawn from the seed (its own PRNG stream, not the run's
// decisions), covering every mode and knob.
RunConfig random_config(std::uint64_t seed);
// The same draws on any source (props/run_gen.h). `c.seed` is kept.
void draw_config(Draws& draws, RunConfig& c);

// Swarm testing (campaign --swarm): each fault site of a drawn
// configuration (swarm_sites(): a rate per million of the kernel's,
// the session's, the disk's and the AUX PMU's faults) stays as drawn with
// probability 1/2 and is otherwise off (0), by a stream of the seed's own;
// a site whose 0 the rules between fields refuse stays on. Returns how
// many sites it turned off. A run's reproduction line names them
// (reproduce_overrides), so it reproduces without --swarm.
std::uint32_t swarm_config(RunConfig& c);
const std::vector<const char*>& swarm_sites();

// Range checks of every row, then the rules between fields. "" or
// "<field>: <problem>". Nothing is ever clamped.
std::string validate(const RunConfig& config);

// One line: "seed=1 cpus=4 ring_pages=8 mode=normal ...".
std::string describe(const RunConfig& config);

// Where every parameter goes, and what follows from several of them.
RunPlan plan_run(const RunConfig& config);

// Fields set from options, applied to a drawn configuration: the choices
// first (mode, output, then the mutant, which implies the mode and output
// it breaks unless they are given, then size_mix), then the integers, so
// an explicit integer always wins over what a choice implies.
class Overrides {
 public:
  void set(const Param& param, std::uint64_t value);
  bool empty() const { return values_.empty(); }
  void apply(RunConfig& config) const;
  // "--cpus=4 --mode=backward ...", in table order.
  std::string as_args() const;

 private:
  std::vector<std::pair<const Param*, std::uint64_t>> values_;  // table order
};

// The options that turn random_config(config.seed) into `config`: the
// fields that differ, and any more that applying them disturbs.
Overrides reproduce_overrides(const RunConfig& config);
// "--seed=N --runs=1 ..." for //sim:campaign.
std::string reproduce_args(const RunConfig& config);
// The one-line reproduction every command prints:
// "bazel run //sim:campaign -- --seed=N --runs=1 ...".
std::string reproduce_command(const RunConfig& config);

}  // namespace ringsim::sim
