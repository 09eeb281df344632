// The simulated perf kernel: per-CPU events, each with a data ring that a
// producer fiber fills with records.
//
// Behaviour model (what the real kernel does that this one reproduces):
//   - Positions are free-running u64 byte counts; the data area is a power
//     of two; a record is 8-aligned, so its header never straddles the end
//     of the area, but its body may (probe wrap_inside_record).
//   - Non-overwrite mode: a record that does not fit (head - tail + size >
//     area) is dropped and counted; a record larger than the whole area
//     never fits. When a later record fits together with a LOST record, the
//     kernel writes PERF_RECORD_LOST {id, lost} first, then the record, in
//     one reservation. Nothing is dropped without being counted.
//   - Overwrite mode (read-only mapping, write_backward): tail is ignored;
//     each record is written below the previous one and head is the newest
//     record's position. While output is paused (PAUSE_OUTPUT) records are
//     dropped and counted, and reported by a LOST record after resume.
//   - Wakeups: every wakeup_events records, and whenever the bytes written
//     pass the wakeup mark by more than the watermark (then the mark moves
//     up by one watermark; a watermark of 0 means half the area). A wakeup
//     makes poll return POLLIN once. When the event exits, poll returns
//     POLLHUP; data may still be in the ring.
//   - Deliberate difference: the real kernel can leave a drop count
//     unreported when nothing is written after the last drop. This kernel
//     waits at exit, in virtual time and with a bound, for room to write the
//     final LOST record, so every drop is reported (probe
//     lost_flushed_at_exit); if the reader never makes room the run fails
//     its liveness check. A stop request disables every event at once, as
//     the real recorder does: then a pending count is reported only if a
//     LOST record fits, else logged as unreported (the real kernel never
//     reports it either).
//
// What the workload varies: the time between records (with bursts of
// back-to-back records) and record sizes (mixes from small to larger than
// the ring), drawn from a stream of its own per CPU, a function of the seed
// alone (the same records whatever the schedule, faults or output); and
// where the producer yields to the reader (from the run's decisions). A record is written atomically with respect to the
// reader's fiber; the reader's own copy, though, can be interrupted
// (see SimMapping::copy_out), which is where torn reads come from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/ring_mode.h"
#include "model/log.h"
#include "sim/aux.h"
#include "sim/probes.h"
#include "sim/sample.h"
#include "sim/scheduler.h"

namespace ringsim::sim {

enum class SizeMix : std::uint8_t { small, mixed, large, huge };
const char* to_string(SizeMix mix);

struct KernelConfig {
  std::uint32_t cpus = 1;
  std::uint64_t ring_bytes = 4096;
  core::RingMode mode = core::RingMode::normal;
  std::uint32_t wakeup_events = 0;           // 0: watermark only
  std::uint64_t wakeup_watermark_bytes = 0;  // 0: half the ring
  std::uint32_t records_per_cpu = 100;
  SizeMix size_mix = SizeMix::small;
  std::uint64_t gap_ns_max = 10'000;         // time between records in [0, max]
  std::uint32_t burst_per_million = 0;       // chance a burst starts after a record
  std::uint32_t burst_records_max = 1;
  std::uint64_t payload_seed = 0;
  std::uint64_t exit_flush_timeout_ns = 10'000'000'000;
  AuxConfig aux;  // size_bytes 0: no AUX areas
  bool operator==(const KernelConfig&) const = default;
};

// One event's ring as the kernel sees it. Plain logic, no fibers: the
// stateful properties drive it directly.
class SimRing {
 public:
  enum class Output : std::uint8_t { written, dropped_full, dropped_paused, dropped_too_big };

  SimRing(const KernelConfig& config, const EventIdentity& identity, model::CpuLog& log, Probes& probes);

  // Writes one record as the kernel would. Returns what happened.
  Output output(std::span<const std::byte> record, std::uint64_t now_ns);
  // Exit path: writes the pending LOST record alone if it fits. Returns
  // whether nothing is pending afterwards.
  bool flush_lost(std::uint64_t now_ns);
  std::uint64_t lost_pending() const { return lost_pending_; }

