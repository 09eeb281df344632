// The AUX area's rules that the campaign's AUX areas (sim/aux.h, driven by
// its fibers) and the call kernel's AUX PMU (sim/call_kernel_aux.cc, driven
// by a consumer's calls) both follow: one statement of each, from the
// kernel's kernel/events/ring_buffer.c.
#pragma once

#include <cstdint>

namespace ringsim::sim {

// perf_aux_output_begin, non-overwrite mode: the room a transaction may
// use, CIRC_SPACE(head, tail, size): never the last byte; none once
// head - tail reaches the area (a tail the kernel cannot make sense of
// reads as a full area).
inline std::uint64_t aux_free_space(std::uint64_t head, std::uint64_t tail, std::uint64_t size) {
  const std::uint64_t used = head - tail;
  return used < size ? size - 1 - used : 0;
}

// rb_alloc_aux: the watermark of a non-overwrite area is the one asked for
// (attr.aux_watermark), or half the area; an overwrite area has none (0,
// and no wakeup bookkeeping: rb_need_aux_wakeup returns at once).
inline std::uint64_t aux_watermark(bool overwrite, std::uint64_t requested, std::uint64_t size) {
  if (overwrite) return 0;
  return requested == 0 ? size / 2 : requested;
}

// rb_need_aux_wakeup, non-overwrite mode: whether aux_head moved a
// watermark or more past aux_wakeup since the last wakeup; if so
// aux_wakeup becomes aux_head rounded down to the watermark.
inline bool aux_watermark_crossed(std::uint64_t head, std::uint64_t& wakeup, std::uint64_t watermark) {
  if (head - wakeup < watermark) return false;
  wakeup = head - head % watermark;
  return true;
}

}  // namespace ringsim::sim
