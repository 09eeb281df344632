// A ChunkSink (core/record_loop.h) that hands what the record loop
// delivers straight to the oracle: per mapping (one per CPU), data-ring
// records into model::RunOutput's bytes and AUX data into its chunks (the
// run with output=memory). It holds no reference on a mapping after
// commit(): its "write" is the copy. (The real backend's tests have their
// own in-memory sink, real::MemorySink, which keeps raw chunks.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/record_loop.h"
#include "model/log.h"
#include "sim/scheduler.h"

namespace ringsim::sim {

class OracleSink {
 public:
  OracleSink(Scheduler& scheduler, model::RunOutput& output, std::size_t mappings, std::uint64_t buffer_bytes);

  // The drop_lost mutant: commit() leaves PERF_RECORD_LOST records out.
  void set_drop_lost_records(bool drop) { drop_lost_records_ = drop; }

  std::span<std::byte> acquire(std::size_t mapping);
  int commit(std::size_t mapping, std::uint64_t bytes, const core::RecordCounts& counts);
  void abandon(std::size_t mapping);
  void note_gap(std::size_t mapping, core::PositionRange gap, std::uint64_t head);
  void note_corrupt(std::size_t mapping, core::PositionRange at, core::ReadStatus status);
  std::uint32_t references(std::size_t mapping) const;
  int end_round(bool) { return 0; }
  int flush() { return 0; }

 private:
  Scheduler& scheduler_;
  model::RunOutput& output_;
  std::vector<std::vector<std::byte>> buffers_;
  std::vector<bool> acquired_;
  bool drop_lost_records_ = false;
};

static_assert(core::ChunkSink<OracleSink>);

}  // namespace ringsim::sim
