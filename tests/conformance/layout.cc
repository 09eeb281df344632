#include "tests/conformance/layout.h"

#include <linux/perf_event.h>

#include <algorithm>
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
                                     PERF_SAMPLE_READ | PERF_SAMPLE_RAW | PERF_SAMPLE_STACK_USER;

std::uint32_t align8(std::uint32_t n) { return (n + 7) & ~7u; }

void put64(std::byte* at, std::uint64_t value) { std::memcpy(at, &value, 8); }
void put32(std::byte* at, std::uint32_t value) { std::memcpy(at, &value, 4); }

// The sample_id trailer (perf_event__output_id_sample's order) at `at`.
void put_trailer(std::byte* at, const EventSpec& spec, std::uint64_t id, std::uint64_t time_ns, const RecordBody& b) {
  if (!spec.sample_id_all) return;
  const std::uint64_t t = spec.sample_type;
  if (t & PERF_SAMPLE_TID) put32(at, b.id_pid), put32(at + 4, b.id_tid), at += 8;
  if (t & PERF_SAMPLE_TIME) put64(at, time_ns), at += 8;
  if (t & PERF_SAMPLE_ID) put64(at, id), at += 8;
  if (t & PERF_SAMPLE_STREAM_ID) put64(at, id), at += 8;
  if (t & PERF_SAMPLE_CPU) put32(at, b.cpu), at += 8;
  if (t & PERF_SAMPLE_IDENTIFIER) put64(at, id);
}

// Offsets in the side-band bodies (perf_event_comm_output,
// perf_event_task_output, perf_event_mmap_output with attr.mmap2).
constexpr std::uint32_t kCommName = 16;
constexpr std::uint32_t kTaskTime = 24;
constexpr std::uint32_t kMmapAddr = 16, kMmapDevice = 40, kMmapProt = 64, kMmapName = 72;

// The body of a side-band record after its header.
void put_sideband(std::byte* out, std::uint32_t type, const RecordBody& b) {
  const std::size_t name = strnlen(b.name.data(), b.name.size());
  switch (type) {
    case PERF_RECORD_COMM:
      put32(out + 8, b.pids[0]), put32(out + 12, b.pids[1]);
      std::memcpy(out + kCommName, b.name.data(), name);
      return;
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT:  // pid, ppid, tid, ptid, time
      put32(out + 8, b.pids[0]), put32(out + 12, b.pids[2]), put32(out + 16, b.pids[1]), put32(out + 20, b.pids[3]);
      put64(out + kTaskTime, b.time);
      return;
    case PERF_RECORD_MMAP2:
      put32(out + 8, b.pids[0]), put32(out + 12, b.pids[1]);
      put64(out + kMmapAddr, b.addr), put64(out + kMmapAddr + 8, b.len), put64(out + kMmapAddr + 16, b.pgoff);
      if (b.use_build_id) {
        std::memcpy(out + kMmapDevice, &b.build_id_size, 1);
        std::memcpy(out + kMmapDevice + 4, b.build_id.data(), b.build_id.size());
      } else {
        put32(out + kMmapDevice, b.maj), put32(out + kMmapDevice + 4, b.min);
        put64(out + kMmapDevice + 8, b.ino), put64(out + kMmapDevice + 16, b.generation);
      }
      put32(out + kMmapProt, b.prot), put32(out + kMmapProt + 4, b.flags);
      std::memcpy(out + kMmapName, b.name.data(), name);
      return;
    default:
      return;
  }
}

// Reads from a ring's data with wrap-around.
class RingBytes {
 public:
  RingBytes(std::span<const std::byte> data, std::uint64_t pos) : data_(data), pos_(pos) {}
  void copy(std::uint64_t offset, void* out, std::size_t n) const {
    const std::uint64_t mask = data_.size() - 1;
    auto* o = static_cast<std::byte*>(out);
    for (std::size_t i = 0; i < n; i++) o[i] = data_[(pos_ + offset + i) & mask];
  }
  std::uint32_t u32(std::uint64_t offset) const {
    std::uint32_t v;
    copy(offset, &v, 4);
    return v;
  }
  std::uint64_t u64(std::uint64_t offset) const {
    std::uint64_t v;
    copy(offset, &v, 8);
    return v;
  }
  // A NUL-terminated string of at most `room` bytes at `offset`.
  void string(std::uint64_t offset, std::uint64_t room, std::array<char, 256>& out) const {
    out.fill(0);
    const std::uint64_t n = std::min<std::uint64_t>(room, out.size() - 1);
    copy(offset, out.data(), n);
  }

