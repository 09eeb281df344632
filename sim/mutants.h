// Deliberately broken consumers (RunConfig::mutant). Each is the production
// core with one step of its protocol broken, introduced as a wrapper of the
// backend interface (core/ is never touched), to show that the properties
// catch exactly the bug they are meant to catch:
//   early_release  stores tail = head as soon as it reads head, i.e. gives
//                  the space back before copying it out -> exactly_once;
//   no_pause       makes PAUSE_OUTPUT a no-op, so snapshots walk a ring the
//                  kernel is still writing -> no_torn_records/exactly_once;
//   drop_lost      (sim/oracle_sink.h) the output loses LOST records ->
//                  lost_accounting;
//   aux_early_tail stores aux_tail = aux_head as soon as it reads it, before
//                  copying the AUX data -> aux_delivery;
//   aux_no_reenable never re-enables an AUX event the PMU disabled
//                  (TRUNCATED, a full area) -> aux_truncation.
// And the asynchronous writer's, as wrappers of the disk interface (the
// weaknesses of the posted perf AIO code):
//   shared_offset     each write goes where the file currently ends, as
//                     with an offset taken from a shared descriptor ->
//                     no_overlap (two writes in flight at one offset);
//   reuse_buffer      a write counts as complete as soon as it is queued,
//                     so its buffer is refilled while the disk still reads
//                     it -> buffer_stable;
//   eagain_busy_loop  a refused submit is retried at once, forever ->
//                     liveness (the disk's livelock check);
//   error_resubmit    a write that failed hard is resubmitted whole,
//                     forever -> liveness / hard_error_handled;
//   eintr_retry_hidden  (serial) an interrupted pwrite is retried inside
//                     the backend (TEMP_FAILURE_RETRY), so the writer's
//                     EINTR retries miss it: every byte is right, only the
//                     printed counter is wrong -> counters_agree.
// And the staging gate's, with a reading fiber per CPU:
//   gate_marks_every_round  every round a reader drained is marked finished,
//                     not only the one that ends an epoch -> round_order.
// And the reading fibers' that help each other (readers_per_cpu=2):
//   help_staged_late  a fiber stages what it read from another CPU's ring
//                     only later (at its next acquire or flush), after it
//                     gave the ring's lock back (core/ring_share.h: the
//                     lock is held to the commit), so the ring's owner can
//                     stage newer records of that CPU first -> exactly_once
//                     (each CPU's records in order).
// And one of the simulated kernel, not of the consumer (a switch of
// sim/kernel.cc, KernelConfig::period_rule_ignored):
//   period_rule_ignored  the kernel samples every sample_period-th
//                     occurrence although the samples carry
//                     PERF_SAMPLE_PERIOD (Linux samples every one:
//                     perf_swevent_event) -> sampling_periods.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "core/records.h"
#include "core/ring_reader.h"
#include "sim/config.h"
#include "sim/disk.h"
#include "sim/session.h"

namespace ringsim::sim {

class MutantMapping {
 public:
  MutantMapping(SimMapping& base, Mutant mutant) : base_(base), mutant_(mutant) {}
  std::uint64_t data_size_bytes() const { return base_.data_size_bytes(); }
  std::uint64_t load_head() {
    const std::uint64_t head = base_.load_head();
    if (mutant_ == Mutant::early_release) base_.store_tail(head);
    return head;
  }
  void store_tail(std::uint64_t tail) { base_.store_tail(tail); }
  void copy_out(std::uint64_t position, std::span<std::byte> destination) {
    base_.copy_out(position, destination);
  }
  int pause_output(bool paused) { return mutant_ == Mutant::no_pause ? 0 : base_.pause_output(paused); }
  std::uint64_t aux_size_bytes() const { return base_.aux_size_bytes(); }
  bool aux_overwrite() const { return base_.aux_overwrite(); }
  bool aux_offset_heads() const { return base_.aux_offset_heads(); }
  std::uint32_t aux_cpu() const { return base_.aux_cpu(); }
  std::uint64_t load_aux_head() {
    const std::uint64_t head = base_.load_aux_head();
    if (mutant_ == Mutant::aux_early_tail && !base_.aux_overwrite()) {
      base_.store_aux_tail(head);
      released_aux_ = head;
    }
    return head;
  }
  void store_aux_tail(std::uint64_t tail) {
    if (mutant_ == Mutant::aux_early_tail && released_aux_ - tail < (std::uint64_t{1} << 62)) return;
    released_aux_ = tail;
    base_.store_aux_tail(tail);
  }
  void copy_aux(std::uint64_t position, std::span<std::byte> destination) { base_.copy_aux(position, destination); }
  int set_aux_enabled(bool enabled) {
    if (mutant_ == Mutant::aux_no_reenable && enabled && !base_.aux_overwrite()) return 0;
    return base_.set_aux_enabled(enabled);
  }

