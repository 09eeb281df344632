// The model's reader of perf.data feature sections (the table after the
// data section and the sections it points to), as perf 6.1 reads them.
// Standard library only, no code shared with core/: it checks what the
// writer laid out, and reads perf's own files the same way.
//
// Strict where perf is lax: every section must be exactly consumed by its
// decoding, strings must be perf's (u32 length, a multiple of 64, holding
// the NUL), and every table entry must lie inside the file. Bits this
// reader does not decode (perf writes CACHE, MEM_TOPOLOGY, PMU_MAPPINGS,
// BPF_*, ...) are kept in the table only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ringsim::model {

// perf's feature bit numbers.
inline constexpr std::uint32_t kFeatTracingData = 1, kFeatBuildId = 2, kFeatHostname = 3, kFeatOsrelease = 4, kFeatVersion = 5,
                               kFeatArch = 6, kFeatNrcpus = 7, kFeatCpudesc = 8, kFeatCpuid = 9,
                               kFeatTotalMem = 10, kFeatCmdline = 11, kFeatEventDesc = 12,
                               kFeatCpuTopology = 13, kFeatNumaTopology = 14, kFeatAuxtrace = 18,
                               kFeatSampleTime = 21, kFeatClockid = 23, kFeatClockData = 29;

struct FeatureTableEntry {
  std::uint32_t bit = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

struct BuildIdFeature {
  std::uint16_t misc = 0;
  std::int32_t pid = 0;
  std::string id_hex;  // id_size bytes (20 without the size bit), lower-case hex
  std::string name;
};

struct EventDescFeature {
  std::uint32_t type = 0;
  std::uint64_t config = 0;
  std::uint64_t sample_type = 0;
  std::uint64_t flags = 0;  // the attr's bit fields (disabled, inherit, ...)
  std::string name;
  std::vector<std::uint64_t> ids;
};

struct CpuTopologyFeature {
  std::vector<std::string> package_lists;
  std::vector<std::string> thread_lists;
  std::vector<std::uint32_t> core_ids;    // per CPU 0..avail-1
  std::vector<std::uint32_t> socket_ids;
  bool has_dies = false;
  std::vector<std::string> die_lists;
  std::vector<std::uint32_t> die_ids;
};

struct NumaNodeFeature {
  std::uint32_t node = 0;
  std::uint64_t mem_total_kib = 0;
  std::uint64_t mem_free_kib = 0;
  std::string cpu_list;
};

// One tracepoint format in TRACING_DATA: its system, and the name and ID
// lines of the format text.
struct TracepointFormat {
  std::string system;
  std::string name;
  std::uint64_t id = 0;
};

struct PerfFeatures {
  std::uint64_t bitmap[4] = {0, 0, 0, 0};
  std::vector<FeatureTableEntry> table;  // in bit order
  std::uint64_t end = 0;                 // where the last section (or the table) ends
  bool has(std::uint32_t bit) const { return bit < 256 && ((bitmap[bit / 64] >> (bit % 64)) & 1) != 0; }

  std::vector<BuildIdFeature> build_ids;
  std::string hostname, osrelease, version, arch, cpudesc, cpuid;
  std::uint32_t cpus_avail = 0;
  std::uint32_t cpus_online = 0;
  std::uint64_t total_mem_kib = 0;
  std::vector<std::string> cmdline;
  std::vector<EventDescFeature> events;
  CpuTopologyFeature topology;
  std::vector<NumaNodeFeature> numa;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> auxtrace;  // (file offset, size)
  std::uint64_t first_sample_ns = 0;
  std::uint64_t last_sample_ns = 0;
  std::uint64_t clock_resolution_ns = 0;
  std::uint32_t clock_data_version = 0;
  std::uint32_t clockid = 0;
  std::uint64_t clock_tod_ns = 0;
  std::uint64_t clock_clockid_ns = 0;
  // TRACING_DATA (trace-event-read.c's layout, version 0.6): the event
  // formats it holds, in its order.
  std::string tracing_version;
  std::vector<TracepointFormat> tracepoint_formats;
  // Where the formats end in the section: what follows (printk formats,
  // saved cmdlines) is tracefs's state when the recorder read it.
  std::uint64_t tracing_formats_end = 0;
};

// Reads the features of `file` whose header's bitmap is `bitmap` and whose
// data section ends at data_end. "" or the problem ("HOSTNAME: string
// length 7 is not a multiple of 64").
std::string parse_perf_features(std::span<const std::byte> file, const std::uint64_t bitmap[4],
                                 std::uint64_t data_end, PerfFeatures& out);

// One feature section on its own (a pipe's PERF_RECORD_HEADER_FEATURE, or
// its TRACING_DATA record), decoded into `out` with its bit set. Bits this
// reader does not decode are only set. zero_padding_max: trailing zero
// bytes allowed after the decoding (a pipe's TRACING_DATA is padded to 8).
// "" or the problem.
std::string parse_feature_section(std::uint32_t bit, std::span<const std::byte> section, PerfFeatures& out,
                                  std::uint64_t zero_padding_max = 0);

// perf's name of a feature bit ("BUILD_ID"), or "bit N".
std::string feature_name(std::uint32_t bit);

}  // namespace ringsim::model
