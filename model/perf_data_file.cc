#include "model/perf_data_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

namespace ringsim::model {
namespace {

constexpr std::uint64_t kMagic = 0x32454c4946524550ull;  // "PERFILE2"
constexpr std::uint64_t kFileHeaderBytes = 104;
constexpr std::uint64_t kAttrBytesMin = 64 + 16;  // PERF_ATTR_SIZE_VER0 + ids section
constexpr std::uint32_t kSample = kTypeSample;
constexpr std::uint32_t kLost = kTypeLost;
// sample_type bits
constexpr std::uint64_t kIp = 1u << 0, kTid = 1u << 1, kTime = 1u << 2, kAddr = 1u << 3, kId = 1u << 6,
                        kCpu = 1u << 7, kStreamId = 1u << 9, kIdentifier = 1u << 16;

bool in_file(std::uint64_t offset, std::uint64_t size, std::uint64_t file_size) {
  return offset <= file_size && size <= file_size - offset;
}

// Offset of the cpu / time field in a sample record, or -1.
long sample_field_offset(std::uint64_t sample_type, std::uint64_t field) {
  long offset = 8;  // header
  if (sample_type & kIdentifier) offset += 8;
  if (sample_type & kIp) offset += 8;
  if (sample_type & kTid) offset += 8;
  if (field == kTime) return (sample_type & kTime) ? offset : -1;
  if (sample_type & kTime) offset += 8;
  if (sample_type & kAddr) offset += 8;
  if (sample_type & kId) offset += 8;
  if (sample_type & kStreamId) offset += 8;
  if (field == kCpu) return (sample_type & kCpu) ? offset : -1;
  return -1;
}

// Offset from the end of a non-sample record (sample_id trailer).
long trailer_field_offset_from_end(std::uint64_t sample_type, std::uint64_t field) {
  // Trailer order: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER.
  long from_end = 0;
  if (sample_type & kIdentifier) from_end += 8;
  if (field == kCpu) return (sample_type & kCpu) ? from_end + 8 : -1;
  if (sample_type & kCpu) from_end += 8;
  if (sample_type & kStreamId) from_end += 8;
  if (sample_type & kId) from_end += 8;
  if (field == kTime) return (sample_type & kTime) ? from_end + 8 : -1;
  return -1;
}

}  // namespace

// One PERF_RECORD_HEADER_ATTR: the attr (its own size), then its ids.
std::string pipe_attr(std::span<const std::byte> record, PerfDataFile& f) {
  if (record.size() < 8 + kAttrBytesMin) return "ATTR record of " + std::to_string(record.size()) + " bytes";
  const std::byte* a = record.data() + 8;
  const std::uint32_t attr_size = load<std::uint32_t>(a + 4);
  if (attr_size < kAttrBytesMin || attr_size > record.size() - 8 || (record.size() - 8 - attr_size) % 8 != 0) {
    return "ATTR record with an attr of " + std::to_string(attr_size) + " bytes in " + std::to_string(record.size());
  }
  PerfAttr attr;
  attr.type = load<std::uint32_t>(a);
  attr.config = load<std::uint64_t>(a + 8);
  attr.sample_type = load<std::uint64_t>(a + 24);
  attr.sample_id_all = (load<std::uint64_t>(a + 40) >> 18) & 1;
  for (std::uint64_t at = 8 + attr_size; at < record.size(); at += 8) attr.ids.push_back(load<std::uint64_t>(record.data() + at));
  f.attrs.push_back(std::move(attr));
  return "";
}

// perf's pipe format (perf record -o -): a 16-byte header, then records:
// ATTR (64) and FEATURE (80) records say what a file's header and feature
// sections would; TRACING_DATA (66) is followed by its data (outside the
// record, padded to 8); every other record is data, as a file's data
// section would hold it.
std::string parse_perf_pipe(std::span<const std::byte> stream, PerfDataFile& out) {
  constexpr std::uint32_t kHeaderAttr = 64, kHeaderTracingData = 66, kHeaderFeature = 80;
  PerfDataFile f;
  f.file_size = stream.size();
  f.data_offset = 16;
  std::uint64_t at = 16;
  // Bounded: every record is at least 8 bytes.
  for (std::uint64_t n = 0; at < stream.size() && n <= stream.size() / 8; n++) {
    if (stream.size() - at < 8) return "a record header cut at stream offset " + std::to_string(at);
    const std::uint32_t type = load<std::uint32_t>(stream.data() + at);
    const std::uint16_t size = load<std::uint16_t>(stream.data() + at + 6);
    if (size < 8 || size > stream.size() - at) {
      return "record of type " + std::to_string(type) + " and size " + std::to_string(size) + " at stream offset " +
             std::to_string(at);
    }
    const std::span<const std::byte> record = stream.subspan(at, size);
    std::string problem;
    std::uint64_t next = at + size;
    if (type == kHeaderAttr) {
      problem = pipe_attr(record, f);
    } else if (type == kHeaderFeature && size >= 16) {
      const std::uint64_t bit = load<std::uint64_t>(record.data() + 8);
      problem = parse_feature_section(bit < 256 ? static_cast<std::uint32_t>(bit) : 256, record.subspan(16), f.features);
    } else if (type == kHeaderTracingData && size >= 12) {
      const std::uint32_t data = load<std::uint32_t>(record.data() + 8);
      if (data % 8 != 0 || data > stream.size() - next) return "TRACING_DATA of " + std::to_string(data) + " bytes";
      problem = parse_feature_section(1, stream.subspan(next, data), f.features, 7);
      next += data;
    } else {
      f.data.insert(f.data.end(), record.begin(), record.end());
    }
    if (!problem.empty()) return problem + " (stream offset " + std::to_string(at) + ")";
    at = next;
  }
  if (f.attrs.empty()) return "a stream without ATTR records";
  f.data_size = f.data.size();
  out = std::move(f);
  return "";
}

std::string parse_perf_data(std::span<const std::byte> file, PerfDataFile& out) {
  const std::uint64_t size = file.size();
  const std::byte* p = file.data();
  if (size >= 16 && load<std::uint64_t>(p) == kMagic && load<std::uint64_t>(p + 8) == 16) {
    return parse_perf_pipe(file, out);
  }
  if (size < kFileHeaderBytes) return "shorter than a perf.data header (" + std::to_string(size) + " bytes)";
  if (load<std::uint64_t>(p) != kMagic) return "not a perf.data file (bad magic)";
  if (load<std::uint64_t>(p + 8) != kFileHeaderBytes) return "unexpected header size " + std::to_string(load<std::uint64_t>(p + 8));
  const std::uint64_t attr_size = load<std::uint64_t>(p + 16);
  const std::uint64_t attrs_offset = load<std::uint64_t>(p + 24), attrs_size = load<std::uint64_t>(p + 32);
  const std::uint64_t data_offset = load<std::uint64_t>(p + 40), data_size = load<std::uint64_t>(p + 48);
  if (attr_size < kAttrBytesMin || attr_size > 4096) return "bad attribute size " + std::to_string(attr_size);
  if (!in_file(attrs_offset, attrs_size, size)) return "attribute section outside the file";
  if (attrs_size == 0 || attrs_size % attr_size != 0) return "attribute section is not a whole number of attributes";
  if (!in_file(data_offset, data_size, size)) {
    return "data section [" + std::to_string(data_offset) + ", +" + std::to_string(data_size) +
           ") extends past the end of the file (" + std::to_string(size) + " bytes)";
  }
  PerfDataFile f;
  f.data_offset = data_offset;
  f.data_size = data_size;
  f.file_size = size;
  for (std::uint64_t at = attrs_offset; at < attrs_offset + attrs_size; at += attr_size) {
    const std::byte* a = p + at;
    PerfAttr attr;
    attr.type = load<std::uint32_t>(a);
    attr.config = load<std::uint64_t>(a + 8);
    attr.sample_type = load<std::uint64_t>(a + 24);
    const std::uint64_t flags = load<std::uint64_t>(a + 40);
    attr.sample_id_all = (flags >> 18) & 1;
    const std::uint64_t ids_offset = load<std::uint64_t>(a + attr_size - 16);
    const std::uint64_t ids_size = load<std::uint64_t>(a + attr_size - 8);
    if (!in_file(ids_offset, ids_size, size) || ids_size % 8 != 0) return "event ids outside the file";
    for (std::uint64_t i = 0; i < ids_size; i += 8) attr.ids.push_back(load<std::uint64_t>(p + ids_offset + i));
    f.attrs.push_back(std::move(attr));
  }
  std::uint64_t bitmap[4];
  for (int i = 0; i < 4; i++) bitmap[i] = load<std::uint64_t>(p + 72 + 8 * i);
  if (const std::string problem = parse_perf_features(file, bitmap, data_offset + data_size, f.features);
      !problem.empty()) {
    return "feature sections: " + problem;
  }
  f.data.assign(file.begin() + static_cast<std::ptrdiff_t>(data_offset),
                file.begin() + static_cast<std::ptrdiff_t>(data_offset + data_size));
  out = std::move(f);
  return "";
}

std::string read_perf_data(const std::string& path, PerfDataFile& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return path + ": cannot open: " + std::strerror(errno);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(text.data()), text.size());
  const std::string problem = parse_perf_data(bytes, out);
  return problem.empty() ? "" : path + ": " + problem;
}

