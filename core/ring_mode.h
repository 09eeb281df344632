// How a ring is read: the reader's side of the kernel's mapping mode.
//
// The kernel decides two things separately (kernel/events/core.c,
// perf_mmap and ring_buffer.c): a writable mapping (PROT_WRITE) makes it
// honour data_tail and drop, count and report (PERF_RECORD_LOST) what does
// not fit; a read-only mapping makes it ignore the tail and overwrite the
// oldest records. attr.write_backward makes it write each record below the
// previous one (head moves down; positions read as 0 - bytes written).
#pragma once

#include <cstdint>

namespace ringsim::core {

enum class RingMode : std::uint8_t {
  normal,             // writable, forward: read [tail, head), store tail
  backward,           // read-only, write_backward: snapshots walk up from head
  forward_overwrite,  // read-only, forward: snapshots of [previous head, head)
  backward_writable,  // writable, write_backward: read [head, tail), store tail
};
const char* to_string(RingMode mode);

// PROT_WRITE: the kernel honours data_tail.
constexpr bool writable(RingMode mode) { return mode == RingMode::normal || mode == RingMode::backward_writable; }
// attr.write_backward.
constexpr bool backward(RingMode mode) { return mode == RingMode::backward || mode == RingMode::backward_writable; }

}  // namespace ringsim::core
