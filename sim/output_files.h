// Reading back what the trace writer left on the simulated disk: each
// output file is parsed as perf.data (model/perf_data_file.h, which shares
// no code with the writer), checked (file_valid), and its records are split
// per CPU for the oracle.
#pragma once

#include <cstdint>
#include <vector>

#include "model/log.h"
#include "model/oracle.h"
#include "model/perf_data_file.h"
#include "sim/disk.h"

namespace ringsim::sim {

struct OutputFiles {
  model::RunOutput output;                   // per CPU, every file in order
  std::vector<model::Violation> violations;  // file_valid
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;
  std::uint64_t rounds = 0;                  // PERF_RECORD_FINISHED_ROUND records
  model::PerfDataFile combined;              // every file's data section, concatenated
};

// `finished`: the writer finished (every file closed, headers fixed up).
OutputFiles read_output_files(const SimDisk& disk, std::uint32_t cpus, bool finished);

// A perf.data view of an in-memory output (for the data-loss metric).
model::PerfDataFile memory_output_file(const model::RunOutput& output);

}  // namespace ringsim::sim
