#include "sim/sample.h"

#include <algorithm>
#include <cstring>

#include "core/verify.h"

namespace ringsim::sim {
namespace {

void put(std::byte* at, const void* value, std::size_t size) { std::memcpy(at, value, size); }

void put_header(std::byte* at, std::uint32_t type, std::uint16_t size) {
  perf_event_header header{};
  header.type = type;
  header.misc = PERF_RECORD_MISC_KERNEL;
  header.size = size;
  put(at, &header, sizeof header);
}

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

void build_sample(std::span<std::byte> out, const EventIdentity& event, std::uint64_t time_ns,
                  std::uint64_t sequence, std::uint64_t payload_seed) {
  const std::size_t size = out.size();
  VERIFY(size >= kSampleBytesMin);
  VERIFY(size <= kSampleBytesMax);
  VERIFY(size % 8 == 0);
  std::byte* p = out.data();
  put_header(p, PERF_RECORD_SAMPLE, static_cast<std::uint16_t>(size));
  put(p + 8, &event.id, 8);
  put(p + 16, &event.pid, 4);
  put(p + 20, &event.tid, 4);
  put(p + 24, &time_ns, 8);
  const std::uint32_t reserved = 0;
  put(p + kSampleCpuOffset, &event.cpu, 4);
  put(p + 36, &reserved, 4);
  const std::uint32_t raw_size = static_cast<std::uint32_t>(size - 44);
  VERIFY((raw_size + 4) % 8 == 0);
  put(p + 40, &raw_size, 4);
  // raw: sequence, then a stream derived from (seed, cpu, sequence).
  std::byte* raw = p + 44;
  put(raw, &sequence, 4);
  std::uint64_t state = mix(payload_seed ^ (std::uint64_t{event.cpu} << 56) ^ sequence);
  for (std::size_t offset = 4; offset < raw_size; offset += 8) {
    state = mix(state);
    put(raw + offset, &state, std::min<std::size_t>(8, raw_size - offset));
  }
}

void build_lost(std::span<std::byte> out, const EventIdentity& event, std::uint64_t time_ns,
                std::uint64_t lost) {
  VERIFY(out.size() == kLostBytes);
  VERIFY(lost > 0);
  std::byte* p = out.data();
  put_header(p, PERF_RECORD_LOST, kLostBytes);
  put(p + 8, &event.id, 8);
  put(p + 16, &lost, 8);
  put(p + 24, &event.pid, 4);
  put(p + 28, &event.tid, 4);
  put(p + 32, &time_ns, 8);
  const std::uint32_t reserved = 0;
  put(p + kLostCpuOffset, &event.cpu, 4);
  put(p + 44, &reserved, 4);
  put(p + 48, &event.id, 8);
}

}  // namespace ringsim::sim
