// The simulated kernel's AUX side: the PMU's transactions (sim/aux.h), their
// PERF_RECORD_AUX records and wakeups, and the area's teardown.
#include <algorithm>

#include "core/verify.h"
#include "model/aux_content.h"
#include "sim/kernel.h"

namespace ringsim::sim {

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
  const bool overwrite = a.config.overwrite;
  model::AuxEnd end;
  end.flags = flags | a.config.format_flags | (overwrite ? PERF_AUX_FLAG_OVERWRITE : 0);
  end.record = report > 0 || (end.flags & ~std::uint64_t{PERF_AUX_FLAG_OVERWRITE}) != 0;
  if (!end.record) {
    if (by_writer) aux_drop_reference(cpu, true);
    return;
  }
  const std::uint64_t new_head = a.head + report;
  end.offset = a.user_head(overwrite ? new_head : a.head);
  end.size = a.config.offset_heads ? a.config.size_bytes : report;
  end.written = report;
  end.time_ns = scheduler_.now_ns();
  a.head = new_head;  // rb->aux_head; the user page's comes after the record
  const bool wake = aux_wakeup_after(cpu, flags);
  if (flags & PERF_AUX_FLAG_PARTIAL) probes_.hit(Probe::aux_partial);
  if (flags & PERF_AUX_FLAG_COLLISION) probes_.hit(Probe::aux_collision);
  end.head_after = a.head;
  end.wakeup_after = a.wakeup;
  end.woke = wake;
  a.log.ends.push_back(end);
  a.log.head = a.head;
  const OpenedEvent& owner = event(cpu, 0);
  if (owner.enabled && !owner.exited) {
    std::byte record[kAuxRecordBytes];
    const EventIdentity& id = owner.writer.identity;
    build_aux_record(record, id.id, id.pid, id.cpu, scheduler_.now_ns(), end.offset, end.size, end.flags);
    output(cpu, 0, record);
  }
  if (by_writer) {
    // The record is in the ring, aux_head not yet in the user page: the
    // reader may run here (a write in progress: a disable waits for it).
    writers_held_++;
    scheduler_.yield();
    writers_held_--;
    writes_queue_.notify_all();
  }
  a.published = a.head;  // WRITE_ONCE(user_page->aux_head) (release; (C') pairs with it)
  scheduler_.trace(TraceKind::aux_end, cpu, a.head, end.flags);
  if (wake) {
    ring.raise_wakeup();
    scheduler_.trace(TraceKind::aux_wakeup, cpu, a.head);
    poll_queue_.notify_all();
  }
  if (by_writer) aux_drop_reference(cpu, true);
}

bool Kernel::aux_wakeup_after(std::size_t cpu, std::uint64_t flags) {
  SimAux& a = aux(cpu);
  bool wake = false;
  if (!a.config.overwrite) {
    // rb_need_aux_wakeup: only in non-overwrite mode, so the watermark is
    // never 0 here.
    VERIFY(a.watermark_bytes > 0);
    if (aux_watermark_crossed(a.head, a.wakeup, a.watermark_bytes)) {
      wake = true;
      probes_.hit(Probe::aux_wakeup);
    }
  } else {
    probes_.hit(Probe::aux_watermark_zero);
  }
  if (flags & PERF_AUX_FLAG_TRUNCATED) {
    wake = true;
    aux_disable_by_pmu(cpu);
    probes_.hit(Probe::aux_truncated);
  }
  return wake;
}

void Kernel::aux_disable_by_pmu(std::size_t cpu) {
  SimAux& a = aux(cpu);
  a.enabled = false;
  a.tail_at_disable = a.tail;
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

// PERF_EVENT_IOC_DISABLE / ENABLE from the consumer: a snapshot's stop and
// restart in overwrite mode; in non-overwrite mode, ENABLE after the PMU
// disabled the event (truncation, a full area) turns it back on (not after
// the recording's own stop).
void Kernel::aux_set_enabled(std::size_t cpu, bool enabled) {
  SimAux& a = aux(cpu);
  if (!a.config.overwrite) {
    if (enabled && !a.enabled && !disabled_) {
      a.enabled = true;
      a.log.reenables.push_back(a.log.ends.size());
      probes_.hit(Probe::aux_reenabled);
    }
    return;
  }
  if (!enabled) {
    aux_stop_output(cpu);
    a.log.snapshot_heads.push_back(a.head);
  }
  a.paused = !enabled;
}

// The consumer goes back to poll: if it made room after the PMU disabled
// the event and did not re-enable it, the PMU stays off for good.
void Kernel::aux_check_reenabled(std::size_t cpu) {
  SimAux& a = aux(cpu);
  // (Once the PMU has no more data, an ENABLE would change nothing.)
  if (a.config.overwrite || a.enabled || disabled_ || aux_done_[cpu] || a.tail == a.tail_at_disable) return;
  if (a.consumer_violations.empty()) {
    a.consumer_violations.push_back("cpu " + std::to_string(cpu) +
                                    ": the PMU disabled the AUX event (truncated or full); the consumer moved "
                                    "aux_tail and went back to poll without re-enabling it");
  }
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
    if (scheduler_.cancelled() || disabled_) break;
    const std::uint64_t gap_ns = d.between(0, c.gap_ns_max);
    if (gap_ns > 0 && scheduler_.sleep_for(gap_ns) == Wake::cancelled) break;
    const std::uint64_t attempted = d.between(1, c.burst_bytes_max);
    const bool partial = d.chance(c.partial_per_million);
    const bool collision = d.chance(c.collision_per_million);
    if (disabled_) break;
    if (a.paused) continue;  // a snapshot is being taken: the hardware is stopped
    if (!a.enabled) {        // disabled by the PMU: until the consumer re-enables it
      a.log.disabled_bytes += attempted;
      probes_.hit(Probe::aux_produced_while_disabled);
      continue;
    }
    // begin: the area must be mapped, and a reference taken only if one is
    // still held (aux_mmap_count first, then aux_refcount).
    if (a.mmap_count == 0 || a.refcount == 0) break;
    a.refcount++;
    std::uint64_t n = attempted;
    std::uint64_t flags = (partial ? PERF_AUX_FLAG_PARTIAL : 0) | (collision ? PERF_AUX_FLAG_COLLISION : 0);
    if (!c.overwrite) {
      const std::uint64_t space = a.space();
      if (space == 0) {
        a.log.full_disables++;
        a.log.truncated_bytes += attempted;
        a.log.attempted_bytes += attempted;
        aux_disable_by_pmu(cpu);
        probes_.hit(Probe::aux_full_disable);
        rings_[cpu]->raise_wakeup();
        poll_queue_.notify_all();
        aux_drop_reference(cpu, true);
        continue;
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
      // In pieces up to the area's end (in overwrite mode a burst may wrap
      // more than once: n / size + 2 pieces at most).
      for (std::uint64_t done = 0, pieces = 0; done < n; pieces++) {
        VERIFY(pieces <= n / c.size_bytes + 1);
        const std::uint64_t index = (at + done) & (c.size_bytes - 1);
        const std::uint64_t piece = std::min<std::uint64_t>(n - done, c.size_bytes - index);
        model::aux_fill(config_.payload_seed, cpu32, at + done, a.data.data() + index, piece);
        done += piece;
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

}  // namespace ringsim::sim
