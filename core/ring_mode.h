// How a ring is read: the reader's side of the kernel's mapping mode.
#pragma once

#include <cstdint>

namespace ringsim::core {

// normal: a writable mapping, forward writing; the kernel honours
// data_tail and drops (and reports) what does not fit.
// backward: a read-only mapping with write_backward; the kernel ignores
// the tail and overwrites the oldest records; the reader takes snapshots.
enum class RingMode : std::uint8_t { normal, backward };
const char* to_string(RingMode mode);

}  // namespace ringsim::core
