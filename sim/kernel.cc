#include "sim/kernel.h"

#include <algorithm>
#include <cstring>

#include "core/verify.h"
#include "model/aux_content.h"

namespace ringsim::sim {

const char* to_string(SizeMix mix) {
  switch (mix) {
    case SizeMix::small: return "small";
    case SizeMix::mixed: return "mixed";
    case SizeMix::large: return "large";
    case SizeMix::huge: return "huge";
  }
  return "unknown";
}

SimRing::SimRing(const KernelConfig& config, const EventIdentity& identity, model::CpuLog& log,
                 Probes& probes)
    : mode_(config.mode),
      identity_(identity),
      wakeup_events_(config.wakeup_events),
      watermark_bytes_(config.wakeup_watermark_bytes == 0
                           ? config.ring_bytes / 2
                           : std::min(config.wakeup_watermark_bytes, config.ring_bytes)),
      log_(log),
      probes_(probes),
      data_(config.ring_bytes) {
  VERIFY(config.ring_bytes >= 4096);
  VERIFY((config.ring_bytes & (config.ring_bytes - 1)) == 0);
  VERIFY(watermark_bytes_ > 0);
}

SimRing::Output SimRing::output(std::span<const std::byte> record, std::uint64_t now_ns) {
  VERIFY(!hung_up_);
  VERIFY(!disabled_);
  VERIFY(record.size() >= 8);
  VERIFY(record.size() % 8 == 0);
  const std::uint64_t size = record.size();
  if (paused_) {
    lost_pending_++;
    log_.dropped_paused++;
    probes_.hit(Probe::paused_drop);
    return Output::dropped_paused;
  }
  if (size > data_.size()) {
    lost_pending_++;
    log_.dropped_too_big++;
    probes_.hit(Probe::record_never_fits);
    return Output::dropped_too_big;
  }
  const std::uint64_t need = size + (lost_pending_ > 0 ? kLostBytes : 0);
  if (mode_ == core::RingMode::normal) {
    const std::uint64_t used = head_ - tail_;
    VERIFY(used <= data_.size());
    if (used + need > data_.size()) {
      lost_pending_++;
      log_.dropped_full++;
      probes_.hit(Probe::ring_full);
      return Output::dropped_full;
    }
  }
  if (lost_pending_ > 0) {
    build_lost(lost_scratch_, identity_, now_ns, lost_pending_);
    write_record(lost_scratch_, now_ns, lost_pending_);
    lost_pending_ = 0;
  }
  write_record(record, now_ns, 0);
  count_wakeup(need);
  return Output::written;
}

bool SimRing::flush_lost(std::uint64_t now_ns) {
  VERIFY(!hung_up_);
  VERIFY(!disabled_ || lost_pending_ == 0);
  if (lost_pending_ == 0) return true;
  if (paused_) return false;
  if (mode_ == core::RingMode::normal && (head_ - tail_) + kLostBytes > data_.size()) return false;
  build_lost(lost_scratch_, identity_, now_ns, lost_pending_);
  write_record(lost_scratch_, now_ns, lost_pending_);
  lost_pending_ = 0;
  count_wakeup(kLostBytes);
  return true;
}

void SimRing::write_record(std::span<const std::byte> record, std::uint64_t now_ns, std::uint64_t lost) {
  const std::uint64_t size = record.size();
  const std::uint64_t ring = data_.size();
  std::uint64_t position;
  if (mode_ == core::RingMode::normal) {
    position = head_;
  } else {
    position = head_ - size;
    // The bytes about to be replaced belonged to positions one area up.
    const std::uint64_t old_position = position + ring;
    const bool ever_written = (0 - old_position) - 1 < (std::uint64_t{1} << 62);
    const bool unread = !reader_head_known_ || (reader_head_ - old_position) - 1 < (std::uint64_t{1} << 62);
    if (ever_written && unread) probes_.hit(Probe::overwrite_unread);
  }
  const std::uint64_t index = position & (ring - 1);
  const std::uint64_t first = std::min(size, ring - index);
  std::memcpy(data_.data() + index, record.data(), first);
  if (first < size) {
    std::memcpy(data_.data(), record.data() + first, size - first);
    probes_.hit(Probe::wrap_inside_record);
  }
  // (B): in the real kernel a write barrier orders the bytes before head.
  head_ = mode_ == core::RingMode::normal ? head_ + size : position;

  perf_event_header header;
  std::memcpy(&header, record.data(), sizeof header);
  model::WrittenRecord written;
  written.position = position;
  written.offset = log_.bytes.size();
  written.size = static_cast<std::uint32_t>(size);
  written.type = header.type;
  written.time_ns = now_ns;
  written.lost = lost;
  log_.bytes.insert(log_.bytes.end(), record.begin(), record.end());
  log_.written.push_back(written);
  if (lost > 0) {
    log_.lost_reported += lost;
    probes_.hit(Probe::lost_emitted);
  }
}

void SimRing::count_wakeup(std::uint64_t bytes) {
  bool wake = false;
  if (wakeup_events_ > 0 && ++events_since_wakeup_ >= wakeup_events_) {
    events_since_wakeup_ = 0;
    probes_.hit(Probe::wakeup_events);
    wake = true;
  }
  bytes_written_ += bytes;
  if (bytes_written_ - wakeup_mark_ > watermark_bytes_) {
    wakeup_mark_ += watermark_bytes_;
    probes_.hit(Probe::wakeup_watermark);
    wake = true;
  }
  if (wake) wakeup_pending_ = true;
}

void SimRing::store_tail(std::uint64_t tail) {
  VERIFY(mode_ == core::RingMode::normal);  // the mapping is read-only otherwise
  // (A): the kernel reads tail with a full barrier before reusing space.
  VERIFY(head_ - tail <= data_.size());
  VERIFY(tail - tail_ <= data_.size());
  tail_ = tail;
}

bool SimRing::take_wakeup() {
  const bool pending = wakeup_pending_;
  wakeup_pending_ = false;
  return pending;
}

void SimRing::disable(std::uint64_t now_ns) {
  VERIFY(!disabled_);
  if (!hung_up_ && !flush_lost(now_ns)) {
    log_.dropped_unreported += lost_pending_;
    lost_pending_ = 0;
  }
  disabled_ = true;
}

void SimRing::abandon_pending() {
  log_.dropped_unreported += lost_pending_;
  lost_pending_ = 0;
}

void SimRing::hang_up() {
  VERIFY(!hung_up_);
  hung_up_ = true;
}

bool SimRing::holds_unread_data() const {
  if (mode_ == core::RingMode::normal) return head_ != tail_;
  return !reader_head_known_ ? head_ != 0 : head_ != reader_head_;
}

Kernel::Kernel(Scheduler& scheduler, const KernelConfig& config, model::KernelLog& log, Probes& probes)
    : scheduler_(scheduler),
      config_(config),
      log_(log),
      probes_(probes),
      aux_done_queue_(scheduler),
      poll_queue_(scheduler),
      space_queue_(scheduler),
      exit_queue_(scheduler) {
  VERIFY(config_.cpus >= 1);
  VERIFY(config_.burst_records_max >= 1);
  log.mode = config_.mode == core::RingMode::normal ? model::Mode::normal : model::Mode::backward;
  log.ring_bytes = config_.ring_bytes;
  log.cpus.assign(config_.cpus, model::CpuLog{});
  for (std::uint32_t cpu = 0; cpu < config_.cpus; cpu++) {
    EventIdentity identity;
    identity.id = 1000 + cpu;
    identity.pid = 4000 + cpu;
    identity.tid = 4000 + cpu;
    identity.cpu = cpu;
    rings_.push_back(std::make_unique<SimRing>(config_, identity, log.cpus[cpu], probes_));
    auxes_.push_back(std::make_unique<SimAux>(config_.aux, log.cpus[cpu].aux));
  }
  log.seed = config_.payload_seed;
  aux_done_.assign(config_.cpus, !has_aux());
}

void Kernel::disable_all() {
  if (disabled_) return;
  disabled_ = true;
  for (std::size_t cpu = 0; cpu < rings_.size(); cpu++) {
    SimRing& ring = *rings_[cpu];
    if (ring.disabled()) continue;
    if (has_aux()) {
      aux_stop_output(cpu);  // the PMU stops: an open transaction ends now
      aux(cpu).enabled = false;
    }
    const std::uint64_t reported_before = log_.cpus[cpu].lost_reported;
    ring.disable(scheduler_.now_ns());
    const std::uint64_t reported = log_.cpus[cpu].lost_reported - reported_before;
    if (reported > 0) scheduler_.trace(TraceKind::lost_emitted, cpu, reported);
  }
  space_queue_.notify_all();
  exit_queue_.notify_all();
}

void Kernel::start() {
  for (std::size_t cpu = 0; cpu < rings_.size(); cpu++) {
    scheduler_.spawn("producer" + std::to_string(cpu), [this, cpu] { produce(cpu); });
    if (has_aux()) scheduler_.spawn("aux" + std::to_string(cpu), [this, cpu] { aux_produce(cpu); });
  }
}

SimRing::Output Kernel::output(std::size_t cpu, std::span<const std::byte> record) {
  SimRing& ring = *rings_[cpu];
  const std::uint64_t lost_before = ring.lost_pending();
  const bool wakeup_before = ring.wakeup_pending();
  const SimRing::Output result = ring.output(record, scheduler_.now_ns());
  if (result == SimRing::Output::written && lost_before > 0) {
    scheduler_.trace(TraceKind::lost_emitted, cpu, lost_before);
  }
  scheduler_.trace(result == SimRing::Output::written ? TraceKind::record_written : TraceKind::record_dropped, cpu,
                   record.size(), ring.head());
  if (ring.wakeup_pending()) {
    if (!wakeup_before) scheduler_.trace(TraceKind::wakeup, cpu);
    poll_queue_.notify_all();
  }
  return result;
}

void Kernel::aux_drop_reference(std::size_t cpu, bool by_writer) {
  SimAux& a = aux(cpu);
  VERIFY(a.refcount > 0);
  a.refcount--;
  if (a.refcount > 0) return;
  if (by_writer) {
    a.violations.push_back("cpu " + std::to_string(cpu) +
                           ": the last AUX reference was dropped by the writer (atomic context), not by the unmap");
  }
  a.freed = true;
}

void Kernel::aux_end(std::size_t cpu, std::uint64_t bytes, std::uint64_t flags, bool by_writer, bool flush) {
  SimAux& a = aux(cpu);
  SimRing& ring = *rings_[cpu];
  std::uint64_t report = bytes;
  if (a.config.late_reports) {
    a.pending += bytes;
    const bool crosses = (a.head + a.pending) / kAuxPageBytes > a.head / kAuxPageBytes;
    if (!crosses && !flush && (flags & PERF_AUX_FLAG_TRUNCATED) == 0) {
      // The hardware cannot interrupt here: aux_head stays where it was.
      if (bytes > 0) probes_.hit(Probe::aux_late_report);
      if (by_writer) aux_drop_reference(cpu, true);
      return;
    }
    report = a.pending;
    a.pending = 0;
  }
  if (report == 0 && flags == 0) {
    if (by_writer) aux_drop_reference(cpu, true);
    return;
  }
  model::AuxEnd end;
  end.offset = a.head;
  end.size = report;
  end.flags = flags | (a.config.overwrite ? PERF_AUX_FLAG_OVERWRITE : 0);
  end.time_ns = scheduler_.now_ns();
  a.head += report;  // the driver publishes aux_head after the data (release; (C') pairs with it)
  bool wake = false;
  if (!a.config.overwrite) {
    // rb_need_aux_wakeup: only in non-overwrite mode, so the watermark is
    // never 0 here.
    VERIFY(a.watermark_bytes > 0);
    if (a.head - a.wakeup >= a.watermark_bytes) {
      a.wakeup = a.head - a.head % a.watermark_bytes;
      wake = true;
      probes_.hit(Probe::aux_wakeup);
    }
  } else {
    probes_.hit(Probe::aux_watermark_zero);
  }
  if (flags & PERF_AUX_FLAG_TRUNCATED) {
    wake = true;
    a.enabled = false;
    probes_.hit(Probe::aux_truncated);
  }
  if (flags & PERF_AUX_FLAG_PARTIAL) probes_.hit(Probe::aux_partial);
  end.head_after = a.head;
  end.wakeup_after = a.wakeup;
  end.woke = wake;
  a.log.ends.push_back(end);
  a.log.head = a.head;
  if (!ring.hung_up() && !ring.disabled()) {
    std::byte record[kAuxRecordBytes];
    build_aux_record(record, ring.identity().id, ring.identity().pid, ring.identity().cpu, scheduler_.now_ns(),
                     end.offset, end.size, end.flags);
    output(cpu, record);
  }
  scheduler_.trace(TraceKind::aux_end, cpu, a.head, end.flags);
  if (wake) {
    ring.raise_wakeup();
    scheduler_.trace(TraceKind::aux_wakeup, cpu, a.head);
    poll_queue_.notify_all();
  }
  if (by_writer) aux_drop_reference(cpu, true);
}

void Kernel::aux_stop_output(std::size_t cpu) {
  if (!has_aux()) return;
  SimAux& a = aux(cpu);
  if (a.handle_open) {
    a.handle_open = false;
    probes_.hit(Probe::aux_output_stop);
    aux_end(cpu, a.handle_bytes, a.handle_flags, false, true);
    aux_drop_reference(cpu, false);  // the transaction's reference, dropped by the stopper
  } else if (a.pending > 0) {
    aux_end(cpu, 0, 0, false, true);
  }
}

void Kernel::aux_set_enabled(std::size_t cpu, bool enabled) {
  SimAux& a = aux(cpu);
  if (!enabled) aux_stop_output(cpu);
  a.paused = !enabled;
}

void Kernel::aux_unmap(std::size_t cpu) {
  SimAux& a = aux(cpu);
  VERIFY(a.mmap_count == 1);
  a.mmap_count = 0;
  if (a.config.output_stop_on_unmap) aux_stop_output(cpu);
  aux_drop_reference(cpu, false);  // the mapping's own
}

void Kernel::aux_produce(std::size_t cpu) {
  SimAux& a = aux(cpu);
  const AuxConfig& c = config_.aux;
  DecisionSource d(config_.payload_seed * 0x9e3779b97f4a7c15ull + 1000 + cpu, false);
  for (std::uint32_t burst = 0; burst < c.bursts; burst++) {
    if (scheduler_.cancelled() || disabled_ || !a.enabled) break;
    const std::uint64_t gap_ns = d.between(0, c.gap_ns_max);
    if (gap_ns > 0 && scheduler_.sleep_for(gap_ns) == Wake::cancelled) break;
    const std::uint64_t attempted = 8 * d.between(1, c.burst_bytes_max / 8);
    const bool partial = d.chance(c.partial_per_million);
    if (disabled_ || !a.enabled) break;
    if (a.paused) continue;  // a snapshot is being taken: the hardware is stopped
    // begin: the area must be mapped, and a reference taken only if one is
    // still held (aux_mmap_count first, then aux_refcount).
    if (a.mmap_count == 0 || a.refcount == 0) break;
    a.refcount++;
    std::uint64_t n = attempted;
    std::uint64_t flags = partial ? PERF_AUX_FLAG_PARTIAL : 0;
    if (!c.overwrite) {
      const std::uint64_t space = a.space();
      if (space == 0) {
        a.log.full_disables++;
        a.log.truncated_bytes += attempted;
        a.log.attempted_bytes += attempted;
        a.enabled = false;
        probes_.hit(Probe::aux_full_disable);
        rings_[cpu]->raise_wakeup();
        poll_queue_.notify_all();
        aux_drop_reference(cpu, true);
        break;
      }
      if (space < attempted) {
        n = space;
        flags |= PERF_AUX_FLAG_TRUNCATED;
      }
    }
    a.log.attempted_bytes += attempted;
    a.log.truncated_bytes += attempted - n;
    // The hardware writes.
    if (a.freed || a.mmap_count == 0) {
      a.violations.push_back("cpu " + std::to_string(cpu) + ": the PMU wrote into an unmapped AUX area");
    } else {
      const std::uint64_t at = a.head + a.pending;
      const auto cpu32 = static_cast<std::uint32_t>(cpu);
      std::uint64_t word_index = UINT64_MAX, word = 0;
      for (std::uint64_t i = 0; i < n; i++) {
        const std::uint64_t p = at + i;
        if ((p >> 3) != word_index) {
          word_index = p >> 3;
          word = model::aux_word(config_.payload_seed, cpu32, word_index);
        }
        a.data[p & (c.size_bytes - 1)] = static_cast<std::byte>(word >> (8 * (p & 7)));
      }
    }
    a.handle_open = true;
    a.handle_bytes = n;
    a.handle_flags = flags;
    if (c.transaction_ns > 0) scheduler_.sleep_for(d.between(0, c.transaction_ns));
    if (!a.handle_open) continue;  // stopped meanwhile: the stopper ended it
    a.handle_open = false;
    aux_end(cpu, n, flags, true, false);
  }
  aux_done_[cpu] = true;
  aux_done_queue_.notify_all();
}

std::uint32_t Kernel::draw_size(DecisionSource& d) {
  const std::uint64_t ring = config_.ring_bytes;
  auto sized = [&](std::uint64_t low, std::uint64_t high) {
    // Workload shaping, not input handling: ranges beyond what a u16 size
    // can hold are pulled back to the largest record.
    low = std::clamp<std::uint64_t>(low, kSampleBytesMin, kSampleBytesMax);
    high = std::clamp<std::uint64_t>(high, low, kSampleBytesMax);
    const std::uint64_t steps = (high - low) / 8;
    return static_cast<std::uint32_t>(low + 8 * d.between(0, steps));
  };
  const std::uint64_t pick = d.draw(100);
  switch (config_.size_mix) {
    case SizeMix::small:
      return sized(48, 256);
    case SizeMix::mixed:
      if (pick < 85) return sized(48, 256);
      if (pick < 97) return sized(256, 2048);
      return sized(2048, 16384);
    case SizeMix::large:
      if (pick < 60) return sized(48, 512);
      if (pick < 85) return sized(512, ring / 2);
      return sized(ring / 2 + 8, ring);
    case SizeMix::huge:
      if (pick < 60) return sized(48, 512);
      if (pick < 80) return sized(512, ring / 2);
      if (pick < 92) return sized(ring / 2 + 8, ring);
      return sized(ring + 8, ring * 2);
  }
  VERIFY_MSG(false, "unknown size mix");
  return kSampleBytesMin;
}

void Kernel::produce(std::size_t cpu) {
  SimRing& ring = *rings_[cpu];
  // The workload (gaps, bursts, sizes) is a function of (seed, cpu) alone,
  // not of the schedule or the faults: the same seed gives the same records
  // under every output mode and disk, which is what makes side-by-side
  // comparisons exact. The schedule and faults come from the run's tape.
  DecisionSource d(config_.payload_seed * 0x9e3779b97f4a7c15ull + cpu + 1, false);
  std::vector<std::byte> record(kSampleBytesMax);
  std::uint32_t burst_left = 0;
  for (std::uint32_t sequence = 0; sequence < config_.records_per_cpu; sequence++) {
    if (scheduler_.cancelled() || disabled_) break;
    if (burst_left > 0) {
      burst_left--;
    } else {
      const std::uint64_t gap_ns = d.between(0, config_.gap_ns_max);
      if (gap_ns > 0 && scheduler_.sleep_for(gap_ns) == Wake::cancelled) break;
      if (disabled_) break;
      if (d.chance(config_.burst_per_million)) {
        burst_left = static_cast<std::uint32_t>(d.between(1, config_.burst_records_max));
      }
    }
    const std::uint32_t size = draw_size(d);
    const std::span<std::byte> bytes(record.data(), size);
    build_sample(bytes, ring.identity(), scheduler_.now_ns(), sequence, config_.payload_seed);
    log_.cpus[cpu].samples_attempted++;
    if (disabled_) break;
    output(cpu, bytes);
    scheduler_.maybe_yield();
  }
  exit_event(cpu);
}

void Kernel::exit_event(std::size_t cpu) {
  SimRing& ring = *rings_[cpu];
  // The event's AUX output ends with it: wait for the PMU, then report what
  // it has pending.
  for (int i = 0; i < 1'000'000 && !aux_done_[cpu] && !scheduler_.cancelled(); i++) {
    if (aux_done_queue_.wait() == Wake::cancelled) break;
  }
  if (has_aux() && !ring.disabled()) aux_stop_output(cpu);
  // Report every drop before the event goes away: wait for room.
  if (ring.lost_pending() > 0 && !scheduler_.cancelled()) {
    const std::uint64_t deadline_ns = scheduler_.now_ns() + config_.exit_flush_timeout_ns;
    for (int attempt = 0; attempt < 100000; attempt++) {
      const std::uint64_t pending = ring.lost_pending();
      if (ring.flush_lost(scheduler_.now_ns())) {
        if (pending > 0) scheduler_.trace(TraceKind::lost_emitted, cpu, pending);
        break;
      }
      if (attempt == 0) probes_.hit(Probe::lost_flushed_at_exit);
      const Wake wake = space_queue_.wait(deadline_ns);
      if (wake == Wake::cancelled) break;
      if (wake == Wake::timed_out) {
        scheduler_.cancel("liveness: cpu " + std::to_string(cpu) +
                          " could not report its drops at exit: the reader made no room");
        break;
      }
    }
  }
  ring.hang_up();
  exited_++;
  last_exit_ns_ = scheduler_.now_ns();
  scheduler_.trace(TraceKind::hangup, cpu);
  poll_queue_.notify_all();
  exit_queue_.notify_all();
}

}  // namespace ringsim::sim
