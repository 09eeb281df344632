#include "sim/run.h"

#include <malloc.h>
#include <xxhash.h>

#include <cerrno>
#include <string>
#include <type_traits>
#include <vector>

#include "core/record_loop.h"
#include "core/ring_share.h"
#include "core/staging_gate.h"
#include "core/verify.h"
#include "model/kernel_rules.h"
#include "model/sampling.h"
#include "sim/counters.h"
#include "sim/kernel.h"
#include "sim/mutants.h"
#include "sim/oracle_sink.h"
#include "sim/output_files.h"
#include "sim/params.h"
#include "sim/recording_sink.h"
#include "sim/staging_sync.h"
#include "sim/sample.h"
#include "sim/scheduler.h"
#include "sim/session.h"
#include "sim/sim_features.h"

// The core instantiated with the simulated backend (real/ instantiates it
// with the real one), so every build type-checks the core against both.
template class ringsim::core::RingReader<ringsim::sim::SimMapping>;
template class ringsim::core::RecordLoop<ringsim::sim::SimSession, ringsim::sim::OracleSink>;
template class ringsim::core::RingReader<ringsim::sim::MutantMapping>;
template class ringsim::core::RecordLoop<ringsim::sim::MutantSession, ringsim::sim::OracleSink>;
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

bool is_disk_mutant(Mutant m) {
  return m == Mutant::shared_offset || m == Mutant::reuse_buffer || m == Mutant::eagain_busy_loop ||
         m == Mutant::error_resubmit || m == Mutant::eintr_retry_hidden;
}

bool is_session_mutant(Mutant m) {
  return m == Mutant::early_release || m == Mutant::no_pause || m == Mutant::aux_early_tail ||
         m == Mutant::aux_no_reenable;
}

RunPlan plan_with_disk(const RunConfig& config, const core::PerfDataHead& head) {
  RunPlan plan = plan_run(config);
  plan.disk.data_offset = head.data_offset();
  return plan;
}

// One run: the simulated world built from the plan, its fibers, then what
// the output holds and the properties. run() reads top to bottom.
class Run {
 public:
  Run(const RunConfig& config, DecisionSource& decisions, std::vector<TraceEvent>* events)
      : config_(config),
        head_(sim_head(plan_run(config).kernel)),
        plan_(plan_with_disk(config, head_)),
        decisions_(decisions),
        scheduler_(decisions, plan_.limits),
        kernel_(scheduler_, plan_.kernel, result_.log, result_.probes),
        session_(scheduler_, kernel_, result_.probes, plan_.session),
        disk_(scheduler_, plan_.disk, result_.probes),
        mutant_disk_(disk_, config.mutant),
        oracle_sink_(scheduler_, result_.output, config.cpus, plan_.writer.buffer_bytes),
        phase_queue_(scheduler_) {
    scheduler_.set_event_log(events);
    result_.config = config;
    result_.output.cpus.assign(config.cpus, model::CpuOutput{});
    oracle_sink_.set_drop_lost_records(config.mutant == Mutant::drop_lost);
    if (!to_disk()) {
      for (model::CpuOutput& cpu : result_.output.cpus) cpu.bytes.reserve(kernel_.planned_bytes_per_cpu());
    }
    released_with_data_.assign(config.cpus, false);
  }

  RunResult run() {
    watch_releases();
    scheduler_.run([&] {
      kernel_.start();
      scheduler_.spawn("consumer", [&] { consumer(); });
      scheduler_.spawn("watchdog", [&] { watchdog(); });
      if (plan_.snapshot_interval_ns > 0) scheduler_.spawn("snapshots", [&] { snapshots(); });
      if (plan_.stop_at_ns > 0) scheduler_.spawn("stopper", [&] { stopper(); });
    });
    // Drops no record reported by the end stay unreported (as on Linux).
    kernel_.abandon_pending();
    collect_output();
    count_figures();
    check_properties();
    return std::move(result_);
  }

 private:
  using Gates = core::StagingGates<core::Staging<FiberSync>, FiberMutex>;
  using Gate = core::StagingGate<core::Staging<FiberSync>, FiberMutex>;
  using Share = core::RingShare<core::RingReader<SimMapping>, FiberMutex>;

  bool to_disk() const { return plan_.output != Output::memory; }

