// What the model's reader (model/perf_data_file.h, independent of core's
// reader) sees in a recording's files: the tests' reference for the
// figures the recorder prints and for files perf is asked about.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/perf_data_file.h"

namespace ringsim::real::testing {

struct ModelView {
  std::uint64_t files = 0;       // files the model read
  std::uint64_t file_bytes = 0;  // their sizes, as the model found them
  std::uint64_t data_bytes = 0;  // their data sections
  // model::loss_stats over the data sections in order, as one stream.
  model::LossStats loss;
  std::string problem;  // the first problem ("" if none)
};

ModelView model_view(const std::vector<std::string>& paths);

}  // namespace ringsim::real::testing
