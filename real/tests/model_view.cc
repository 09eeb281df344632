#include "real/tests/model_view.h"

#include <utility>

namespace ringsim::real::testing {

ModelView model_view(const std::vector<std::string>& paths) {
  ModelView out;
  model::PerfDataFile merged;
  for (const std::string& path : paths) {
    model::PerfDataFile file;
    if (const std::string problem = model::read_perf_data(path, file); !problem.empty()) {
      if (out.problem.empty()) out.problem = path + ": " + problem;
      continue;
    }
    out.files++;
    out.file_bytes += file.file_size;
    out.data_bytes += file.data_size;
    if (merged.attrs.empty()) {
      merged = std::move(file);
    } else {
      merged.data.insert(merged.data.end(), file.data.begin(), file.data.end());
    }
  }
  merged.data_size = merged.data.size();
  if (const std::string problem = model::loss_stats(merged, out.loss); !problem.empty() && out.problem.empty()) {
    out.problem = problem;
  }
  return out;
}

}  // namespace ringsim::real::testing
