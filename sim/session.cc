#include "sim/session.h"

#include <cerrno>
#include <cstring>

#include "core/verify.h"

namespace ringsim::sim {

SimRing& SimMapping::ring() const { return session_.live_ring(index_); }

std::uint64_t SimMapping::data_size_bytes() const { return ring().data_size_bytes(); }

std::uint64_t SimMapping::load_head() {
  session_.scheduler_.maybe_yield();
  SimRing& r = ring();
  const std::uint64_t head = r.head();  // (C): a plain load; one thread
  if (!core::writable(r.mode())) r.note_reader_head(head);
  session_.scheduler_.trace(TraceKind::head_loaded, index_, head);
  return head;
}

void SimMapping::store_tail(std::uint64_t tail) {
  session_.scheduler_.maybe_yield();
  ring().store_tail(tail);  // (D)
  session_.scheduler_.trace(TraceKind::tail_stored, index_, tail);
}

void SimMapping::copy_out(std::uint64_t position, std::span<std::byte> destination) {
  Scheduler& scheduler = session_.scheduler_;
  scheduler.maybe_yield();
  const std::span<const std::byte> data = ring().data();
  const std::uint64_t index = position & (data.size() - 1);
  const std::uint64_t length = destination.size();
  VERIFY_MSG(index + length <= data.size(), "copy_out crosses the end of the data area");
  const std::uint64_t cost_ns = length * session_.config_.copy_ns_per_kib / 1024;
  const bool split = session_.faults_ && length >= 16 &&
                     scheduler.decisions().chance(session_.config_.copy_interrupt_per_million);
  if (split) {
    // The kernel may run between the two halves.
    const std::uint64_t half = (length / 2) & ~std::uint64_t{7};
    std::memcpy(destination.data(), data.data() + index, half);
    session_.probes_.hit(Probe::copy_interleaved);
    scheduler.sleep_for(cost_ns / 2);
    scheduler.yield();
    const std::span<const std::byte> again = ring().data();
    std::memcpy(destination.data() + half, again.data() + index + half, length - half);
    scheduler.sleep_for(cost_ns - cost_ns / 2);
  } else {
    std::memcpy(destination.data(), data.data() + index, length);
    if (cost_ns > 0) scheduler.sleep_for(cost_ns);
  }
  ring().note_read(position, length);
  scheduler.trace(TraceKind::copied, index_, position, length);
}

SimAux& SimMapping::aux() const {
  session_.live_ring(index_);  // checks the mapping is live
  SimAux& a = session_.kernel_.aux(index_);
  VERIFY_MSG(a.mmap_count == 1, "access to an unmapped AUX area");
  return a;
}

std::uint64_t SimMapping::aux_size_bytes() const {
  return session_.kernel_.has_aux() ? session_.kernel_.aux(index_).config.size_bytes : 0;
}

bool SimMapping::aux_overwrite() const { return aux().config.overwrite; }

bool SimMapping::aux_offset_heads() const { return aux().config.offset_heads; }

std::uint64_t SimMapping::load_aux_head() {
  session_.scheduler_.maybe_yield();
  const SimAux& a = aux();
  if (a.published != a.head) session_.probes_.hit(Probe::aux_record_before_head);
  if (a.published % 8 != 0) session_.probes_.hit(Probe::aux_unaligned_head);
  return a.user_head(a.published);  // (C')
}

void SimMapping::store_aux_tail(std::uint64_t tail) {
  session_.scheduler_.maybe_yield();
  SimAux& a = aux();
  VERIFY_MSG(!a.config.overwrite, "aux_tail stored on a read-only (overwrite) AUX area");
  VERIFY(a.published - tail <= a.config.size_bytes);
  VERIFY(tail - a.tail <= a.config.size_bytes);
  a.tail = tail;  // (D')
}

void SimMapping::copy_aux(std::uint64_t position, std::span<std::byte> destination) {
  Scheduler& scheduler = session_.scheduler_;
  scheduler.maybe_yield();
  const std::uint64_t size = aux().config.size_bytes;
  const std::uint64_t index = position & (size - 1);
  VERIFY_MSG(index + destination.size() <= size, "copy_aux crosses the end of the AUX area");
  const std::uint64_t cost_ns = destination.size() * session_.config_.copy_ns_per_kib / 1024;
  const bool split = session_.faults_ && destination.size() >= 16 &&
                     scheduler.decisions().chance(session_.config_.copy_interrupt_per_million);
  // The copy takes its time before the last byte is read: the PMU may run
  // meanwhile (harmless for a reader that owns the bytes it copies).
  const std::uint64_t half = split ? (destination.size() / 2) & ~std::uint64_t{7} : 0;
  if (split) {
    std::memcpy(destination.data(), aux().data.data() + index, half);
    session_.probes_.hit(Probe::copy_interleaved);
    scheduler.sleep_for(cost_ns / 2);
    scheduler.yield();
  }
  if (cost_ns > 0) scheduler.sleep_for(split ? cost_ns - cost_ns / 2 : cost_ns);
  std::memcpy(destination.data() + half, aux().data.data() + index + half, destination.size() - half);
  scheduler.trace(TraceKind::aux_copied, index_, position, destination.size());
}

int SimMapping::set_aux_enabled(bool enabled) {
  session_.scheduler_.maybe_yield();
  aux();
  if (!enabled) session_.probes_.hit(Probe::aux_snapshot);
  session_.kernel_.aux_set_enabled(index_, enabled);
  return 0;
}

int SimMapping::pause_output(bool paused) {
  session_.scheduler_.maybe_yield();
  SimRing& r = ring();
  r.set_paused(paused);
  session_.scheduler_.trace(TraceKind::pause, index_, paused ? 1 : 0);
  return 0;
}

SimSession::SimSession(Scheduler& scheduler, Kernel& kernel, Probes& probes, const SessionConfig& config)
    : scheduler_(scheduler), kernel_(kernel), probes_(probes), config_(config) {
  for (std::size_t i = 0; i < kernel_.cpus(); i++) mappings_.push_back(std::make_unique<SimMapping>(*this, i));
  released_.assign(kernel_.cpus(), false);
}

SimRing& SimSession::live_ring(std::size_t index) {
  VERIFY(index < released_.size());
  VERIFY_MSG(!released_[index], "access to a released (unmapped) ring");
  return kernel_.ring(index);
}

SimMapping& SimSession::mapping(std::size_t index) {
  VERIFY(index < mappings_.size());
  VERIFY_MSG(!released_[index], "access to a released (unmapped) ring");
  return *mappings_[index];
}

int SimSession::poll(std::span<core::PollEvents> events, std::uint64_t timeout_ns) {
  VERIFY(events.size() == mappings_.size());
  return poll_some(nullptr, events, timeout_ns, 0);
}

void SimSession::set_pollers(std::size_t pollers) {
  VERIFY(pollers >= 1 && pollers <= mappings_.size());
  interrupted_.assign(pollers, 0);
}

int SimSession::poll_rings(std::span<const std::size_t> rings, std::span<core::PollEvents> events,
                           std::uint64_t timeout_ns, std::size_t poller) {
  VERIFY(events.size() == rings.size() && !rings.empty());
  for (const std::size_t ring : rings) VERIFY(ring < mappings_.size());
  return poll_some(rings.data(), events, timeout_ns, poller);
}

// rings: nullptr for every ring (events[i] is ring i's).
int SimSession::poll_some(const std::size_t* rings, std::span<core::PollEvents> events, std::uint64_t timeout_ns,
                          std::size_t poller) {
  VERIFY(poller < interrupted_.size());
  if (scheduler_.sleep_for(config_.syscall_ns) == Wake::cancelled) return -ECANCELED;
  if (faults_ && scheduler_.decisions().chance(config_.poll_eintr_per_million)) {
    probes_.hit(Probe::poll_eintr);
    scheduler_.trace(TraceKind::fault, static_cast<std::uint64_t>(FaultCode::poll_eintr));
    return -EINTR;
  }
  const std::uint64_t deadline_ns = scheduler_.now_ns() + timeout_ns;
  const auto ring_of = [&](std::size_t k) { return rings == nullptr ? k : rings[k]; };
  for (std::size_t k = 0; k < events.size() && kernel_.has_aux(); k++) kernel_.aux_check_reenabled(ring_of(k));
  // Each pass either returns or waits; a wake without an event for us (a
  // wakeup on a ring not polled) loops, bounded.
  for (int pass = 0; pass < 1'000'000; pass++) {
    if (interrupted_[poller] != 0) {
      interrupted_[poller] = 0;
      return -EINTR;
    }
    int ready = 0;
    for (std::size_t k = 0; k < events.size(); k++) {
      core::PollEvents& e = events[k];
      e.readable = false;
      e.hangup = false;
      if (!e.wanted) continue;
      const std::size_t i = ring_of(k);
      SimRing& r = live_ring(i);
      kernel_.poll(i, e.readable, e.hangup);
      if (e.hangup) probes_.hit(Probe::hangup_per_task);
      if (e.hangup && r.holds_unread_data()) probes_.hit(Probe::pollhup_with_data);
      if (e.hangup && in_flight_query_ && in_flight_query_(i) > 0) probes_.hit(Probe::hangup_with_write_in_flight);
      if (e.readable || e.hangup) ready++;
    }
    scheduler_.trace(TraceKind::polled, static_cast<std::uint64_t>(ready));
    if (ready > 0) return ready;
    const Wake wake = kernel_.poll_queue().wait(deadline_ns);
    if (wake == Wake::cancelled) return -ECANCELED;
    if (wake == Wake::timed_out) return 0;
  }
  VERIFY_MSG(false, "poll woke a million times without an event");
  return 0;
}

void SimSession::release(std::size_t index) {
  VERIFY(index < released_.size());
  VERIFY_MSG(!released_[index], "mapping released twice");
  if (release_check_) release_check_(index);
  if (kernel_.has_aux()) kernel_.aux_unmap(index);
  released_[index] = true;
  scheduler_.trace(TraceKind::released, index);
}

bool SimSession::take_snapshot_request() {
  const bool requested = snapshot_requested_;
  snapshot_requested_ = false;
  return requested;
}

void SimSession::interrupt() {
  for (auto& flag : interrupted_) flag = 1;
  kernel_.poll_queue().notify_all();
}

void SimSession::request_snapshot() {
  probes_.hit(Probe::snapshot_request);
  snapshot_requested_ = true;
  interrupt();
}

void SimSession::request_stop() {
  if (!kernel_.all_done()) probes_.hit(Probe::stop_request);
  // PERF_EVENT_IOC_DISABLE returns once writes in progress are done; the
  // reader learns of the stop after it.
  kernel_.disable_all();
  stop_requested_ = true;
  interrupt();
}

}  // namespace ringsim::sim
