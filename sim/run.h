// One simulation run: kernel, consumer (the production core's record loop
// over the simulated backend), helper fibers, then the oracle.
//
// Phases: the fault phase lasts while any producer is still generating
// records; faults (EINTR, interrupted copies) happen only then. The quiet
// phase starts when the last event exits (or a stop is requested): no more
// faults, and the consumer must finish, every ring drained and released,
// within quiet_budget_ns of virtual time (liveness).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/record_loop.h"
#include "core/staging.h"
#include "core/trace_writer.h"
#include "model/perf_data_file.h"
#include "sim/disk.h"
#include "model/log.h"
#include "model/oracle.h"
#include "sim/config.h"
#include "sim/decisions.h"
#include "sim/probes.h"

namespace ringsim::sim {

// Exit codes of the simulator's commands.
enum ExitCode : int {
  kExitOk = 0,
  kExitCorrectness = 1,  // a safety property failed
  kExitLiveness = 2,     // a run did not finish within its budget
  kExitCrash = 3,        // a VERIFY failed
  kExitUsage = 64,       // bad options
  kExitBadInput = 65,    // bad replay file
  kExitIo = 74,          // cannot write an output file
};

// The run-level properties (model/properties.h), besides the oracle's.
using model::kAuxRefcount;
using model::kBufferStable;
using model::kCleanFinish;
using model::kFileValid;
using model::kFlushBeforeSwitch;
using model::kHardErrorHandled;
using model::kLiveness;
using model::kNoOverlap;
using model::kReleaseSafety;
using model::kReplayFaithful;

struct RunResult {
  RunConfig config;
  model::KernelLog log;
  model::RunOutput output;
  core::LoopResult loop;
  Probes probes;
  model::OracleReport oracle;
  std::vector<model::Violation> violations;  // oracle + run-level, in that order
  std::vector<std::string> properties;       // the properties this run checked
  std::uint64_t trace_hash = 0;
  std::uint64_t trace_events = 0;
  std::uint64_t output_hash = 0;
  std::uint64_t virtual_ns = 0;
  std::uint64_t quiet_start_ns = 0;
  std::uint64_t finish_ns = 0;
  std::uint64_t switches = 0;          // the scheduler's picks (sim/scheduler.h)
  std::uint64_t context_switches = 0;  // the switches between fibers made
  std::uint64_t schedule_points = 0;  // picks among two or more ready fibers
  std::uint64_t fibers = 0;           // fibers the run spawned
  std::uint64_t decisions = 0;
  std::uint64_t samples_attempted = 0;
  std::uint64_t bytes_written = 0;  // by the kernel into rings
  std::string cancel_reason;
  // The trace writer and the disk (output=serial or aio).
  core::WriterStats writer;
  DiskStats disk;
  // The staging buffer (staging_bytes > 0).
  core::StagingStats staging;
  std::uint64_t staging_batches = 0;
  std::uint64_t files = 0;
  std::uint64_t file_bytes = 0;     // final size of all output files
  std::uint64_t rounds_in_file = 0; // PERF_RECORD_FINISHED_ROUND records
  // What the output holds and lost (the data-loss metric).
  model::LossStats loss;
  // For counters_agree (sim/counters.h): whether the consumer finished
  // (not cancelled), whether the trace writer started, and the counts the
  // simulation kept of what passed between the consumer and the disk.
  bool consumer_finished = false;
  bool writer_started = true;
  std::uint64_t sink_commits = 0;       // chunks the sink handed the trace writer through commit()
  core::RecordCounts staged_walked;     // records the writing fiber walked in the batches it wrote
  std::uint64_t disk_files = 0;         // files the disk created (removed ones too)

  bool ok() const { return violations.empty(); }
  // The first violated property ("" if none).
  std::string first_property() const;
  bool liveness_failed() const;
};

// Runs `config` with `decisions` (random from config.seed, or a tape).
RunResult run_simulation(const RunConfig& config, DecisionSource& decisions);

// The same, keeping every traced event in `events` (for the Chrome trace).
RunResult run_simulation(const RunConfig& config, DecisionSource& decisions, std::vector<TraceEvent>* events);

// Convenience: random decisions from config.seed.
RunResult run_simulation(const RunConfig& config);

}  // namespace ringsim::sim
