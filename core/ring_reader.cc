#include "core/ring_reader.h"

namespace ringsim::core {

const char* to_string(ReadStatus status) {
  switch (status) {
    case ReadStatus::empty: return "empty";
    case ReadStatus::ready: return "ready";
    case ReadStatus::head_unaligned: return "data_head not 8-byte aligned";
    case ReadStatus::head_past_ring: return "data_head more than one ring ahead of the reader";
    case ReadStatus::record_corrupt: return "corrupt record header";
    case ReadStatus::pause_failed: return "PERF_EVENT_IOC_PAUSE_OUTPUT failed";
    case ReadStatus::snapshot_changed: return "the ring changed during a snapshot (output not paused)";
  }
  return "unknown";
}

void RingStats::add(const RingStats& other) {
  chunks += other.chunks;
  bytes_read += other.bytes_read;
  wrapped_chunks += other.wrapped_chunks;
  snapshots += other.snapshots;
  late_writes += other.late_writes;
  damaged_headers += other.damaged_headers;
  resume_failed += other.resume_failed;
}

}  // namespace ringsim::core
