#include "core/records.h"

namespace ringsim::core {

const char* to_string(RecordError error) {
  switch (error) {
    case RecordError::none: return "none";
    case RecordError::truncated_header: return "truncated header";
    case RecordError::size_zero: return "record size 0";
    case RecordError::size_too_small: return "record size smaller than its header";
    case RecordError::size_unaligned: return "record size not a multiple of 8";
    case RecordError::size_past_end: return "record size past the end of the ring data";
    case RecordError::lost_too_small: return "PERF_RECORD_LOST too small for its fields";
    case RecordError::auxtrace_bad: return "PERF_RECORD_AUXTRACE data size unaligned or past the end";
  }
  return "unknown record error";
}

void RecordCounts::add(const RecordCounts& other) {
  records += other.records;
  bytes += other.bytes;
  samples += other.samples;
  lost_records += other.lost_records;
  lost_sum += other.lost_sum;
  aux_records += other.aux_records;
  auxtrace_records += other.auxtrace_records;
  auxtrace_bytes += other.auxtrace_bytes;
  other_records += other.other_records;
}

}  // namespace ringsim::core
