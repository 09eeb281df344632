// Test double: a core::ChunkSink that keeps the delivered bytes per
// mapping and notes which rings were declared corrupt. One buffer, reused:
// it holds no reference on a mapping after commit().
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/record_loop.h"

namespace ringsim::core::testing {

struct VectorSink {
  VectorSink(std::size_t mappings, std::uint64_t buffer_bytes)
      : out(mappings), corrupt(mappings, false), buffer(buffer_bytes) {}
  std::span<std::byte> acquire(std::size_t) { return buffer; }
  int commit(std::size_t m, std::uint64_t bytes, const RecordCounts&) {
    out[m].insert(out[m].end(), buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(bytes));
    return 0;
  }
  void abandon(std::size_t) {}
  void note_gap(std::size_t, PositionRange, std::uint64_t) {}
  void note_corrupt(std::size_t m, PositionRange, ReadStatus) { corrupt[m] = true; }
  std::uint32_t references(std::size_t) const { return 0; }
  int end_round(bool) { return 0; }
  int flush() { return 0; }

  std::vector<std::vector<std::byte>> out;
  std::vector<bool> corrupt;
  std::vector<std::byte> buffer;
};

static_assert(ChunkSink<VectorSink>);

}  // namespace ringsim::core::testing
