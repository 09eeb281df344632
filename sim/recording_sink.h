// A ChunkSink wrapper that forwards everything to the sink it wraps and
// also notes the reader's overwrite gaps and corrupt rings, and when each
// finished-round marker was written, in the run's output, where the oracle
// and the file checks read them.
#pragma once

#include "core/record_loop.h"
#include "model/log.h"
#include "sim/scheduler.h"

namespace ringsim::sim {

template <class Inner>
class RecordingSink {
 public:
  RecordingSink(Inner& inner, model::RunOutput& output, Scheduler& scheduler)
      : inner_(inner), output_(output), scheduler_(scheduler) {}

  std::span<std::byte> acquire(std::size_t m) { return inner_.acquire(m); }
  int commit(std::size_t m, std::uint64_t bytes, const core::RecordCounts& counts) {
    scheduler_.trace(TraceKind::committed, m, bytes, counts.records);
    return inner_.commit(m, bytes, counts);
  }
  void abandon(std::size_t m) { inner_.abandon(m); }
  void note_gap(std::size_t m, core::PositionRange gap, std::uint64_t head) {
    output_.cpus[m].gaps.push_back(model::Gap{gap.begin, gap.end, head});
    scheduler_.trace(TraceKind::gap, m, gap.begin, gap.end);
    inner_.note_gap(m, gap, head);
  }
  void note_corrupt(std::size_t m, core::PositionRange at, core::ReadStatus status) {
    output_.cpus[m].corrupt = true;
    output_.cpus[m].corrupt_reason = std::string(core::to_string(status)) + " at position " + std::to_string(at.begin);
    scheduler_.trace(TraceKind::corrupt, m, at.begin);
    inner_.note_corrupt(m, at, status);
  }
  std::uint32_t references(std::size_t m) const { return inner_.references(m); }
  int end_round(bool all_drained) {
    const std::uint64_t marked = inner_.stats().rounds_marked;
    const int rc = inner_.end_round(all_drained);
    if (inner_.stats().rounds_marked != marked) output_.round_marks_ns.push_back(scheduler_.now_ns());
    return rc;
  }
  int flush() { return inner_.flush(); }

 private:
  Inner& inner_;
  model::RunOutput& output_;
  Scheduler& scheduler_;
};

}  // namespace ringsim::sim
