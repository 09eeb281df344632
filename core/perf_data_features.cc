#include "core/perf_data_features.h"

#include <cstring>
#include <utility>

#include "core/perf_abi.h"
#include "core/verify.h"

namespace ringsim::core {
namespace {

// perf keeps strings and lists far below this; a larger one is a bug here.
constexpr std::uint64_t kStringBytesMax = std::uint64_t{1} << 20;

// One section's bytes.
class Section {
 public:
  void u32(std::uint32_t v) { raw(&v, sizeof v); }
  void u64(std::uint64_t v) { raw(&v, sizeof v); }
  void raw(const void* data, std::size_t size) {
    const auto* p = static_cast<const std::byte*>(data);
    bytes_.insert(bytes_.end(), p, p + size);
  }
  // perf_header_string: u32 length (NUL and padding to 64 included), bytes.
  void string(const std::string& text) {
    VERIFY(text.size() < kStringBytesMax);
    const std::uint64_t padded = (text.size() + 1 + kFeatureStringAlign - 1) / kFeatureStringAlign * kFeatureStringAlign;
    u32(static_cast<std::uint32_t>(padded));
    raw(text.data(), text.size());
    bytes_.insert(bytes_.end(), padded - text.size(), std::byte{0});
  }
  void strings(const std::vector<std::string>& list) {
    u32(static_cast<std::uint32_t>(list.size()));
    for (const std::string& s : list) string(s);
  }
  std::vector<std::byte> take() { return std::move(bytes_); }

