#include "core/perf_data_pipe.h"

#include <cstring>
#include <limits>

#include "core/bytes.h"
#include "core/verify.h"

namespace ringsim::core {
namespace {

void put_header(std::vector<std::byte>& out, std::uint32_t type, std::uint64_t size) {
  VERIFY(size <= std::numeric_limits<std::uint16_t>::max());
  append_int<std::uint32_t>(out, type);
  append_int<std::uint16_t>(out, 0);
  append_int<std::uint16_t>(out, static_cast<std::uint16_t>(size));
}

}  // namespace

std::vector<std::byte> pipe_prefix(const std::vector<EventDescription>& events, const PerfFeatures& features) {
  std::vector<std::byte> out;
  append_int<std::uint64_t>(out, kPerfFileMagic);
  append_int<std::uint64_t>(out, kPerfPipeHeaderBytes);
  for (const EventDescription& e : events) {
    VERIFY(e.attr.size <= sizeof e.attr && e.attr.size > 0);
    put_header(out, kRecordHeaderAttr, sizeof(perf_event_header) + e.attr.size + 8 * e.ids.size());
    append_bytes(out, &e.attr, e.attr.size);
    for (const std::uint64_t id : e.ids) append_int<std::uint64_t>(out, id);
  }
  PerfFeatures host_only;
  host_only.host = features.host;
  host_only.host.tracing_data.clear();
  host_only.file.compressed = features.file.compressed;
  for (const auto& [feature, bytes] : feature_list(host_only, events)) {
    put_header(out, kRecordHeaderFeature, sizeof(perf_event_header) + 8 + bytes.size());
    append_int<std::uint64_t>(out, static_cast<std::uint64_t>(feature));
    append_bytes(out, bytes.data(), bytes.size());
  }
  const std::vector<std::byte>& tracing = features.host.tracing_data;
  if (!tracing.empty()) {
    const std::uint64_t padded = (tracing.size() + 7) / 8 * 8;
    VERIFY(padded <= std::numeric_limits<std::uint32_t>::max());
    put_header(out, kRecordHeaderTracingData, 16);
    append_int<std::uint32_t>(out, static_cast<std::uint32_t>(padded));
    append_int<std::uint32_t>(out, 0);
    append_bytes(out, tracing.data(), tracing.size());
    out.resize(out.size() + (padded - tracing.size()), std::byte{0});
  }
  return out;
}

}  // namespace ringsim::core
