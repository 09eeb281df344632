// Small helpers shared by the unit tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "model/log.h"
#include "sim/kernel.h"
#include "sim/ring.h"
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

// A kernel ring with its log and one writing event, outside any
// simulation. `watermark` > 0 sets attr.watermark (wakeup_events is then
// ignored, as in perf_event_attr's union).
struct RingFixture {
  explicit RingFixture(std::uint64_t ring_bytes = 4096, core::RingMode mode = core::RingMode::normal,
                       std::uint32_t wakeup_events = 0, std::uint64_t watermark = 0) {
    layout.size_bytes = ring_bytes;
    layout.mode = mode;
    layout.watermark_bytes = watermark;
    event.identity.id = 1000;
    event.wakeup_events = wakeup_events;
    event.watermark = watermark > 0;
    log.ops.reserve(1024);
    ring = std::make_unique<sim::SimRing>(layout, log, probes);
  }
  sim::SimRing::Output put(std::uint32_t size) {
    const std::vector<std::byte> bytes = sample(size, next_sequence++);
    return ring->output(event, bytes, next_sequence);
  }
  // The kernel's log, as the model sees it (for check_kernel_rules).
  model::KernelLog kernel_log() const {
    model::KernelLog k;
    k.mode = static_cast<model::Mode>(layout.mode);
    k.ring_bytes = layout.size_bytes;
    k.watermark_bytes = layout.watermark_bytes == 0 ? layout.size_bytes / 2 : layout.watermark_bytes;
    k.cpus.push_back(log);
    return k;
  }
  sim::RingLayout layout;
  sim::EventAttrs event;
  model::CpuLog log;
  sim::Probes probes;
  std::unique_ptr<sim::SimRing> ring;
  std::uint64_t next_sequence = 0;
};

}  // namespace ringsim::testing
