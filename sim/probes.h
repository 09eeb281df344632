// Probes count hits on rare paths, so a campaign can show that each fault
// and each rare path was actually exercised. One table, numbered by the
// order below; the campaign prints every probe with its count, and a probe
// at 0 after a campaign is a path the campaign never tried.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace ringsim::sim {

#define RINGSIM_PROBES(X)                                                                  \
  X(wrap_inside_record, "kernel wrote a record across the end of the ring")                \
  X(ring_full, "kernel dropped a record: no room (non-overwrite)")                         \
  X(record_never_fits, "kernel dropped a record larger than the ring")                     \
  X(paused_drop, "kernel dropped a record while output was paused")                        \
  X(lost_emitted, "kernel wrote a PERF_RECORD_LOST")                                       \
  X(overwrite_unread, "kernel overwrote a record no snapshot had read (overwrite mode)")   \
  X(wakeup_events, "wakeup after wakeup_events records")                                   \
  X(wakeup_watermark, "wakeup after wakeup_watermark bytes")                               \
  X(reader_fell_behind, "reader found records overwritten before it read them")           \
  X(chunk_wrapped, "reader copied a chunk in two parts at the end of the ring")            \
  X(pollhup_with_data, "POLLHUP while the ring still held data")                          \
  X(poll_eintr, "poll interrupted (EINTR)")                                                \
  X(snapshot_request, "snapshot requested (overwrite mode)")                               \
  X(copy_interleaved, "kernel ran in the middle of a reader's copy")                       \
  X(stop_request, "stop requested while events were still producing")                   \
  X(disk_stall, "disk: a write stalled (heavy-tail latency)")                              \
  X(disk_queue_full, "disk: submit refused, queue full (EAGAIN)")                          \
  X(disk_eagain, "disk: submit refused (EAGAIN)")                                          \
  X(disk_eagain_burst, "disk: a burst of EAGAIN began")                                    \
  X(disk_short_write, "disk: a write completed short")                                     \
  X(disk_short_inside_a_page, "disk: a short write drawn inside one page: written whole (Linux)") \
  X(disk_eintr, "disk: a write or wait was interrupted (EINTR)")                           \
  X(disk_eio, "disk: a write failed with EIO")                                             \
  X(disk_enospc, "disk: a write failed with ENOSPC")                                       \
  X(writer_short_restart, "writer restarted a short write with the remainder")            \
  X(writer_eagain_retry, "writer backed off and retried a submit after EAGAIN")           \
  X(writer_sync_fallback, "writer wrote a chunk synchronously after repeated EAGAIN")      \
  X(writer_waited_cblock, "writer waited for a control block to complete")                \
  X(output_switch, "writer switched to a new output file")                                \
  X(writer_fix_up_failed, "writer: a file's header fix-up failed")                         \
  X(writer_fix_up_partial, "writer: a header fix-up failed after part of it reached the file") \
  X(hangup_with_write_in_flight, "POLLHUP while a write of that ring was in flight")        \
  X(aux_wakeup, "AUX: aux_head passed aux_wakeup + watermark: wakeup")                      \
  X(aux_late_report, "AUX: hardware could not report yet (page boundary): head held back")  \
  X(aux_watermark_zero, "AUX: an end in overwrite mode (watermark 0, no bookkeeping)")      \
  X(aux_truncated, "AUX: a TRUNCATED record disabled the event")                          \
  X(aux_partial, "AUX: a PARTIAL record")                                                   \
  X(aux_full_disable, "AUX: the area was full at begin: disabled and woke")                \
  X(aux_output_stop, "AUX: output stopped with a transaction open")                        \
  X(aux_snapshot, "AUX: the reader took a snapshot")                                       \
  X(aux_overwritten, "AUX: a snapshot found data overwritten before it was read")          \
  X(aux_wrapped, "AUX: the reader copied across the end of the area")                        \
  X(aux_collision, "AUX: a COLLISION record (the hardware lost data of its own)")              \
  X(aux_produced_while_disabled, "AUX: the PMU had data while disabled by truncation or a full area") \
  X(aux_reenabled, "AUX: the consumer re-enabled an event the PMU had disabled")                \
  X(aux_record_before_head, "AUX: the reader saw aux_head before the end that wrote RECORD_AUX published it") \
  X(aux_unaligned_head, "AUX: the reader found aux_head not a multiple of 8")                   \
  X(aux_offset_wrapped, "AUX: an offset-head snapshot found the area wrapped: took it whole")  \
  X(nested_writer, "a writer interrupted another on its ring: only the outermost published")  \
  X(time_inversion, "a record landed after a newer one (its writer was interrupted first)")  \
  X(late_write_after_pause, "a write past its check landed after PAUSE_OUTPUT returned")       \
  X(round_order_kernel_late, "perf would take a record out of order: the kernel published it late") \
  X(lost_with_sideband, "a PERF_RECORD_LOST was carried by a side-band record")               \
  X(lost_id_other_event, "a PERF_RECORD_LOST carried another event's id than the dropper's")   \
  X(oversize_overwrite, "a record larger than the area went into a read-only ring")           \
  X(lost_unreported_at_end, "drops pending when the ring's events ended: never reported")      \
  X(sideband_record, "the kernel wrote a side-band record (COMM, MMAP2, FORK, EXIT, ...)")     \
  X(foreign_build_id_misc, "an MMAP2 said build-id over a device/inode body (another session's, row 20)") \
  X(occurrence_not_sampled, "an occurrence of a sampling event made no sample (its period ran on)") \
  X(sample_period_above_one, "a sample's period was above 1 (period mode, or adapted to a frequency)") \
  X(frequency_adapted, "a frequency-mode event's period moved at a sample (perf_adjust_period)") \
  X(occurrences_bounded, "a CPU's workload ended at its bound of occurrences (a long period)") \
  X(shared_ring_write, "an event wrote into another event's ring (SET_OUTPUT)")               \
  X(hangup_per_task, "POLLHUP: every per-task event of a ring exited")                        \
  X(stop_without_hangup, "the recording ended on a stop request with no POLLHUP")             \
  X(snapshot_late_writer, "reader: head moved during a snapshot; the oldest records dropped") \
  X(forward_overwrite_read, "reader: a forward read-only ring read by snapshot")              \
  X(backward_writable_read, "reader: a writable backward ring read and its tail stored")        \
  X(staging_full, "staging: the reading fiber waited for room (backpressure)")                 \
  X(staging_wrap_skip, "staging: a chunk started at the beginning, not to be torn at the end") \
  X(staging_batched, "staging: the writer wrote several chunks (of rounds merged) in one write") \
  X(staging_end_cut, "staging: a batch stopped at a chunk that ended exactly at the buffer's end") \
  X(chunk_budget_spent, "reader: a ring's chunks per round (drain_chunks_max) ran out with more to read") \
  X(gate_lock_waited, "staging gate: a reading fiber waited while another held the gate (readers_per_cpu)") \
  X(gate_round_unmarked, "staging gate: a drained round staged without a marker (an epoch not yet ended)") \
  X(gate_marker, "staging gate: a finished-round marker staged when every reading fiber had drained (an epoch)") \
  X(ring_helped, "shared rings: a chunk read by a reading fiber from another CPU's ring (readers_per_cpu=2)")     \
  X(ring_help_busy, "shared rings: a helping fiber found another CPU's ring locked and passed on")  \
  X(ring_lock_waited, "shared rings: a ring's owner waited for its lock while a helping fiber read the ring")

