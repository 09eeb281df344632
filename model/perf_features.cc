#include "model/perf_features.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "model/records.h"

namespace ringsim::model {
namespace {

constexpr std::uint64_t kStringAlign = 64;
constexpr std::uint64_t kListMax = 1 << 20;  // strings, events, nodes, ids in one section
constexpr std::uint64_t kAttrBytesMax = 4096;

// Reads one section, every access bounds-checked; the first problem sticks.
class Cursor {
 public:
  explicit Cursor(std::span<const std::byte> bytes) : bytes_(bytes) {}

  bool ok() const { return problem_.empty(); }
  const std::string& problem() const { return problem_; }
  std::uint64_t left() const { return bytes_.size() - at_; }
  std::uint64_t offset() const { return at_; }
  void fail(const std::string& why) {
    if (problem_.empty()) problem_ = why + " at section offset " + std::to_string(at_);
  }

  template <class T>
  T get() {
    if (!ok() || left() < sizeof(T)) {
      fail("section too short for " + std::to_string(sizeof(T)) + " bytes");
      return T{};
    }
    const T v = load<T>(bytes_.data() + at_);
    at_ += sizeof(T);
    return v;
  }
  std::span<const std::byte> take(std::uint64_t n) {
    if (!ok() || left() < n) {
      fail("section too short for " + std::to_string(n) + " bytes");
      return {};
    }
    const std::span<const std::byte> out = bytes_.subspan(at_, n);
    at_ += n;
    return out;
  }
  // perf_header_string.
  std::string string() {
    const std::uint32_t length = get<std::uint32_t>();
    if (!ok()) return "";
    if (length == 0 || length % kStringAlign != 0) {
      fail("string length " + std::to_string(length) + " is not a positive multiple of 64");
      return "";
    }
    const std::span<const std::byte> raw = take(length);
    if (!ok()) return "";
    const char* text = reinterpret_cast<const char*>(raw.data());
    const std::size_t n = strnlen(text, raw.size());
    if (n == raw.size()) fail("string without its NUL");
    if (length != (n + 1 + kStringAlign - 1) / kStringAlign * kStringAlign) {
      fail("string of " + std::to_string(n) + " characters padded to " + std::to_string(length) + " bytes");
    }
    return std::string(text, n);
  }
  std::vector<std::string> strings() {
    const std::uint32_t count = get<std::uint32_t>();
    std::vector<std::string> out;
    if (count > kListMax) fail("implausible count " + std::to_string(count));
    for (std::uint32_t i = 0; i < count && ok(); i++) out.push_back(string());
    return out;
  }