 private:
  std::span<const std::byte> data_;
  std::uint64_t pos_;
};

void read_sideband(const RingBytes& r, std::uint32_t type, std::uint16_t misc, std::uint16_t size, RecordBody& b) {
  switch (type) {
    case PERF_RECORD_COMM:
      b.npids = 2, b.pids[0] = r.u32(8), b.pids[1] = r.u32(12);
      r.string(kCommName, size - kCommName, b.name);
      return;
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT:
      b.npids = 4, b.pids[0] = r.u32(8), b.pids[2] = r.u32(12), b.pids[1] = r.u32(16), b.pids[3] = r.u32(20);
      b.time = r.u64(kTaskTime);
      return;
    case PERF_RECORD_MMAP2:
      b.npids = 2, b.pids[0] = r.u32(8), b.pids[1] = r.u32(12);
      b.addr = r.u64(kMmapAddr), b.len = r.u64(kMmapAddr + 8), b.pgoff = r.u64(kMmapAddr + 16);
      if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
        r.copy(kMmapDevice, &b.build_id_size, 1);
        r.copy(kMmapDevice + 4, b.build_id.data(), b.build_id.size());
      } else {
        b.maj = r.u32(kMmapDevice), b.min = r.u32(kMmapDevice + 4);
        b.ino = r.u64(kMmapDevice + 8), b.generation = r.u64(kMmapDevice + 16);
      }
      b.prot = r.u32(kMmapProt), b.flags = r.u32(kMmapProt + 4);
      r.string(kMmapName, size > kMmapName ? size - kMmapName : 0, b.name);
      return;
    default:
      return;
  }
}

}  // namespace

bool tracepoint(Source s) { return s == Source::getpid || s == Source::getppid || s == Source::getuid; }

perf_event_attr attr_of(const EventSpec& spec, std::uint64_t tracepoint_id) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_TRACEPOINT;
  attr.config = tracepoint_id;
  if (!tracepoint(spec.source)) {
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = spec.source == Source::dummy ? PERF_COUNT_SW_DUMMY : PERF_COUNT_SW_PAGE_FAULTS;
  }
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.sample_type = spec.sample_type;
  attr.sample_period = spec.period;
  if (spec.freq > 0) {
    attr.freq = 1;
    attr.sample_freq = spec.freq;
  }
  attr.sample_stack_user = spec.stack_user;
  attr.read_format = spec.read_format;
  attr.sample_id_all = spec.sample_id_all;
  attr.comm = spec.comm;
  attr.task = spec.task;
  attr.mmap = attr.mmap2 = spec.mmap2;
  attr.build_id = spec.build_id;
  attr.write_backward = spec.backward;
  attr.precise_ip = spec.precise_ip;
  attr.exclude_guest = spec.exclude_guest;
  attr.watermark = spec.watermark;
  if (spec.watermark) {
    attr.wakeup_watermark = spec.wakeup_watermark;
  } else {
    attr.wakeup_events = spec.wakeup_events;
  }
  return attr;
}

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
  size += 8 * read_words(spec);
  if (t & PERF_SAMPLE_RAW) {
    VERIFY(tracepoint(spec.source));
    size += align8(4 + kSyscallRawBytes);
  }
  size += user_stack_bytes(spec);
  VERIFY(size <= 65528);
  return size;
}

