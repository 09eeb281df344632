#include "sim/run.h"

#include <xxhash.h>

#include "core/verify.h"
#include <cerrno>

#include "sim/kernel.h"
#include "sim/memory_sink.h"
#include "sim/output_files.h"
#include "sim/recording_sink.h"
#include "sim/sample.h"
#include "sim/mutants.h"
#include "sim/scheduler.h"
#include "sim/session.h"

// The core instantiated with the simulated backend (real/ instantiates it
// with the real one), so every build type-checks the core against both.
template class ringsim::core::RingReader<ringsim::sim::SimMapping>;
template class ringsim::core::RecordLoop<ringsim::sim::SimSession, ringsim::sim::MemorySink>;
template class ringsim::core::RingReader<ringsim::sim::MutantMapping>;
template class ringsim::core::RecordLoop<ringsim::sim::MutantSession, ringsim::sim::MemorySink>;
template class ringsim::core::TraceWriter<ringsim::sim::SimDisk>;
template class ringsim::core::TraceWriter<ringsim::sim::MutantDisk>;
template class ringsim::core::RecordLoop<ringsim::sim::SimSession,
                                         ringsim::sim::RecordingSink<ringsim::core::TraceWriter<ringsim::sim::SimDisk>>>;

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

template <class Session, class Sink>
core::LoopResult consume(Session& session, Sink& sink, const RunConfig& config) {
  core::LoopOptions options;
  options.poll_timeout_ns = config.poll_timeout_ns;
  options.drain_chunks_max = config.drain_chunks_max;
  options.rounds_max = 10'000'000;
  core::RecordLoop<Session, Sink> loop(session, sink, config.mode, options);
  return loop.run();
}

core::PerfDataHead sim_head(std::uint32_t cpus) {
  core::EventDescription event;
  event.attr.type = PERF_TYPE_SOFTWARE;
  event.attr.config = PERF_COUNT_SW_CPU_CLOCK;
  event.attr.sample_type = kSampleType;
  event.attr.sample_period = 1;
  event.attr.sample_id_all = 1;
  for (std::uint32_t cpu = 0; cpu < cpus; cpu++) event.ids.push_back(1000 + cpu);
  return core::PerfDataHead({event});
}

// A sink buffer takes a data-ring chunk or an AUXTRACE record of a whole
// AUX area.
std::uint64_t buffer_bytes(const RunConfig& config) {
  return std::max(config.ring_bytes(), config.aux_pages ? config.aux_bytes() + core::kAuxtraceHeaderBytes : 0);
}

core::WriterOptions writer_options(const RunConfig& config) {
  core::WriterOptions o;
  o.mode = config.output == Output::serial ? core::WriteMode::serial : core::WriteMode::aio;
  o.cblocks = config.cblocks;
  o.mappings = config.cpus;
  o.buffer_bytes = buffer_bytes(config);
  o.rotate_bytes = config.rotate_bytes;
  return o;
}

DiskConfig disk_config(const RunConfig& config, std::uint64_t data_offset) {
  DiskConfig d;
  const std::uint32_t per_mapping = config.output == Output::aio ? config.cblocks : 1;
  d.slots = config.cpus * per_mapping;
  d.slots_per_mapping = per_mapping;
  d.queue_depth = config.disk_queue_depth;
  d.latency_ns_min = config.disk_latency_ns_min;
  d.latency_ns_max = config.disk_latency_ns_max;
  d.ns_per_kib = config.disk_ns_per_kib;
  d.stall_per_million = config.disk_stall_per_million;
  d.stall_ns = config.disk_stall_ns;
  d.short_per_million = config.disk_short_per_million;
  d.eagain_per_million = config.disk_eagain_per_million;
  d.eagain_burst_per_million = config.disk_eagain_burst_per_million;
  d.eagain_burst_ns = config.disk_eagain_burst_ns;
  d.eintr_per_million = config.disk_eintr_per_million;
  d.suspend_eintr_per_million = config.disk_suspend_eintr_per_million;
  d.eio_per_million = config.disk_eio_per_million;
  d.capacity_bytes = config.disk_capacity_bytes;
  d.open_fails = config.disk_open_fails != 0;
  d.data_offset = data_offset;
  return d;
}

// The consumer when the output is the trace writer over `disk`.
template <class Disk, class Session>
void write_trace(Disk& disk, Session& ring_session, SimSession& session, const RunConfig& config,
                 Scheduler& scheduler, RunResult& result) {
  core::TraceWriter<Disk> writer(disk, writer_options(config), sim_head(config.cpus));
  const int started = writer.start();
  if (started != 0) {
    // No output: nothing to record into. Stop the events and let go of the
    // rings, as the recorder does when it cannot create its file.
    session.request_stop();
    for (std::size_t i = 0; i < session.mapping_count(); i++) session.release(i);
    result.writer = writer.stats();
    result.loop.status = core::LoopStatus::sink_error;
    result.loop.error = -started;
    return;
  }
  RecordingSink<core::TraceWriter<Disk>> sink(writer, result.output, scheduler);
  result.loop = consume(ring_session, sink, config);
  writer.finish();
  result.writer = writer.stats();
  for (std::size_t i = 0; i < config.cpus; i++) {
    if (writer.references(i) != 0 && !scheduler.cancelled()) {
      result.violations.push_back(model::Violation{
          kReleaseSafety, "mapping " + std::to_string(i) + " still holds " + std::to_string(writer.references(i)) +
                              " references after the writer finished"});
    }
  }
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
  return run_simulation(config, decisions, nullptr);
}

