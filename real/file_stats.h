// Reading recorded files back for their statistics, with the model's
// independent parser (model/perf_data_file.h): the recorder's summary and
// the benchmark measure every file (perf's and ours) with this.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/perf_data_file.h"

namespace ringsim::real {

// model::parse_perf_data over a read-only mapping of the file (one copy of
// the data section, in the parser). "" or the problem.
std::string read_perf_data_mapped(const std::string& path, model::PerfDataFile& out);

struct FileStats {
  std::uint64_t files = 0;
  std::uint64_t file_bytes = 0;
  std::uint64_t data_bytes = 0;
  // model::loss_stats over the data sections, in order, as one stream.
  model::LossStats loss;
  std::string problem;  // the first problem met ("" if none)
};

FileStats read_back(const std::vector<std::string>& paths);

}  // namespace ringsim::real
