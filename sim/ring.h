// One perf data ring as the Linux kernel manages it (kernel/events/
// ring_buffer.c: __perf_output_begin, perf_output_put_handle; core.c:
// perf_output_sample), in plain logic with no fibers: the kernel's producer
// fibers, the stateful properties and the conformance suite's simulated
// driver all drive it directly. The rules it follows are the model's
// (model/kernel_rules.h), which replays every step logged here; in short:
//   - The mapping decides the mode: writable (PROT_WRITE) rings honour
//     data_tail, read-only rings overwrite; write_backward decides the
//     direction. Positions are free-running u64 byte counts (backward:
//     0 - bytes written); index = position & (size - 1).
//   - A write is begin (pause check, then space check on a writable ring:
//     CIRC_SPACE keeps one byte free; then the reservation, LOST record
//     first when drops are pending), the copy, and end (the outermost
//     writer publishes data_head and wakes the reader). A writer may be
//     interrupted between begin and end by another (nesting: only the
//     outermost publishes), and a reader may pause the ring in between: a
//     write already past its check still lands (the PAUSE_OUTPUT race).
//   - Drops (paused, full, never fits) are counted on the ring and reported
//     by a PERF_RECORD_LOST written with the next record that fits, of any
//     type and any event sharing the ring; it carries that writer's id and
//     trailer. Nothing else reports them: drops pending at the end stay
//     unreported (an exit does not wait for room).
//   - A read-only ring takes every record, even one larger than the area,
//     whose copy wraps onto its own start.
//   - Wakeups: the byte watermark (attr.watermark ? wakeup_watermark : half
//     the area) and wakeup_events (samples only, only without
//     attr.watermark: a union) share the ring's wakeup mark; POLLIN is
//     edge-triggered and belongs to the ring, not to an event.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/ring_mode.h"
#include "model/log.h"
#include "sim/probes.h"
#include "sim/sample.h"

namespace ringsim::sim {

// An event that writes into a ring: its identity (id, pid, tid, cpu,
// record layout) and its wakeup attributes.
struct EventAttrs {
  EventIdentity identity;
  std::uint32_t wakeup_events = 0;  // ignored when `watermark` is set (a union in perf_event_attr)
  bool watermark = false;           // attr.watermark: wake by bytes (wakeup_watermark) only
};

struct RingLayout {
  std::uint64_t size_bytes = 4096;    // a power of two, at least 4096
  core::RingMode mode = core::RingMode::normal;
  std::uint64_t watermark_bytes = 0;  // attr.wakeup_watermark with attr.watermark; 0: half the area
};

class SimRing {
 public:
  enum class Output : std::uint8_t { written, dropped_full, dropped_paused, dropped_too_big };

  // A write in progress (perf_output_handle).
  struct Handle {
    Output result = Output::written;
    std::uint64_t position = 0;       // of the record
    std::uint64_t lost_position = 0;  // of the LOST record before it (lost > 0)
    std::uint64_t size = 0;
    std::uint64_t lost = 0;
    std::size_t record_index = 0;     // in the log
    std::size_t lost_index = 0;
    const EventAttrs* writer = nullptr;
    bool sample = false;
    bool open = false;                // a handle was taken (not a paused drop)
  };

  // The data area is the ring's own memory, or `area` (layout.size_bytes
  // bytes, outliving the ring): the pages a consumer mapped
  // (sim/interpose/).
  SimRing(const RingLayout& layout, model::CpuLog& log, Probes& probes, std::span<std::byte> area = {});
  SimRing(const SimRing&) = delete;  // data_ may point into owned_
  SimRing& operator=(const SimRing&) = delete;

  // __perf_output_begin for a record of `size` bytes of `writer`.
  // `past_pause_check`: the writer tested the pause flag earlier and went
  // on (a write already past its check when PAUSE_OUTPUT returned).
  Handle begin(const EventAttrs& writer, std::uint64_t size, bool sample, std::uint64_t now_ns,
               bool past_pause_check = false);
  // The copy: the LOST record (if any) and `record` into the reservation.
  void write(const Handle& handle, std::span<const std::byte> record, std::uint64_t now_ns);
  // The reader copied `size` bytes at `position` (logged for read-only
  // rings, with whether output was paused).
  void note_read(std::uint64_t position, std::uint64_t size);
  // perf_output_put_handle (the outermost publishes data_head at now_ns).
  void end(const Handle& handle, std::uint64_t now_ns);
  // The three at once (no interruption).
  Output output(const EventAttrs& writer, std::span<const std::byte> record, std::uint64_t now_ns);

