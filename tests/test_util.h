// Small helpers shared by the unit tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "model/log.h"
#include "sim/kernel.h"
#include "sim/probes.h"
#include "sim/sample.h"

namespace ringsim::testing {

inline std::vector<std::byte> sample(std::uint32_t size, std::uint64_t sequence, std::uint32_t cpu = 0) {
  std::vector<std::byte> bytes(size);
  sim::EventIdentity identity;
  identity.id = 1000 + cpu;
  identity.cpu = cpu;
  sim::build_sample(bytes, identity, 100 + sequence, sequence, 7);
  return bytes;
}

inline std::uint16_t size_at(std::span<const std::byte> bytes, std::size_t offset) {
  std::uint16_t size;
  std::memcpy(&size, bytes.data() + offset + 6, 2);
  return size;
}

inline std::uint32_t type_at(std::span<const std::byte> bytes, std::size_t offset) {
  std::uint32_t type;
  std::memcpy(&type, bytes.data() + offset, 4);
  return type;
}

// A kernel ring with its log, outside any simulation.
struct RingFixture {
  explicit RingFixture(std::uint64_t ring_bytes = 4096, core::RingMode mode = core::RingMode::normal,
                       std::uint32_t wakeup_events = 0, std::uint64_t watermark = 0) {
    config.ring_bytes = ring_bytes;
    config.mode = mode;
    config.wakeup_events = wakeup_events;
    config.wakeup_watermark_bytes = watermark;
    sim::EventIdentity identity;
    identity.id = 1000;
    ring = std::make_unique<sim::SimRing>(config, identity, log, probes);
  }
  sim::SimRing::Output put(std::uint32_t size) {
    const std::vector<std::byte> bytes = sample(size, next_sequence++);
    return ring->output(bytes, next_sequence);
  }
  sim::KernelConfig config;
  model::CpuLog log;
  sim::Probes probes;
  std::unique_ptr<sim::SimRing> ring;
  std::uint64_t next_sequence = 0;
};

}  // namespace ringsim::testing
