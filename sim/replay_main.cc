// bazel run //sim:replay -- FILE [-v] [--trace OUT.json]
//
// Replays a run recorded in a replay file (docs/replay-format.md) decision
// for decision, checks every property, and names the ones violated. With
// --trace, also writes the run as a Chrome trace-event file
// (sim/chrome_trace.h). Exit 74 if that file cannot be written. Exit
// status: 0 no violation, 1 a safety property failed (or the replay
// diverged from the tape), 2 liveness only, 3 a check crashed, 64 bad
// options, 65 the file is not a valid replay.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/verify.h"
#include "sim/chrome_trace.h"
#include "sim/commands.h"
#include "sim/replay.h"
#include "sim/run.h"

namespace {

const char* g_file = nullptr;

void crash_hook(const char* description) {
  std::fprintf(stderr, "replay %s: CRASH: %s\n", g_file, description);
  std::fflush(stderr);
  std::_Exit(ringsim::sim::kExitCrash);
}

std::string hex(std::uint64_t v) {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ringsim::sim;
  ReplayOptions options;
  if (const int rc = parse_replay_command_line(argc, argv, options); rc >= 0) return rc;
  const std::string& file = options.file;
  const std::string& trace_path = options.trace_path;
  const bool verbose = options.verbose;

  ReplayFile replay;
  if (const std::string error = read_replay(file, replay); !error.empty()) {
    std::cerr << "replay: " << error << "\n";
    return kExitBadInput;
  }
  g_file = file.c_str();
  ringsim::core::set_verify_hook(crash_hook);
  std::cout << "replay " << file << "\n"
            << "  config: " << describe(replay.config) << "\n"
            << "  decisions: " << replay.tape.size() << (replay.note.empty() ? "" : " (" + replay.note + ")") << "\n"
            << "  recorded: "
            << (replay.property.empty() ? std::string("no violation") : replay.property + ": " + replay.detail)
            << "\n";
  DecisionSource decisions(replay.tape, DecisionSource::Mode::replay_strict);
  std::vector<TraceEvent> events;
  const RunResult result = run_simulation(replay.config, decisions, trace_path.empty() ? nullptr : &events);
  if (!trace_path.empty()) {
    const std::string& path = trace_path;
    std::ofstream out(path);
    out << chrome_trace(events, replay.config).dump() << "\n";
    out.close();
    if (!out) {
      std::cerr << "replay: " << path << ": cannot write the trace\n";
      return kExitIo;
    }
    std::cout << "  trace: " << path << " (" << events.size() << " events; open it in https://ui.perfetto.dev or chrome://tracing)\n";
  }

  const bool same_trace = result.trace_hash == replay.trace_hash;
  const bool same_output = result.output_hash == replay.output_hash;
  std::cout << "  trace hash " << hex(result.trace_hash) << (same_trace ? " (as recorded)" : " (recorded " + hex(replay.trace_hash) + ")")
            << ", output hash " << hex(result.output_hash)
            << (same_output ? " (as recorded)" : " (recorded " + hex(replay.output_hash) + ")") << "\n";
  if (verbose) {
    std::cout << "  virtual time " << result.virtual_ns << " ns, " << result.switches << " fiber switches, "
              << result.oracle.records_written << " records written, " << result.oracle.records_delivered
              << " delivered, " << result.oracle.dropped << " dropped\n";
  }
  if (result.ok()) {
    std::cout << "result: every property holds (" << result.properties.size() << " checked)"
              << (replay.property.empty() ? "" : "; the recorded violation no longer happens") << "\n";
    return kExitOk;
  }
  const std::size_t shown = verbose ? result.violations.size() : 1;
  for (std::size_t i = 0; i < shown && i < result.violations.size(); i++) {
    std::cout << "VIOLATED " << result.violations[i].property << ": " << result.violations[i].detail << "\n";
  }
  if (!verbose && result.violations.size() > 1) {
    std::cout << "  (" << result.violations.size() - 1 << " more violations; --verbose shows them)\n";
  }
  bool safety = false;
  for (const auto& v : result.violations) safety |= ringsim::model::is_safety(v.property);
  return safety ? kExitCorrectness : kExitLiveness;
}