 private:
  SimMapping& base_;
  const Mutant mutant_;
  std::uint64_t released_aux_ = 0;
};

class MutantSession {
 public:
  using Mapping = MutantMapping;
  MutantSession(SimSession& base, Mutant mutant) : base_(base) {
    for (std::size_t i = 0; i < base_.mapping_count(); i++) {
      mappings_.push_back(std::make_unique<MutantMapping>(base_.mapping(i), mutant));
    }
  }
  std::size_t mapping_count() const { return base_.mapping_count(); }
  MutantMapping& mapping(std::size_t index) {
    base_.mapping(index);  // checks the mapping is live
    return *mappings_[index];
  }
  int poll(std::span<core::PollEvents> events, std::uint64_t timeout_ns) { return base_.poll(events, timeout_ns); }
  void release(std::size_t index) { base_.release(index); }
  std::uint64_t now_ns() const { return base_.now_ns(); }
  bool stop_requested() const { return base_.stop_requested(); }
  bool take_snapshot_request() { return base_.take_snapshot_request(); }
  void disable_events() { base_.disable_events(); }

 private:
  SimSession& base_;
  std::vector<std::unique_ptr<MutantMapping>> mappings_;
};

class MutantDisk {
 public:
  MutantDisk(SimDisk& base, Mutant mutant) : base_(base), mutant_(mutant), pretend_(base.config().slots) {}

  int open_output(std::uint32_t index) { return base_.open_output(index); }
  int close_output() { return base_.close_output(); }
  int remove_output() { return base_.remove_output(); }
  std::int64_t write_at(std::span<const std::byte> data, std::uint64_t offset) {
    std::int64_t n = base_.write_at(data, offset);
    // Bounded as the writer's own retries are: an EINTR storm still ends.
    for (int retry = 0; mutant_ == Mutant::eintr_retry_hidden && n == -EINTR && retry < 16; retry++) {
      n = base_.write_at(data, offset);
    }
    return n;
  }
  int truncate(std::uint64_t size) { return base_.truncate(size); }
  void sleep_ns(std::uint64_t duration_ns) { base_.sleep_ns(duration_ns); }

  int aio_submit(std::uint32_t slot, std::span<const std::byte> data, std::uint64_t offset) {
    Pretend& p = pretend_[slot];
    if (p.active) {
      // The write the writer believed complete is still in flight; the disk
      // reads the (refilled) buffer now.
      base_.force_complete(slot);
      base_.aio_error(slot);
      base_.aio_return(slot);
      p.active = false;
    }
    if (mutant_ == Mutant::shared_offset) offset = base_.current_size();
    requests_[slot] = Request{data, offset};
    if (mutant_ == Mutant::eagain_busy_loop) {
      int rc = base_.aio_submit(slot, data, offset);
      for (std::uint64_t spin = 0; rc == -EAGAIN && spin < 100'000'000; spin++) rc = base_.aio_submit(slot, data, offset);
      return rc;
    }
    return base_.aio_submit(slot, data, offset);
  }

  int aio_error(std::uint32_t slot) {
    if (mutant_ == Mutant::reuse_buffer) {
      Pretend& p = pretend_[slot];
      if (p.active) return 0;
      const int error = base_.aio_error(slot);
      if (error == EINPROGRESS) {
        p.active = true;
        p.result = static_cast<std::int64_t>(requests_[slot].data.size());
        return 0;
      }
      return error;
    }
    const int error = base_.aio_error(slot);
    if (mutant_ == Mutant::error_resubmit && error != 0 && error != EINPROGRESS && error != EINTR) {
      base_.aio_return(slot);
      const Request& r = requests_[slot];
      base_.aio_submit(slot, r.data, r.offset);
      return EINPROGRESS;
    }
    return error;
  }

  std::int64_t aio_return(std::uint32_t slot) {
    Pretend& p = pretend_[slot];
    if (mutant_ == Mutant::reuse_buffer && p.active) return p.result;
    return base_.aio_return(slot);
  }

