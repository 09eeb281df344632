// perf.data feature sections, as perf 6.1 writes and reads them: what a
// recording says about itself (host, command line, event names, topology,
// build-ids, sample time, ...), appended after the data section when a
// file is finished.
//
// Layout, from the end of the data section (data.offset + data.size):
//   - a table of {u64 offset, u64 size}, one entry per bit set in the
//     header's feature bitmap, in increasing bit order;
//   - the sections themselves, back to back (no alignment, as perf 6.1),
//     at the absolute offsets the table gives.
// Strings are perf's: u32 length (the string, its NUL and zero padding to
// a multiple of 64), then the bytes. Integers are in this machine's order.
//
// Nothing here gathers facts: the recorder (real/) collects them from the
// machine, the simulator hands fixed ones, and feature_sections() lays them
// out. The header's bitmap is set only by the final header of a file
// (TraceWriter::finish_file): until then the bytes after the data section
// are data still being written, and a reader of a file cut short (kill -9)
// must not take them for a table.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/perf_data.h"
#include "core/perf_data_reader.h"

namespace ringsim::core {

// perf's HEADER_* feature numbers (tools/perf/util/header.h), those written
// here.
enum class Feature : std::uint32_t {
  tracing_data = 1,
  build_id = 2,
  hostname = 3,
  osrelease = 4,
  version = 5,
  arch = 6,
  nrcpus = 7,
  cpudesc = 8,
  cpuid = 9,
  total_mem = 10,
  cmdline = 11,
  event_desc = 12,
  cpu_topology = 13,
  numa_topology = 14,
  group_desc = 17,
  auxtrace = 18,
  sample_time = 21,
  clockid = 23,
  compressed = 27,
  clock_data = 29,
};
const char* to_string(Feature feature);

// perf_header_string's padding.
inline constexpr std::uint64_t kFeatureStringAlign = 64;
// The misc bit that says a BUILD_ID entry carries its id's size.
inline constexpr std::uint16_t kBuildIdMiscHasSize = 0x8000;
inline constexpr std::uint64_t kBuildIdBytesMax = 20;

// One BUILD_ID entry: a DSO (or the kernel, or [vdso]) and its build-id.
struct BuildIdEntry {
  std::uint16_t cpumode = PERF_RECORD_MISC_USER;  // PERF_RECORD_MISC_KERNEL for the kernel
  std::int32_t pid = -1;                          // -1: the host machine
  std::vector<std::uint8_t> id;                   // 1..20 bytes
  std::string name;                               // path, "[kernel.kallsyms]" or "[vdso]"
  bool operator==(const BuildIdEntry&) const = default;
};

struct CpuIds {
  std::uint32_t core_id = 0;
  std::uint32_t socket_id = 0;
  std::uint32_t die_id = 0;
  bool operator==(const CpuIds&) const = default;
};

// CPU_TOPOLOGY: sibling lists ("0-1"), deduplicated in CPU order, and the
// ids of CPUs 0..nr_cpus_avail-1.
struct CpuTopology {
  std::vector<std::string> package_cpu_lists;
  std::vector<std::string> thread_cpu_lists;
  std::vector<CpuIds> cpus;  // one per CPU 0..avail-1
  bool has_dies = false;
  std::vector<std::string> die_cpu_lists;
  bool operator==(const CpuTopology&) const = default;
};

struct NumaNode {
  std::uint32_t node = 0;
  std::uint64_t mem_total_kib = 0;
  std::uint64_t mem_free_kib = 0;
  std::string cpu_list;
  bool operator==(const NumaNode&) const = default;
};

// CLOCK_DATA: a reference pair taken together, to turn sample times
// (clockid) into wall-clock time.
struct ClockData {
  std::uint32_t clockid = 0;
  std::uint64_t tod_ns = 0;      // CLOCK_REALTIME
  std::uint64_t clockid_ns = 0;  // the sampling clock
  bool operator==(const ClockData&) const = default;
};

// One AUXTRACE index entry: the file offset of a PERF_RECORD_AUXTRACE
// record and its header size (the data after it excluded).
struct AuxtraceIndexEntry {
  std::uint64_t file_offset = 0;
  std::uint64_t size = 0;
  bool operator==(const AuxtraceIndexEntry&) const = default;
};

// What a recorder knows about its host and command, the same for every file.
struct HostFeatures {
  std::string hostname;
  std::string osrelease;
  std::string version;   // the recorder's version
  std::string arch;
  std::uint32_t cpus_avail = 0;   // highest present CPU + 1
  std::uint32_t cpus_online = 0;
  std::string cpudesc;
  std::string cpuid;
  std::uint64_t total_mem_kib = 0;
  std::vector<std::string> cmdline;  // [0]: the recorder's path
  CpuTopology topology;
  std::vector<NumaNode> numa;
  std::optional<std::uint64_t> clock_resolution_ns;  // CLOCKID
  std::optional<ClockData> clock_data;               // CLOCK_DATA
  // TRACING_DATA: tracefs's formats of the recording's tracepoints, laid
  // out by the recorder (real/tracepoints.h); empty without tracepoints.
  std::vector<std::byte> tracing_data;
  bool operator==(const HostFeatures&) const = default;
};

// HEADER_COMPRESSED: how the file's PERF_RECORD_COMPRESSED records were
// made (perf 6.1's perf_env fields, u32 each, in this order).
struct CompressedFeature {
  std::uint32_t version = 0;
  std::uint32_t type = 1;      // 1: zstd
  std::uint32_t level = 1;
  std::uint32_t ratio = 0;     // bytes in / bytes of COMPRESSED records, rounded
  std::uint32_t mmap_len = 0;  // the most bytes one record decompresses to (perf's buffer for each)
  bool operator==(const CompressedFeature&) const = default;
};

// What one file holds, found when it is finished.
struct FileFeatures {
  std::vector<BuildIdEntry> build_ids;  // no BUILD_ID section when empty
  std::uint64_t first_sample_ns = 0;    // SAMPLE_TIME (0, 0: no samples)
  std::uint64_t last_sample_ns = 0;
  bool aux_recorded = false;            // AUXTRACE, with this index
  std::vector<AuxtraceIndexEntry> auxtrace;
  std::optional<CompressedFeature> compressed;  // COMPRESSED, when the data is
  bool operator==(const FileFeatures&) const = default;
};

struct PerfFeatures {
  HostFeatures host;
  FileFeatures file;
};

// A build-id as perf prints it: lower-case hex.
std::string to_hex(const std::vector<std::uint8_t>& id);

using FeatureBitmap = std::array<std::uint64_t, 4>;

struct FeatureSections {
  FeatureBitmap bitmap{};        // for the file header
  std::vector<std::byte> bytes;  // the table, then the sections
};

// Each section of `features`, in bit order (EVENT_DESC from `events`).
using FeatureList = std::vector<std::pair<Feature, std::vector<std::byte>>>;
FeatureList feature_list(const PerfFeatures& features, const std::vector<EventDescription>& events);

// The table and sections of `features` for a file whose data section ends
// at `at` (the absolute file offset the table starts at). EVENT_DESC comes
// from `events` (attributes, names, ids, in the attribute section's order).
FeatureSections feature_sections(const PerfFeatures& features, const std::vector<EventDescription>& events,
                                 std::uint64_t at);

// SAMPLE_TIME and the AUXTRACE index of a data section (`data`, at file
// offset data_offset, of a file with these events): the first and last
// sample time (samples only) and the file offset of every AUXTRACE record.
// Sets first/last_sample_ns and auxtrace; "" or the problem (a record that
// does not walk).
std::string scan_data_section(std::span<const std::byte> data, std::uint64_t data_offset,
                              const std::vector<EventDescription>& events, FileFeatures& out);
// The same data section as core's reader sees it (for time_of, cpu_of,
// attr_of on its records).
PerfDataView data_view(std::span<const std::byte> data, std::uint64_t data_offset,
                       const std::vector<EventDescription>& events);

}  // namespace ringsim::core
