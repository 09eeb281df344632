// What the oracle reads: the simulated kernel's log of what it wrote into
// each ring and what it dropped, and what the consumer delivered.
//
// The model depends on the standard library only; it does not share code
// with core/, so a bug in the core's record parsing cannot hide itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ringsim::model {

// The ring's mapping: writable (the kernel honours data_tail) or not
// (overwrite), forward or backward (write_backward).
enum class Mode : std::uint8_t { normal, backward, forward_overwrite, backward_writable };
inline bool is_writable(Mode m) { return m == Mode::normal || m == Mode::backward_writable; }
inline bool is_backward(Mode m) { return m == Mode::backward || m == Mode::backward_writable; }

// One record the kernel wrote into a ring (samples and its own LOST records).
struct WrittenRecord {
  std::uint64_t position = 0;  // ring position of the record's first byte
  std::uint64_t offset = 0;    // of its bytes in CpuLog::bytes
  std::uint32_t size = 0;
  std::uint32_t type = 0;
  std::uint64_t time_ns = 0;
  std::uint64_t lost = 0;      // PERF_RECORD_LOST: the count it reports
  std::uint64_t event = 0;     // the id of the event that wrote it
  // The order its bytes were copied in (nested writers copy before the
  // writer they interrupted, which reserved space first).
  std::uint64_t copy_seq = 0;
  // When the outermost writer's perf_output_put_handle published data_head
  // over it (a held or interrupted writer publishes late).
  std::uint64_t published_ns = 0;
};

// One step of the simulated kernel on a ring, in order, for the model to
// replay against Linux's rules (model/kernel_rules.h):
//   begin   __perf_output_begin: a writer asks for `size` bytes (+ a LOST
//           record of lost_size if drops are pending); the kernel writes,
//           or drops it (full, paused, too big);
//   end     perf_output_put_handle: the outermost handle publishes
//           data_head and wakes the reader if the wakeup mark moved;
//   tail    the reader stored data_tail;
//   pause / resume   PERF_EVENT_IOC_PAUSE_OUTPUT;
//   wake    a wakeup from the AUX area (its watermark, a truncation);
//   poll    a poll of the ring's events: what it returned and the events'
//           states at that moment;
//   read    (read-only rings) the reader copied `size` bytes of the data
//           area at `position`, with output paused or not.
struct RingOp {
  enum class Kind : std::uint8_t { begin, end, tail, pause, resume, poll, wake, read };
  enum Result : std::uint8_t { written = 0, full = 1, paused = 2, too_big = 3 };
  Kind kind = Kind::begin;
  // begin
  std::uint32_t size = 0;
  std::uint32_t lost_size = 0;       // the size of the writer's LOST record
  bool sample = false;               // PERF_RECORD_SAMPLE (counts for wakeup_events)
  bool past_check = false;           // the writer passed the pause test earlier (a late write)
  std::uint32_t wakeup_events = 0;   // the writer's (0 when its attr.watermark is set)
  std::uint8_t result = written;
  std::uint64_t position = 0;        // written: of the LOST (if any) or the record
  std::uint64_t lost = 0;            // written: the LOST count before the record
  // end
  std::uint64_t head = 0;            // data_head after (the outermost publishes)
  bool woke = false;
  // tail: position = the tail stored
  // poll
  bool readable = false;
  bool hangup = false;
  bool per_task = false;             // the ring's events follow a task (not system-wide)
  bool all_exited = false;           // every event of the ring has exited
  // read: position, size, and
  bool output_paused = false;        // output was paused while it copied
};

// One perf_aux_output_end of the simulated PMU: the PERF_RECORD_AUX it
// emitted (if any), how far the stream moved, and the wakeup bookkeeping
// after it.
struct AuxEnd {
  // The record's fields: aux_offset is aux_head before the end in
  // non-overwrite mode, the new aux_head as the driver gives it in
  // overwrite mode (an offset inside the area with offset heads); aux_size
  // is what the driver reports (the whole area for Intel PT snapshots).
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint64_t flags = 0;         // PERF_AUX_FLAG_*, PMU format bits included
  bool record = false;             // a RECORD_AUX was written (not for OVERWRITE alone with size 0)
  std::uint64_t written = 0;       // stream bytes this end made visible
  std::uint64_t head_after = 0;    // stream position (free-running) after it
  std::uint64_t wakeup_after = 0;  // aux_wakeup after it
  bool woke = false;               // it woke the consumer
  std::uint64_t time_ns = 0;
};