  // Release safety: no write of a mapping in flight when it goes, and (in
  // a run that ends normally) no data left in it.
  void watch_releases() {
    session_.set_release_check([&](std::size_t i) {
      if (to_disk() && disk_.in_flight_for_mapping(i) > 0) {
        run_level_.push_back(model::Violation{
            kReleaseSafety, "mapping " + std::to_string(i) + " released with " +
                                std::to_string(disk_.in_flight_for_mapping(i)) + " writes of it in flight"});
      }
      released_with_data_[i] = kernel_.ring(i).holds_unread_data();
    });
    session_.set_in_flight_query([&](std::size_t i) { return to_disk() ? disk_.in_flight_for_mapping(i) : 0u; });
  }

  // --- The fibers ------------------------------------------------------------

  template <class RingSession, class Sink>
  core::LoopResult read_rings(RingSession& ring_session, Sink& sink) {
    core::RecordLoop<RingSession, Sink> loop(ring_session, sink, plan_.kernel.mode, plan_.loop);
    return loop.run();
  }

  // The consumer when the output is the trace writer over `disk`.
  template <class Disk, class RingSession>
  void write_trace(Disk& disk, RingSession& ring_session) {
    core::TraceWriter<Disk> writer(disk, plan_.writer, head_);
    writer.set_feature_source(sim_feature_source(disk_, head_.events(), config_.cpus, config_.aux_pages > 0));
    const int started = writer.start();
    if (started != 0) {
      // No output: nothing to record into. Stop the events and let go of
      // the rings, as the recorder does when it cannot create its file.
      session_.request_stop();
      for (std::size_t i = 0; i < session_.mapping_count(); i++) session_.release(i);
      result_.writer = writer.stats();
      result_.loop.status = core::LoopStatus::sink_error;
      result_.loop.error = -started;
      writer_started_ = false;
      result_.writer_started = false;
      return;
    }
    RecordingSink<core::TraceWriter<Disk>> sink(writer, result_.output, scheduler_);
    if (plan_.staging.bytes > 0) {
      read_rings_staged(ring_session, sink);
    } else {
      result_.loop = read_rings(ring_session, sink);
    }
    writer.finish();
    result_.writer = writer.stats();
    result_.sink_commits = sink.commits();
    for (std::size_t i = 0; i < plan_.writer.mappings; i++) {  // 1 when staged: the writer's buffers are no ring's
      if (writer.references(i) != 0 && !scheduler_.cancelled()) {
        run_level_.push_back(model::Violation{
            kReleaseSafety, "mapping " + std::to_string(i) + " still holds " + std::to_string(writer.references(i)) +
                                " references after the writer finished"});
      }
    }
  }

  // Staged: this fiber reads the rings into the staging buffer, a writing
  // fiber drains it into `sink`; this one waits for it before it returns.
  template <class RingSession, class Sink>
  void read_rings_staged(RingSession& ring_session, Sink& sink) {
    FiberSync sync(scheduler_);
    core::Staging<FiberSync> staging(sync, plan_.staging);
    bool writer_done = false;
    scheduler_.spawn("writer", [&] {
      core::drain_staging(staging, sink);
      writer_done = true;
    });
    if constexpr (std::is_same_v<RingSession, SimSession>) {
      if (plan_.readers_per_cpu) {
        result_.loop = read_rings_per_cpu(ring_session, staging);  // the last reader closes the staging
      } else {
        result_.loop = read_rings(ring_session, staging);
        staging.close();
      }
    } else {
      VERIFY(!plan_.readers_per_cpu);
      result_.loop = read_rings(ring_session, staging);
      staging.close();
    }
    // Cancelled waits return at once: the writer ends within a few turns.
    std::uint64_t turns = 0;
    while (!writer_done) {  // set by the writing fiber
      VERIFY_MSG(++turns < 100'000'000, "the writing fiber never ended");
      scheduler_.yield();
      if (!writer_done && !scheduler_.cancelled()) scheduler_.sleep_for(plan_.staging.wait_ns);
    }
    result_.staging = staging.stats();
    result_.staging_batches = sink.batches();
    result_.staged_walked = sink.walked();
    run_level_.insert(run_level_.end(), sink.staging_violations().begin(), sink.staging_violations().end());
    check_staging(sync);
  }