  int aio_suspend(std::span<const std::uint32_t> slots, std::uint64_t timeout_ns) {
    return base_.aio_suspend(slots, timeout_ns);
  }

 private:
  struct Pretend {
    bool active = false;
    std::int64_t result = 0;
  };
  struct Request {
    std::span<const std::byte> data;
    std::uint64_t offset = 0;
  };
  SimDisk& base_;
  const Mutant mutant_;
  std::vector<Pretend> pretend_;
  std::map<std::uint32_t, Request> requests_;
};

static_assert(core::RingMapping<MutantMapping>);
static_assert(core::AuxMapping<MutantMapping>);
static_assert(core::RingSession<MutantSession>);
static_assert(core::TraceDisk<MutantDisk>);

// gate_marks_every_round: a reading fiber's ChunkSink, its gate's every
// call passed on, but a drained round ends with a marker whether or not it
// ended an epoch (the staging merges the marker into the round the gate
// just staged).
template <class Gate, class Staging>
class EveryRoundMarked {
 public:
  EveryRoundMarked(Gate& gate, Staging& staging) : gate_(gate), staging_(staging) {}
  std::span<std::byte> acquire(std::size_t m) { return gate_.acquire(m); }
  int commit(std::size_t m, std::uint64_t bytes, const core::RecordCounts& counts) {
    return gate_.commit(m, bytes, counts);
  }
  void abandon(std::size_t m) { gate_.abandon(m); }
  void note_gap(std::size_t m, core::PositionRange range, std::uint64_t position) { gate_.note_gap(m, range, position); }
  void note_corrupt(std::size_t m, core::PositionRange range, core::ReadStatus status) {
    gate_.note_corrupt(m, range, status);
  }
  std::uint32_t references(std::size_t m) { return gate_.references(m); }
  int end_round(bool all_drained) {
    const int rc = gate_.end_round(all_drained);
    return rc == 0 && all_drained ? staging_.end_round(true) : rc;
  }
  int flush() { return gate_.flush(); }

 private:
  Gate& gate_;
  Staging& staging_;
};

// help_staged_late: a reading fiber's ChunkSink, its gate's every call
// passed on, except that the chunks of helped rings (the loop's mappings
// from `own` on) are copied aside at commit and staged at the fiber's next
// acquire or flush.
template <class Gate>
class HelpedStagedLate {
 public:
  HelpedStagedLate(Gate& gate, std::size_t own, std::size_t ring_bytes)
      : gate_(gate), own_(own), buffer_(ring_bytes) {}
  std::span<std::byte> acquire(std::size_t m) {
    if (stage_pending() < 0) return {};
    return m < own_ ? gate_.acquire(m) : std::span<std::byte>(buffer_);
  }
  int commit(std::size_t m, std::uint64_t bytes, const core::RecordCounts& counts) {
    if (m < own_) return gate_.commit(m, bytes, counts);
    VERIFY(pending_.size() < 1'000'000);
    pending_.push_back(Pending{m, std::vector<std::byte>(buffer_.begin(), buffer_.begin() + bytes), counts});
    return 0;
  }
  void abandon(std::size_t m) {
    if (m < own_) gate_.abandon(m);
  }
  void note_gap(std::size_t m, core::PositionRange range, std::uint64_t position) { gate_.note_gap(m, range, position); }
  void note_corrupt(std::size_t m, core::PositionRange range, core::ReadStatus status) {
    gate_.note_corrupt(m, range, status);
  }
  std::uint32_t references(std::size_t m) { return gate_.references(m); }
  int end_round(bool all_drained) { return gate_.end_round(all_drained); }
  int flush() {
    const int rc = stage_pending();
    return rc < 0 ? rc : gate_.flush();
  }

 private:
  struct Pending {
    std::size_t mapping;
    std::vector<std::byte> bytes;
    core::RecordCounts counts;
  };
  int stage_pending() {
    std::vector<Pending> pending;
    pending.swap(pending_);
    for (const Pending& p : pending) {
      const std::span<std::byte> buffer = gate_.acquire(p.mapping);
      if (buffer.empty()) return -ECANCELED;
      std::copy(p.bytes.begin(), p.bytes.end(), buffer.begin());
      const int rc = gate_.commit(p.mapping, p.bytes.size(), p.counts);
      if (rc < 0) return rc;
    }
    return 0;
  }

  Gate& gate_;
  const std::size_t own_;
  std::vector<std::byte> buffer_;
  std::vector<Pending> pending_;
};

}  // namespace ringsim::sim
