// Fuzzes the core's record walker (core/records.h) on arbitrary bytes. It
// must end, never read outside the chunk (ASan), and be consistent:
//   - the records it reports tile its valid prefix exactly, in order;
//   - the counts add up, and the valid prefix walks again to the same
//     counts with no error;
//   - an error is reported exactly when the prefix is not the whole chunk;
//   - it agrees with the model's independent walker (model/records.h): the
//     same records, and the same stopping point, except that the core also
//     refuses a PERF_RECORD_LOST too short for its fields.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/records.h"
#include "core/verify.h"
#include "model/records.h"

namespace {

using namespace ringsim;

struct Walked {
  std::uint64_t offset;
  std::uint64_t length;
  bool operator==(const Walked&) const = default;
};

void check_against_model(std::span<const std::byte> chunk, const core::WalkResult& walk,
                         const std::vector<Walked>& core_records) {
  std::vector<Walked> model_records;
  const std::string problem = model::walk_records(
      chunk, [&](const model::PerfRecord& r) { model_records.push_back({r.offset, r.bytes.size()}); });
  VERIFY(model_records.size() >= core_records.size());
  for (std::size_t i = 0; i < core_records.size(); i++) VERIFY(model_records[i] == core_records[i]);
  if (walk.error == core::RecordError::lost_too_small) return;  // the model does not look inside LOST
  VERIFY(model_records.size() == core_records.size());
  VERIFY(problem.empty() == (walk.error == core::RecordError::none));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> chunk(reinterpret_cast<const std::byte*>(data), size);
  core::RecordCounts counts;
  std::vector<Walked> records;
  std::uint64_t tiled = 0;
  const core::WalkResult walk =
      core::walk_records(chunk, counts, [&](const perf_event_header& header, std::span<const std::byte> record) {
        VERIFY(record.data() == chunk.data() + tiled);
        VERIFY(record.size() >= header.size);
        records.push_back({tiled, record.size()});
        tiled += record.size();
      });
  VERIFY(walk.valid_bytes <= size);
  VERIFY(walk.valid_bytes % core::kRecordAlignBytes == 0);
  VERIFY(tiled == walk.valid_bytes);
  VERIFY(counts.bytes == walk.valid_bytes);
  VERIFY(counts.records == records.size());
  VERIFY((walk.error == core::RecordError::none) == (walk.valid_bytes == size));
  VERIFY(counts.records == counts.samples + counts.lost_records + counts.aux_records + counts.auxtrace_records +
                               counts.other_records);
  core::RecordCounts again;
  const core::WalkResult prefix = core::walk_records(chunk.first(walk.valid_bytes), again);
  VERIFY(prefix.error == core::RecordError::none);
  VERIFY(prefix.valid_bytes == walk.valid_bytes);
  VERIFY(again == counts);
  check_against_model(chunk, walk, records);
  return 0;
}