std::string PerfDataFile::for_each_record(const std::function<void(const PerfRecord&)>& on_record) const {
  const std::string problem = walk_file_records(data, on_record);
  return problem.empty() ? "" : "data section: " + problem;
}

bool PerfDataFile::id_of(const PerfRecord& record, std::uint64_t& id) const {
  if (attrs.empty()) return false;
  for (const PerfAttr& a : attrs) {
    if ((a.sample_type & kIdentifier) == 0) return false;
  }
  if (record.type == kSample && record.size >= 16) {
    id = load<std::uint64_t>(record.bytes.data() + 8);
    return true;
  }
  if (record.type < kTypeUserFirst && record.size >= 16 && attrs.front().sample_id_all) {
    id = load<std::uint64_t>(record.bytes.data() + record.size - 8);
    return true;
  }
  return false;
}

const PerfAttr* PerfDataFile::attr_of(const PerfRecord& record) const {
  if (attrs.size() == 1) return &attrs.front();
  std::uint64_t id = 0;
  if (!id_of(record, id)) return nullptr;
  for (const PerfAttr& a : attrs) {
    for (const std::uint64_t x : a.ids) {
      if (x == id) return &a;
    }
  }
  return nullptr;
}

// The offset of `field` (kTime or kCpu) in `record`, or -1.
long PerfDataFile::field_offset(const PerfRecord& record, std::uint64_t field) const {
  const PerfAttr* a = attr_of(record);
  if (a == nullptr) return -1;
  if (record.type == kSample) return sample_field_offset(a->sample_type, field);
  if (!a->sample_id_all || record.type >= kTypeUserFirst) return -1;
  const long from_end = trailer_field_offset_from_end(a->sample_type, field);
  return from_end < 0 ? -1 : static_cast<long>(record.size) - from_end;
}

