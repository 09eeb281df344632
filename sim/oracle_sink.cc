#include "sim/oracle_sink.h"

#include <cstring>

#include "core/verify.h"

namespace ringsim::sim {

OracleSink::OracleSink(Scheduler& scheduler, model::RunOutput& output, std::size_t mappings,
                       std::uint64_t buffer_bytes)
    : scheduler_(scheduler), output_(output) {
  VERIFY(mappings > 0);
  VERIFY(buffer_bytes > 0);
  output_.cpus.assign(mappings, model::CpuOutput{});
  buffers_.assign(mappings, std::vector<std::byte>(buffer_bytes));
  acquired_.assign(mappings, false);
}

std::span<std::byte> OracleSink::acquire(std::size_t mapping) {
  VERIFY(mapping < buffers_.size());
  VERIFY(!acquired_[mapping]);
  acquired_[mapping] = true;
  return buffers_[mapping];
}

int OracleSink::commit(std::size_t mapping, std::uint64_t bytes, const core::RecordCounts& counts) {
  VERIFY(acquired_[mapping]);
  VERIFY(bytes <= buffers_[mapping].size());
  VERIFY(counts.bytes == bytes);
  const std::vector<std::byte>& buffer = buffers_[mapping];
  std::vector<std::byte>& out = output_.cpus[mapping].bytes;
  // Data-ring records to `bytes`, AUX data (AUXTRACE records) to `aux`.
  core::RecordCounts unused;
  core::walk_records(std::span<const std::byte>(buffer.data(), bytes), unused,
                     [&](const perf_event_header& header, std::span<const std::byte> record) {
                       if (header.type == core::kRecordAuxtrace) {
                         core::AuxtraceHeader h;
                         std::memcpy(&h, record.data(), sizeof h);
                         model::AuxChunk chunk;
                         chunk.offset = h.offset;
                         chunk.data.assign(record.begin() + core::kAuxtraceHeaderBytes, record.end());
                         output_.cpus[mapping].aux.push_back(std::move(chunk));
                         return;
                       }
                       if (drop_lost_records_ && header.type == PERF_RECORD_LOST) return;
                       out.insert(out.end(), record.begin(), record.end());
                     });
  acquired_[mapping] = false;
  scheduler_.trace(TraceKind::committed, mapping, bytes, counts.records);
  return 0;
}

void OracleSink::abandon(std::size_t mapping) {
  VERIFY(acquired_[mapping]);
  acquired_[mapping] = false;
}

void OracleSink::note_gap(std::size_t mapping, core::PositionRange gap, std::uint64_t head) {
  output_.cpus[mapping].gaps.push_back(model::Gap{gap.begin, gap.end, head});
  scheduler_.trace(TraceKind::gap, mapping, gap.begin, gap.end);
}

void OracleSink::note_corrupt(std::size_t mapping, core::PositionRange at, core::ReadStatus status) {
  model::CpuOutput& out = output_.cpus[mapping];
  out.corrupt = true;
  out.corrupt_reason = std::string(core::to_string(status)) + " at position " + std::to_string(at.begin);
  scheduler_.trace(TraceKind::corrupt, mapping, at.begin);
}

std::uint32_t OracleSink::references(std::size_t mapping) const {
  VERIFY(mapping < acquired_.size());
  return 0;
}

}  // namespace ringsim::sim
