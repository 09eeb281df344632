// The parts of the perf ABI the core reads: record headers and the fields
// of the records it accounts for. Layouts come from the kernel's UAPI
// header; everything here reads through memcpy, so a record may sit at any
// address in a caller's buffer.
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

namespace ringsim::core {

inline constexpr std::uint64_t kRecordAlignBytes = 8;
inline constexpr std::uint64_t kRecordHeaderBytes = sizeof(perf_event_header);
static_assert(kRecordHeaderBytes == 8);
// perf_event_header.size is a u16: no record is larger than this.
inline constexpr std::uint64_t kRecordBytesMax = 0xffff & ~(kRecordAlignBytes - 1);

// The one helper the production code reads integers and headers with: a
// T at `at`, any alignment, in the machine's byte order (perf.data and the
// rings use the recording machine's order; this project reads only its
// own machine's).
template <class T>
inline T load(const std::byte* at) {
  static_assert(std::is_trivially_copyable_v<T>);
  T value;
  std::memcpy(&value, at, sizeof value);
  return value;
}

inline perf_event_header load_header(const std::byte* at) { return load<perf_event_header>(at); }

// Record types from 64 up are perf.data's own (written by a recorder, not
// the kernel): they carry no sample_id trailer.
inline constexpr std::uint32_t kRecordUserTypeFirst = 64;

// PERF_RECORD_LOST: { header; u64 id; u64 lost; sample_id }.
inline constexpr std::uint64_t kLostRecordLostOffset = kRecordHeaderBytes + 8;
inline constexpr std::uint64_t kLostRecordBytesMin = kRecordHeaderBytes + 16;

// PERF_RECORD_AUX: { header; u64 aux_offset; u64 aux_size; u64 flags; sample_id }.
inline constexpr std::uint64_t kAuxRecordBytesMin = kRecordHeaderBytes + 24;

// PERF_RECORD_AUXTRACE (a user-space record type of perf.data): AUX area
// data as a recorder writes it. Unlike every other record, header.size
// covers only the fixed part; `size` more bytes of data follow (a multiple
// of 8: the data, zero-padded).
//   { header; u64 size; u64 offset; u64 reference; u32 idx; u32 tid;
//     u32 cpu; u32 reserved; } data[size]
inline constexpr std::uint32_t kRecordAuxtrace = 71;
inline constexpr std::uint64_t kAuxtraceHeaderBytes = 48;

struct AuxtraceHeader {
  perf_event_header header;
  std::uint64_t size;
  std::uint64_t offset;
  std::uint64_t reference;
  std::uint32_t idx;
  std::uint32_t tid;
  std::uint32_t cpu;
  std::uint32_t reserved;
};
static_assert(sizeof(AuxtraceHeader) == kAuxtraceHeaderBytes);

}  // namespace ringsim::core
