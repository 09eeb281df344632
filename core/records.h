// Walking perf records in a linear buffer (a chunk copied out of a ring).
//
// The ring hands out chunks that start and end on record boundaries; the
// walker checks every header before trusting it. A header whose size is 0,
// smaller than a header, not a multiple of 8, or past the end of the chunk
// means the ring is corrupt: the walk stops there and reports the cause and
// the number of bytes before it that are whole, valid records. The walk
// visits at most size/8 headers, so it ends on any input.
#pragma once

#include <cstdint>
#include <span>

#include "core/perf_abi.h"
#include "core/verify.h"

namespace ringsim::core {

enum class RecordError : std::uint8_t {
  none,
  truncated_header,  // fewer than 8 bytes left where a header should start
  size_zero,
  size_too_small,    // 1..7
  size_unaligned,    // not a multiple of 8
  size_past_end,     // claims more bytes than the chunk holds
  lost_too_small,    // a PERF_RECORD_LOST without its id and lost fields
  auxtrace_bad,      // a PERF_RECORD_AUXTRACE whose data size is unaligned or past the end
};

const char* to_string(RecordError error);

// What a stream of records held. LOST sums the `lost` fields: the number of
// records the kernel dropped and reported.
struct RecordCounts {
  std::uint64_t records = 0;
  std::uint64_t bytes = 0;
  std::uint64_t samples = 0;
  std::uint64_t lost_records = 0;
  std::uint64_t lost_sum = 0;
  std::uint64_t aux_records = 0;
  std::uint64_t auxtrace_records = 0;
  std::uint64_t auxtrace_bytes = 0;  // AUX data carried by them
  std::uint64_t other_records = 0;

  void add(const RecordCounts& other);
  bool operator==(const RecordCounts&) const = default;
};

// Why a record cannot start with `header` when `left` bytes remain from its
// start (RecordError::none if it can): the checks walk_records makes of
// every header. An AUXTRACE record's data, which follows its header, is
// checked by walk_records itself.
inline RecordError header_error(const perf_event_header& header, std::uint64_t left) {
  if (header.size == 0) return RecordError::size_zero;
  if (header.size < kRecordHeaderBytes) return RecordError::size_too_small;
  if (header.size % kRecordAlignBytes != 0) return RecordError::size_unaligned;
  if (header.size > left) return RecordError::size_past_end;
  if (header.type == PERF_RECORD_LOST && header.size < kLostRecordBytesMin) return RecordError::lost_too_small;
  return RecordError::none;
}

struct WalkResult {
  std::uint64_t valid_bytes = 0;  // whole records before the first error
  RecordError error = RecordError::none;
  perf_event_header bad_header{};  // the header at valid_bytes, on error
};

// Walks `chunk`, adds what it holds to `counts`, and calls
// on_record(header, record_bytes) for each valid record in order.
template <class OnRecord>
WalkResult walk_records(std::span<const std::byte> chunk, RecordCounts& counts,
                        OnRecord&& on_record) {
  WalkResult result;
  const std::uint64_t size_bytes = chunk.size();
  const std::uint64_t headers_max = size_bytes / kRecordHeaderBytes;
  std::uint64_t offset = 0;
  for (std::uint64_t i = 0; i <= headers_max && offset < size_bytes; i++) {
    const std::uint64_t left = size_bytes - offset;
    if (left < kRecordHeaderBytes) {
      result.error = RecordError::truncated_header;
      break;
    }
    const perf_event_header header = load_header(chunk.data() + offset);
    // AUXTRACE: the header's size is the fixed part; the data follows.
    std::uint64_t length = header.size;
    if (header.type == kRecordAuxtrace && header.size == kAuxtraceHeaderBytes && left >= kAuxtraceHeaderBytes) {
      const std::uint64_t data_bytes = load<std::uint64_t>(chunk.data() + offset + kRecordHeaderBytes);
      if (data_bytes % kRecordAlignBytes != 0 || data_bytes > left - kAuxtraceHeaderBytes) {
        result.error = RecordError::auxtrace_bad;
        result.bad_header = header;
        break;
      }
      length += data_bytes;
    }
    const RecordError error = header_error(header, left);
    if (error != RecordError::none) {
      result.error = error;
      result.bad_header = header;
      break;
    }
    const std::span<const std::byte> record = chunk.subspan(offset, length);
    counts.records++;
    counts.bytes += length;
    switch (header.type) {
      case PERF_RECORD_SAMPLE:
        counts.samples++;
        break;
      case PERF_RECORD_LOST:
        counts.lost_records++;
        counts.lost_sum += load<std::uint64_t>(record.data() + kLostRecordLostOffset);
        break;
      case PERF_RECORD_AUX:
        counts.aux_records++;
        break;
      case kRecordAuxtrace:
        counts.auxtrace_records++;
        counts.auxtrace_bytes += length - kAuxtraceHeaderBytes;
        break;
      default:
        counts.other_records++;
        break;
    }
    on_record(header, record);
    offset += length;
  }
  VERIFY(offset <= size_bytes);
  VERIFY(result.error != RecordError::none || offset == size_bytes);
  result.valid_bytes = offset;
  return result;
}

inline WalkResult walk_records(std::span<const std::byte> chunk, RecordCounts& counts) {
  return walk_records(chunk, counts, [](const perf_event_header&, std::span<const std::byte>) {});
}

}  // namespace ringsim::core
