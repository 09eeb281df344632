// A core::ChunkSink (core/record_loop.h) that keeps what the record loop
// delivers in memory, per mapping, for tests and small recordings on a real
// machine. Its "write" is the copy in commit(), so it never holds a
// reference on a mapping after commit() returns.
//
// Bounded: once the bytes kept for all mappings would pass bytes_max,
// commit() fails with -ENOSPC and the loop stops (as on a full disk).
//
// Threads: the loop's thread calls the ChunkSink methods; the progress
// counters may be read from any thread while the loop runs; output() only
// after the loop has returned.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/record_loop.h"
#include "core/records.h"
#include "core/ring_reader.h"
#include "real/real_backend.h"

namespace ringsim::real {

class MemorySink {
 public:
  struct Gap {
    core::PositionRange range;
    std::uint64_t head = 0;
  };
  struct Corruption {
    core::PositionRange at;
    core::ReadStatus status = core::ReadStatus::empty;
  };
  // Everything delivered for one mapping, in delivery order.
  struct Output {
    std::vector<std::byte> bytes;
    std::vector<std::uint64_t> commit_ends;  // offset in bytes after each commit
    std::vector<Gap> gaps;
    std::vector<Corruption> corruptions;
    core::RecordCounts counts;
  };

  static constexpr std::uint64_t kBytesMaxDefault = std::uint64_t{256} << 20;

  // buffer_bytes: at least the largest ring's data size.
  MemorySink(std::size_t mappings, std::uint64_t buffer_bytes, std::uint64_t bytes_max = kBytesMaxDefault);

  // core::ChunkSink
  std::span<std::byte> acquire(std::size_t mapping);
  int commit(std::size_t mapping, std::uint64_t bytes, const core::RecordCounts& counts);
  void abandon(std::size_t mapping);
  void note_gap(std::size_t mapping, core::PositionRange gap, std::uint64_t head);
  void note_corrupt(std::size_t mapping, core::PositionRange at, core::ReadStatus status);
  std::uint32_t references(std::size_t mapping) const;
  int end_round(bool all_drained);
  int flush() { return 0; }

  std::size_t mapping_count() const { return outputs_.size(); }
  const Output& output(std::size_t mapping) const;

  // Progress, from any thread.
  std::uint64_t committed_records() const { return records_.load(std::memory_order_relaxed); }
  std::uint64_t committed_samples() const { return samples_.load(std::memory_order_relaxed); }
  std::uint64_t committed_samples(std::size_t mapping) const;
  std::uint64_t committed_lost_records() const { return lost_records_.load(std::memory_order_relaxed); }
  std::uint64_t commits() const { return commits_.load(std::memory_order_relaxed); }
  std::uint64_t rounds() const { return rounds_.load(std::memory_order_relaxed); }

 private:
  const std::uint64_t bytes_max_;
  std::uint64_t bytes_kept_ = 0;
  std::vector<std::vector<std::byte>> buffers_;
  std::vector<bool> acquired_;
  std::vector<Output> outputs_;
  std::atomic<std::uint64_t> records_{0};
  std::atomic<std::uint64_t> samples_{0};
  std::atomic<std::uint64_t> lost_records_{0};
  std::atomic<std::uint64_t> commits_{0};
  std::atomic<std::uint64_t> rounds_{0};
  std::vector<std::atomic<std::uint64_t>> mapping_samples_;  // sized once
};

static_assert(core::ChunkSink<MemorySink>);

}  // namespace ringsim::real

extern template class ringsim::core::RecordLoop<ringsim::real::RealSession, ringsim::real::MemorySink>;