std::uint32_t read_words(const EventSpec& spec) {
  if (!(spec.sample_type & PERF_SAMPLE_READ)) return 0;
  VERIFY_MSG((spec.read_format & ~kReadFormatAll) == 0, "a read_format the suite's vocabulary has not (groups)");
  return 1 + static_cast<std::uint32_t>(__builtin_popcountll(spec.read_format));
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
                  std::uint64_t id, std::uint64_t time_ns, const RecordBody& body) {
  VERIFY(out.size() >= 8);
  VERIFY(out.size() % 8 == 0);
  std::memset(out.data(), 0, out.size());
  perf_event_header header{};
  header.type = type;
  header.misc = misc;
  header.size = static_cast<std::uint16_t>(out.size());
  std::memcpy(out.data(), &header, sizeof header);
  if (type != PERF_RECORD_SAMPLE) {
    put_sideband(out.data(), type, body);
    put_trailer(out.data() + out.size() - id_header_bytes(spec), spec, id, time_ns, body);
    return;
  }
  std::byte* at = out.data() + 8;
  const std::uint64_t t = spec.sample_type;
  for (std::uint64_t bit : kSampleWords) {
    if (!(t & bit)) continue;
    if (bit == PERF_SAMPLE_IDENTIFIER || bit == PERF_SAMPLE_ID || bit == PERF_SAMPLE_STREAM_ID) put64(at, id);
    if (bit == PERF_SAMPLE_TID) put32(at, body.id_pid), put32(at + 4, body.id_tid);
    if (bit == PERF_SAMPLE_TIME) put64(at, time_ns);
    if (bit == PERF_SAMPLE_CPU) put32(at, body.cpu);
    if (bit == PERF_SAMPLE_PERIOD) put64(at, body.period);
    at += 8;
  }
  for (std::uint32_t i = 0; i < read_words(spec); i++, at += 8) put64(at, body.read[i]);
  if (t & PERF_SAMPLE_RAW) {
    const std::uint32_t raw = kSyscallRawBytes;
    std::memcpy(at, &raw, 4);
    at += align8(4 + raw);
  }
  if (t & PERF_SAMPLE_STACK_USER) put64(at, spec.stack_user);
}

RecordBody read_body(std::span<const std::byte> data, std::uint64_t pos, std::uint32_t type, std::uint16_t misc,
                     std::uint16_t size, const EventSpec* spec) {
  const RingBytes r(data, pos);
  RecordBody b;
  read_sideband(r, type, misc, size, b);
  if (spec == nullptr) return b;
  const std::uint64_t t = spec->sample_type;
  // A sample's fields in perf_output_sample's order, the trailer's in
  // perf_event__output_id_sample's.
  static constexpr std::uint64_t kSampleOrder[] = {PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP,   PERF_SAMPLE_TID,
                                                   PERF_SAMPLE_TIME,       PERF_SAMPLE_ADDR, PERF_SAMPLE_ID,
                                                   PERF_SAMPLE_STREAM_ID,  PERF_SAMPLE_CPU,  PERF_SAMPLE_PERIOD};
  static constexpr std::uint64_t kTrailerOrder[] = {PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID,
                                                    PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU};
  std::uint64_t at = 8;
  std::span<const std::uint64_t> order = kSampleOrder;
  if (type != PERF_RECORD_SAMPLE) {
    if (!spec->sample_id_all || size < 8 + id_header_bytes(*spec)) return b;
    at = size - id_header_bytes(*spec);
    order = kTrailerOrder;
  }
  for (std::uint64_t bit : order) {
    if (!(t & bit)) continue;
    if (at + 8 > size) break;
    if (bit == PERF_SAMPLE_TID) b.has_tid = true, b.id_pid = r.u32(at), b.id_tid = r.u32(at + 4);
    if (bit == PERF_SAMPLE_CPU) b.has_cpu = true, b.cpu = r.u32(at);
    if (bit == PERF_SAMPLE_ID) b.has_id = true, b.id = r.u64(at);
    if (bit == PERF_SAMPLE_STREAM_ID) b.has_stream_id = true, b.stream_id = r.u64(at);
    if (bit == PERF_SAMPLE_PERIOD) b.has_period = true, b.period = r.u64(at);
    at += 8;
  }
  // PERF_SAMPLE_READ follows PERIOD (perf_output_read_one's words).
  const std::uint32_t words = type == PERF_RECORD_SAMPLE ? read_words(*spec) : 0;
  if (words > 0 && at + 8 * words <= size) {
    b.has_read = true;
    for (std::uint32_t i = 0; i < words; i++) b.read[i] = r.u64(at + 8 * i);
  }
  return b;
}

}  // namespace ringsim::conformance
