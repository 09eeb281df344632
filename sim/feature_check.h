// file_valid for the feature sections of a simulated output file: read by
// the model's reader (model/perf_features.h, no code shared with the
// writer), compared with what the run hands the writer (sim_features.h)
// and with what the file's own data section holds.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "model/perf_data_file.h"

namespace ringsim::sim {

// finished: the writer finished without an error, so the file must carry
// every feature a simulated file has. Each problem goes to `violate`.
void check_file_features(const model::PerfDataFile& file, std::uint32_t cpus, bool finished,
                         const std::function<void(const std::string&)>& violate);

}  // namespace ringsim::sim
