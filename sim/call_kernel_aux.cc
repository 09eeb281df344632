// The call kernel's AUX PMU (call_kernel.h: kAuxPmuType): the AUX area's
// mapping (perf_mmap's AUX branch and rb_alloc_aux, kernel/events/core.c
// and ring_buffer.c), its transactions (perf_aux_output_begin/end) and the
// consumer's aux_tail. The same rules as the campaign's AUX areas
// (sim/aux.h, which the campaign's kernel drives from its fibers; the
// rules both follow are sim/aux_rules.h), here over the consumer's pages
// and stepped by its calls.
#include <poll.h>

#include <atomic>
#include <cerrno>

#include "core/verify.h"
#include "model/aux_content.h"
#include "sim/aux_rules.h"
#include "sim/call_kernel.h"

namespace ringsim::sim {
namespace {

constexpr std::uint64_t kPageBytes = 4096;

std::uint64_t load_acquire(__u64* p) { return std::atomic_ref<__u64>(*p).load(std::memory_order_acquire); }
std::uint64_t load_once(__u64* p) { return std::atomic_ref<__u64>(*p).load(std::memory_order_relaxed); }

bool power_of_two(std::uint64_t n) { return n != 0 && (n & (n - 1)) == 0; }

}  // namespace

// perf_mmap with a non-zero offset: the event must have a ring; the
// control page's aux_offset and aux_size (READ_ONCE) must place the area
// above the data pages, at the mapping's offset, of the mapping's size, a
// power of two of pages; a second mapping of the area must match the
// first. Only then rb_alloc_aux asks whether the event's PMU has an AUX
// area at all (EOPNOTSUPP: every software event and tracepoint).
long CallKernel::map_aux(int event, std::span<std::byte> memory, std::uint64_t offset, bool writable,
                         std::uint64_t seed) {
  OpenedEvent& e = events_.at(static_cast<std::size_t>(event));
  if (e.ring < 0 || rings_[e.ring]->control == nullptr) return -EINVAL;
  MappedRing& r = *rings_[e.ring];
  const std::uint64_t aux_offset = load_once(&r.control->aux_offset);
  const std::uint64_t aux_size = load_once(&r.control->aux_size);
  if (aux_offset < r.data.size() + kPageBytes) return -EINVAL;
  if (aux_offset != offset) return -EINVAL;
  if (r.aux && r.aux->mappings > 0 && r.aux->offset != offset) return -EINVAL;
  if (aux_size != memory.size() || aux_size % kPageBytes != 0) return -EINVAL;
  if (r.aux && r.aux->mappings > 0 && r.aux->area.size() != memory.size()) return -EINVAL;
  if (!power_of_two(aux_size / kPageBytes)) return -EINVAL;
  if (r.mappings == 0) return -EINVAL;  // atomic_inc_not_zero(&rb->mmap_count)
  if (r.aux && r.aux->mappings > 0) {
    r.aux->mappings++;
    r.mappings++;
    return e.ring;
  }
  if (e.attr.type != kAuxPmuType) return -EOPNOTSUPP;
  // A read-only AUX mapping is overwrite mode (Intel PT's snapshots): not
  // simulated; sim/interpose refuses it before asking.
  VERIFY_MSG(writable, "a read-only AUX mapping reached the call kernel");
  auto a = std::make_unique<CallAux>();
  a->area = memory;
  a->size_bytes = aux_size;
  a->offset = offset;
  a->mappings = 1;
  // rb_alloc_aux: a watermark of 0 is half the area (non-overwrite).
  a->watermark = aux_watermark(false, e.attr.aux_watermark, aux_size);
  a->seed = seed;
  a->owner_id = e.id;
  r.aux = std::move(a);
  r.mappings++;
  aux_opened_ = true;
  return e.ring;
}

// perf_mmap_close of the AUX area's last mapping stops the PMU's output
// (no transaction is open between steps) and frees the area: the PMU
// writes no more. The ring's own count drops as for any mapping.
void CallKernel::unmap_aux(int ring) {
  MappedRing& r = *rings_.at(static_cast<std::size_t>(ring));
  VERIFY(r.aux && r.aux->mappings > 0);
  sync_aux_tail(r);
  if (--r.aux->mappings == 0) r.aux->area = {};
  unmap(ring);
}

// The consumer's aux_tail, as perf_aux_output_begin reads it. Linux takes
// any value (a tail it cannot make sense of reads as a full area); a tail
// ahead of aux_head or moved back is kept as a finding and not taken.
void CallKernel::sync_aux_tail(MappedRing& r) {
  if (!r.aux || r.aux->mappings == 0 || r.control == nullptr) return;
  CallAux& a = *r.aux;
  const std::uint64_t tail = load_acquire(&r.control->aux_tail);
  if (tail == a.tail_seen) return;
  const std::uint64_t size = a.area.size();
  if (a.head - tail > size || tail - a.tail_seen > size) {
    if (a.bad_tail.empty()) {
      a.bad_tail = "aux_tail " + std::to_string(tail) + " stored with aux_head " + std::to_string(a.head) +
                   " and the previous aux_tail " + std::to_string(a.tail_seen) + " (area " + std::to_string(size) +
                   " bytes)";
    }
    return;
  }
  a.tail_seen = tail;
}

// The AUX events `task`'s tick reaches each run a transaction with the
// drawn chance (none drawn unless an AUX area was mapped).
void CallKernel::aux_tick(const Task& task) {
  if (!aux_opened_) return;
  for (const int i : reached(task, false)) {
    OpenedEvent& e = events_[i];
    if (e.attr.type != kAuxPmuType || e.ring < 0) continue;
    MappedRing& r = *rings_[e.ring];
    if (!r.aux || r.aux->mappings == 0) continue;
    if (d_.chance(p_.aux_per_million)) aux_transaction(i, task, *r.aux);
  }
}

// perf_aux_output_begin, the hardware's bytes, perf_aux_output_end. Begin
// finds the free space (CIRC_SPACE: never the last byte); none at all
// disables the event and wakes the consumer. The hardware has 1 to half
// the area's bytes; what does not fit is cut (TRUNCATED: the event is
// disabled and the consumer woken; it must re-enable the event once it
// made room). End writes PERF_RECORD_AUX {the old aux_head, the bytes,
// the flags} into the event's ring, then aux_head moves (published in the
// control page at the step's end), and a crossed watermark wakes the
// consumer (rb_need_aux_wakeup: aux_wakeup rounded down to it).
void CallKernel::aux_transaction(int event, const Task& task, CallAux& a) {
  OpenedEvent& e = events_[event];
  MappedRing& r = *rings_[e.ring];
  const std::uint64_t size = a.area.size();
  const std::uint64_t attempted = d_.between(1, size / 2);
  const std::uint64_t space = aux_free_space(a.head, a.tail_seen, size);
  a.transactions++;
  if (space == 0) {
    a.full_disables++;
    a.disabled_bytes += attempted;
    set_enabled(e, false);
    if (r.ring) r.ring->raise_wakeup();
    return;
  }
  const std::uint64_t n = std::min(attempted, space);
  const std::uint64_t flags = n < attempted ? PERF_AUX_FLAG_TRUNCATED : 0;
  for (std::uint64_t done = 0, pieces = 0; done < n; pieces++) {
    VERIFY(pieces < 2);  // n < size: at most one wrap
    const std::uint64_t index = (a.head + done) & (size - 1);
    const std::uint64_t piece = std::min(n - done, size - index);
    model::aux_fill(a.seed, static_cast<std::uint32_t>(a.owner_id), a.head + done, a.area.data() + index, piece);
    done += piece;
  }
  write_as(e, task.pid, task.tid, task.cpu);
  build_attr_aux(scratch_, e.writer.identity, a.head, n, flags, record_time());
  write_record(event, scratch_);
  a.head += n;
  bool wake = aux_watermark_crossed(a.head, a.wakeup, a.watermark);
  if (flags & PERF_AUX_FLAG_TRUNCATED) {
    a.truncated++;
    a.truncated_bytes += attempted - n;
    set_enabled(e, false);  // perf_event_disable_inatomic
    wake = true;
  }
  if (wake && r.ring) r.ring->raise_wakeup();
}

}  // namespace ringsim::sim
