#include "sim/sample.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/verify.h"

namespace ringsim::sim {
namespace {

void put(std::byte* at, const void* value, std::size_t size) { std::memcpy(at, value, size); }

void put_header(std::byte* at, std::uint32_t type, std::uint16_t misc, std::uint16_t size) {
  perf_event_header header{};
  header.type = type;
  header.misc = misc;
  header.size = size;
  put(at, &header, sizeof header);
}

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The sample_id trailer at the end of a record of `size` bytes.
void put_trailer(std::byte* record, std::size_t size, const EventIdentity& e, std::uint64_t time_ns) {
  if (e.layout == RecordLayout::none) return;  // sample_id_all = 0
  put_sample_id(record + size - trailer_bytes(e), e, time_ns);
}

}  // namespace

void put_sample_id(std::byte* t, const EventIdentity& e, std::uint64_t time_ns) {
  const std::uint32_t reserved = 0;
  if (e.layout != RecordLayout::attr) {
    if (e.layout == RecordLayout::none) return;
    put(t, &e.pid, 4);
    put(t + 4, &e.tid, 4);
    put(t + 8, &time_ns, 8);
    if (e.layout == RecordLayout::a) {
      put(t + 16, &e.cpu, 4);
      put(t + 20, &reserved, 4);
    }
    put(t + trailer_bytes(e.layout) - 8, &e.id, 8);
    return;
  }
  if (!e.sample_id_all) return;
  const std::uint64_t type = e.sample_type;
  if (type & PERF_SAMPLE_TID) put(t, &e.pid, 4), put(t + 4, &e.tid, 4), t += 8;
  if (type & PERF_SAMPLE_TIME) put(t, &time_ns, 8), t += 8;
  if (type & PERF_SAMPLE_ID) put(t, &e.id, 8), t += 8;
  if (type & PERF_SAMPLE_STREAM_ID) put(t, &e.id, 8), t += 8;
  if (type & PERF_SAMPLE_CPU) put(t, &e.cpu, 4), put(t + 4, &reserved, 4), t += 8;
  if (type & PERF_SAMPLE_IDENTIFIER) put(t, &e.id, 8);
}

void build_sample_head(std::span<std::byte> out, const EventIdentity& event, std::uint64_t time_ns,
                       std::uint64_t sequence, std::uint64_t period) {
  const std::size_t size = out.size();
  VERIFY(!event.period_field || event.layout == RecordLayout::a || event.layout == RecordLayout::b);
  VERIFY(size >= sample_bytes_min(event.layout, event.period_field));
  VERIFY(size <= kSampleBytesMax);
  VERIFY(size % 8 == 0);
  std::byte* p = out.data();
  put_header(p, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, static_cast<std::uint16_t>(size));
  put(p + 8, &event.id, 8);
  put(p + 16, &event.pid, 4);
  put(p + 20, &event.tid, 4);
  put(p + 24, &time_ns, 8);
  if (event.layout == RecordLayout::a) {
    const std::uint32_t reserved = 0;
    put(p + kSampleCpuOffset, &event.cpu, 4);
    put(p + 36, &reserved, 4);
  }
  if (event.period_field) put(p + sample_period_offset(event.layout), &period, 8);
  const std::uint32_t head = sample_head_bytes(event.layout, event.period_field);
  const std::uint32_t raw_size = static_cast<std::uint32_t>(size - head);
  VERIFY((raw_size + 4) % 8 == 0);
  put(p + head - 4, &raw_size, 4);
  put(p + head, &sequence, 4);
}

// raw: sequence, then words derived from (seed, event, sequence) and their
// offset: one mix per record, then a multiply-add per word (the oracle
// compares bytes with the kernel's log, so they need only differ between
// records and between positions; a mix per word cost 28% of the campaign's
// time).
void fill_sample_payload(std::span<std::byte> out, const EventIdentity& event, std::uint64_t sequence,
                         std::uint64_t payload_seed) {
  const std::uint32_t head = sample_head_bytes(event.layout, event.period_field);
  VERIFY(out.size() >= head + 4);
  const std::size_t raw_size = out.size() - head;
  std::byte* raw = out.data() + head;
  const std::uint64_t base = mix(payload_seed ^ (std::uint64_t{event.cpu} << 56) ^ (event.id << 40) ^ sequence);
  std::size_t offset = 4;
  for (std::uint64_t word = 1; offset + 8 <= raw_size; offset += 8, ++word) {
    const std::uint64_t value = base ^ (word * 0x9e3779b97f4a7c15ull);
    put(raw + offset, &value, 8);
  }
  if (offset < raw_size) {
    const std::uint64_t value = ~base;
    put(raw + offset, &value, raw_size - offset);
  }
}

void build_sample(std::span<std::byte> out, const EventIdentity& event, std::uint64_t time_ns,
                  std::uint64_t sequence, std::uint64_t payload_seed, std::uint64_t period) {
  build_sample_head(out, event, time_ns, sequence, period);
  fill_sample_payload(out, event, sequence, payload_seed);
}

void build_lost(std::span<std::byte> out, const EventIdentity& event, std::uint64_t time_ns, std::uint64_t lost) {
  VERIFY(out.size() == lost_bytes(event));
  VERIFY(lost > 0);
  std::byte* p = out.data();
  put_header(p, PERF_RECORD_LOST, 0, static_cast<std::uint16_t>(out.size()));
  put(p + 8, &event.id, 8);
  put(p + 16, &lost, 8);
  put_trailer(p, out.size(), event, time_ns);
}

std::uint32_t sideband_bytes(std::uint32_t type, RecordLayout layout) {
  const std::uint32_t trailer = trailer_bytes(layout);
  switch (type) {
    case PERF_RECORD_COMM: return 24 + trailer;
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT:
    case PERF_RECORD_THROTTLE:
    case PERF_RECORD_UNTHROTTLE: return 32 + trailer;
    case PERF_RECORD_SWITCH: return 8 + trailer;
    case PERF_RECORD_MMAP2: return 88 + trailer;
    default: break;
  }
  VERIFY_MSG(false, "not a side-band record type of the simulated kernel");
  return 0;
}

void build_sideband(std::span<std::byte> out, std::uint32_t type, const EventIdentity& e, std::uint64_t time_ns,
                    std::uint64_t sequence, bool foreign_build_id_misc) {
  const std::size_t size = sideband_bytes(type, e.layout);
  VERIFY(out.size() == size);
  std::memset(out.data(), 0, size);
  std::byte* p = out.data();
  std::uint16_t misc = 0;
  if (type == PERF_RECORD_MMAP2) {
    misc = PERF_RECORD_MISC_USER | (foreign_build_id_misc ? PERF_RECORD_MISC_MMAP_BUILD_ID : 0);
  }
  if (type == PERF_RECORD_SWITCH) misc = (sequence & 1) ? PERF_RECORD_MISC_SWITCH_OUT : 0;
  put_header(p, type, misc, static_cast<std::uint16_t>(size));
  const std::uint32_t parent = e.pid > 1 ? e.pid - 1 : 1;
  switch (type) {
    case PERF_RECORD_COMM: {
      put(p + 8, &e.pid, 4);
      put(p + 12, &e.tid, 4);
      char name[16] = {};
      const int n = std::snprintf(name, sizeof name, "task-%llu", static_cast<unsigned long long>(sequence % 100000));
      VERIFY(n > 0);
      put(p + 16, name, sizeof name);
      break;
    }
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT:
      put(p + 8, &e.pid, 4);
      put(p + 12, &parent, 4);
      put(p + 16, &e.tid, 4);
      put(p + 20, &parent, 4);
      put(p + 24, &time_ns, 8);
      break;
    case PERF_RECORD_THROTTLE:
    case PERF_RECORD_UNTHROTTLE:
      put(p + 8, &time_ns, 8);
      put(p + 16, &e.id, 8);
      put(p + 24, &e.id, 8);
      break;
    case PERF_RECORD_MMAP2: {
      const std::uint64_t address = 0x400000 + (sequence % 4096) * 0x1000, length = 0x1000, pgoff = 0;
      put(p + 8, &e.pid, 4);
      put(p + 12, &e.tid, 4);
      put(p + 16, &address, 8);
      put(p + 24, &length, 8);
      put(p + 32, &pgoff, 8);
      const std::uint64_t ino = 0x1000 + sequence % 1000;
      put(p + 40, &kSimMmapMajor, 4);
      put(p + 44, &kSimMmapMinor, 4);
      put(p + 48, &ino, 8);
      const std::uint32_t prot = 5, flags = 2;
      put(p + 64, &prot, 4);
      put(p + 68, &flags, 4);
      char name[16] = {};
      std::snprintf(name, sizeof name, "/lib/m%llu.so", static_cast<unsigned long long>(sequence % 1000));
      put(p + 72, name, sizeof name);
      break;
    }
    default:
      break;
  }
  put_trailer(p, size, e, time_ns);
}

}  // namespace ringsim::sim
