#include "sim/ring.h"

#include <algorithm>
#include <cstring>

#include "core/verify.h"

namespace ringsim::sim {

SimRing::SimRing(const RingLayout& layout, model::CpuLog& log, Probes& probes, std::span<std::byte> area)
    : layout_(layout),
      writable_(core::writable(layout.mode)),
      backward_(core::backward(layout.mode)),
      watermark_bytes_(layout.watermark_bytes == 0 ? layout.size_bytes / 2
                                                   : std::min(layout.watermark_bytes, layout.size_bytes)),
      log_(log),
      probes_(probes),
      owned_(area.empty() ? layout.size_bytes : 0),
      data_(area.empty() ? std::span<std::byte>(owned_) : area) {
  VERIFY(data_.size() == layout.size_bytes);
  VERIFY(layout.size_bytes >= 4096);
  VERIFY((layout.size_bytes & (layout.size_bytes - 1)) == 0);
  VERIFY(watermark_bytes_ > 0);
}

std::uint64_t SimRing::used_bytes() const { return backward_ ? tail_ - rb_head_ : rb_head_ - tail_; }

// ring_buffer_has_space: CIRC_SPACE keeps one byte free.
SimRing::Output SimRing::check_space(std::uint64_t size, std::uint64_t need) const {
  if (!writable_) return Output::written;
  const std::uint64_t used = used_bytes();
  VERIFY(used < data_.size());
  if (need <= data_.size() - 1 - used) return Output::written;
  return size >= data_.size() ? Output::dropped_too_big : Output::dropped_full;
}

void SimRing::count_drop(Output result) {
  lost_pending_++;
  switch (result) {
    case Output::dropped_paused:
      log_.dropped_paused++;
      probes_.hit(Probe::paused_drop);
      break;
    case Output::dropped_too_big:
      log_.dropped_too_big++;
      probes_.hit(Probe::record_never_fits);
      break;
    case Output::dropped_full:
      log_.dropped_full++;
      probes_.hit(Probe::ring_full);
      break;
    case Output::written:
      VERIFY(false);
  }
}

SimRing::Handle SimRing::begin(const EventAttrs& writer, std::uint64_t size, bool sample, std::uint64_t now_ns,
                               bool past_pause_check) {
  VERIFY(size >= 8);
  VERIFY(size % 8 == 0);
  Handle h;
  h.writer = &writer;
  h.size = size;
  h.sample = sample;
  model::RingOp op;
  op.kind = model::RingOp::Kind::begin;
  op.size = static_cast<std::uint32_t>(size);
  op.lost_size = lost_bytes(writer.identity);
  op.sample = sample;
  op.wakeup_events = writer.watermark ? 0 : writer.wakeup_events;
  op.past_check = past_pause_check;
  if (paused_ && !past_pause_check) {
    h.result = Output::dropped_paused;
    op.result = model::RingOp::paused;
    log_.ops.push_back(op);
    count_drop(h.result);
    return h;
  }
  if (nest_++ == 0) outer_saved_mark_ = wakeup_mark_;
  h.open = true;
  const std::uint64_t lost = lost_pending_;
  const std::uint64_t need = size + (lost > 0 ? op.lost_size : 0);
  h.result = check_space(size, need);
  if (h.result != Output::written) {
    op.result = h.result == Output::dropped_too_big ? model::RingOp::too_big : model::RingOp::full;
    log_.ops.push_back(op);
    count_drop(h.result);
    return h;
  }
  const std::uint64_t at = backward_ ? rb_head_ - need : rb_head_;
  rb_head_ = backward_ ? rb_head_ - need : rb_head_ + need;
  h.lost = lost;
  h.lost_position = at;
  h.position = at + (lost > 0 ? op.lost_size : 0);
  lost_pending_ = 0;
  if (lost > 0) {
    log_.lost_reported += lost;
    probes_.hit(Probe::lost_emitted);
    if (!sample) probes_.hit(Probe::lost_with_sideband);
  }
  if (size > data_.size()) probes_.hit(Probe::oversize_overwrite);
  // The byte watermark, once per reservation.
  const std::uint64_t written = backward_ ? 0 - rb_head_ : rb_head_;
  if (written - wakeup_mark_ > watermark_bytes_) {
    wakeup_mark_ += watermark_bytes_;
    probes_.hit(Probe::wakeup_watermark);
  }
  op.position = at;
  op.lost = lost;
  log_.ops.push_back(op);
  // The log is in ring order: going backward, the record (above) comes
  // before its LOST record (below), as a reader walking down meets them.
  if (backward_) {
    h.record_index = log_.written.size();
    log_record(h, h.position, size, 0, now_ns);
    if (lost > 0) {
      h.lost_index = log_.written.size();
      log_record(h, h.lost_position, op.lost_size, lost, now_ns);
    }
  } else {
    if (lost > 0) {
      h.lost_index = log_.written.size();
      log_record(h, h.lost_position, op.lost_size, lost, now_ns);
    }
    h.record_index = log_.written.size();
    log_record(h, h.position, size, 0, now_ns);
  }
  return h;
}

void SimRing::log_record(const Handle& h, std::uint64_t position, std::uint64_t size, std::uint64_t lost,
                         std::uint64_t now_ns) {
  model::WrittenRecord r;
  r.position = position;
  r.offset = log_.bytes.size();
  r.size = static_cast<std::uint32_t>(size);
  r.type = lost > 0 ? PERF_RECORD_LOST : 0;  // the record's own type is filled by write()
  r.time_ns = now_ns;
  r.lost = lost;
  r.event = h.writer->identity.id;
  log_.bytes.resize(log_.bytes.size() + size);
  log_.written.push_back(r);
}

void SimRing::probe_overwrite(std::uint64_t position, std::uint64_t size) {
  if (writable_) return;
  // The bytes about to be replaced belonged to positions one area away.
  const std::uint64_t ring = data_.size();
  const std::uint64_t old_position = backward_ ? position + ring : position - ring;
  const bool ever_written = backward_ ? (0 - old_position) - 1 < (std::uint64_t{1} << 62)
                                      : old_position < (std::uint64_t{1} << 62) && position >= ring;
  const bool unread = !reader_head_known_ || (backward_ ? (reader_head_ - old_position) - 1 < (std::uint64_t{1} << 62)
                                                        : old_position - reader_head_ < (std::uint64_t{1} << 62));
  if (ever_written && unread && size > 0) probes_.hit(Probe::overwrite_unread);
}

void SimRing::copy_in(std::uint64_t position, std::span<const std::byte> bytes) {
  const std::uint64_t ring = data_.size();
  // A record larger than the area (read-only rings only) wraps onto its own
  // start: copy it whole, in order, as the kernel does.
  std::uint64_t done = 0;
  for (std::uint32_t part = 0; done < bytes.size(); part++) {
    VERIFY(part <= bytes.size() / ring + 2);
    const std::uint64_t index = (position + done) & (ring - 1);
    const std::uint64_t n = std::min<std::uint64_t>(bytes.size() - done, ring - index);
    std::memcpy(data_.data() + index, bytes.data() + done, n);
    if (part == 1) probes_.hit(Probe::wrap_inside_record);
    done += n;
  }
}

void SimRing::write(const Handle& h, std::span<const std::byte> record, std::uint64_t now_ns) {
  VERIFY(h.result == Output::written);
  VERIFY(record.size() == h.size);
  const EventIdentity& writer = h.writer->identity;
  if (h.lost > 0) {
    const std::uint32_t n = lost_bytes(writer);
    lost_scratch_.resize(n);
    build_lost(lost_scratch_, writer, now_ns, h.lost);
    probe_overwrite(h.lost_position, n);
    copy_in(h.lost_position, lost_scratch_);
    model::WrittenRecord& lost = log_.written[h.lost_index];
    VERIFY(lost.size == n);
    lost.copy_seq = ++copies_;
    std::memcpy(log_.bytes.data() + lost.offset, lost_scratch_.data(), n);
  }
  probe_overwrite(h.position, record.size());
  copy_in(h.position, record);
  model::WrittenRecord& r = log_.written[h.record_index];
  VERIFY(r.size == record.size());
  r.copy_seq = ++copies_;
  perf_event_header header;
  std::memcpy(&header, record.data(), sizeof header);
  r.type = header.type;
  std::memcpy(log_.bytes.data() + r.offset, record.data(), record.size());
}

void SimRing::end(const Handle& h, std::uint64_t now_ns) {
  if (!h.open) return;  // a paused drop takes no handle
  VERIFY(nest_ > 0);
  model::RingOp op;
  op.kind = model::RingOp::Kind::end;
  // perf_output_sample: wakeup_events counts samples, on the ring.
  const std::uint32_t wakeup_events = h.writer->watermark ? 0 : h.writer->wakeup_events;
  if (h.result == Output::written && h.sample && wakeup_events > 0 && ++events_ >= wakeup_events) {
    events_ -= wakeup_events;
    wakeup_mark_++;
    probes_.hit(Probe::wakeup_events);
  }
  if (--nest_ > 0) {
    op.head = data_head_;
    probes_.hit(Probe::nested_writer);
    log_.ops.push_back(op);
    return;
  }
  // (B): in the real kernel a write barrier orders the bytes before head.
  data_head_ = rb_head_;
  for (; unpublished_ < log_.written.size(); unpublished_++) log_.written[unpublished_].published_ns = now_ns;
  op.head = data_head_;
  op.woke = outer_saved_mark_ != wakeup_mark_;
  if (op.woke) poll_pending_ = true;
  log_.ops.push_back(op);
}

SimRing::Output SimRing::output(const EventAttrs& writer, std::span<const std::byte> record, std::uint64_t now_ns) {
  perf_event_header header;
  std::memcpy(&header, record.data(), sizeof header);
  const Handle h = begin(writer, record.size(), header.type == PERF_RECORD_SAMPLE, now_ns);
  if (h.result == Output::written) write(h, record, now_ns);
  end(h, now_ns);
  return h.result;
}

void SimRing::abandon_pending() {
  log_.dropped_unreported += lost_pending_;
  lost_pending_ = 0;
}

void SimRing::store_tail(std::uint64_t tail) {
  VERIFY(writable_);  // the mapping is read-only otherwise
  // (A): the kernel reads tail with a full barrier before reusing space.
  VERIFY((backward_ ? tail - data_head_ : data_head_ - tail) <= data_.size());
  VERIFY((backward_ ? tail_ - tail : tail - tail_) <= data_.size());
  tail_ = tail;
  model::RingOp op;
  op.kind = model::RingOp::Kind::tail;
  op.position = tail;
  log_.ops.push_back(op);
}

void SimRing::note_read(std::uint64_t position, std::uint64_t size) {
  if (writable_) return;
  model::RingOp op;
  op.kind = model::RingOp::Kind::read;
  op.position = position;
  op.size = static_cast<std::uint32_t>(size);
  op.output_paused = paused_;
  log_.ops.push_back(op);
}

void SimRing::set_paused(bool paused) {
  paused_ = paused;
  model::RingOp op;
  op.kind = paused ? model::RingOp::Kind::pause : model::RingOp::Kind::resume;
  log_.ops.push_back(op);
}

bool SimRing::poll(bool hangup, bool per_task, bool all_exited) {
  model::RingOp op;
  op.kind = model::RingOp::Kind::poll;
  op.hangup = hangup;
  op.per_task = per_task;
  op.all_exited = all_exited;
  if (!hangup) {
    op.readable = poll_pending_;
    poll_pending_ = false;
  }
  log_.ops.push_back(op);
  return op.readable;
}

void SimRing::raise_wakeup() {
  poll_pending_ = true;
  model::RingOp op;
  op.kind = model::RingOp::Kind::wake;
  log_.ops.push_back(op);
}

bool SimRing::holds_unread_data() const {
  if (writable_) return data_head_ != tail_;
  return !reader_head_known_ ? data_head_ != 0 : data_head_ != reader_head_;
}

EventPoll poll_event(SimRing* ring, bool has_ring, bool exited, bool per_task) {
  VERIFY(!exited || per_task);  // only an event that follows a task exits
  EventPoll result;
  if (exited) {
    result.hangup = true;
    if (ring != nullptr) ring->poll(true, per_task, true);  // POLLIN stays pending: it is not returned
    return result;
  }
  if (!has_ring) {
    result.hangup = true;
    return result;
  }
  if (ring != nullptr) result.readable = ring->poll(false, per_task, false);
  return result;
}

}  // namespace ringsim::sim
