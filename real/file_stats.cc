#include "real/file_stats.h"

#include <climits>
#include <span>
#include <vector>

#include "core/perf_abi.h"
#include "core/records.h"

#include "real/mapped_file.h"
#include "real/zstd_records.h"

namespace ringsim::real {
namespace {

// Samples per attribute (by its position) and LOST records per CPU.
void count_per_event_and_ring(const core::PerfDataView& view, FileStats& out) {
  if (out.samples_per_event.size() < view.attrs.size()) out.samples_per_event.resize(view.attrs.size(), 0);
  core::RecordCounts counts;
  core::walk_records(view.data, counts, [&](const perf_event_header& h, std::span<const std::byte> r) {
    if (h.type == PERF_RECORD_SAMPLE) {
      const core::PerfDataAttr* attr = view.attr_of(h, r);
      if (attr != nullptr) out.samples_per_event[static_cast<std::size_t>(attr - view.attrs.data())]++;
    } else if (h.type == PERF_RECORD_LOST) {
      std::uint32_t cpu = UINT32_MAX;
      if (!view.cpu_of(h, r, cpu)) cpu = UINT32_MAX;
      RingLoss& ring = out.lost_per_ring[cpu];
      ring.records++;
      ring.lost += core::load<std::uint64_t>(r.data() + core::kLostRecordLostOffset);
    }
  });
}

}  // namespace

FileStats read_back(const std::vector<std::string>& paths) {
  FileStats out;
  core::LossMeter meter;
  auto note = [&](const std::string& path, const std::string& problem) {
    if (!problem.empty() && out.problem.empty()) out.problem = path + ": " + problem;
  };
  for (const std::string& path : paths) {
    MappedFile file;
    core::PerfDataView view;
    std::string problem = file.map(path);
    if (problem.empty()) problem = core::read_perf_data(file.bytes(), view);
    if (!problem.empty()) {
      note(path, problem);
      continue;
    }
    out.files++;
    out.file_bytes += view.file_bytes;
    out.data_bytes += view.data.size();
    // perf -z's files and ours: the records the COMPRESSED ones hold.
    std::vector<std::byte> expanded;
    bool compressed = false;
    note(path, expand_compressed(view.data, expanded, compressed));
    if (compressed) view.data = expanded;
    note(path, meter.add(view));
    count_per_event_and_ring(view, out);
  }
  out.loss = meter.finish();
  return out;
}

}  // namespace ringsim::real