  // The recorder's default (--readers cpu, real/reading_threads.cc): a
  // reading fiber per CPU, each with its own record loop over its CPU's
  // ring into the one staging buffer through a core::StagingGate, which
  // stages a finished-round marker only when every reader still running
  // has drained a round in the epoch. As in the recorder, the first reader
  // requests the stop once its loop ends (it alone watches the command
  // there) and the last one to end closes the staging buffer. This fiber is
  // the first reader; it returns once every reader has ended.
  core::LoopResult read_rings_per_cpu(SimSession& session, core::Staging<FiberSync>& staging) {
    const std::size_t n = session.mapping_count();
    session.set_pollers(n);
    Gates gates(staging, n, scheduler_);
    // readers_per_cpu=2: each fiber also drains the others' rings it can
    // lock (core/ring_share.h).
    Share share(n, scheduler_);
    std::vector<core::LoopResult> results(n);
    std::size_t running = n;
    const auto read = [&](std::size_t r) {
      SimSessionSlice slice(session, {r}, r);
      std::vector<std::size_t> helped;
      for (std::size_t other = 0; other < n; other++) {
        if (plan_.readers_help && other != r) helped.push_back(other);
      }
      std::vector<std::size_t> mappings{r};
      mappings.insert(mappings.end(), helped.begin(), helped.end());
      Gate gate(gates, r, mappings);
      if (plan_.mutant == Mutant::gate_marks_every_round) {
        EveryRoundMarked<Gate, core::Staging<FiberSync>> broken(gate, staging);
        results[r] = read_shared(slice, broken, Share::Seat{&share, {r}, helped});
      } else if (plan_.mutant == Mutant::help_staged_late) {
        HelpedStagedLate<Gate> late(gate, 1, session.mapping(r).data_size_bytes());
        results[r] = read_shared(slice, late, Share::Seat{&share, {r}, helped});
      } else {
        results[r] = read_shared(slice, gate, Share::Seat{&share, {r}, helped});
      }
      if (r == 0) session.request_stop();
      gate.finish();
      if (--running == 0) staging.close();
    };
    for (std::size_t r = 1; r < n; r++) scheduler_.spawn("reader " + std::to_string(r), [&read, r] { read(r); });
    read(0);
    std::uint64_t turns = 0;
    while (running > 0) {  // counted down by the other reading fibers, which end once the stop is seen
      VERIFY_MSG(++turns < 100'000'000, "a reading fiber never ended");
      scheduler_.yield();
      if (running > 0 && !scheduler_.cancelled()) scheduler_.sleep_for(plan_.staging.wait_ns);
    }
    result_.probes.hit(Probe::gate_lock_waited, gates.lock().contended());
    result_.probes.hit(Probe::gate_round_unmarked, gates.rounds_unmarked());
    result_.probes.hit(Probe::gate_marker, gates.markers());
    const core::LoopResult merged = core::merge_loop_results(results);
    result_.probes.hit(Probe::ring_helped, merged.chunks_helped);
    result_.probes.hit(Probe::ring_help_busy, merged.help_busy);
    for (std::size_t i = 0; i < n; i++) result_.probes.hit(Probe::ring_lock_waited, share.lock(i).contended());
    return merged;
  }

  template <class Sink>
  core::LoopResult read_shared(SimSessionSlice& slice, Sink& sink, Share::Seat seat) {
    core::RecordLoop<SimSessionSlice, Sink, Share> loop(slice, sink, plan_.kernel.mode, plan_.loop, std::move(seat));
    return loop.run();
  }

  // staging_whole (the byte count) and backpressure_counted.
  void check_staging(const FiberSync& sync) {
    const core::StagingStats& s = result_.staging;
    const core::DropCount& dropped = s.drops[core::DropCause::output_error];
    if (!scheduler_.cancelled() && s.bytes != s.bytes_written + dropped.records.bytes) {
      run_level_.push_back(model::Violation{
          model::kStagingWhole, std::to_string(s.bytes) + " bytes staged, " + std::to_string(s.bytes_written) +
                                    " written and " + std::to_string(dropped.records.bytes) + " counted as dropped"});
    }
    if (s.full_waits != sync.space_waits()) {
      run_level_.push_back(model::Violation{
          model::kBackpressureCounted, "the staging counted " + std::to_string(s.full_waits) +
                                           " waits for room, the scheduler saw " + std::to_string(sync.space_waits())});
    }
    if (s.full > s.full_waits) {
      run_level_.push_back(model::Violation{model::kBackpressureCounted,
                                            std::to_string(s.full) + " episodes of backpressure in " +
                                                std::to_string(s.full_waits) + " waits"});
    }
  }

