// Reading recorded files back for their statistics, with the production
// reader (core/perf_data_reader.h) over a read-only mapping of each file:
// the recorder's summary and the benchmark measure every file (perf's and
// ours) with this. The tests check these figures against independent
// counts (the model's parser, perf script, stat()). COMPRESSED records
// (-z) are read as the records they hold (real/zstd_records.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/perf_data_reader.h"

namespace ringsim::real {

struct RingLoss {
  std::uint64_t records = 0;  // PERF_RECORD_LOST records
  std::uint64_t lost = 0;     // the sum of their counts
};

struct FileStats {
  std::uint64_t files = 0;       // files read (a file with a problem is not)
  std::uint64_t file_bytes = 0;  // their sizes
  std::uint64_t data_bytes = 0;  // their data sections
  // core::LossMeter over the data sections, in order, as one recording.
  core::LossStats loss;
  // Samples of each event (by its position in the attribute section, the
  // same in every file of a recording), and LOST records by the CPU of
  // their ring (UINT32_MAX: without a CPU).
  std::vector<std::uint64_t> samples_per_event;
  std::map<std::uint32_t, RingLoss> lost_per_ring;
  std::string problem;  // the first problem met, "<path>: <problem>" ("" if none)
};

FileStats read_back(const std::vector<std::string>& paths);

}  // namespace ringsim::real
