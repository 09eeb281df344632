// A ChunkSink wrapper that forwards everything to the sink it wraps and
// also notes the reader's overwrite gaps and corrupt rings, and when each
// finished-round marker was written, in the run's output, where the oracle
// and the file checks read them.
//
// Behind a staging buffer it is the writing fiber's core::StagedWriter:
// each batch must walk as whole records to the counts it carries
// (staging_whole; a violation otherwise), and a marker's time is when the
// reading fiber ended that round (the round-order check's "round began").
#pragma once

#include "core/record_loop.h"
#include <string>
#include <vector>

#include "core/records.h"
#include "model/log.h"
#include "model/properties.h"
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
    commits_++;
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
  int end_round(bool all_drained) { return end_round(all_drained, scheduler_.now_ns()); }
  int end_round(bool all_drained, std::uint64_t round_ns) {
    const std::uint64_t marked = inner_.stats().rounds_marked;
    const int rc = inner_.end_round(all_drained);
    if (inner_.stats().rounds_marked != marked) output_.round_marks_ns.push_back(round_ns);
    return rc;
  }

  // --- core::StagedWriter ----------------------------------------------------
  int write_staged(std::span<const std::byte> data, const core::RecordCounts& counts) {
    core::RecordCounts walked;
    const core::WalkResult walk = core::walk_records(data, walked);
    if (walk.error != core::RecordError::none || !(walked == counts)) {
      if (staging_violations_.size() < 10) {
        staging_violations_.push_back(model::Violation{
            model::kStagingWhole, "a staged batch of " + std::to_string(data.size()) + " bytes " +
                                      (walk.error != core::RecordError::none
                                           ? "is torn at byte " + std::to_string(walk.valid_bytes)
                                           : "walks to " + std::to_string(walked.records) + " records, not the " +
                                                 std::to_string(counts.records) + " staged")});
      }
    }
    scheduler_.trace(TraceKind::committed, UINT32_MAX, data.size(), counts.records);
    batches_++;
    walked_.add(walked);
    return inner_.write_staged(data, counts);
  }
  const std::vector<model::Violation>& staging_violations() const { return staging_violations_; }
  std::uint64_t batches() const { return batches_; }
  // What went through: chunks committed, and the records walked in the
  // staged batches (counters_agree's counts of the writer's input).
  std::uint64_t commits() const { return commits_; }
  const core::RecordCounts& walked() const { return walked_; }
  int flush() { return inner_.flush(); }

 private:
  Inner& inner_;
  model::RunOutput& output_;
  Scheduler& scheduler_;
  std::vector<model::Violation> staging_violations_;
  std::uint64_t batches_ = 0;
  std::uint64_t commits_ = 0;
  core::RecordCounts walked_;
};

}  // namespace ringsim::sim