RunResult run_simulation(const RunConfig& config, DecisionSource& decisions, std::vector<TraceEvent>* events) {
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
  scheduler.set_event_log(events);

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
  kernel_config.aux.size_bytes = config.aux_bytes();
  kernel_config.aux.overwrite = config.aux_overwrite != 0;
  kernel_config.aux.watermark_bytes = config.aux_watermark_bytes;
  kernel_config.aux.late_reports = config.aux_late != 0;
  kernel_config.aux.bursts = config.aux_bursts;
  kernel_config.aux.burst_bytes_max = config.aux_burst_bytes_max;
  kernel_config.aux.gap_ns_max = config.aux_gap_ns_max;
  kernel_config.aux.transaction_ns = config.aux_transaction_ns;
  kernel_config.aux.partial_per_million = config.aux_partial_per_million;
  Kernel kernel(scheduler, kernel_config, result.log, result.probes);

  SessionConfig session_config;
  session_config.syscall_ns = config.syscall_ns;
  session_config.copy_ns_per_kib = config.copy_ns_per_kib;
  session_config.poll_eintr_per_million = config.poll_eintr_per_million;
  session_config.copy_interrupt_per_million = config.copy_interrupt_per_million;
  SimSession session(scheduler, kernel, result.probes, session_config);

  const bool to_disk = config.output != Output::memory;
  const core::PerfDataHead head = sim_head(config.cpus);
  SimDisk disk(scheduler, disk_config(config, head.data_offset()), result.probes);
  MutantDisk mutant_disk(disk, config.mutant);
  const bool disk_mutant = config.mutant == Mutant::shared_offset || config.mutant == Mutant::reuse_buffer ||
                           config.mutant == Mutant::eagain_busy_loop || config.mutant == Mutant::error_resubmit;
  result.output.cpus.assign(config.cpus, model::CpuOutput{});
  MemorySink memory(scheduler, result.output, config.cpus, buffer_bytes(config));
  memory.set_drop_lost_records(config.mutant == Mutant::drop_lost);

  // Release safety: no write of a mapping in flight when it goes, and (in a
  // run that ends normally) no data left in it.
  std::vector<bool> released_with_data(config.cpus, false);
  session.set_release_check([&](std::size_t i) {
    if (to_disk && disk.in_flight_for_mapping(i) > 0) {
      result.violations.push_back(model::Violation{
          kReleaseSafety, "mapping " + std::to_string(i) + " released with " +
                              std::to_string(disk.in_flight_for_mapping(i)) + " writes of it in flight"});
    }
    released_with_data[i] = kernel.ring(i).holds_unread_data();
  });
  session.set_in_flight_query([&](std::size_t i) { return to_disk ? disk.in_flight_for_mapping(i) : 0u; });

  bool consumer_done = false;
  bool quiet = false;
  WaitQueue phase_queue(scheduler);  // consumer done, quiet phase started

  scheduler.run([&] {
    kernel.start();
    scheduler.spawn("consumer", [&] {
      auto run_consumer = [&](auto& ring_session) {
        if (!to_disk) {
          result.loop = consume(ring_session, memory, config);
        } else if (disk_mutant) {
          write_trace(mutant_disk, ring_session, session, config, scheduler, result);
        } else {
          write_trace(disk, ring_session, session, config, scheduler, result);
        }
      };
      if (config.mutant == Mutant::early_release || config.mutant == Mutant::no_pause ||
          config.mutant == Mutant::aux_early_tail) {
        MutantSession mutant(session, config.mutant);
        run_consumer(mutant);
      } else {
        run_consumer(session);
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
      disk.set_faults(false);
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
  // The output as the oracle sees it: in memory, or read back from the files.
  model::PerfDataFile output_file;
  if (to_disk) {
    const bool finished = consumer_done && !scheduler.cancelled() && result.writer.error == 0;
    OutputFiles files = read_output_files(disk, config.cpus, finished);
    for (std::size_t cpu = 0; cpu < config.cpus; cpu++) {
      result.output.cpus[cpu].bytes = std::move(files.output.cpus[cpu].bytes);
      result.output.cpus[cpu].aux = std::move(files.output.cpus[cpu].aux);
    }
    result.files = files.files;
    result.file_bytes = files.bytes;
    result.rounds_in_file = files.rounds;
    result.disk = disk.stats();
    result.violations.insert(result.violations.end(), disk.violations().begin(), disk.violations().end());
    result.violations.insert(result.violations.end(), files.violations.begin(), files.violations.end());
    output_file = std::move(files.combined);
  } else {
    output_file = memory_output_file(result.output);
  }
  model::loss_stats(output_file, result.loss);
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
  result.probes.hit(Probe::reader_fell_behind, result.loop.drops[core::DropCause::overwritten].events);
  result.probes.hit(Probe::chunk_wrapped, result.loop.ring.wrapped_chunks);
  result.probes.hit(Probe::aux_overwritten, result.loop.aux_drops[core::DropCause::overwritten].records.bytes > 0 ? 1 : 0);
  result.probes.hit(Probe::aux_wrapped, result.loop.aux.wrapped);
  result.probes.hit(Probe::writer_short_restart, result.writer.short_writes_restarted);
  result.probes.hit(Probe::writer_eagain_retry, result.writer.eagain_retries);
  result.probes.hit(Probe::writer_sync_fallback, result.writer.eagain_sync_fallbacks);
  result.probes.hit(Probe::writer_waited_cblock, result.writer.waits_for_cblock);
  result.probes.hit(Probe::output_switch, result.writer.files > 1 ? result.writer.files - 1 : 0);

  // The oracle, then the run-level properties. A hard write error (or an
  // output that could not be created) legitimately cuts the output short.
  const bool cut_short = result.writer.error != 0;
  model::CheckOptions check_options;
  check_options.allow_truncation = cut_short;
  result.oracle = model::check(result.log, result.output, check_options);
  std::vector<model::Violation> run_level = std::move(result.violations);
  result.violations.clear();
  result.properties = model::oracle_properties(result.log.mode, config.aux_pages > 0);
  if (config.aux_pages > 0) result.properties.push_back(kAuxRefcount);
  for (std::size_t cpu = 0; cpu < kernel.cpus() && config.aux_pages > 0; cpu++) {
    for (const std::string& v : kernel.aux(cpu).violations) run_level.push_back(model::Violation{kAuxRefcount, v});
  }
  result.properties.push_back(kLiveness);
  result.properties.push_back(kCleanFinish);
  result.properties.push_back(kReleaseSafety);
  if (to_disk) {
    for (const char* p : {kFileValid, kNoOverlap, kBufferStable, kFlushBeforeSwitch, kHardErrorHandled}) {
      result.properties.push_back(p);
    }
  }
  if (scheduler.cancelled()) {
    result.violations.push_back(model::Violation{kLiveness, scheduler.cancel_reason()});
  } else if (!consumer_done) {
    result.violations.push_back(model::Violation{kLiveness, "the consumer never finished"});
  }
  // Causes before consequences: liveness (in a cancelled run everything
  // else follows from it), then what the disk and the release checks saw,
  // then the files, then the oracle's verdict on the records.
  result.violations.insert(result.violations.end(), run_level.begin(), run_level.end());
  result.violations.insert(result.violations.end(), result.oracle.violations.begin(), result.oracle.violations.end());
  if (consumer_done && !scheduler.cancelled()) {
    const core::LoopResult& loop = result.loop;
    const bool stopped_ok = session.stop_requested() && loop.status == core::LoopStatus::stopped;
    const bool error_ok = cut_short && (loop.status == core::LoopStatus::sink_error || loop.status == core::LoopStatus::done ||
                                        loop.status == core::LoopStatus::stopped);
    const bool status_ok = loop.status == core::LoopStatus::done || stopped_ok || error_ok;
    std::string problem;
    if (!status_ok) {
      problem = std::string("the record loop ended with '") + core::to_string(loop.status) + "'" +
                (result.writer.error ? " (writer: " + result.writer.error_context + ")" : "");
    } else if (loop.mappings_corrupt() > 0) {
      problem = std::to_string(loop.mappings_corrupt()) + " rings declared corrupt";
      for (std::size_t cpu = 0; cpu < result.output.cpus.size(); cpu++) {
        if (result.output.cpus[cpu].corrupt) {
          problem += "; cpu " + std::to_string(cpu) + ": " + result.output.cpus[cpu].corrupt_reason;
          break;
        }
      }
    } else if (loop.drops[core::DropCause::abandoned].records.bytes > 0 && !cut_short) {
      problem = std::to_string(loop.drops[core::DropCause::abandoned].records.bytes) + " bytes left in rings at the end";
    }
    if (!problem.empty()) result.violations.push_back(model::Violation{kCleanFinish, problem});
    if (loop.status == core::LoopStatus::done) {
      for (std::size_t cpu = 0; cpu < config.cpus; cpu++) {
        if (released_with_data[cpu] && !result.output.cpus[cpu].corrupt) {
          result.violations.push_back(
              model::Violation{kReleaseSafety, "mapping " + std::to_string(cpu) + " released with data left in it"});
        }
      }
    }
    if (to_disk) {
      // The error the writer reports is the one the disk gave it.
      const int injected = config.disk_open_fails ? EACCES : result.disk.first_hard_error;
      if (result.writer.error != injected) {
        result.violations.push_back(model::Violation{
            kHardErrorHandled, "the writer reported error " + std::to_string(result.writer.error) + " (" +
                                   result.writer.error_context + "), the disk injected " + std::to_string(injected)});
      }
    }
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