 private:
  std::span<const std::byte> bytes_;
  std::uint64_t at_ = 0;
  std::string problem_;
};

std::string hex(std::span<const std::byte> bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (const std::byte b : bytes) {
    out += digits[static_cast<unsigned>(b) >> 4];
    out += digits[static_cast<unsigned>(b) & 15];
  }
  return out;
}

// BUILD_ID: entries walked by their header's size.
void build_ids(Cursor& c, PerfFeatures& f) {
  for (std::uint64_t n = 0; c.ok() && c.left() > 0 && n < kListMax; n++) {
    const std::uint32_t type = c.get<std::uint32_t>();
    BuildIdFeature e;
    e.misc = c.get<std::uint16_t>();
    const std::uint16_t size = c.get<std::uint16_t>();
    e.pid = c.get<std::int32_t>();
    const std::span<const std::byte> id = c.take(20);
    const std::uint8_t id_size = c.get<std::uint8_t>();
    c.take(3);
    if (!c.ok()) return;
    if (type != 0) c.fail("build-id entry of type " + std::to_string(type));
    const std::uint64_t fixed = 8 + 4 + 24;
    if (size < fixed + 1) c.fail("build-id entry of " + std::to_string(size) + " bytes");
    const bool sized = (e.misc & 0x8000) != 0;
    if (sized && (id_size == 0 || id_size > 20)) c.fail("build-id size " + std::to_string(id_size));
    const std::span<const std::byte> name = c.take(size - fixed);
    if (!c.ok()) return;
    e.id_hex = hex(id.first(sized ? id_size : 20));
    const char* text = reinterpret_cast<const char*>(name.data());
    const std::size_t length = strnlen(text, name.size());
    if (length == name.size()) c.fail("build-id file name without its NUL");
    e.name = std::string(text, length);
    f.build_ids.push_back(std::move(e));
  }
}

void event_desc(Cursor& c, PerfFeatures& f) {
  const std::uint32_t count = c.get<std::uint32_t>();
  const std::uint32_t attr_size = c.get<std::uint32_t>();
  if (!c.ok()) return;
  if (count > kListMax || attr_size < 64 || attr_size > kAttrBytesMax) {
    c.fail("event count " + std::to_string(count) + ", attr size " + std::to_string(attr_size));
    return;
  }
  for (std::uint32_t i = 0; i < count && c.ok(); i++) {
    const std::span<const std::byte> attr = c.take(attr_size);
    EventDescFeature e;
    if (!c.ok()) return;
    e.type = load<std::uint32_t>(attr.data());
    e.config = load<std::uint64_t>(attr.data() + 8);
    e.sample_type = load<std::uint64_t>(attr.data() + 24);
    e.flags = load<std::uint64_t>(attr.data() + 40);
    const std::uint32_t ids = c.get<std::uint32_t>();
    e.name = c.string();
    if (ids > kListMax) c.fail("implausible id count " + std::to_string(ids));
    for (std::uint32_t k = 0; k < ids && c.ok(); k++) e.ids.push_back(c.get<std::uint64_t>());
    f.events.push_back(std::move(e));
  }
}

// CPU_TOPOLOGY, with the per-CPU ids perf reads when NRCPUS came first and
// the die part when bytes remain.
void cpu_topology(Cursor& c, PerfFeatures& f) {
  CpuTopologyFeature& t = f.topology;
  t.package_lists = c.strings();
  t.thread_lists = c.strings();
  if (!c.ok() || c.left() == 0) return;
  if (f.cpus_avail == 0) {
    c.fail("per-CPU ids without NRCPUS before them");
    return;
  }
  for (std::uint32_t cpu = 0; cpu < f.cpus_avail && c.ok(); cpu++) {
    t.core_ids.push_back(c.get<std::uint32_t>());
    t.socket_ids.push_back(c.get<std::uint32_t>());
  }
  if (!c.ok() || c.left() == 0) return;
  t.has_dies = true;
  t.die_lists = c.strings();
  for (std::uint32_t cpu = 0; cpu < f.cpus_avail && c.ok(); cpu++) t.die_ids.push_back(c.get<std::uint32_t>());
}

void numa_topology(Cursor& c, PerfFeatures& f) {
  const std::uint32_t count = c.get<std::uint32_t>();
  if (count > kListMax) c.fail("implausible node count " + std::to_string(count));
  for (std::uint32_t i = 0; i < count && c.ok(); i++) {
    NumaNodeFeature n;
    n.node = c.get<std::uint32_t>();
    n.mem_total_kib = c.get<std::uint64_t>();
    n.mem_free_kib = c.get<std::uint64_t>();
    n.cpu_list = c.string();
    f.numa.push_back(std::move(n));
  }
}

void auxtrace(Cursor& c, PerfFeatures& f) {
  const std::uint64_t count = c.get<std::uint64_t>();
  if (count > kListMax) c.fail("implausible AUXTRACE index of " + std::to_string(count) + " entries");
  for (std::uint64_t i = 0; i < count && c.ok(); i++) {
    const std::uint64_t offset = c.get<std::uint64_t>();
    const std::uint64_t size = c.get<std::uint64_t>();
    f.auxtrace.emplace_back(offset, size);
  }
}

void clock_data(Cursor& c, PerfFeatures& f) {
  f.clock_data_version = c.get<std::uint32_t>();
  f.clockid = c.get<std::uint32_t>();
  f.clock_tod_ns = c.get<std::uint64_t>();
  f.clock_clockid_ns = c.get<std::uint64_t>();
  if (c.ok() && f.clock_data_version != 1) c.fail("CLOCK_DATA version " + std::to_string(f.clock_data_version));
}

// A NUL-terminated string (TRACING_DATA's), at most 4096 bytes.
std::string c_string(Cursor& c) {
  std::string out;
  for (int i = 0; i < 4096 && c.ok(); i++) {
    const char ch = static_cast<char>(c.get<std::uint8_t>());
    if (ch == '\0') return out;
    out.push_back(ch);
  }
  c.fail("string without its NUL");
  return out;
}

// The value after "KEY: " on its own line of a format text ("" if none).
std::string format_line(const std::string& text, const std::string& key) {
  const std::size_t at = text.find(key + ": ");
  if (at == std::string::npos || (at > 0 && text[at - 1] != '\n')) return "";
  const std::size_t from = at + key.size() + 2;
  return text.substr(from, text.find('\n', from) - from);
}

// One event format (u64 size, the text) of `system`.
void tracepoint_format(Cursor& c, const std::string& system, PerfFeatures& f) {
  const std::uint64_t size = c.get<std::uint64_t>();
  const std::span<const std::byte> text = c.take(size);
  if (!c.ok()) return;
  const std::string format(reinterpret_cast<const char*>(text.data()), text.size());
  TracepointFormat t{system, format_line(format, "name"), 0};
  const std::string id = format_line(format, "ID");
  const auto parsed = std::from_chars(id.data(), id.data() + id.size(), t.id);
  if (t.name.empty() || id.empty() || parsed.ec != std::errc{} || parsed.ptr != id.data() + id.size()) {
    c.fail("a format of system " + system + " without its name or ID line");
    return;
  }
  f.tracepoint_formats.push_back(std::move(t));
}

// A u32 or u64 size, then that many bytes (skipped).
template <class Size>
void sized_blob(Cursor& c) {
  const Size size = c.get<Size>();
  c.take(size);
}

void tracing_data(Cursor& c, PerfFeatures& f) {
  static const char magic[] = {23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g'};
  const std::span<const std::byte> m = c.take(sizeof magic);
  if (c.ok() && std::memcmp(m.data(), magic, sizeof magic) != 0) c.fail("no tracing magic");
  f.tracing_version = c_string(c);
  if (c.ok() && f.tracing_version != "0.6") c.fail("tracing data version " + f.tracing_version + ", not 0.6");
  c.take(2);  // endianness, sizeof long
  c.get<std::uint32_t>();  // page size
  for (const char* header : {"header_page", "header_event"}) {
    if (c.ok() && c_string(c) != header) c.fail(std::string("no ") + header);
    sized_blob<std::uint64_t>(c);
  }
  const std::uint32_t ftrace = c.get<std::uint32_t>();
  for (std::uint32_t i = 0; i < ftrace && i < kListMax && c.ok(); i++) tracepoint_format(c, "ftrace", f);
  const std::uint32_t systems = c.get<std::uint32_t>();
  for (std::uint32_t s = 0; s < systems && s < kListMax && c.ok(); s++) {
    const std::string system = c_string(c);
    const std::uint32_t count = c.get<std::uint32_t>();
    for (std::uint32_t i = 0; i < count && i < kListMax && c.ok(); i++) tracepoint_format(c, system, f);
  }
  f.tracing_formats_end = c.offset();
  sized_blob<std::uint32_t>(c);  // kallsyms
  sized_blob<std::uint32_t>(c);  // printk formats
  sized_blob<std::uint64_t>(c);  // saved cmdlines
}

// Decodes one section; false for a bit this reader does not decode.
bool decode(std::uint32_t bit, Cursor& c, PerfFeatures& f) {
  switch (bit) {
    case kFeatTracingData: tracing_data(c, f); break;
    case kFeatBuildId: build_ids(c, f); break;
    case kFeatHostname: f.hostname = c.string(); break;
    case kFeatOsrelease: f.osrelease = c.string(); break;
    case kFeatVersion: f.version = c.string(); break;
    case kFeatArch: f.arch = c.string(); break;
    case kFeatNrcpus:
      f.cpus_avail = c.get<std::uint32_t>();
      f.cpus_online = c.get<std::uint32_t>();
      break;
    case kFeatCpudesc: f.cpudesc = c.string(); break;
    case kFeatCpuid: f.cpuid = c.string(); break;
    case kFeatTotalMem: f.total_mem_kib = c.get<std::uint64_t>(); break;
    case kFeatCmdline: f.cmdline = c.strings(); break;
    case kFeatEventDesc: event_desc(c, f); break;
    case kFeatCpuTopology: cpu_topology(c, f); break;
    case kFeatNumaTopology: numa_topology(c, f); break;
    case kFeatAuxtrace: auxtrace(c, f); break;
    case kFeatSampleTime:
      f.first_sample_ns = c.get<std::uint64_t>();
      f.last_sample_ns = c.get<std::uint64_t>();
      break;
    case kFeatClockid: f.clock_resolution_ns = c.get<std::uint64_t>(); break;
    case kFeatClockData: clock_data(c, f); break;
    default: return false;
  }
  return true;
}

}  // namespace

std::string feature_name(std::uint32_t bit) {
  static const char* const names[] = {
      "RESERVED",     "TRACING_DATA",  "BUILD_ID",     "HOSTNAME",      "OSRELEASE",    "VERSION",
      "ARCH",         "NRCPUS",        "CPUDESC",      "CPUID",         "TOTAL_MEM",    "CMDLINE",
      "EVENT_DESC",   "CPU_TOPOLOGY",  "NUMA_TOPOLOGY", "BRANCH_STACK", "PMU_MAPPINGS", "GROUP_DESC",
      "AUXTRACE",     "STAT",          "CACHE",        "SAMPLE_TIME",   "MEM_TOPOLOGY", "CLOCKID",
      "DIR_FORMAT",   "BPF_PROG_INFO", "BPF_BTF",      "COMPRESSED",    "CPU_PMU_CAPS", "CLOCK_DATA",
      "HYBRID_TOPOLOGY", "PMU_CAPS"};
  if (bit < sizeof names / sizeof names[0]) return names[bit];
  return "bit " + std::to_string(bit);
}

std::string parse_feature_section(std::uint32_t bit, std::span<const std::byte> section, PerfFeatures& out,
                                  std::uint64_t zero_padding_max) {
  if (bit == 0 || bit >= 256) return "feature bit " + std::to_string(bit);
  if (out.has(bit)) return feature_name(bit) + " twice";
  out.bitmap[bit / 64] |= std::uint64_t{1} << (bit % 64);
  Cursor c(section);
  if (!decode(bit, c, out)) return "";
  if (c.ok() && c.left() > zero_padding_max) c.fail(std::to_string(c.left()) + " bytes left over");
  if (c.ok()) {
    for (const std::byte b : c.take(c.left())) {
      if (b != std::byte{0}) c.fail("non-zero padding");
    }
  }
  return c.ok() ? "" : feature_name(bit) + ": " + c.problem();
}

std::string parse_perf_features(std::span<const std::byte> file, const std::uint64_t bitmap[4],
                                std::uint64_t data_end, PerfFeatures& out) {
  PerfFeatures f;
  std::memcpy(f.bitmap, bitmap, sizeof f.bitmap);
  std::uint64_t at = data_end;
  for (std::uint32_t bit = 0; bit < 256; bit++) {
    if (!f.has(bit)) continue;
    if (bit == 0) return "feature bit 0 (reserved) is set";
    if (at > file.size() || file.size() - at < 16) {
      return "feature table: no entry for " + feature_name(bit) + " (the file ends at " + std::to_string(file.size()) + ")";
    }
    const FeatureTableEntry e{bit, load<std::uint64_t>(file.data() + at), load<std::uint64_t>(file.data() + at + 8)};
    at += 16;
    if (e.offset > file.size() || e.size > file.size() - e.offset) {
      return feature_name(bit) + ": section [" + std::to_string(e.offset) + ", +" + std::to_string(e.size) +
             ") outside the file";
    }
    f.table.push_back(e);
  }
  f.end = at;
  for (const FeatureTableEntry& e : f.table) {
    if (e.offset < at) return feature_name(e.bit) + ": section overlaps the table or the data";
    f.end = std::max(f.end, e.offset + e.size);
    Cursor c(file.subspan(e.offset, e.size));
    if (!decode(e.bit, c, f)) continue;
    if (c.ok() && c.left() > 0) c.fail(std::to_string(c.left()) + " bytes left over");
    if (!c.ok()) return feature_name(e.bit) + ": " + c.problem();
  }
  out = std::move(f);
  return "";
}

}  // namespace ringsim::model
