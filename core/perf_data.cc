#include "core/perf_data.h"

#include <cstring>
#include <utility>

#include "core/verify.h"

namespace ringsim::core {

PerfDataHead::PerfDataHead(std::vector<EventDescription> events) : events_(std::move(events)) {
  VERIFY(!events_.empty());
  std::uint64_t offset = kPerfFileHeaderBytes;
  for (const EventDescription& e : events_) {
    VERIFY(!e.ids.empty());
    offset += e.ids.size() * sizeof(std::uint64_t);
  }
  attrs_offset_ = offset;
  data_offset_ = attrs_offset_ + events_.size() * (sizeof(perf_event_attr) + sizeof(FileSection));
  VERIFY(data_offset_ % 8 == 0);
}

std::array<std::byte, kPerfFileHeaderBytes> PerfDataHead::header(std::uint64_t data_bytes,
                                                               const std::array<std::uint64_t, 4>& features) const {
  PerfFileHeader h;
  for (std::size_t i = 0; i < features.size(); i++) h.features[i] = features[i];
  h.attrs = FileSection{attrs_offset_, data_offset_ - attrs_offset_};
  h.data = FileSection{data_offset_, data_bytes};
  std::array<std::byte, kPerfFileHeaderBytes> out;
  std::memcpy(out.data(), &h, sizeof h);
  return out;
}

std::vector<std::byte> PerfDataHead::bytes(std::uint64_t data_bytes) const {
  std::vector<std::byte> out(data_offset_);
  const auto h = header(data_bytes);
  std::memcpy(out.data(), h.data(), h.size());
  std::uint64_t ids_at = kPerfFileHeaderBytes;
  std::uint64_t attr_at = attrs_offset_;
  for (const EventDescription& e : events_) {
    const std::uint64_t ids_bytes = e.ids.size() * sizeof(std::uint64_t);
    std::memcpy(out.data() + ids_at, e.ids.data(), ids_bytes);
    perf_event_attr attr = e.attr;
    attr.size = sizeof(perf_event_attr);
    std::memcpy(out.data() + attr_at, &attr, sizeof attr);
    const FileSection ids{ids_at, ids_bytes};
    std::memcpy(out.data() + attr_at + sizeof attr, &ids, sizeof ids);
    ids_at += ids_bytes;
    attr_at += sizeof attr + sizeof ids;
  }
  VERIFY(ids_at == attrs_offset_);
  VERIFY(attr_at == data_offset_);
  return out;
}

const std::array<std::byte, 8>& finished_round_record() {
  static const std::array<std::byte, 8> record = [] {
    perf_event_header header{};
    header.type = kRecordFinishedRound;
    header.size = sizeof header;
    std::array<std::byte, 8> bytes;
    std::memcpy(bytes.data(), &header, sizeof header);
    return bytes;
  }();
  return record;
}

}  // namespace ringsim::core
