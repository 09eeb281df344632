// bazel run //model:perf_data_stats -- FILE...
//
// What a perf.data file holds and lost: records, samples, PERF_RECORD_LOST
// records and the sum of their counts, the fraction of samples lost, and
// the data-loss metric (model/perf_data_file.h). Reads perf's own files as
// well as ringsim's, so both are measured the same way.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "model/perf_data_file.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: perf_data_stats FILE...\n");
    return 64;
  }
  int status = 0;
  std::printf("%-40s %10s %10s %8s %12s %9s %9s\n", "file", "records", "samples", "lost_rec", "lost_sum", "lost%",
              "metric%");
  for (int i = 1; i < argc; i++) {
    std::string path = argv[i];
    const char* base = std::getenv("BUILD_WORKING_DIRECTORY");
    if (base != nullptr && !path.empty() && path.front() != '/') path = (std::filesystem::path(base) / path).string();
    ringsim::model::PerfDataFile file;
    if (const std::string problem = ringsim::model::read_perf_data(path, file); !problem.empty()) {
      std::fprintf(stderr, "perf_data_stats: %s\n", problem.c_str());
      status = 65;
      continue;
    }
    ringsim::model::LossStats stats;
    const std::string problem = ringsim::model::loss_stats(file, stats);
    std::printf("%-40s %10llu %10llu %8llu %12llu %9.2f %9.2f\n", argv[i],
                static_cast<unsigned long long>(stats.records), static_cast<unsigned long long>(stats.samples),
                static_cast<unsigned long long>(stats.lost_records), static_cast<unsigned long long>(stats.lost_sum),
                100 * stats.lost_fraction(), 100 * stats.loss_metric());
    if (!problem.empty()) {
      std::fprintf(stderr, "perf_data_stats: %s: %s\n", argv[i], problem.c_str());
      status = 65;
    }
  }
  return status;
}
