// The records the simulated kernel writes, laid out exactly as the real
// kernel lays them out for an event with
//   sample_type = IDENTIFIER | TID | TIME | CPU | RAW, sample_id_all = 1.
//
//   PERF_RECORD_SAMPLE { header; u64 identifier; u32 pid, tid; u64 time;
//                        u32 cpu, res; u32 raw_size; u8 raw[raw_size] }
//   PERF_RECORD_LOST   { header; u64 id; u64 lost;
//                        sample_id { u32 pid, tid; u64 time; u32 cpu, res;
//                                    u64 identifier } }
// raw_size + 4 is a multiple of 8, so a sample is 44 + raw_size bytes. The
// raw payload starts with the sample's sequence number on its CPU and is
// filled from it: every sample is distinct, so a duplicate, a swap or a
// torn copy shows as a byte difference.
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace ringsim::sim {

inline constexpr std::uint64_t kSampleType =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW;
inline constexpr std::uint32_t kSampleBytesMin = 48;
inline constexpr std::uint32_t kSampleBytesMax = 65528;  // u16 size, 8-aligned
inline constexpr std::uint32_t kLostBytes = 56;
// Offset of the cpu field in a sample and in a LOST record's sample_id.
inline constexpr std::uint32_t kSampleCpuOffset = 32;
inline constexpr std::uint32_t kLostCpuOffset = 40;

struct EventIdentity {
  std::uint64_t id = 0;
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::uint32_t cpu = 0;
};

// Writes a sample of out.size() bytes (kSampleBytesMin..kSampleBytesMax, a
// multiple of 8).
void build_sample(std::span<std::byte> out, const EventIdentity& event, std::uint64_t time_ns,
                  std::uint64_t sequence, std::uint64_t payload_seed);

// Writes a PERF_RECORD_LOST of kLostBytes bytes.
void build_lost(std::span<std::byte> out, const EventIdentity& event, std::uint64_t time_ns,
                std::uint64_t lost);

}  // namespace ringsim::sim
