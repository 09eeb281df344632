// perf's pipe format (perf record -o -, read by perf report -i - and perf
// inject): a stream written once, front to back, so nothing in it is
// fixed up later.
//
// Layout, as perf 6.1 writes and reads it (session.c, header.c):
//   perf_pipe_file_header {u64 magic "PERFILE2", u64 size 16};
//   PERF_RECORD_HEADER_ATTR (64) per event: header, the attr (attr.size
//     bytes), its ids (u64 each);
//   PERF_RECORD_HEADER_FEATURE (80) per feature: header, u64 feature bit,
//     the section's bytes as a file's (perf_data_features.h); no padding
//     (perf's records here are not 8-byte multiples either);
//   PERF_RECORD_HEADER_TRACING_DATA (66) with tracepoints: a 16-byte record
//     {header, u32 size, u32 0}, then `size` bytes (outside the record's
//     header.size): TRACING_DATA, zero-padded to a multiple of 8;
//   then the data records as a file's data section holds them.
// Features that need the whole recording (BUILD_ID, AUXTRACE's index,
// SAMPLE_TIME's real values, COMPRESSED's ratio) are not in a stream:
// perf's are not either (BUILD_ID) or say nothing yet.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/perf_data.h"
#include "core/perf_data_features.h"

namespace ringsim::core {

inline constexpr std::uint64_t kPerfPipeHeaderBytes = 16;
inline constexpr std::uint32_t kRecordHeaderAttr = 64;
inline constexpr std::uint32_t kRecordHeaderTracingData = 66;
inline constexpr std::uint32_t kRecordHeaderFeature = 80;

// Everything a stream holds before its first data record: the pipe header,
// each event's ATTR, the host's features (of features.file only
// COMPRESSED, which says how big a record decompresses, and an empty
// SAMPLE_TIME, as perf sends it), and TRACING_DATA when features.host has
// it. VERIFYs that every record fits a u16 size.
std::vector<std::byte> pipe_prefix(const std::vector<EventDescription>& events, const PerfFeatures& features);

}  // namespace ringsim::core
