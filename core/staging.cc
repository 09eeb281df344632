#include "core/staging.h"

namespace ringsim::core {

std::string validate(const StagingOptions& o) {
  if (o.chunk_bytes_max == 0 || o.chunk_bytes_max % kRecordAlignBytes != 0) {
    return "chunk_bytes_max: " + std::to_string(o.chunk_bytes_max) + " is not a positive multiple of 8";
  }
  if (o.bytes < 2 * o.chunk_bytes_max) {
    return "bytes: " + std::to_string(o.bytes) + " is less than twice the largest chunk (" +
           std::to_string(o.chunk_bytes_max) + " bytes)";
  }
  if (o.bytes % kRecordAlignBytes != 0) return "bytes: " + std::to_string(o.bytes) + " is not a multiple of 8";
  if (o.batch_bytes_max < o.chunk_bytes_max) {
    return "batch_bytes_max: " + std::to_string(o.batch_bytes_max) + " is less than the largest chunk (" +
           std::to_string(o.chunk_bytes_max) + " bytes)";
  }
  if (o.wake_bytes > o.bytes / 2) {
    return "wake_bytes: " + std::to_string(o.wake_bytes) + " is more than half the buffer (" + std::to_string(o.bytes) +
           " bytes)";
  }
  if (o.entries_max != 0 && (o.entries_max < 8 || o.entries_max > (std::uint64_t{1} << 24))) {
    return "entries_max: " + std::to_string(o.entries_max) + " is outside 8..16777216 (or 0: derived)";
  }
  if (o.wait_ns == 0) return "wait_ns: 0";
  if (o.full_waits_max == 0) return "full_waits_max: 0";
  if (o.drain_steps_max == 0) return "drain_steps_max: 0";
  return "";
}

}  // namespace ringsim::core
