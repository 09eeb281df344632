// A ChunkSink (core/record_loop.h) that keeps what the record loop delivers
// in memory, per mapping (one mapping per CPU), for the oracle. It holds no
// reference on a mapping after commit(): its "write" is the copy into
// RunOutput.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/record_loop.h"
#include "model/log.h"
#include "sim/scheduler.h"

namespace ringsim::sim {

class MemorySink {
 public:
  MemorySink(Scheduler& scheduler, model::RunOutput& output, std::size_t mappings, std::uint64_t buffer_bytes);

  // The drop_lost mutant: commit() leaves PERF_RECORD_LOST records out.
  void set_drop_lost_records(bool drop) { drop_lost_records_ = drop; }

  std::span<std::byte> acquire(std::size_t mapping);
  int commit(std::size_t mapping, std::uint64_t bytes, const core::RecordCounts& counts);
  void abandon(std::size_t mapping);
  void note_gap(std::size_t mapping, core::PositionRange gap, std::uint64_t head);
  void note_corrupt(std::size_t mapping, core::PositionRange at, core::ReadStatus status);
  std::uint32_t references(std::size_t mapping) const;
  int end_round() { return 0; }
  int flush() { return 0; }

 private:
  Scheduler& scheduler_;
  model::RunOutput& output_;
  std::vector<std::vector<std::byte>> buffers_;
  std::vector<bool> acquired_;
  bool drop_lost_records_ = false;
};

}  // namespace ringsim::sim