enum class Probe : std::uint8_t {
#define RINGSIM_PROBE_ENUM(name, text) name,
  RINGSIM_PROBES(RINGSIM_PROBE_ENUM)
#undef RINGSIM_PROBE_ENUM
      count_
};

inline constexpr std::size_t kProbeCount = static_cast<std::size_t>(Probe::count_);

struct ProbeInfo {
  const char* name;
  const char* text;
};

inline constexpr std::array<ProbeInfo, kProbeCount> kProbeInfo = {{
#define RINGSIM_PROBE_INFO(name, text) {#name, text},
    RINGSIM_PROBES(RINGSIM_PROBE_INFO)
#undef RINGSIM_PROBE_INFO
}};

class Probes {
 public:
  void hit(Probe probe, std::uint64_t times = 1) { counts_[static_cast<std::size_t>(probe)] += times; }
  std::uint64_t count(Probe probe) const { return counts_[static_cast<std::size_t>(probe)]; }
  std::uint64_t count(std::size_t index) const { return counts_[index]; }
  void add(const Probes& other) {
    for (std::size_t i = 0; i < kProbeCount; i++) counts_[i] += other.counts_[i];
  }

 private:
  std::array<std::uint64_t, kProbeCount> counts_{};
};

}  // namespace ringsim::sim
