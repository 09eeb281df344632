#include "sim/run.h"

#include <xxhash.h>

#include "core/verify.h"
#include "sim/kernel.h"
#include "sim/memory_sink.h"
#include "sim/mutants.h"
#include "sim/scheduler.h"
#include "sim/session.h"

// The core instantiated with the simulated backend (real/ instantiates it
// with the real one), so every build type-checks the core against both.
template class ringsim::core::RingReader<ringsim::sim::SimMapping>;
template class ringsim::core::RecordLoop<ringsim::sim::SimSession, ringsim::sim::MemorySink>;
template class ringsim::core::RingReader<ringsim::sim::MutantMapping>;
template class ringsim::core::RecordLoop<ringsim::sim::MutantSession, ringsim::sim::MemorySink>;

namespace ringsim::sim {
namespace {

std::uint64_t hash_output(const model::RunOutput& output) {
  XXH3_state_t* state = XXH3_createState();
  VERIFY(state != nullptr);
  XXH3_64bits_reset(state);
  for (const model::CpuOutput& cpu : output.cpus) {
    const std::uint64_t size = cpu.bytes.size();
    XXH3_64bits_update(state, &size, sizeof size);
    XXH3_64bits_update(state, cpu.bytes.data(), cpu.bytes.size());
    for (const model::Gap& gap : cpu.gaps) {
      const std::uint64_t g[3] = {gap.begin, gap.end, gap.head};
      XXH3_64bits_update(state, g, sizeof g);
    }
  }
  const std::uint64_t digest = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return digest;
}

template <class Session>
core::LoopResult consume(Session& session, MemorySink& sink, const RunConfig& config) {
  core::LoopOptions options;
  options.poll_timeout_ns = config.poll_timeout_ns;
  options.drain_chunks_max = config.drain_chunks_max;
  options.rounds_max = 10'000'000;
  core::RecordLoop<Session, MemorySink> loop(session, sink, config.mode, options);
  return loop.run();
}

}  // namespace

std::string RunResult::first_property() const { return violations.empty() ? "" : violations.front().property; }

bool RunResult::liveness_failed() const {
  for (const model::Violation& v : violations) {
    if (v.property == kLiveness) return true;
  }
  return false;
}

RunResult run_simulation(const RunConfig& config) {
  DecisionSource decisions(config.seed, false);
  return run_simulation(config, decisions);
}

RunResult run_simulation(const RunConfig& config, DecisionSource& decisions) {
  const std::string invalid = validate(config);
  VERIFY_MSG(invalid.empty(), invalid.c_str());
  RunResult result;
  result.config = config;

  SchedulerLimits limits;
  limits.switches_max = config.switches_max;
  limits.yield_per_million = config.yield_per_million;
  // Far beyond any budget: a run that gets there has stopped making progress.
  limits.virtual_ns_max = 24ull * 3600 * 1'000'000'000;
  Scheduler scheduler(decisions, limits);

  KernelConfig kernel_config;
  kernel_config.cpus = config.cpus;
  kernel_config.ring_bytes = config.ring_bytes();
  kernel_config.mode = config.mode;
  kernel_config.wakeup_events = config.wakeup_events;
  kernel_config.wakeup_watermark_bytes = config.wakeup_watermark_bytes;
  kernel_config.records_per_cpu = config.records_per_cpu;
  kernel_config.size_mix = config.size_mix;
  kernel_config.gap_ns_max = config.gap_ns_max;
  kernel_config.burst_per_million = config.burst_per_million;
  kernel_config.burst_records_max = config.burst_records_max;
  kernel_config.payload_seed = config.seed;
  kernel_config.exit_flush_timeout_ns = config.quiet_budget_ns;
  Kernel kernel(scheduler, kernel_config, result.log, result.probes);

  SessionConfig session_config;
  session_config.syscall_ns = config.syscall_ns;
  session_config.copy_ns_per_kib = config.copy_ns_per_kib;
  session_config.poll_eintr_per_million = config.poll_eintr_per_million;
  session_config.copy_interrupt_per_million = config.copy_interrupt_per_million;
  SimSession session(scheduler, kernel, result.probes, session_config);

  MemorySink sink(scheduler, result.output, config.cpus, config.ring_bytes());
  sink.set_drop_lost_records(config.mutant == Mutant::drop_lost);

  bool consumer_done = false;
  bool quiet = false;
  WaitQueue phase_queue(scheduler);  // consumer done, quiet phase started

  scheduler.run([&] {
    kernel.start();
    scheduler.spawn("consumer", [&] {
      if (config.mutant == Mutant::early_release || config.mutant == Mutant::no_pause) {
        MutantSession mutant(session, config.mutant);
        result.loop = consume(mutant, sink, config);
      } else {
        result.loop = consume(session, sink, config);
      }
      consumer_done = true;
      result.finish_ns = scheduler.now_ns();
      phase_queue.notify_all();
    });
    // Ends the fault phase when every event has exited (or a stop), then
    // holds the consumer to the quiet budget.
    scheduler.spawn("watchdog", [&] {
      for (int i = 0; i < 1'000'000; i++) {
        if (kernel.all_exited() || session.stop_requested() || consumer_done) break;
        if (kernel.exit_queue().wait() == Wake::cancelled) return;
      }
      quiet = true;
      result.quiet_start_ns = scheduler.now_ns();
      session.set_faults(false);
      phase_queue.notify_all();
      const std::uint64_t deadline_ns = scheduler.now_ns() + config.quiet_budget_ns;
      while (!consumer_done) {
        const Wake wake = phase_queue.wait(deadline_ns);
        if (wake == Wake::cancelled) return;
        if (wake == Wake::timed_out && !consumer_done) {
          scheduler.cancel("liveness: the consumer did not finish within the quiet budget of " +
                           std::to_string(config.quiet_budget_ns) + " ns");
          return;
        }
      }
    });
    if (config.snapshot_interval_ns > 0) {
      scheduler.spawn("snapshots", [&] {
        for (std::uint64_t i = 0; i < 100'000'000; i++) {
          const Wake wake = phase_queue.wait(scheduler.now_ns() + config.snapshot_interval_ns);
          if (wake != Wake::timed_out || quiet) return;
          session.request_snapshot();
        }
      });
    }
    if (config.stop_at_ns > 0) {
      scheduler.spawn("stopper", [&] {
        for (int i = 0; i < 1'000'000 && !consumer_done; i++) {
          const Wake wake = phase_queue.wait(config.stop_at_ns);
          if (wake == Wake::cancelled) return;
          if (wake == Wake::timed_out) {
            if (!consumer_done) session.request_stop();
            return;
          }
        }
      });
    }
  });

  if (scheduler.cancelled()) {
    for (std::size_t cpu = 0; cpu < kernel.cpus(); cpu++) kernel.ring(cpu).abandon_pending();
  }
  result.cancel_reason = scheduler.cancel_reason();
  result.virtual_ns = scheduler.now_ns();
  result.switches = scheduler.switches();
  result.decisions = decisions.draws();
  result.trace_hash = scheduler.trace_hash();
  result.trace_events = scheduler.trace_events();
  result.output_hash = hash_output(result.output);
  for (const model::CpuLog& cpu : result.log.cpus) {
    result.samples_attempted += cpu.samples_attempted;
    result.bytes_written += cpu.bytes.size();
  }
  result.probes.hit(Probe::reader_fell_behind, result.loop.ring.fell_behind);
  result.probes.hit(Probe::chunk_wrapped, result.loop.ring.wrapped_chunks);

  // The oracle, then the run-level properties.
  result.oracle = model::check(result.log, result.output);
  result.properties = model::oracle_properties(result.log.mode);
  result.properties.push_back(kLiveness);
  result.properties.push_back(kCleanFinish);
  if (scheduler.cancelled()) {
    result.violations.push_back(model::Violation{kLiveness, scheduler.cancel_reason()});
  } else if (!consumer_done) {
    result.violations.push_back(model::Violation{kLiveness, "the consumer never finished"});
  }
  // Liveness first: in a cancelled run the oracle's findings follow from it.
  result.violations.insert(result.violations.end(), result.oracle.violations.begin(), result.oracle.violations.end());
  if (consumer_done && !scheduler.cancelled()) {
    const core::LoopResult& loop = result.loop;
    // A stop that arrives while the last round finishes may find the loop
    // done already.
    const bool status_ok = loop.status == core::LoopStatus::done ||
                           (session.stop_requested() && loop.status == core::LoopStatus::stopped);
    std::string problem;
    if (!status_ok) {
      problem = std::string("the record loop ended with '") + core::to_string(loop.status) + "'";
    } else if (loop.mappings_corrupt > 0) {
      problem = std::to_string(loop.mappings_corrupt) + " rings declared corrupt";
      for (std::size_t cpu = 0; cpu < result.output.cpus.size(); cpu++) {
        if (result.output.cpus[cpu].corrupt) {
          problem += "; cpu " + std::to_string(cpu) + ": " + result.output.cpus[cpu].corrupt_reason;
          break;
        }
      }
    } else if (loop.abandoned_bytes > 0) {
      problem = std::to_string(loop.abandoned_bytes) + " bytes left in rings at the end";
    }
    if (!problem.empty()) result.violations.push_back(model::Violation{kCleanFinish, problem});
  }
  if (decisions.mode() == DecisionSource::Mode::replay_strict) {
    decisions.check_fully_used();
    result.properties.push_back(kReplayFaithful);
    if (decisions.diverged()) {
      result.violations.push_back(model::Violation{kReplayFaithful, decisions.divergence()});
    }
  }
  return result;
}

}  // namespace ringsim::sim
