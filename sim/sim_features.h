// The feature sections a simulated run writes (core/perf_data_features.h):
// fixed host values, so that a run stays byte-for-byte deterministic per
// seed, and what each file's data says (sample time, AUXTRACE index), found
// by the production scan when the writer finishes the file.
#pragma once

#include <cstdint>
#include <vector>

#include "core/perf_data.h"
#include "core/perf_data_features.h"
#include "core/trace_writer.h"
#include "sim/disk.h"

namespace ringsim::sim {

// The simulated host: `cpus` CPUs, one package, one NUMA node.
core::HostFeatures sim_host_features(std::uint32_t cpus);

// The one build-id a simulated file lists (the simulated kernel's).
core::BuildIdEntry sim_kernel_build_id();

// The writer's feature source for a run on `disk`: the host above, the
// kernel's build-id, and the scan of the finished file's data section (as
// the disk holds it). aux: the run records AUX areas (AUXTRACE section).
core::FeatureSource sim_feature_source(const SimDisk& disk, std::vector<core::EventDescription> events,
                                       std::uint32_t cpus, bool aux);

}  // namespace ringsim::sim