  template <class RingSession>
  void consume_from(RingSession& ring_session) {
    if (!to_disk()) {
      result_.loop = read_rings(ring_session, oracle_sink_);
    } else if (is_disk_mutant(plan_.mutant)) {
      write_trace(mutant_disk_, ring_session);
    } else {
      write_trace(disk_, ring_session);
    }
  }

  void consumer() {
    if (is_session_mutant(plan_.mutant)) {
      MutantSession mutant(session_, plan_.mutant);
      consume_from(mutant);
    } else {
      consume_from(session_);
    }
    consumer_done_ = true;
    result_.finish_ns = scheduler_.now_ns();
    phase_queue_.notify_all();
  }

  // Ends the fault phase when every event has exited (or a stop), then
  // holds the consumer to the quiet budget.
  void watchdog() {
    for (int i = 0; i < 1'000'000; i++) {
      if (kernel_.all_done() || session_.stop_requested() || consumer_done_) break;
      if (kernel_.exit_queue().wait() == Wake::cancelled) return;
    }
    quiet_ = true;
    result_.quiet_start_ns = scheduler_.now_ns();
    session_.set_faults(false);
    disk_.set_faults(false);
    phase_queue_.notify_all();
    const std::uint64_t deadline_ns = scheduler_.now_ns() + plan_.quiet_budget_ns;
    while (!consumer_done_) {
      const Wake wake = phase_queue_.wait(deadline_ns);
      if (wake == Wake::cancelled) return;
      if (wake == Wake::timed_out && !consumer_done_) {
        scheduler_.cancel("liveness: the consumer did not finish within the quiet budget of " +
                          std::to_string(plan_.quiet_budget_ns) + " ns");
        return;
      }
    }
  }

  void snapshots() {
    for (std::uint64_t i = 0; i < 100'000'000; i++) {
      const Wake wake = phase_queue_.wait(scheduler_.now_ns() + plan_.snapshot_interval_ns);
      if (wake != Wake::timed_out || quiet_) return;
      session_.request_snapshot();
    }
  }

  void stopper() {
    for (int i = 0; i < 1'000'000 && !consumer_done_; i++) {
      const Wake wake = phase_queue_.wait(plan_.stop_at_ns);
      if (wake == Wake::cancelled) return;
      if (wake == Wake::timed_out) {
        if (!consumer_done_) session_.request_stop();
        return;
      }
    }
  }

  // --- After the run ---------------------------------------------------------

  // The output as the oracle sees it: in memory, or read back from the
  // files; and what it holds and lost (the data-loss metric).
  void collect_output() {
    model::PerfDataFile output_file;
    if (to_disk()) {
      const bool finished = consumer_done_ && !scheduler_.cancelled() && result_.writer.error == 0;
      OutputFiles files = read_output_files(disk_, plan_.kernel, finished, result_.log, result_.output.round_marks_ns);
      result_.probes.hit(Probe::round_order_kernel_late, files.published_late);
      for (std::size_t cpu = 0; cpu < config_.cpus; cpu++) {
        result_.output.cpus[cpu].bytes = std::move(files.output.cpus[cpu].bytes);
        result_.output.cpus[cpu].aux = std::move(files.output.cpus[cpu].aux);
      }
      result_.files = files.files;
      result_.file_bytes = files.bytes;
      result_.rounds_in_file = files.rounds;
      result_.disk = disk_.stats();
      result_.disk_files = disk_.files().size();
      run_level_.insert(run_level_.end(), disk_.violations().begin(), disk_.violations().end());
      run_level_.insert(run_level_.end(), files.violations.begin(), files.violations.end());
      run_level_.insert(run_level_.end(), files.order_violations.begin(), files.order_violations.end());
      output_file = std::move(files.combined);
    } else {
      memory_loss_stats(result_.output, plan_.kernel, result_.loss);
      return;
    }
    model::loss_stats(output_file, result_.loss);
  }

