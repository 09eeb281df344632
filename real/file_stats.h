// Reading recorded files back for their statistics, with the production
// reader (core/perf_data_reader.h) over a read-only mapping of each file:
// the recorder's summary and the benchmark measure every file (perf's and
// ours) with this. The tests check these figures against independent
// counts (the model's parser, perf script, stat()).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/perf_data_reader.h"

namespace ringsim::real {

struct FileStats {
  std::uint64_t files = 0;       // files read (a file with a problem is not)
  std::uint64_t file_bytes = 0;  // their sizes
  std::uint64_t data_bytes = 0;  // their data sections
  // core::LossMeter over the data sections, in order, as one recording.
  core::LossStats loss;
  std::string problem;  // the first problem met, "<path>: <problem>" ("" if none)
};

FileStats read_back(const std::vector<std::string>& paths);

}  // namespace ringsim::real
