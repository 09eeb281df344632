// The simulated perf kernel: per CPU, a data ring (sim/ring.h) shared by
// the CPU's events, and a producer fiber that writes the workload into it.
//
// The events of a CPU (1..3 sampling events, the first owning the ring and
// the others redirected to it with PERF_EVENT_IOC_SET_OUTPUT, and with
// `sideband` a dummy event writing COMM, MMAP2, FORK, SWITCH, THROTTLE and
// EXIT records) follow a task (per_task: they exit with it and poll then
// returns POLLHUP, alone) or are system-wide (they never exit: only a stop
// request ends the recording). The ring's rules (capacity, LOST, wakeups,
// pause, nesting) are sim/ring.h's, checked by the model from the log.
//
// Sampling (sim/sampling.h): each planned sample of a sampling event is an
// occurrence of it (weight 1, as a page fault); the event counts it and
// writes a sample only when its period rules say so (period mode, the
// PERF_SAMPLE_PERIOD rule, frequency mode at perf_clock() = virtual time
// plus an uptime), with PERIOD as Linux writes it. Every occurrence is
// logged (CpuLog::hits) for the model to replay (model/sampling.h).
//
// What the workload varies: the time between records (with bursts), which
// event writes and record sizes (mixes from small to larger than the ring),
// drawn from a stream of its own per CPU, a function of the seed alone (the
// same records whatever the schedule, faults or output); where the producer
// yields to the reader, and the interruptions of Linux's writers, from the
// run's decisions:
//   - nest_per_million: a writer interrupted by the next record of its
//     CPU, either before it reserves (the interrupting record lands first
//     with a later timestamp: ring order is not time order) or after (the
//     interrupting writer reserves behind it and only the outermost
//     publishes data_head);
//   - late_write_per_million: a writer held between its checks and its
//     copy, while the reader may pause the ring: the record lands after
//     PAUSE_OUTPUT returned.
// A producer writes `producer_batch` records between its sleeps: it owes
// each record's gap and sleeps what it owes before the batch's last
// record, the records before it written early (1: a sleep before each
// record); the occurrences' clock runs at each record's own time.
// With `endless`, producers keep producing until a stop request. A stop
// disables every event at once (no POLLHUP); an exit does not wait for
// room to report drops: drops still pending when no record follows them
// stay unreported, as on Linux. A record is written atomically with
// respect to the reader's fiber unless a late write splits it; the
// reader's own copy can be interrupted (see SimMapping::copy_out), which
// is where torn reads come from.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/ring_mode.h"
#include "model/log.h"
#include "sim/aux.h"
#include "sim/call_kernel.h"
#include "sim/decisions.h"
#include "sim/ring.h"
#include "sim/probes.h"
#include "sim/sample.h"
#include "sim/sampling.h"
#include "sim/scheduler.h"

namespace ringsim::sim {

enum class SizeMix : std::uint8_t { small, mixed, large, huge };
const char* to_string(SizeMix mix);

struct KernelConfig {
  std::uint32_t cpus = 1;
  std::uint64_t ring_bytes = 4096;
  core::RingMode mode = core::RingMode::normal;
  std::uint32_t wakeup_events = 0;           // 0: none; ignored with a watermark
  std::uint64_t wakeup_watermark_bytes = 0;  // >0: attr.watermark = 1 (a union with wakeup_events)
  std::uint32_t records_per_cpu = 100;       // with endless: the records a CPU makes at most
  bool endless = false;                      // producers run until a stop request
  bool per_task = true;                      // events follow a task (POLLHUP at exit) or are system-wide
  std::uint32_t events_per_cpu = 1;          // sampling events sharing a CPU's ring (1..3)
  bool sideband = false;                     // a dummy event writes side-band records
  // Another session's CPU-wide event with attr.build_id is offered every
  // mmap first: the dummy event's MMAP2 says build-id (misc) over its
  // device/inode body (docs/fidelity.md row 20).
  bool foreign_build_id_misc = false;
  std::uint32_t nest_per_million = 0;        // a writer interrupted by the next record
  std::uint32_t late_write_per_million = 0;  // a writer held between its check and its copy
  SizeMix size_mix = SizeMix::small;
  std::uint32_t producer_batch = 1;          // records written between a producer's sleeps
  std::uint64_t gap_ns_max = 10'000;         // time between records in [0, max]
  std::uint32_t burst_per_million = 0;       // chance a burst starts after a record
  std::uint32_t burst_records_max = 1;
  std::uint64_t payload_seed = 0;
  AuxConfig aux;  // size_bytes 0: no AUX areas
  SamplingAttr sampling;  // of the sampling events
  // A kernel bug switch (Mutant::period_rule_ignored): no PERF_SAMPLE_PERIOD
  // rule, the samples still carrying PERIOD.
  bool period_rule_ignored = false;
  bool operator==(const KernelConfig&) const = default;
};

// An event of the campaign's kernel: one of the call kernel's events
// (sim/call_kernel.h: its state, its ring, its writer attributes and its
// periods live there, under the rules the conformance suite holds against
// Linux), and the workload's bookkeeping.
struct SimEvent {
  int handle = -1;        // the call kernel's event
  bool sideband = false;  // the dummy event: side-band records only
  std::uint64_t sequence = 0;
};

// All CPUs: rings, producer fibers, and the queues the reader waits on.
// The events and rings are the call kernel's (sim/call_kernel.h), opened,
// mapped and redirected through its calls (perf_event_open, mmap,
// SET_OUTPUT), disabled by its ioctl, exited by its task exit and polled
// by its poll; the workload (what is written, when, and the writers'
// interruptions) is this kernel's own.
class Kernel {
 public:
  Kernel(Scheduler& scheduler, const KernelConfig& config, model::KernelLog& log, Probes& probes);