  // Reader side.
  std::uint64_t data_size_bytes() const { return data_.size(); }
  core::RingMode mode() const { return mode_; }
  std::uint64_t head() const { return head_; }
  std::uint64_t tail() const { return tail_; }
  void store_tail(std::uint64_t tail);
  std::span<const std::byte> data() const { return data_; }
  // Test hook: the bytes of the data area, to corrupt the ring on purpose.
  std::span<std::byte> data_for_test() { return data_; }
  void set_head_for_test(std::uint64_t head) { head_ = head; }
  void set_paused(bool paused) { paused_ = paused; }
  bool paused() const { return paused_; }
  // Overwrite mode: the head a paused reader saw (for the
  // overwrite_unread probe).
  void note_reader_head(std::uint64_t head) { reader_head_ = head; reader_head_known_ = true; }

  // Poll state.
  bool take_wakeup();
  void raise_wakeup() { wakeup_pending_ = true; }
  bool wakeup_pending() const { return wakeup_pending_; }
  void hang_up();
  bool hung_up() const { return hung_up_; }
  // Stop request: nothing more is written. A pending drop count is
  // reported now if a LOST record fits, else logged as unreported.
  void disable(std::uint64_t now_ns);
  bool disabled() const { return disabled_; }
  // End of a cancelled run: a pending count can no longer be reported.
  void abandon_pending();
  // Bytes the reader has not taken yet (normal mode), or written since the
  // last snapshot (overwrite mode).
  bool holds_unread_data() const;

  const EventIdentity& identity() const { return identity_; }

 private:
  void write_record(std::span<const std::byte> record, std::uint64_t now_ns, std::uint64_t lost);
  void count_wakeup(std::uint64_t bytes);

  const core::RingMode mode_;
  const EventIdentity identity_;
  const std::uint32_t wakeup_events_;
  const std::uint64_t watermark_bytes_;
  model::CpuLog& log_;
  Probes& probes_;
  std::vector<std::byte> data_;
  std::uint64_t head_ = 0;
  std::uint64_t tail_ = 0;
  std::uint64_t bytes_written_ = 0;
  std::uint64_t wakeup_mark_ = 0;
  std::uint64_t events_since_wakeup_ = 0;
  std::uint64_t lost_pending_ = 0;
  std::uint64_t reader_head_ = 0;
  bool reader_head_known_ = false;
  bool paused_ = false;
  bool hung_up_ = false;
  bool disabled_ = false;
  bool wakeup_pending_ = false;
  std::byte lost_scratch_[kLostBytes];
};

// All CPUs: rings, producer fibers, and the queues the reader waits on.
class Kernel {
 public:
  Kernel(Scheduler& scheduler, const KernelConfig& config, model::KernelLog& log, Probes& probes);

  // Spawns one producer fiber per CPU.
  void start();

  std::size_t cpus() const { return rings_.size(); }
  SimRing& ring(std::size_t cpu) { return *rings_[cpu]; }
  const KernelConfig& config() const { return config_; }

  // The reader's poll waits here; wakeups and hangups notify it.
  WaitQueue& poll_queue() { return poll_queue_; }
  // Notified whenever an event exits or events are disabled.
  WaitQueue& exit_queue() { return exit_queue_; }
  // Called after the reader stores a tail (room appeared).
  void space_freed() { space_queue_.notify_all(); }
  // Stop request: every event is disabled at once (SimRing::disable) and
  // the producers exit.
  void disable_all();
  std::size_t exited() const { return exited_; }

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
  // munmap of the AUX area.
  void aux_unmap(std::size_t cpu);
  bool all_exited() const { return exited_ == rings_.size(); }
  std::uint64_t last_exit_ns() const { return last_exit_ns_; }

 private:
  void produce(std::size_t cpu);
  // Writes one record into cpu's ring, tracing what happened.
  SimRing::Output output(std::size_t cpu, std::span<const std::byte> record);
  void aux_produce(std::size_t cpu);
  void aux_drop_reference(std::size_t cpu, bool by_writer);
  std::uint32_t draw_size(DecisionSource& workload);
  void exit_event(std::size_t cpu);

  Scheduler& scheduler_;
  const KernelConfig config_;
  model::KernelLog& log_;
  Probes& probes_;
  std::vector<std::unique_ptr<SimRing>> rings_;
  std::vector<std::unique_ptr<SimAux>> auxes_;
  std::vector<bool> aux_done_;
  WaitQueue aux_done_queue_;
  WaitQueue poll_queue_;
  WaitQueue space_queue_;
  WaitQueue exit_queue_;
  bool disabled_ = false;
  std::size_t exited_ = 0;
  std::uint64_t last_exit_ns_ = 0;
};

}  // namespace ringsim::sim
