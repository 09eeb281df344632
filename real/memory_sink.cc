#include "real/memory_sink.h"

#include <cerrno>

#include "core/verify.h"

// The record loop, compiled once for the real backend with this sink.
template class ringsim::core::RecordLoop<ringsim::real::RealSession, ringsim::real::MemorySink>;

namespace ringsim::real {

MemorySink::MemorySink(std::size_t mappings, std::uint64_t buffer_bytes, std::uint64_t bytes_max)
    : bytes_max_(bytes_max), mapping_samples_(mappings) {
  VERIFY(mappings > 0);
  VERIFY(buffer_bytes >= core::kRecordAlignBytes);
  VERIFY(bytes_max > 0);
  buffers_.assign(mappings, std::vector<std::byte>(buffer_bytes));
  acquired_.assign(mappings, false);
  outputs_.assign(mappings, Output{});
}

std::span<std::byte> MemorySink::acquire(std::size_t mapping) {
  VERIFY(mapping < buffers_.size());
  VERIFY_MSG(!acquired_[mapping], "acquire twice without commit or abandon");
  acquired_[mapping] = true;
  return buffers_[mapping];
}

int MemorySink::commit(std::size_t mapping, std::uint64_t bytes, const core::RecordCounts& counts) {
  VERIFY(mapping < buffers_.size());
  VERIFY_MSG(acquired_[mapping], "commit without acquire");
  VERIFY(bytes <= buffers_[mapping].size());
  VERIFY(counts.bytes == bytes);
  acquired_[mapping] = false;
  if (bytes > bytes_max_ - bytes_kept_) return -ENOSPC;
  bytes_kept_ += bytes;
  const std::vector<std::byte>& buffer = buffers_[mapping];
  Output& out = outputs_[mapping];
  out.bytes.insert(out.bytes.end(), buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(bytes));
  out.commit_ends.push_back(out.bytes.size());
  out.counts.add(counts);
  records_.fetch_add(counts.records, std::memory_order_relaxed);
  samples_.fetch_add(counts.samples, std::memory_order_relaxed);
  mapping_samples_[mapping].fetch_add(counts.samples, std::memory_order_relaxed);
  lost_records_.fetch_add(counts.lost_records, std::memory_order_relaxed);
  commits_.fetch_add(1, std::memory_order_relaxed);
  return 0;
}

void MemorySink::abandon(std::size_t mapping) {
  VERIFY(mapping < acquired_.size());
  VERIFY_MSG(acquired_[mapping], "abandon without acquire");
  acquired_[mapping] = false;
}

void MemorySink::note_gap(std::size_t mapping, core::PositionRange gap, std::uint64_t head) {
  VERIFY(mapping < outputs_.size());
  VERIFY(gap.bytes() > 0);
  outputs_[mapping].gaps.push_back(Gap{gap, head});
}

void MemorySink::note_corrupt(std::size_t mapping, core::PositionRange at, core::ReadStatus status) {
  VERIFY(mapping < outputs_.size());
  VERIFY(status != core::ReadStatus::ready);
  outputs_[mapping].corruptions.push_back(Corruption{at, status});
}

std::uint32_t MemorySink::references(std::size_t mapping) const {
  VERIFY(mapping < acquired_.size());
  // Nothing is in flight after commit(); a buffer still acquired is not a
  // reference on the ring (its bytes are a copy).
  return 0;
}

std::uint64_t MemorySink::committed_samples(std::size_t mapping) const {
  VERIFY(mapping < mapping_samples_.size());
  return mapping_samples_[mapping].load(std::memory_order_relaxed);
}

int MemorySink::end_round(bool) {
  rounds_.fetch_add(1, std::memory_order_relaxed);
  return 0;
}

const MemorySink::Output& MemorySink::output(std::size_t mapping) const {
  VERIFY(mapping < outputs_.size());
  VERIFY_MSG(!acquired_[mapping], "output() read while a chunk is acquired");
  return outputs_[mapping];
}

}  // namespace ringsim::real
