// The perf.data side of a simulated run: the head the trace writer puts at
// the start of each file (the simulated events), and reading back what it
// left on the simulated disk: each output file is parsed as perf.data
// (model/perf_data_file.h, which shares no code with the writer), checked
// (file_valid, round_order), and its records are split per CPU for the
// oracle.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/perf_data.h"
#include "model/log.h"
#include "model/oracle.h"
#include "model/perf_data_file.h"
#include "sim/disk.h"
#include "sim/kernel.h"

namespace ringsim::sim {

// The simulated events as perf.data describes them: per sampling event and
// for the side-band event, its perf_event_attr and its ids (one per CPU,
// in CPU order), as the simulated kernel numbers them.
core::PerfDataHead sim_head(const KernelConfig& kernel);

// The name perf gives the software event `config` of a simulated event.
std::string sim_event_name(std::uint64_t config);

struct OutputFiles {
  model::RunOutput output;                         // per CPU, every file in order
  std::vector<model::Violation> violations;        // file_valid
  std::vector<model::Violation> order_violations;  // round_order
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;
  std::uint64_t rounds = 0;                        // PERF_RECORD_FINISHED_ROUND records
  // Records perf's two-round rule would take out of order because the
  // kernel published them late (not the writer's doing; see round_order).
  std::uint64_t published_late = 0;
  model::PerfDataFile combined;                    // every file's data section, concatenated
};

// `finished`: the writer finished (every file closed, headers fixed up).
// `log`: what the kernel wrote and published when; `round_marks_ns`: when
// the writer wrote each finished-round marker.
OutputFiles read_output_files(const SimDisk& disk, const KernelConfig& kernel, bool finished,
                              const model::KernelLog& log, const std::vector<std::uint64_t>& round_marks_ns);

// The data-loss stats of an in-memory output: its CPUs' outputs one after
// the other as a data section, walked in place (no copy of them).
void memory_loss_stats(const model::RunOutput& output, const KernelConfig& kernel, model::LossStats& out);

}  // namespace ringsim::sim