  // Drops counted and not yet reported by a LOST record.
  std::uint64_t lost_pending() const { return lost_pending_; }
  // No record will ever be written again (the events exited or were
  // disabled, or the run ended): pending drops stay unreported.
  void abandon_pending();

  // Reader side.
  std::uint64_t data_size_bytes() const { return data_.size(); }
  core::RingMode mode() const { return layout_.mode; }
  const RingLayout& layout() const { return layout_; }
  std::uint64_t head() const { return data_head_; }
  std::uint64_t tail() const { return tail_; }
  void store_tail(std::uint64_t tail);
  std::span<const std::byte> data() const { return data_; }
  void set_paused(bool paused);
  bool paused() const { return paused_; }
  // Overwrite mode: the head a paused reader saw (for the
  // overwrite_unread probe).
  void note_reader_head(std::uint64_t head) {
    reader_head_ = head;
    reader_head_known_ = true;
  }
  // Test hooks: the bytes of the data area and the head, to corrupt the
  // ring on purpose.
  std::span<std::byte> data_for_test() { return data_; }
  void set_head_for_test(std::uint64_t head) { data_head_ = rb_head_ = head; }

  // poll of the ring: takes the pending wakeup (edge-triggered), unless
  // `hangup` (every event of the ring exited and follows a task), which is
  // returned alone. Logged for the model.
  bool poll(bool hangup, bool per_task, bool all_exited);
  bool wakeup_pending() const { return poll_pending_; }
  // A wakeup from elsewhere (the AUX area's watermark, a truncation):
  // perf_output_wakeup on this ring.
  void raise_wakeup();
  // Bytes the reader has not taken yet (writable), or written since the
  // last snapshot (read-only).
  bool holds_unread_data() const;
  std::uint32_t nesting() const { return nest_; }

  // For the direct test doubles (core/testing), which have no events: a
  // poll of the ring as if its events followed a task that exited when
  // hang_up() was called.
  bool take_wakeup() { return poll(hung_up_, true, hung_up_); }
  void hang_up() { hung_up_ = true; }
  bool hung_up() const { return hung_up_; }

 private:
  std::uint64_t used_bytes() const;
  Output check_space(std::uint64_t size, std::uint64_t need) const;
  void log_record(const Handle& h, std::uint64_t position, std::uint64_t size, std::uint64_t lost,
                  std::uint64_t now_ns);
  void copy_in(std::uint64_t position, std::span<const std::byte> bytes);
  void count_drop(Output result);
  void probe_overwrite(std::uint64_t position, std::uint64_t size);

  const RingLayout layout_;
  const bool writable_;
  const bool backward_;
  const std::uint64_t watermark_bytes_;
  model::CpuLog& log_;
  Probes& probes_;
  std::vector<std::byte> owned_;
  std::span<std::byte> data_;
  std::uint64_t rb_head_ = 0;    // reservations
  std::uint64_t data_head_ = 0;  // published
  std::uint64_t tail_ = 0;
  std::uint64_t wakeup_mark_ = 0;  // rb->wakeup
  std::uint64_t events_ = 0;       // rb->events
  std::uint64_t lost_pending_ = 0;
  std::uint64_t copies_ = 0;
  std::size_t unpublished_ = 0;  // log_.written from here on is not yet published
  std::uint32_t nest_ = 0;
  std::uint64_t outer_saved_mark_ = 0;
  std::uint64_t reader_head_ = 0;
  bool reader_head_known_ = false;
  bool paused_ = false;
  bool poll_pending_ = false;
  bool hung_up_ = false;
  std::vector<std::byte> lost_scratch_;
};

// perf_poll of one event (kernel/events/core.c): POLLHUP alone once the
// event has exited (is_event_hup: its task exited; a system-wide event
// never exits, a disabled one has not), POLLHUP when the event has no ring
// (`has_ring` false: never mapped, or unmapped), else the pending wakeup
// of the ring it writes into (POLLIN, taken: edge-triggered, one flag for
// every event sharing the ring). `ring` is null for a mapping without data
// pages, which polls 0.
struct EventPoll {
  bool readable = false;
  bool hangup = false;
};
EventPoll poll_event(SimRing* ring, bool has_ring, bool exited, bool per_task);

}  // namespace ringsim::sim
