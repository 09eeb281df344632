// The model's own record walker and byte loads. The oracle and the model's
// perf.data reader both walk records with this and nothing else; it shares
// no code with core/records.h, so a parsing bug in the core cannot hide
// itself from the checks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string>

namespace ringsim::model {

template <class T>
T load(const std::byte* at) {
  T v;
  std::memcpy(&v, at, sizeof v);
  return v;
}

inline constexpr std::uint32_t kTypeLost = 2;        // PERF_RECORD_LOST
inline constexpr std::uint32_t kTypeSample = 9;      // PERF_RECORD_SAMPLE
inline constexpr std::uint32_t kTypeAuxtrace = 71;   // PERF_RECORD_AUXTRACE (perf.data)
// PERF_RECORD_COMPRESSED (perf.data, perf record -z): a header and zstd
// bytes, its size not padded to 8 (perf 6.1 writes and reads it so).
inline constexpr std::uint32_t kTypeCompressed = 81;
inline constexpr std::uint32_t kTypeUserFirst = 64;  // perf.data's own types: no sample_id
inline constexpr std::uint64_t kHeaderBytes = 8;
inline constexpr std::uint64_t kAuxtraceHeaderBytes = 48;
inline constexpr std::uint64_t kLostFieldOffset = 16;  // u64 lost in a LOST record

struct PerfRecord {
  std::uint32_t type = 0;
  std::uint16_t misc = 0;
  std::uint16_t size = 0;
  std::uint64_t offset = 0;          // in the walked bytes
  std::span<const std::byte> bytes;  // the whole record (AUXTRACE: with its data)
};

// Calls on_record for each record of `bytes` in order. Stops at the first
// malformed one and returns the problem ("" when every byte is in a whole
// record). A PERF_RECORD_AUXTRACE's data follows its 48-byte header.
std::string walk_records(std::span<const std::byte> bytes, const std::function<void(const PerfRecord&)>& on_record);

// The same for a perf.data file's data section, where a COMPRESSED
// record's size may be any from 8 up (perf record -z writes it unpadded and
// perf 6.1 reads it so; the record is handed over as it is). walk_records
// takes only sizes padded to 8, as the kernel writes every record (and as
// core's walker, which tests/fuzz/records_fuzz holds it to).
std::string walk_file_records(std::span<const std::byte> bytes,
                              const std::function<void(const PerfRecord&)>& on_record);

}  // namespace ringsim::model
