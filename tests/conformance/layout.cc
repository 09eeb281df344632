#include "tests/conformance/layout.h"

#include <linux/perf_event.h>

#include <cstring>

#include "core/verify.h"

namespace ringsim::conformance {
namespace {

constexpr std::uint64_t kIdFields = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
                                    PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
// The u64 fields of a sample, in perf_output_sample's order up to RAW.
constexpr std::uint64_t kSampleWords[] = {PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP,       PERF_SAMPLE_TID,
                                          PERF_SAMPLE_TIME,       PERF_SAMPLE_ADDR,     PERF_SAMPLE_ID,
                                          PERF_SAMPLE_STREAM_ID,  PERF_SAMPLE_CPU,      PERF_SAMPLE_PERIOD};
constexpr std::uint64_t kSupported = kIdFields | PERF_SAMPLE_IP | PERF_SAMPLE_ADDR | PERF_SAMPLE_PERIOD |
                                     PERF_SAMPLE_RAW | PERF_SAMPLE_STACK_USER;

std::uint32_t align8(std::uint32_t n) { return (n + 7) & ~7u; }

bool tracepoint(Source s) { return s == Source::getpid || s == Source::getppid || s == Source::getuid; }

void put64(std::byte* at, std::uint64_t value) { std::memcpy(at, &value, 8); }

// The sample_id trailer (perf_event__output_id_sample's order) at `at`.
void put_trailer(std::byte* at, const EventSpec& spec, std::uint64_t id, std::uint64_t time_ns) {
  if (!spec.sample_id_all) return;
  const std::uint64_t t = spec.sample_type;
  if (t & PERF_SAMPLE_TID) at += 8;
  if (t & PERF_SAMPLE_TIME) put64(at, time_ns), at += 8;
  if (t & PERF_SAMPLE_ID) put64(at, id), at += 8;
  if (t & PERF_SAMPLE_STREAM_ID) put64(at, id), at += 8;
  if (t & PERF_SAMPLE_CPU) at += 8;
  if (t & PERF_SAMPLE_IDENTIFIER) put64(at, id);
}

}  // namespace

std::uint32_t id_header_bytes(const EventSpec& spec) {
  if (!spec.sample_id_all) return 0;
  return 8 * static_cast<std::uint32_t>(__builtin_popcountll(spec.sample_type & kIdFields));
}

sim::RecordLayout trailer_layout(const EventSpec& spec) {
  const std::uint64_t fields = spec.sample_id_all ? spec.sample_type & kIdFields : 0;
  if (fields == 0) return sim::RecordLayout::none;
  if (fields == (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_IDENTIFIER)) return sim::RecordLayout::b;
  VERIFY_MSG(fields == (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER),
             "a trailer the simulated ring cannot build");
  return sim::RecordLayout::a;
}

std::uint32_t sample_bytes(const EventSpec& spec) {
  const std::uint64_t t = spec.sample_type;
  VERIFY((t & ~kSupported) == 0);
  std::uint32_t size = 8;
  for (std::uint64_t bit : kSampleWords) size += (t & bit) ? 8 : 0;
  if (t & PERF_SAMPLE_RAW) {
    VERIFY(tracepoint(spec.source));
    size += align8(4 + kSyscallRawBytes);
  }
  size += user_stack_bytes(spec);
  VERIFY(size <= 65528);
  return size;
}

std::uint32_t user_stack_bytes(const EventSpec& spec) {
  if (!(spec.sample_type & PERF_SAMPLE_STACK_USER)) return 0;
  VERIFY(spec.stack_user % 8 == 0);
  return spec.stack_user == 0 ? 8 : 16 + spec.stack_user;  // size; data, dyn_size
}

std::uint32_t sideband_bytes(std::uint32_t type, const EventSpec& spec, std::string_view name) {
  const std::uint32_t trailer = id_header_bytes(spec);
  switch (type) {
    case PERF_RECORD_COMM:
      return 16 + align8(static_cast<std::uint32_t>(name.size()) + 1) + trailer;
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT:
      return 32 + trailer;
    case PERF_RECORD_MMAP2:
      return 72 + align8(static_cast<std::uint32_t>(name.size()) + 1) + trailer;
    case PERF_RECORD_LOST:
      return 24 + trailer;
    default:
      break;
  }
  VERIFY_MSG(false, "not a side-band record of the suite");
  return 0;
}

bool has_identifier(const EventSpec& spec) { return (spec.sample_type & PERF_SAMPLE_IDENTIFIER) != 0; }

std::optional<std::uint32_t> time_offset(std::uint32_t type, std::uint32_t size, const EventSpec& spec) {
  const std::uint64_t t = spec.sample_type;
  if (!(t & PERF_SAMPLE_TIME)) return std::nullopt;
  if (type == PERF_RECORD_SAMPLE) {
    std::uint32_t at = 8;
    for (std::uint64_t bit : {PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP, PERF_SAMPLE_TID}) at += (t & bit) ? 8 : 0;
    return at;
  }
  if (!spec.sample_id_all) return std::nullopt;
  VERIFY(size >= id_header_bytes(spec));
  return size - id_header_bytes(spec) + ((t & PERF_SAMPLE_TID) ? 8 : 0);
}

void build_record(std::span<std::byte> out, std::uint32_t type, std::uint16_t misc, const EventSpec& spec,
                  std::uint64_t id, std::uint64_t time_ns) {
  VERIFY(out.size() >= 8);
  VERIFY(out.size() % 8 == 0);
  std::memset(out.data(), 0, out.size());
  perf_event_header header{};
  header.type = type;
  header.misc = misc;
  header.size = static_cast<std::uint16_t>(out.size());
  std::memcpy(out.data(), &header, sizeof header);
  if (type != PERF_RECORD_SAMPLE) {
    put_trailer(out.data() + out.size() - id_header_bytes(spec), spec, id, time_ns);
    return;
  }
  std::byte* at = out.data() + 8;
  const std::uint64_t t = spec.sample_type;
  for (std::uint64_t bit : kSampleWords) {
    if (!(t & bit)) continue;
    if (bit == PERF_SAMPLE_IDENTIFIER || bit == PERF_SAMPLE_ID || bit == PERF_SAMPLE_STREAM_ID) put64(at, id);
    if (bit == PERF_SAMPLE_TIME) put64(at, time_ns);
    if (bit == PERF_SAMPLE_PERIOD) put64(at, 1);
    at += 8;
  }
  if (t & PERF_SAMPLE_RAW) {
    const std::uint32_t raw = kSyscallRawBytes;
    std::memcpy(at, &raw, 4);
    at += align8(4 + raw);
  }
  if (t & PERF_SAMPLE_STACK_USER) put64(at, spec.stack_user);
}

}  // namespace ringsim::conformance