  void count_figures() {
    RunResult& r = result_;
    r.cancel_reason = scheduler_.cancel_reason();
    r.virtual_ns = scheduler_.now_ns();
    r.switches = scheduler_.switches();
    r.context_switches = scheduler_.context_switches();
    r.schedule_points = scheduler_.schedule_points();
    r.fibers = scheduler_.fibers_seen();
    r.decisions = decisions_.draws();
    r.trace_hash = scheduler_.trace_hash();
    r.trace_events = scheduler_.trace_events();
    r.output_hash = hash_output(r.output);
    for (const model::CpuLog& cpu : r.log.cpus) {
      r.samples_attempted += cpu.samples_attempted;
      r.bytes_written += cpu.bytes.size();
    }
    r.probes.hit(Probe::reader_fell_behind, r.loop.drops[core::DropCause::overwritten].events);
    r.probes.hit(Probe::chunk_wrapped, r.loop.ring.wrapped_chunks);
    r.probes.hit(Probe::chunk_budget_spent, r.loop.chunk_budget_spent);
    r.probes.hit(Probe::aux_overwritten, r.loop.aux_drops[core::DropCause::overwritten].records.bytes > 0 ? 1 : 0);
    r.probes.hit(Probe::aux_wrapped, r.loop.aux.wrapped);
    r.probes.hit(Probe::aux_offset_wrapped, r.loop.aux.wrapped_snapshots);
    r.probes.hit(Probe::writer_short_restart, r.writer.short_writes_restarted);
    r.probes.hit(Probe::writer_eagain_retry, r.writer.eagain_retries);
    r.probes.hit(Probe::writer_sync_fallback, r.writer.eagain_sync_fallbacks);
    r.probes.hit(Probe::writer_waited_cblock, r.writer.waits_for_cblock);
    r.probes.hit(Probe::output_switch, r.writer.files > 1 ? r.writer.files - 1 : 0);
    r.probes.hit(Probe::writer_fix_up_failed, r.writer.fix_ups_failed);
    r.probes.hit(Probe::writer_fix_up_partial, r.writer.fix_ups_partial);
    r.probes.hit(Probe::snapshot_late_writer, r.loop.ring.late_writes);
    r.probes.hit(Probe::staging_full, r.staging.full);
    r.probes.hit(Probe::staging_wrap_skip, r.staging.wrap_skips);
    r.probes.hit(Probe::staging_end_cut, r.staging.end_cuts);
    if (r.staging.chunks_written > r.staging.writes) r.probes.hit(Probe::staging_batched);
    const bool reads = r.loop.ring.chunks > 0;
    if (reads && config_.mode == core::RingMode::forward_overwrite) r.probes.hit(Probe::forward_overwrite_read);
    if (reads && config_.mode == core::RingMode::backward_writable) r.probes.hit(Probe::backward_writable_read);
    if (r.loop.status == core::LoopStatus::stopped && config_.scope == Scope::system_wide) {
      r.probes.hit(Probe::stop_without_hangup);
    }
  }

  // The properties this run checks (for pass counts).
  void list_properties() {
    result_.properties = model::oracle_properties(result_.log.mode, config_.aux_pages > 0);
    if (config_.aux_pages > 0) result_.properties.push_back(kAuxRefcount);
    for (const char* p : {model::kKernelRules, model::kSamplingPeriods, model::kCountersAgree, kLiveness, kCleanFinish,
                          kReleaseSafety}) {
      result_.properties.push_back(p);
    }
    if (to_disk()) {
      for (const char* p : {kFileValid, model::kRoundOrder, kNoOverlap, kBufferStable, kFlushBeforeSwitch,
                            kHardErrorHandled}) {
        result_.properties.push_back(p);
      }
    }
    if (plan_.staging.bytes > 0 && writer_started_) {
      result_.properties.push_back(model::kStagingWhole);
      result_.properties.push_back(model::kBackpressureCounted);
    }
  }