 private:
  std::vector<std::byte> bytes_;
};

std::vector<std::byte> string_section(const std::string& text) {
  Section s;
  s.string(text);
  return s.take();
}

// perf_record_header_build_id: {header (type 0, misc, size); s32 pid;
// u8 id[20]; u8 id_size; u8, u16 reserved; name, NUL-padded to 64}.
void build_id_entry(Section& s, const BuildIdEntry& e) {
  VERIFY(!e.id.empty() && e.id.size() <= kBuildIdBytesMax);
  const std::uint64_t name_bytes =
      (e.name.size() + 1 + kFeatureStringAlign - 1) / kFeatureStringAlign * kFeatureStringAlign;
  const std::uint64_t size = kRecordHeaderBytes + 4 + kBuildIdBytesMax + 4 + name_bytes;
  VERIFY(size <= 0xffff);
  perf_event_header header{};
  header.type = 0;
  header.misc = static_cast<std::uint16_t>(kBuildIdMiscHasSize | e.cpumode);
  header.size = static_cast<std::uint16_t>(size);
  s.raw(&header, sizeof header);
  s.raw(&e.pid, sizeof e.pid);
  std::uint8_t id[kBuildIdBytesMax] = {};
  std::memcpy(id, e.id.data(), e.id.size());
  s.raw(id, sizeof id);
  const std::uint8_t id_size = static_cast<std::uint8_t>(e.id.size());
  const std::uint8_t reserved[3] = {0, 0, 0};
  s.raw(&id_size, 1);
  s.raw(reserved, sizeof reserved);
  std::vector<std::byte> name(name_bytes, std::byte{0});
  std::memcpy(name.data(), e.name.data(), e.name.size());
  s.raw(name.data(), name.size());
}

std::vector<std::byte> build_id_section(const std::vector<BuildIdEntry>& entries) {
  Section s;
  for (const BuildIdEntry& e : entries) build_id_entry(s, e);
  return s.take();
}

// EVENT_DESC: u32 events, u32 attr size; per event the attr, u32 ids, its
// name, the ids.
std::vector<std::byte> event_desc_section(const std::vector<EventDescription>& events) {
  Section s;
  s.u32(static_cast<std::uint32_t>(events.size()));
  s.u32(sizeof(perf_event_attr));
  for (const EventDescription& e : events) {
    perf_event_attr attr = e.attr;
    attr.size = sizeof attr;
    s.raw(&attr, sizeof attr);
    s.u32(static_cast<std::uint32_t>(e.ids.size()));
    s.string(e.name);
    for (const std::uint64_t id : e.ids) s.u64(id);
  }
  return s.take();
}

// CPU_TOPOLOGY: package lists, thread lists, per CPU {core, socket}; then,
// with dies, die lists and per CPU the die.
std::vector<std::byte> cpu_topology_section(const HostFeatures& host) {
  const CpuTopology& t = host.topology;
  VERIFY(t.cpus.size() == host.cpus_avail);
  Section s;
  s.strings(t.package_cpu_lists);
  s.strings(t.thread_cpu_lists);
  for (const CpuIds& c : t.cpus) {
    s.u32(c.core_id);
    s.u32(c.socket_id);
  }
  if (t.has_dies) {
    s.strings(t.die_cpu_lists);
    for (const CpuIds& c : t.cpus) s.u32(c.die_id);
  }
  return s.take();
}

std::vector<std::byte> numa_section(const std::vector<NumaNode>& nodes) {
  Section s;
  s.u32(static_cast<std::uint32_t>(nodes.size()));
  for (const NumaNode& n : nodes) {
    s.u32(n.node);
    s.u64(n.mem_total_kib);
    s.u64(n.mem_free_kib);
    s.string(n.cpu_list);
  }
  return s.take();
}

std::vector<std::byte> two_u32(std::uint32_t a, std::uint32_t b) {
  Section s;
  s.u32(a);
  s.u32(b);
  return s.take();
}

std::vector<std::byte> two_u64(std::uint64_t a, std::uint64_t b) {
  Section s;
  s.u64(a);
  s.u64(b);
  return s.take();
}

std::vector<std::byte> one_u64(std::uint64_t a) {
  Section s;
  s.u64(a);
  return s.take();
}

std::vector<std::byte> clock_data_section(const ClockData& c) {
  Section s;
  s.u32(1);  // version
  s.u32(c.clockid);
  s.u64(c.tod_ns);
  s.u64(c.clockid_ns);
  return s.take();
}

std::vector<std::byte> compressed_section(const CompressedFeature& c) {
  Section s;
  for (const std::uint32_t v : {c.version, c.type, c.level, c.ratio, c.mmap_len}) s.u32(v);
  return s.take();
}

std::vector<std::byte> auxtrace_section(const std::vector<AuxtraceIndexEntry>& index) {
  Section s;
  s.u64(index.size());
  for (const AuxtraceIndexEntry& e : index) {
    s.u64(e.file_offset);
    s.u64(e.size);
  }
  return s.take();
}

std::vector<std::byte> cmdline_section(const std::vector<std::string>& cmdline) {
  Section s;
  s.strings(cmdline);
  return s.take();
}

using Sections = FeatureList;

// GROUP_DESC, as perf 6.1's write_group_desc: u32 groups; per group (a
// leader with members) its name ("{anon_group}": groups here have none),
// u32 the leader's index, u32 its members with it. Empty: no group.
std::vector<std::byte> group_desc_section(const std::vector<EventDescription>& events) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> groups;  // leader, members
  for (std::size_t e = 0; e < events.size(); e++) {
    const int leader = events[e].group_leader;
    if (leader < 0) continue;
    VERIFY(static_cast<std::size_t>(leader) < e && events[static_cast<std::size_t>(leader)].group_leader < 0);
    if (groups.empty() || groups.back().first != static_cast<std::uint32_t>(leader)) {
      VERIFY(e == static_cast<std::size_t>(leader) + 1);  // members follow their leader
      groups.emplace_back(static_cast<std::uint32_t>(leader), 1);
    }
    VERIFY(e == groups.back().first + groups.back().second);
    groups.back().second++;
  }
  if (groups.empty()) return {};
  Section s;
  s.u32(static_cast<std::uint32_t>(groups.size()));
  for (const auto& [leader, members] : groups) {
    s.string("{anon_group}");
    s.u32(leader);
    s.u32(members);
  }
  return s.take();
}

// The host's sections, in bit order.
void host_sections(const HostFeatures& h, const std::vector<EventDescription>& events, Sections& out) {
  out.emplace_back(Feature::hostname, string_section(h.hostname));
  out.emplace_back(Feature::osrelease, string_section(h.osrelease));
  out.emplace_back(Feature::version, string_section(h.version));
  out.emplace_back(Feature::arch, string_section(h.arch));
  out.emplace_back(Feature::nrcpus, two_u32(h.cpus_avail, h.cpus_online));
  out.emplace_back(Feature::cpudesc, string_section(h.cpudesc));
  out.emplace_back(Feature::cpuid, string_section(h.cpuid));
  out.emplace_back(Feature::total_mem, one_u64(h.total_mem_kib));
  out.emplace_back(Feature::cmdline, cmdline_section(h.cmdline));
  out.emplace_back(Feature::event_desc, event_desc_section(events));
  out.emplace_back(Feature::cpu_topology, cpu_topology_section(h));
  out.emplace_back(Feature::numa_topology, numa_section(h.numa));
  if (std::vector<std::byte> groups = group_desc_section(events); !groups.empty()) {
    out.emplace_back(Feature::group_desc, std::move(groups));
  }
}

}  // namespace

std::string to_hex(const std::vector<std::uint8_t>& id) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (const std::uint8_t b : id) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