// The AUX area of one CPU, as the simulated PMU wrote it. Its bytes are
// aux_byte(seed, cpu, position) (model/aux_content.h).
struct AuxLog {
  bool present = false;
  bool overwrite = false;
  std::uint64_t size_bytes = 0;
  std::uint64_t watermark_bytes = 0;  // 0 in overwrite mode
  std::uint64_t attempted_bytes = 0;  // what the PMU tried to write
  std::uint64_t truncated_bytes = 0;  // what did not fit (non-overwrite)
  std::uint64_t full_disables = 0;    // begin found the area full: disabled, woke
  // What the PMU would have written while a TRUNCATED record or a full
  // area kept the event disabled (until the consumer re-enabled it).
  std::uint64_t disabled_bytes = 0;
  std::uint64_t head = 0;             // final stream position (free-running)
  // Overwrite mode: aux_head is an offset inside the area (the Intel PT
  // way), not a free-running position.
  bool offset_heads = false;
  std::vector<AuxEnd> ends;
  // ends.size() when the consumer re-enabled an event the PMU had disabled.
  std::vector<std::size_t> reenables;
  // Overwrite mode: the stream position when the consumer stopped the
  // output for each snapshot (in order).
  std::vector<std::uint64_t> snapshot_heads;
};

// An occurrence of a sampling event (perf_swevent_event, weight 1) that
// the simulated kernel sampled, after `unsampled` occurrences of the same
// event it did not sample; with the PERIOD field it gave the sample
// (model/sampling.h replays the rules). The unsampled occurrences' times
// do not matter to the rules (only samples adapt a frequency's period).
struct SampleHit {
  std::uint32_t event = 0;      // the sampling event's index on its CPU
  std::uint64_t id = 0;         // its id (the samples' IDENTIFIER)
  std::uint64_t unsampled = 0;  // occurrences of the event since its previous sample, not sampled
  std::uint64_t clock_ns = 0;   // perf_clock() at the occurrence
  std::uint32_t samples = 0;    // the samples it made (1; more would break the weight-1 rule)
  std::uint64_t period = 0;     // the PERIOD field of the sample
  std::uint64_t sequence = 0;   // the sample's sequence number on its event (in its raw payload)
};

struct CpuLog {
  std::vector<std::byte> bytes;         // every written record, in ring order
  std::vector<WrittenRecord> written;   // in ring order (reservation order)
  std::vector<RingOp> ops;              // the kernel's steps on this ring
  std::uint64_t samples_attempted = 0;  // samples the workload generated
  std::uint64_t dropped_full = 0;       // no room (non-overwrite)
  std::uint64_t dropped_paused = 0;     // output paused
  std::uint64_t dropped_too_big = 0;    // larger than the ring: never fits
  std::uint64_t lost_reported = 0;      // sum of `lost` over LOST records written
  // Drops still pending at the end: no record was written into the ring
  // after them to carry a LOST record (the event exited, was disabled by a
  // stop request, or the run was cancelled). Linux never reports these
  // either (its rb->lost stays behind).
  std::uint64_t dropped_unreported = 0;
  AuxLog aux;
  std::vector<SampleHit> hits;          // the sampling events' sampled occurrences, in order
  std::vector<std::uint64_t> unsampled_after;  // per sampling event: occurrences after its last sample

  std::uint64_t dropped() const { return dropped_full + dropped_paused + dropped_too_big; }
};

// The sampling events' attributes, and where their samples keep the
// PERIOD field and the sequence number.
struct SamplingLog {
  std::uint64_t sample_period = 1;  // period mode
  std::uint64_t sample_freq = 0;    // >0: frequency mode (attr.freq)
  bool period_field = false;        // PERF_SAMPLE_PERIOD in sample_type
  std::uint64_t clock_offset_ns = 0;  // perf_clock() - the records' time
  std::vector<std::uint32_t> period_offsets;    // per sampling event: offset of PERIOD in a sample (0: none)
  std::vector<std::uint32_t> sequence_offsets;  // per sampling event: offset of the sequence number
};

struct KernelLog {
  Mode mode = Mode::normal;
  std::uint64_t seed = 0;  // of the AUX content
  std::uint64_t ring_bytes = 0;
  std::uint64_t watermark_bytes = 0;  // the rings' wakeup watermark (rb->watermark)
  std::vector<CpuLog> cpus;
  SamplingLog sampling;
};

// Overwrite mode: the consumer reports positions [begin, end) overwritten
// before it read them, found by the snapshot taken at `head`.
struct Gap {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::uint64_t head = 0;
};

// AUX data delivered in one PERF_RECORD_AUXTRACE record.
struct AuxChunk {
  std::uint64_t offset = 0;      // AUX position of data[0]
  std::vector<std::byte> data;   // padded to a multiple of 8
};

struct CpuOutput {
  std::vector<std::byte> bytes;  // delivered data-ring records, in delivery order
  std::vector<AuxChunk> aux;     // delivered AUX data, in delivery order
  std::vector<Gap> gaps;
  bool corrupt = false;          // the consumer declared the ring corrupt
  std::string corrupt_reason;
};

struct RunOutput {
  std::vector<CpuOutput> cpus;
  // When the writer put each PERF_RECORD_FINISHED_ROUND into its files, in
  // order (the round after it starts later): for round_order.
  std::vector<std::uint64_t> round_marks_ns;
};

}  // namespace ringsim::model