  // Spawns one producer fiber per CPU.
  void start();

  std::size_t cpus() const { return rings_.size(); }
  SimRing& ring(std::size_t cpu) { return *rings_[cpu]; }
  // poll of cpu's ring, as the session sees it: POLLHUP once every event
  // of a per-task ring exited (alone), else the pending wakeup.
  void poll(std::size_t cpu, bool& readable, bool& hangup);
  // Every event of cpu's ring exited.
  bool exited(std::size_t cpu) const;
  const KernelConfig& config() const { return config_; }

  // The reader's poll waits here; wakeups and hangups notify it.
  WaitQueue& poll_queue() { return poll_queue_; }
  // Notified whenever an event exits or events are disabled.
  WaitQueue& exit_queue() { return exit_queue_; }
  // Stop request: every event is disabled and the producers stop; nothing
  // more is written (drops still pending stay unreported). Like
  // PERF_EVENT_IOC_DISABLE, which runs on the event's CPU after a write in
  // progress there, it returns once no write is in progress (it waits for
  // a held writer, bounded by the run's cancellation).
  void disable_all();
  bool disabled() const { return disabled_; }
  // End of the run: drops no record will ever report.
  void abandon_pending();
  // CPUs whose workload is over (their per-task events exited).
  std::size_t done_cpus() const { return done_; }

  // AUX areas (sim/aux.h).
  bool has_aux() const { return config_.aux.size_bytes > 0; }
  SimAux& aux(std::size_t cpu) { return *auxes_[cpu]; }
  // perf_aux_output_end: reports `bytes` more (all that is pending if
  // `flush`), writes PERF_RECORD_AUX, does the wakeup bookkeeping, drops the
  // transaction's reference (`by_writer`: from the PMU's own context).
  void aux_end(std::size_t cpu, std::uint64_t bytes, std::uint64_t flags, bool by_writer, bool flush);
  // Stops the output: ends an open transaction and reports what is pending.
  void aux_stop_output(std::size_t cpu);
  // Snapshot: the reader stops and restarts the AUX output.
  void aux_set_enabled(std::size_t cpu, bool enabled);
  // The consumer is about to wait: aux_truncation's re-enable rule.
  void aux_check_reenabled(std::size_t cpu);
  // munmap of the AUX area.
  void aux_unmap(std::size_t cpu);
  // Every CPU's workload is over.
  bool all_done() const { return done_ == rings_.size(); }
  std::uint64_t last_exit_ns() const { return last_exit_ns_; }
  // About the bytes a CPU's records take (to reserve room for them).
  std::uint64_t planned_bytes_per_cpu() const;