bool PerfDataFile::cpu_of(const PerfRecord& record, std::uint32_t& cpu) const {
  const long at = field_offset(record, kCpu);
  if (at < 8 || static_cast<std::uint64_t>(at) + 4 > record.size) return false;
  cpu = load<std::uint32_t>(record.bytes.data() + at);
  return true;
}

bool PerfDataFile::time_of(const PerfRecord& record, std::uint64_t& time_ns) const {
  const long at = field_offset(record, kTime);
  if (at < 8 || static_cast<std::uint64_t>(at) + 8 > record.size) return false;
  time_ns = load<std::uint64_t>(record.bytes.data() + at);
  return true;
}

double LossStats::loss_metric() const {
  const std::uint64_t elapsed = last_time_ns - first_time_ns;
  return elapsed == 0 ? (lost_time_ns > 0 ? 1.0 : 0.0) : static_cast<double>(lost_time_ns) / static_cast<double>(elapsed);
}

double LossStats::lost_fraction() const {
  // In doubles: a LOST count near 2^64 (a damaged file) must not wrap the sum.
  const double lost = static_cast<double>(lost_sum);
  const double total = static_cast<double>(samples) + lost;
  return total == 0 ? 0.0 : lost / total;
}

namespace {

// The stats of the records `walk` hands over, in order, with `file`'s
// attributes; returns walk's problem.
template <typename Walk>
std::string loss_stats_of(const PerfDataFile& file, const Walk& walk, LossStats& out) {
  LossStats s;
  bool any_time = false;
  std::map<std::uint32_t, std::uint64_t> previous_on_cpu;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> intervals;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> pending;  // LOST without a previous record: (cpu, time)
  const std::string problem = walk([&](const PerfRecord& r) {
    s.records++;
    if (r.type == kSample) s.samples++;
    if (r.type == kLost && r.size >= 24) {
      s.lost_records++;
      s.lost_sum += load<std::uint64_t>(r.bytes.data() + 16);
    }
    // The recording's time line is that of its samples and LOST records:
    // records a recorder synthesizes (COMM, MMAP, ...) carry time 0.
    if (r.type != kSample && r.type != kLost) return;
    std::uint64_t time = 0;
    if (!file.time_of(r, time)) return;
    if (!any_time || time < s.first_time_ns) s.first_time_ns = time;
    if (!any_time || time > s.last_time_ns) s.last_time_ns = time;
    any_time = true;
    std::uint32_t cpu = 0;
    if (!file.cpu_of(r, cpu)) cpu = UINT32_MAX;
    if (r.type == kLost) {
      const auto it = previous_on_cpu.find(cpu);
      if (it == previous_on_cpu.end()) {
        pending.emplace_back(cpu, time);
      } else if (time > it->second) {
        intervals.emplace_back(it->second, time);
      }
    }
    previous_on_cpu[cpu] = time;
  });
  for (const auto& [cpu, time] : pending) {
    if (time > s.first_time_ns) intervals.emplace_back(s.first_time_ns, time);
  }
  std::sort(intervals.begin(), intervals.end());
  std::uint64_t covered_until = 0;
  for (const auto& [begin, end] : intervals) {
    const std::uint64_t from = std::max(begin, covered_until);
    if (end > from) {
      s.lost_time_ns += end - from;
      covered_until = end;
    }
  }
  out = s;
  return problem;
}

}  // namespace

std::string loss_stats(const PerfDataFile& file, LossStats& out) {
  return loss_stats_of(
      file, [&](const std::function<void(const PerfRecord&)>& on_record) { return file.for_each_record(on_record); },
      out);
}

std::string loss_stats(const PerfDataFile& file, std::span<const std::span<const std::byte>> parts, LossStats& out) {
  LossStats s;
  const std::string problem = loss_stats_of(
      file,
      [&](const std::function<void(const PerfRecord&)>& on_record) -> std::string {
        for (const std::span<const std::byte> part : parts) {
          if (std::string p = walk_records(part, on_record); !p.empty()) return p;
        }
        return "";
      },
      s);
  if (problem.empty()) {
    out = s;
    return "";
  }
  // A part that is not whole records: what the concatenation's walk says.
  PerfDataFile whole;
  whole.attrs = file.attrs;
  for (const std::span<const std::byte> part : parts) whole.data.insert(whole.data.end(), part.begin(), part.end());
  whole.data_size = whole.data.size();
  return loss_stats(whole, out);
}

}  // namespace ringsim::model
