// Fuzzes the shrinker (sim/shrink.h) on parsed replays: replay text (with
// the right checksum put in, tests/fuzz/replay_text.h) that the reader
// accepts, names a property and describes a small run is shrunk with a
// budget of a few attempts. The shrinker must end within its budget, never
// crash, and keep its promises: the result names the same property, is a
// valid configuration, has a tape no longer than the input's, and, if it
// shrank anything, replays strictly (the decisions it recorded are the
// ones the run draws) to a run that violates that property.
//
// Runs that are not small (many records, bursts) are skipped: each attempt
// is a whole simulation, and the fuzzer is after the shrinker's logic, not
// the simulator's speed.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/verify.h"
#include "model/properties.h"
#include "sim/params.h"
#include "sim/replay.h"
#include "sim/run.h"
#include "sim/shrink.h"
#include "tests/fuzz/replay_text.h"

namespace {

using namespace ringsim;

constexpr std::uint64_t kRecordsMax = 256;

bool known_property(const std::string& name) {
  for (const model::PropertyInfo& p : model::kProperties) {
    if (name == p.name) return true;
  }
  return false;
}

bool small(const sim::RunConfig& c) {
  const std::uint64_t records = std::uint64_t{c.cpus} * c.records_per_cpu;
  const std::uint64_t bursts = c.burst_per_million == 0 ? 0 : std::uint64_t{c.burst_records_max} * c.cpus;
  return records + bursts <= kRecordsMax && c.switches_max <= 2'000'000;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = fuzz::with_right_checksum(std::string(reinterpret_cast<const char*>(data), size));
  sim::ReplayFile replay;
  if (!sim::replay_from_text(text, replay).empty()) return 0;
  if (!known_property(replay.property) || !small(replay.config)) return -1;
  sim::ShrinkOptions options;
  options.budget_s = 5;
  options.attempts_max = 4;
  sim::ShrinkStats stats;
  const sim::ReplayFile shrunk = sim::shrink(replay, options, stats);
  VERIFY(stats.attempts <= options.attempts_max);
  VERIFY(shrunk.property == replay.property);
  VERIFY(sim::validate(shrunk.config).empty());
  VERIFY(shrunk.tape.size() <= replay.tape.size());
  VERIFY(stats.decisions_before == replay.tape.size() && stats.decisions_after == shrunk.tape.size());
  if (stats.accepted == 0) return 0;
  sim::DecisionSource decisions(shrunk.tape, sim::DecisionSource::Mode::replay_strict);
  const sim::RunResult result = sim::run_simulation(shrunk.config, decisions);
  bool violated = false;
  for (const model::Violation& v : result.violations) violated |= v.property == shrunk.property;
  VERIFY_MSG(violated, "the shrunk replay does not violate its property when replayed strictly");
  VERIFY(result.trace_hash == shrunk.trace_hash);
  return 0;
}