  // Causes before consequences: liveness (in a cancelled run everything
  // else follows from it), then what the disk and the release checks saw,
  // then the files, then the oracle's verdict on the records, then how the
  // consumer ended.
  void check_properties() {
    // A hard write error (or an output that could not be created)
    // legitimately cuts the output short.
    model::CheckOptions check_options;
    check_options.allow_truncation = cut_short();
    result_.oracle = model::check(result_.log, result_.output, check_options);
    list_properties();
    for (std::size_t cpu = 0; cpu < kernel_.cpus() && config_.aux_pages > 0; cpu++) {
      for (const std::string& v : kernel_.aux(cpu).violations) run_level_.push_back(model::Violation{kAuxRefcount, v});
      for (const std::string& v : kernel_.aux(cpu).consumer_violations) {
        run_level_.push_back(model::Violation{model::kAuxTruncation, v});
      }
    }
    const std::vector<model::Violation> rules = model::check_kernel_rules(result_.log);
    run_level_.insert(run_level_.end(), rules.begin(), rules.end());
    const std::vector<model::Violation> sampling = model::check_sampling(result_.log);
    run_level_.insert(run_level_.end(), sampling.begin(), sampling.end());
    std::vector<model::Violation>& out = result_.violations;
    if (scheduler_.cancelled()) {
      out.push_back(model::Violation{kLiveness, scheduler_.cancel_reason()});
    } else if (!consumer_done_) {
      out.push_back(model::Violation{kLiveness, "the consumer never finished"});
    }
    out.insert(out.end(), run_level_.begin(), run_level_.end());
    out.insert(out.end(), result_.oracle.violations.begin(), result_.oracle.violations.end());
    if (consumer_done_ && !scheduler_.cancelled()) check_ending();
    result_.consumer_finished = consumer_done_ && !scheduler_.cancelled();
    const std::vector<model::Violation> counters = check_counters(result_);
    out.insert(out.end(), counters.begin(), counters.end());
    check_replay();
  }

  bool cut_short() const { return result_.writer.error != 0; }

  void check_ending() {
    const std::string problem = ending_problem();
    if (!problem.empty()) result_.violations.push_back(model::Violation{kCleanFinish, problem});
    if (result_.loop.status == core::LoopStatus::done) {
      for (std::size_t cpu = 0; cpu < config_.cpus; cpu++) {
        if (released_with_data_[cpu] && !result_.output.cpus[cpu].corrupt) {
          result_.violations.push_back(
              model::Violation{kReleaseSafety, "mapping " + std::to_string(cpu) + " released with data left in it"});
        }
      }
    }
    if (!to_disk()) return;
    // The error the writer reports is the one the disk gave it.
    const int injected = config_.disk_open_fails ? EACCES : result_.disk.first_hard_error;
    if (result_.writer.error != injected) {
      result_.violations.push_back(model::Violation{
          kHardErrorHandled, "the writer reported error " + std::to_string(result_.writer.error) + " (" +
                                 result_.writer.error_context + "), the disk injected " + std::to_string(injected)});
    }
  }

  // clean_finish: how the loop ended, and its drop counts against the
  // oracle's.
  std::string ending_problem() const {
    const core::LoopResult& loop = result_.loop;
    const bool stopped_ok = session_.stop_requested() && loop.status == core::LoopStatus::stopped;
    const bool error_ok = cut_short() && (loop.status == core::LoopStatus::sink_error ||
                                          loop.status == core::LoopStatus::done || loop.status == core::LoopStatus::stopped);
    if (loop.status != core::LoopStatus::done && !stopped_ok && !error_ok) {
      return std::string("the record loop ended with '") + core::to_string(loop.status) + "'" +
             (result_.writer.error ? " (writer: " + result_.writer.error_context + ")" : "");
    }
    if (loop.mappings_corrupt() > 0) {
      std::string problem = std::to_string(loop.mappings_corrupt()) + " rings declared corrupt";
      for (std::size_t cpu = 0; cpu < result_.output.cpus.size(); cpu++) {
        if (!result_.output.cpus[cpu].corrupt) continue;
        return problem + "; cpu " + std::to_string(cpu) + ": " + result_.output.cpus[cpu].corrupt_reason;
      }
      return problem;
    }
    const std::uint64_t abandoned = loop.drops[core::DropCause::abandoned].records.bytes;
    if (abandoned > 0 && !cut_short()) return std::to_string(abandoned) + " bytes left in rings at the end";
    return drops_problem();
  }

