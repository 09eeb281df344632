#include "sim/attr_records.h"

#include <cstdio>
#include <cstring>

#include "core/verify.h"

namespace ringsim::sim {
namespace {

constexpr std::uint64_t kSupported =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
    PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |
    PERF_SAMPLE_REGS_USER |
    PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION |
    PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP | PERF_SAMPLE_DATA_PAGE_SIZE |
    PERF_SAMPLE_CODE_PAGE_SIZE | PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_READ;

struct Named {
  std::uint64_t bit;
  const char* name;
};
constexpr Named kUnsupported[] = {{PERF_SAMPLE_BRANCH_STACK, "BRANCH_STACK"},
                                  {PERF_SAMPLE_AUX, "AUX"}};

class Writer {
 public:
  explicit Writer(std::vector<std::byte>& out) : out_(out) { out_.clear(); }
  void u64(std::uint64_t v) { bytes(&v, 8); }
  void u32(std::uint32_t v) { bytes(&v, 4); }
  void bytes(const void* p, std::size_t n) {
    const std::size_t at = out_.size();
    out_.resize(at + n);
    std::memcpy(out_.data() + at, p, n);
  }
  // A NUL-terminated string padded with zeros to a multiple of 8.
  void string(std::string_view s) {
    const std::size_t n = (s.size() + 1 + 7) & ~std::size_t{7};
    const std::size_t at = out_.size();
    out_.resize(at + n);
    std::memset(out_.data() + at, 0, n);
    std::memcpy(out_.data() + at, s.data(), s.size());
  }
  void trailer(const EventIdentity& e, std::uint64_t time_ns) {
    const std::size_t at = out_.size();
    out_.resize(at + trailer_bytes(e));
    put_sample_id(out_.data() + at, e, time_ns);
  }
  // The header, written last (its size is the record's).
  void finish(std::uint32_t type, std::uint16_t misc) {
    VERIFY(out_.size() >= sizeof(perf_event_header));
    VERIFY(out_.size() % 8 == 0);
    VERIFY(out_.size() <= kSampleBytesMax);
    perf_event_header h{};
    h.type = type;
    h.misc = misc;
    h.size = static_cast<std::uint16_t>(out_.size());
    std::memcpy(out_.data(), &h, sizeof h);
  }

 private:
  std::vector<std::byte>& out_;
};

}  // namespace

std::string unsupported_sample_type(std::uint64_t sample_type) {
  std::string out;
  for (const Named& n : kUnsupported) {
    if (sample_type & n.bit) out += std::string(out.empty() ? "" : "|") + n.name;
  }
  const std::uint64_t unknown = sample_type & ~kSupported;
  if (out.empty() && unknown != 0) out = "bits 0x" + [&] {
    char hex[32];
    std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(unknown));
    return std::string(hex);
  }();
  return out;
}

EventIdentity attr_identity(const perf_event_attr& attr, std::uint64_t id, std::uint32_t pid, std::uint32_t tid,
                            std::uint32_t cpu) {
  EventIdentity e;
  e.id = id;
  e.pid = pid;
  e.tid = tid;
  e.cpu = cpu;
  e.layout = RecordLayout::attr;
  e.sample_type = attr.sample_type;
  e.sample_id_all = attr.sample_id_all != 0;
  return e;
}

