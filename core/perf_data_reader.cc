#include "core/perf_data_reader.h"

#include <algorithm>
#include <cstring>

#include "core/perf_abi.h"
#include "core/verify.h"

namespace ringsim::core {
namespace {

constexpr std::uint64_t kAttrBytesMin = PERF_ATTR_SIZE_VER0 + sizeof(FileSection);
constexpr std::uint64_t kAttrBytesMax = 4096;
constexpr std::uint64_t kIdsMax = std::uint64_t{1} << 20;

bool in_file(const FileSection& s, std::uint64_t file_bytes) {
  return s.offset <= file_bytes && s.size <= file_bytes - s.offset;
}

// Offset of `field` (PERF_SAMPLE_TIME or _CPU) in a sample, or -1.
std::int64_t sample_offset(std::uint64_t sample_type, std::uint64_t field) {
  std::int64_t at = static_cast<std::int64_t>(kRecordHeaderBytes);
  for (const std::uint64_t bit : {std::uint64_t{PERF_SAMPLE_IDENTIFIER}, std::uint64_t{PERF_SAMPLE_IP},
                                  std::uint64_t{PERF_SAMPLE_TID}, std::uint64_t{PERF_SAMPLE_TIME},
                                  std::uint64_t{PERF_SAMPLE_ADDR}, std::uint64_t{PERF_SAMPLE_ID},
                                  std::uint64_t{PERF_SAMPLE_STREAM_ID}, std::uint64_t{PERF_SAMPLE_CPU}}) {
    if (bit == field) return (sample_type & bit) ? at : -1;
    if (sample_type & bit) at += 8;
  }
  return -1;
}

// Bytes from the end of a record to `field` in its sample_id trailer
// ({TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER} as far as sample_type has
// them), or -1.
std::int64_t trailer_offset_from_end(std::uint64_t sample_type, std::uint64_t field) {
  std::int64_t from_end = 0;
  for (const std::uint64_t bit : {std::uint64_t{PERF_SAMPLE_IDENTIFIER}, std::uint64_t{PERF_SAMPLE_CPU},
                                  std::uint64_t{PERF_SAMPLE_STREAM_ID}, std::uint64_t{PERF_SAMPLE_ID},
                                  std::uint64_t{PERF_SAMPLE_TIME}, std::uint64_t{PERF_SAMPLE_TID}}) {
    if (sample_type & bit) from_end += 8;
    if (bit == field) return (sample_type & bit) ? from_end : -1;
  }
  return -1;
}

// The field's offset in the record, or -1.
std::int64_t field_offset(const PerfDataAttr& a, const perf_event_header& header, std::uint64_t field) {
  if (header.type == PERF_RECORD_SAMPLE) return sample_offset(a.attr.sample_type, field);
  if (a.attr.sample_id_all == 0 || header.type >= kRecordUserTypeFirst) return -1;
  const std::int64_t from_end = trailer_offset_from_end(a.attr.sample_type, field);
  return from_end < 0 ? -1 : static_cast<std::int64_t>(header.size) - from_end;
}

template <class T>
bool field(const PerfDataView& view, const perf_event_header& header, std::span<const std::byte> record,
           std::uint64_t bit, T& out) {
  const PerfDataAttr* a = view.attr_of(header, record);
  if (a == nullptr) return false;
  const std::int64_t at = field_offset(*a, header, bit);
  if (at < static_cast<std::int64_t>(kRecordHeaderBytes)) return false;
  if (static_cast<std::uint64_t>(at) + sizeof(T) > header.size) return false;
  out = load<T>(record.data() + at);
  return true;
}

}  // namespace

const PerfDataAttr* PerfDataView::attr_of(const perf_event_header& header, std::span<const std::byte> record) const {
  if (attrs.empty()) return nullptr;
  bool identified = true;
  for (const PerfDataAttr& a : attrs) identified &= (a.attr.sample_type & PERF_SAMPLE_IDENTIFIER) != 0;
  if (!identified || attrs.size() == 1) return &attrs.front();
  std::uint64_t id = 0;
  if (header.type == PERF_RECORD_SAMPLE && header.size >= kRecordHeaderBytes + 8) {
    id = load<std::uint64_t>(record.data() + kRecordHeaderBytes);
  } else if (header.type < kRecordUserTypeFirst && header.size >= kRecordHeaderBytes + 8) {
    id = load<std::uint64_t>(record.data() + header.size - 8);
  } else {
    return nullptr;
  }
  for (const PerfDataAttr& a : attrs) {
    if (std::find(a.ids.begin(), a.ids.end(), id) != a.ids.end()) return &a;
  }
  return nullptr;
}

bool PerfDataView::time_of(const perf_event_header& header, std::span<const std::byte> record,
                           std::uint64_t& time_ns) const {
  return field(*this, header, record, PERF_SAMPLE_TIME, time_ns);
}

bool PerfDataView::cpu_of(const perf_event_header& header, std::span<const std::byte> record,
                          std::uint32_t& cpu) const {
  return field(*this, header, record, PERF_SAMPLE_CPU, cpu);
}

std::string read_perf_data(std::span<const std::byte> file, PerfDataView& out) {
  const std::uint64_t size = file.size();
  if (size < kPerfFileHeaderBytes) return "shorter than a perf.data header (" + std::to_string(size) + " bytes)";
  PerfDataView v;
  v.file_bytes = size;
  v.file_header = load<PerfFileHeader>(file.data());
  const PerfFileHeader& h = v.file_header;
  if (h.magic != kPerfFileMagic) return "not a perf.data file (bad magic)";
  if (h.size != kPerfFileHeaderBytes) return "unexpected header size " + std::to_string(h.size);
  if (h.attr_size < kAttrBytesMin || h.attr_size > kAttrBytesMax) {
    return "bad attribute size " + std::to_string(h.attr_size);
  }
  if (!in_file(h.attrs, size)) return "attribute section outside the file";
  if (h.attrs.size == 0 || h.attrs.size % h.attr_size != 0) {
    return "attribute section is not a whole number of attributes";
  }
  if (!in_file(h.data, size)) {
    return "data section [" + std::to_string(h.data.offset) + ", +" + std::to_string(h.data.size) +
           ") extends past the end of the file (" + std::to_string(size) + " bytes)";
  }
  const std::uint64_t attr_bytes = h.attr_size - sizeof(FileSection);
  for (std::uint64_t at = h.attrs.offset; at < h.attrs.offset + h.attrs.size; at += h.attr_size) {
    PerfDataAttr a;
    std::memcpy(&a.attr, file.data() + at, std::min<std::uint64_t>(attr_bytes, sizeof a.attr));
    const FileSection ids = load<FileSection>(file.data() + at + attr_bytes);
    if (!in_file(ids, size) || ids.size % 8 != 0 || ids.size / 8 > kIdsMax) return "event ids outside the file";
    for (std::uint64_t i = 0; i < ids.size; i += 8) a.ids.push_back(load<std::uint64_t>(file.data() + ids.offset + i));
    v.attrs.push_back(std::move(a));
  }
  v.data = file.subspan(h.data.offset, h.data.size);
  out = std::move(v);
  return "";
}

double LossStats::loss_metric() const {
  const std::uint64_t elapsed = last_time_ns - first_time_ns;
  if (elapsed == 0) return lost_time_ns > 0 ? 1.0 : 0.0;
  return static_cast<double>(lost_time_ns) / static_cast<double>(elapsed);
}

double LossStats::lost_fraction() const {
  // In doubles: a LOST count near 2^64 (a damaged file) must not wrap the sum.
  const double lost = static_cast<double>(records.lost_sum);
  const double total = static_cast<double>(records.samples) + lost;
  return total == 0 ? 0.0 : lost / total;
}

void LossMeter::note(std::uint32_t type, std::uint64_t time_ns, std::uint32_t cpu) {
  if (!any_time_ || time_ns < first_ns_) first_ns_ = time_ns;
  if (!any_time_ || time_ns > last_ns_) last_ns_ = time_ns;
  any_time_ = true;
  auto previous = std::find_if(previous_.begin(), previous_.end(), [&](const auto& p) { return p.first == cpu; });
  if (type == PERF_RECORD_LOST) {
    if (previous == previous_.end()) {
      pending_.emplace_back(cpu, time_ns);
    } else if (time_ns > previous->second) {
      intervals_.push_back(Interval{previous->second, time_ns});
    }
  }
  if (previous == previous_.end()) {
    previous_.emplace_back(cpu, time_ns);
  } else {
    previous->second = time_ns;
  }
}

std::string LossMeter::add(const PerfDataView& view) {
  const WalkResult walk =
      walk_records(view.data, records_, [&](const perf_event_header& header, std::span<const std::byte> record) {
        // The time line is that of samples and LOST records.
        if (header.type != PERF_RECORD_SAMPLE && header.type != PERF_RECORD_LOST) return;
        std::uint64_t time_ns = 0;
        if (!view.time_of(header, record, time_ns)) return;
        std::uint32_t cpu = UINT32_MAX;
        if (!view.cpu_of(header, record, cpu)) cpu = UINT32_MAX;
        note(header.type, time_ns, cpu);
      });
  if (walk.error == RecordError::none) return "";
  return "data section: record at offset " + std::to_string(walk.valid_bytes) + ": " + to_string(walk.error);
}

LossStats LossMeter::finish() const {
  LossStats s;
  s.records = records_;
  s.first_time_ns = first_ns_;
  s.last_time_ns = last_ns_;
  std::vector<Interval> intervals = intervals_;
  for (const auto& [cpu, time_ns] : pending_) {
    if (time_ns > first_ns_) intervals.push_back(Interval{first_ns_, time_ns});
  }
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  std::uint64_t covered_until = 0;
  for (const Interval& i : intervals) {
    const std::uint64_t from = std::max(i.begin, covered_until);
    if (i.end > from) {
      s.lost_time_ns += i.end - from;
      covered_until = i.end;
    }
  }
  return s;
}

}  // namespace ringsim::core