  // What the consumer says it dropped, against what the oracle found from
  // the kernel's log: a wrong counter cannot pass a campaign.
  std::string drops_problem() const {
    const core::LoopResult& loop = result_.loop;
    const model::OracleReport& o = result_.oracle;
    const std::uint64_t overwritten = loop.drops[core::DropCause::overwritten].records.bytes;
    if (overwritten != o.bytes_overwritten) {
      return "the reader counted " + std::to_string(overwritten) + " bytes overwritten, the oracle " +
             std::to_string(o.bytes_overwritten);
    }
    // The oracle finds AUX gaps from the AUXTRACE records that follow them:
    // after an output error the record after a gap may have been cut off.
    const std::uint64_t aux_overwritten = loop.aux_drops[core::DropCause::overwritten].records.bytes;
    const bool aux_ok = cut_short() ? aux_overwritten >= o.aux_overwritten : aux_overwritten == o.aux_overwritten;
    if (!aux_ok) {
      return "the AUX reader counted " + std::to_string(aux_overwritten) + " bytes overwritten, the oracle " +
             std::to_string(o.aux_overwritten);
    }
    // The writer stops at its first hard error: one file at most is cut.
    const std::uint64_t files_cut = result_.writer.drops[core::DropCause::output_error].events;
    if (files_cut > 1) {
      return "the writer counted " + std::to_string(files_cut) + " files cut off by output errors (" +
             std::to_string(result_.writer.files) + " files); it stops at its first error";
    }
    if (!cut_short() || !writer_started_) return "";
    // Cut by an output error: what the oracle misses at the end is what the
    // writer cut off (data-ring records, not AUXTRACE records) plus what was
    // left in the rings, byte for byte in normal mode. In a read-only ring
    // the bytes left are those since the last snapshot that the area still
    // holds, and the records they end are wholly missing: at most.
    core::RecordCounts cut = result_.writer.drops[core::DropCause::output_error].records;
    cut.add(result_.staging.drops[core::DropCause::output_error].records);  // staged, never written
    const std::uint64_t cut_ring_bytes =
        cut.bytes - cut.auxtrace_bytes - cut.auxtrace_records * core::kAuxtraceHeaderBytes;
    const std::uint64_t counted = cut_ring_bytes + loop.drops[core::DropCause::abandoned].records.bytes;
    const bool normal = config_.mode == core::RingMode::normal;
    if (normal ? counted != o.bytes_cut : counted > o.bytes_cut) {
      return "the consumer counted " + std::to_string(counted) + " bytes cut off or abandoned, the oracle " +
             (normal ? "" : "at most ") + std::to_string(o.bytes_cut);
    }
    return "";
  }

  void check_replay() {
    if (decisions_.mode() != DecisionSource::Mode::replay_strict) return;
    decisions_.check_fully_used();
    result_.properties.push_back(kReplayFaithful);
    if (decisions_.diverged()) result_.violations.push_back(model::Violation{kReplayFaithful, decisions_.divergence()});
  }

  // Declared in construction order: the kernel writes into result_.
  RunResult result_;
  const RunConfig& config_;
  const core::PerfDataHead head_;
  const RunPlan plan_;
  DecisionSource& decisions_;
  Scheduler scheduler_;
  Kernel kernel_;
  SimSession session_;
  SimDisk disk_;
  MutantDisk mutant_disk_;
  OracleSink oracle_sink_;
  WaitQueue phase_queue_;  // consumer done, quiet phase started
  std::vector<model::Violation> run_level_;
  std::vector<bool> released_with_data_;
  bool consumer_done_ = false;
  bool quiet_ = false;
  bool writer_started_ = true;
};

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

// A run allocates its logs and output (tens of MB for a long one) and
// frees them at its end; by default glibc maps such blocks fresh for each
// run and returns them at once, so every run pays a page fault per page it
// touches. Kept instead (blocks below 32 MiB from the heap, freed memory
// not trimmed), the next run reuses the pages. One arena: each run has a
// thread of its own (sim/scheduler.h), and the arenas of threads that
// ended were not reused well (twice the page faults in the campaign, with
// --jobs 1 or 2). Process-wide, once; the runs do not depend on it
// (sanitizer builds ignore it).
static void keep_freed_memory() {
  static const bool kept = [] {
    mallopt(M_ARENA_MAX, 1);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_TOP_PAD, 16 << 20);
    return true;
  }();
  VERIFY(kept);
}

RunResult run_simulation(const RunConfig& config, DecisionSource& decisions, std::vector<TraceEvent>* events) {
  keep_freed_memory();
  const std::string invalid = validate(config);
  VERIFY_MSG(invalid.empty(), invalid.c_str());
  return Run(config, decisions, events).run();
}

}  // namespace ringsim::sim