void build_attr_sample(std::vector<std::byte>& out, const EventIdentity& e, std::uint16_t misc,
                       const SampleFields& f) {
  VERIFY(e.layout == RecordLayout::attr);
  VERIFY(unsupported_sample_type(e.sample_type).empty());
  const std::uint64_t t = e.sample_type;
  Writer w(out);
  w.u64(0);  // the header
  if (t & PERF_SAMPLE_IDENTIFIER) w.u64(e.id);
  if (t & PERF_SAMPLE_IP) w.u64(f.ip);
  if (t & PERF_SAMPLE_TID) w.u32(e.pid), w.u32(e.tid);
  if (t & PERF_SAMPLE_TIME) w.u64(f.time_ns);
  if (t & PERF_SAMPLE_ADDR) w.u64(f.addr);
  if (t & PERF_SAMPLE_ID) w.u64(e.id);
  if (t & PERF_SAMPLE_STREAM_ID) w.u64(e.id);
  if (t & PERF_SAMPLE_CPU) w.u32(e.cpu), w.u32(0);
  if (t & PERF_SAMPLE_PERIOD) w.u64(f.period);
  if (t & PERF_SAMPLE_READ) {
    // perf_output_read: the words read(2) would give now (the writer's).
    VERIFY(!f.read.empty());
    for (const std::uint64_t v : f.read) w.u64(v);
  }
  if (t & PERF_SAMPLE_CALLCHAIN) {
    const bool user = (misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER;
    w.u64(2);
    w.u64(user ? static_cast<std::uint64_t>(PERF_CONTEXT_USER) : static_cast<std::uint64_t>(PERF_CONTEXT_KERNEL));
    w.u64(f.ip);
  }
  if (t & PERF_SAMPLE_RAW) {
    // perf_output_sample: u32 size, the data, padded so that the two end
    // on 8 bytes; without raw data (not a tracepoint) size 4, data 0.
    const std::uint32_t size = f.raw_size == 0 ? 4 : ((f.raw_size + 4 + 7) & ~7u) - 4;
    w.u32(size);
    const std::vector<std::byte> zeros(size);
    w.bytes(zeros.data(), zeros.size());
  }
  if (t & PERF_SAMPLE_REGS_USER) w.u64(PERF_SAMPLE_REGS_ABI_NONE);
  if (t & PERF_SAMPLE_STACK_USER) {
    // The dump's size, the dump, its dyn_size; 0 alone when none is dumped.
    VERIFY(f.stack_user % 8 == 0);
    w.u64(f.stack_user);
    if (f.stack_user > 0) {
      const std::vector<std::byte> zeros(f.stack_user);
      w.bytes(zeros.data(), zeros.size());
      w.u64(0);  // dyn_size: the zeros are not a dump of anything
    }
  }
  if (t & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) w.u64(0);
  if (t & PERF_SAMPLE_DATA_SRC) w.u64(0);
  if (t & PERF_SAMPLE_TRANSACTION) w.u64(0);
  if (t & PERF_SAMPLE_REGS_INTR) w.u64(PERF_SAMPLE_REGS_ABI_NONE);
  if (t & PERF_SAMPLE_PHYS_ADDR) w.u64(0);
  if (t & PERF_SAMPLE_CGROUP) w.u64(1);  // the root cgroup's id
  if (t & PERF_SAMPLE_DATA_PAGE_SIZE) w.u64(4096);
  if (t & PERF_SAMPLE_CODE_PAGE_SIZE) w.u64(4096);
  w.finish(PERF_RECORD_SAMPLE, misc);
}

void build_attr_comm(std::vector<std::byte>& out, const EventIdentity& e, std::string_view comm, bool exec,
                     std::uint64_t time_ns) {
  Writer w(out);
  w.u64(0);
  w.u32(e.pid);
  w.u32(e.tid);
  w.string(comm.substr(0, 15));  // TASK_COMM_LEN
  w.trailer(e, time_ns);
  w.finish(PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
}

void build_attr_task(std::vector<std::byte>& out, std::uint32_t type, const EventIdentity& e, std::uint32_t pid,
                     std::uint32_t tid, std::uint32_t ppid, std::uint32_t ptid, std::uint64_t time_ns) {
  VERIFY(type == PERF_RECORD_FORK || type == PERF_RECORD_EXIT);
  Writer w(out);
  w.u64(0);
  w.u32(pid);
  w.u32(ppid);
  w.u32(tid);
  w.u32(ptid);
  w.u64(time_ns);
  w.trailer(e, time_ns);
  w.finish(type, 0);
}

void build_attr_mmap(std::vector<std::byte>& out, bool mmap2, const EventIdentity& e, const MmapFields& m,
                     std::uint64_t time_ns) {
  Writer w(out);
  w.u64(0);
  w.u32(e.pid);
  w.u32(e.tid);
  w.u64(m.addr);
  w.u64(m.len);
  w.u64(m.pgoff);
  if (mmap2 && m.use_build_id) {
    std::array<std::uint8_t, 24> b{};  // build_id_size, two reserved, the id
    b[0] = m.build_id_size;
    std::memcpy(b.data() + 4, m.build_id.data(), m.build_id.size());
    w.bytes(b.data(), b.size());
  } else if (mmap2) {
    w.u32(m.maj);
    w.u32(m.min);
    w.u64(m.ino);
    w.u64(m.generation);
  }
  if (mmap2) {
    w.u32(m.prot);
    w.u32(m.flags);
  }
  w.string(m.filename);
  w.trailer(e, time_ns);
  const bool exec = (m.prot & 0x4) != 0;  // PROT_EXEC
  w.finish(mmap2 ? PERF_RECORD_MMAP2 : PERF_RECORD_MMAP,
           PERF_RECORD_MISC_USER | (exec ? 0 : PERF_RECORD_MISC_MMAP_DATA) |
               (mmap2 && m.misc_build_id ? PERF_RECORD_MISC_MMAP_BUILD_ID : 0));
}

void build_attr_aux(std::vector<std::byte>& out, const EventIdentity& e, std::uint64_t offset, std::uint64_t size,
                    std::uint64_t flags, std::uint64_t time_ns) {
  Writer w(out);
  w.u64(0);
  w.u64(offset);
  w.u64(size);
  w.u64(flags);
  w.trailer(e, time_ns);
  w.finish(PERF_RECORD_AUX, 0);
}

}  // namespace ringsim::sim