 private:
  // One record of the workload, drawn but not yet written.
  struct Planned {
    std::size_t event = 0;
    std::uint32_t type = 0;
    std::uint32_t size = 0;
    std::uint64_t gap_ns = 0;
    std::uint64_t period = 0;  // a sample's PERIOD field
  };
  // An occurrence of `p`'s sampling event now: whether it makes a sample
  // (its PERIOD into p). Side-band records always are written.
  // `ahead_ns`: it happens that much later than now (an occurrence that
  // makes no sample is not waited for).
  bool occur(std::size_t cpu, Planned& p, std::uint64_t ahead_ns = 0);
  bool pay_owed(std::size_t cpu, std::uint32_t& in_batch);
  Planned plan(std::size_t cpu, DecisionSource& workload, std::uint32_t& burst_left);
  void build(std::size_t cpu, const Planned& p, std::vector<std::byte>& out);
  // Writes `p`, or (interrupted) the next planned record first or inside
  // it. Returns the records of the workload written (1 or 2).
  std::uint32_t emit(std::size_t cpu, Planned p, DecisionSource& workload, std::uint32_t& burst_left,
                     std::uint32_t left);
  void write(std::size_t cpu, const Planned& p, std::span<const std::byte> record);
  void finish_workload(std::size_t cpu);
  void produce(std::size_t cpu);
  // Writes one record into cpu's ring at once, tracing what happened.
  SimRing::Output output(std::size_t cpu, std::size_t event, std::span<const std::byte> record);
  SimRing::Handle begin(std::size_t cpu, std::size_t event, std::span<const std::byte> record,
                        bool past_pause_check = false);
  void finish(std::size_t cpu, const SimRing::Handle& h, std::span<const std::byte> record);
  void aux_produce(std::size_t cpu);
  void aux_drop_reference(std::size_t cpu, bool by_writer);
  bool aux_wakeup_after(std::size_t cpu, std::uint64_t flags);
  void aux_disable_by_pmu(std::size_t cpu);
  bool writes_in_progress() const;
  // The call kernel's view of event k of cpu's ring.
  OpenedEvent& event(std::size_t cpu, std::size_t k) { return calls_.event(events_[cpu][k].handle); }
  EventAttrs& attrs(std::size_t cpu, std::size_t k) { return event(cpu, k).writer; }
  void open_events(std::uint32_t cpu);
  void reserve_log(model::CpuLog& c) const;
  // Below glibc's largest mmap threshold (sim/run.cc): reserved from the
  // heap, whose pages the next run reuses.
  static constexpr std::uint64_t kLogReserveBytesMax = std::uint64_t{8} << 20;
  std::uint32_t draw_size(DecisionSource& workload, std::size_t event);
  // Bounds of the interruptions' virtual durations.
  static constexpr std::uint64_t kInterruptNsMax = 2'000;
  static constexpr std::uint64_t kLateWriteNsMax = 50'000;
  // Occurrences of a CPU's sampling events, at most, per record it makes.
  static constexpr std::uint64_t kOccurrencesPerRecordMax = 64;
  // Frequency mode: occurrences per 1/sample_freq s, on average.
  static constexpr std::uint64_t kFrequencyOccurrences = 8;
  std::uint64_t occurrence_gap(std::uint64_t gap_ns, std::uint64_t divisor) const;
  // One held writer in 16 is held much longer: a vCPU its hypervisor
  // preempted in the middle of the write (perf's "Timestamp below last
  // timeslice flush" on virtual machines).
  static constexpr std::uint64_t kPreemptedWriteNsMax = 2'000'000;

  Scheduler& scheduler_;
  const KernelConfig config_;
  model::KernelLog& log_;
  Probes& probes_;
  // The call kernel draws nothing here (an empty tape, replayed strictly:
  // a draw would be a divergence, checked at the end of the run).
  DecisionSource no_draws_;
  CallKernel calls_;
  std::vector<std::vector<std::byte>> mappings_;  // per CPU: control page + data pages
  std::vector<SimRing*> rings_;                   // per CPU: the call kernel's
  std::vector<std::vector<SimEvent>> events_;
  std::vector<std::vector<std::byte>> scratch_;  // per CPU: the record in hand
  std::vector<std::vector<std::byte>> inner_;    // per CPU: the one that interrupts it
  // A sample built but for its payload words (build_sample_head), which
  // are filled when it is written into the ring, never if it is dropped:
  // per CPU, for scratch_ and inner_.
  struct PendingPayload {
    bool pending = false;
    EventIdentity identity;
    std::uint64_t sequence = 0;
  };
  std::vector<std::array<PendingPayload, 2>> payloads_;
  PendingPayload& payload_of(std::size_t cpu, const std::byte* buffer);
  void fill_payload(std::size_t cpu, std::span<const std::byte> record);
  std::vector<std::unique_ptr<SimAux>> auxes_;
  std::vector<bool> aux_done_;
  WaitQueue aux_done_queue_;
  WaitQueue poll_queue_;
  WaitQueue exit_queue_;
  WaitQueue writes_queue_;  // notified when a write in progress ends
  std::uint32_t writers_held_ = 0;  // writers past their checks, not yet done
  std::vector<std::uint64_t> occurrences_;  // per CPU: of its sampling events
  // Per CPU: the gaps of the records its producer wrote early, in a batch
  // (producer_batch), not slept yet: the occurrences' clock runs that far
  // ahead of the virtual time, as if each record had waited for its gap.
  std::vector<std::uint64_t> owed_ns_;
  bool disabled_ = false;
  std::size_t done_ = 0;
  std::uint64_t last_exit_ns_ = 0;
};

}  // namespace ringsim::sim