const char* to_string(Feature feature) {
  switch (feature) {
    case Feature::tracing_data: return "TRACING_DATA";
    case Feature::build_id: return "BUILD_ID";
    case Feature::hostname: return "HOSTNAME";
    case Feature::osrelease: return "OSRELEASE";
    case Feature::version: return "VERSION";
    case Feature::arch: return "ARCH";
    case Feature::nrcpus: return "NRCPUS";
    case Feature::cpudesc: return "CPUDESC";
    case Feature::cpuid: return "CPUID";
    case Feature::total_mem: return "TOTAL_MEM";
    case Feature::cmdline: return "CMDLINE";
    case Feature::event_desc: return "EVENT_DESC";
    case Feature::cpu_topology: return "CPU_TOPOLOGY";
    case Feature::numa_topology: return "NUMA_TOPOLOGY";
    case Feature::group_desc: return "GROUP_DESC";
    case Feature::auxtrace: return "AUXTRACE";
    case Feature::sample_time: return "SAMPLE_TIME";
    case Feature::clockid: return "CLOCKID";
    case Feature::compressed: return "COMPRESSED";
    case Feature::clock_data: return "CLOCK_DATA";
  }
  return "?";
}

FeatureList feature_list(const PerfFeatures& features, const std::vector<EventDescription>& events) {
  Sections sections;
  const FileFeatures& f = features.file;
  const HostFeatures& h = features.host;
  // Every section has bytes: readers (hotspot's) take a size of 0 for a
  // missing section.
  if (!h.tracing_data.empty()) sections.emplace_back(Feature::tracing_data, h.tracing_data);
  if (!f.build_ids.empty()) sections.emplace_back(Feature::build_id, build_id_section(f.build_ids));
  host_sections(h, events, sections);
  if (f.aux_recorded) sections.emplace_back(Feature::auxtrace, auxtrace_section(f.auxtrace));
  sections.emplace_back(Feature::sample_time, two_u64(f.first_sample_ns, f.last_sample_ns));
  if (h.clock_resolution_ns) sections.emplace_back(Feature::clockid, one_u64(*h.clock_resolution_ns));
  if (f.compressed) sections.emplace_back(Feature::compressed, compressed_section(*f.compressed));
  if (h.clock_data) sections.emplace_back(Feature::clock_data, clock_data_section(*h.clock_data));
  return sections;
}

FeatureSections feature_sections(const PerfFeatures& features, const std::vector<EventDescription>& events,
                                 std::uint64_t at) {
  const Sections sections = feature_list(features, events);
  FeatureSections out;
  std::uint64_t offset = at + sections.size() * sizeof(FileSection);
  std::vector<std::byte> body;
  Section table;
  std::uint32_t previous_bit = 0;
  for (const auto& [feature, bytes] : sections) {
    const std::uint32_t bit = static_cast<std::uint32_t>(feature);
    VERIFY(bit > previous_bit);  // the table follows the bit order
    VERIFY(!bytes.empty());
    previous_bit = bit;
    out.bitmap[bit / 64] |= std::uint64_t{1} << (bit % 64);
    table.u64(offset);
    table.u64(bytes.size());
    offset += bytes.size();
    body.insert(body.end(), bytes.begin(), bytes.end());
  }
  out.bytes = table.take();
  out.bytes.insert(out.bytes.end(), body.begin(), body.end());
  VERIFY(at + out.bytes.size() == offset);
  return out;
}

PerfDataView data_view(std::span<const std::byte> data, std::uint64_t data_offset,
                       const std::vector<EventDescription>& events) {
  PerfDataView view;
  for (const EventDescription& e : events) view.attrs.push_back(PerfDataAttr{e.attr, e.ids});
  view.file_header.data = FileSection{data_offset, data.size()};
  view.data = data;
  view.file_bytes = data_offset + data.size();
  return view;
}

std::string scan_data_section(std::span<const std::byte> data, std::uint64_t data_offset,
                              const std::vector<EventDescription>& events, FileFeatures& out) {
  const PerfDataView view = data_view(data, data_offset, events);
  bool any = false;
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  std::vector<AuxtraceIndexEntry> index;
  RecordCounts counts;
  std::uint64_t at = data_offset;
  const WalkResult walk =
      walk_records(view.data, counts, [&](const perf_event_header& header, std::span<const std::byte> record) {
        if (header.type == kRecordAuxtrace) index.push_back(AuxtraceIndexEntry{at, header.size});
        at += record.size();
        std::uint64_t time_ns = 0;
        if (header.type != PERF_RECORD_SAMPLE || !view.time_of(header, record, time_ns)) return;
        if (!any || time_ns < first) first = time_ns;
        if (!any || time_ns > last) last = time_ns;
        any = true;
      });
  out.first_sample_ns = first;
  out.last_sample_ns = last;
  out.auxtrace = std::move(index);
  if (walk.error == RecordError::none) return "";
  return "data section: record at offset " + std::to_string(walk.valid_bytes) + ": " + to_string(walk.error);
}

}  // namespace ringsim::core
