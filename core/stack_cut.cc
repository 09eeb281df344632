#include "core/stack_cut.h"

#include <cstring>

#include "core/verify.h"

namespace ringsim::core {
namespace {

std::uint64_t load_u64(const std::byte* p) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, sizeof v);
  return v;
}
void store_u64(std::byte* p, std::uint64_t v) { std::memcpy(p, &v, sizeof v); }

// Offset of the STACK_USER size field in a sample record of `size` bytes,
// or 0 if it has none or does not parse.
std::uint64_t stack_offset(const std::byte* record, std::uint64_t size, const SampleLayout& l) {
  const std::uint64_t t = l.sample_type;
  if ((t & PERF_SAMPLE_STACK_USER) == 0) return 0;
  std::uint64_t at = kRecordHeaderBytes;
  auto skip = [&](std::uint64_t n) { at += n; };
  for (const std::uint64_t bit : {PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME,
                                  PERF_SAMPLE_ADDR, PERF_SAMPLE_ID, PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU,
                                  PERF_SAMPLE_PERIOD}) {
    if ((t & bit) != 0) skip(8);
  }
  if ((t & PERF_SAMPLE_CALLCHAIN) != 0) {
    if (at + 8 > size) return 0;
    const std::uint64_t nr = load_u64(record + at);
    if (nr > size / 8) return 0;
    skip(8 + 8 * nr);
  }
  if ((t & PERF_SAMPLE_RAW) != 0) {
    if (at + 4 > size) return 0;
    std::uint32_t raw = 0;
    std::memcpy(&raw, record + at, sizeof raw);
    skip((4 + std::uint64_t{raw} + 7) / 8 * 8);  // u32 size + data, padded to 8
  }
  if ((t & PERF_SAMPLE_REGS_USER) != 0) {
    if (at + 8 > size) return 0;
    const std::uint64_t abi = load_u64(record + at);
    skip(8 + (abi != PERF_SAMPLE_REGS_ABI_NONE ? 8 * std::uint64_t{l.user_regs} : 0));
  }
  return at + 8 <= size ? at : 0;
}

}  // namespace

std::string stack_cut_problem(const SampleLayout& l) {
  if ((l.sample_type & PERF_SAMPLE_STACK_USER) == 0) return "samples carry no user stack dump (no STACK_USER)";
  if ((l.sample_type & (PERF_SAMPLE_READ | PERF_SAMPLE_BRANCH_STACK)) != 0) {
    return "sample_type has READ or BRANCH_STACK: their sizes are not known from sample_type alone";
  }
  return "";
}

std::uint64_t cut_stacks(std::span<std::byte> records, std::uint64_t bytes, const SampleLayout& layout,
                         std::uint64_t keep, RecordCounts& counts, StackCutStats& stats) {
  VERIFY(bytes <= records.size());
  VERIFY(stack_cut_problem(layout).empty());
  keep = keep / 8 * 8;
  std::byte* const base = records.data();
  std::uint64_t read = 0;   // next record in the input
  std::uint64_t write = 0;  // where it goes (write <= read)
  bool cut_any = false;
  // Bounded: each step consumes one record of at least 8 bytes.
  while (read + kRecordHeaderBytes <= bytes) {
    perf_event_header h{};
    std::memcpy(&h, base + read, sizeof h);
    VERIFY(h.size >= kRecordHeaderBytes && read + h.size <= bytes);  // whole records, walked before
    std::uint64_t size = h.size;
    std::byte* record = base + read;
    const std::uint64_t at = h.type == PERF_RECORD_SAMPLE ? stack_offset(record, size, layout) : 0;
    std::uint64_t removed = 0;
    if (at != 0) {
      const std::uint64_t dump = load_u64(record + at);
      // size, data[dump], dyn_size (present if dump != 0), then the rest.
      const bool parses = dump % 8 == 0 && at + 8 + dump + (dump != 0 ? 8 : 0) <= size;
      if (parses && dump > 0) stats.dumps_seen++;
      if (parses && dump > keep) {
        const std::uint64_t dyn = load_u64(record + at + 8 + dump);
        const std::uint64_t tail_at = at + 8 + dump + 8;  // after dyn_size
        const std::uint64_t tail = size - tail_at;
        store_u64(record + at, keep);
        std::uint64_t new_end = at + 8 + keep;
        if (keep > 0) {
          store_u64(record + new_end, dyn < keep ? dyn : keep);  // dyn_size: what was kept of it
          new_end += 8;
        }
        std::memmove(record + new_end, record + tail_at, tail);
        removed = size - (new_end + tail);
        size -= removed;
        h.size = static_cast<std::uint16_t>(size);
        std::memcpy(record, &h, sizeof h);
        stats.samples_cut++;
        stats.bytes_cut += removed;
        cut_any = true;
      }
    }
    if (write != read) std::memmove(base + write, record, size);
    write += size;
    read += size + removed;
  }
  VERIFY(read == bytes);
  if (cut_any) stats.chunks_cut++;
  VERIFY(counts.bytes == bytes);
  counts.bytes = write;
  return write;
}

}  // namespace ringsim::core
