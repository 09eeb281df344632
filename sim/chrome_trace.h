// The run as a Chrome trace-event JSON file (the "JSON Object Format" that
// Perfetto and chrome://tracing open).
//
// Tracks (threads of one process "ringsim run"):
//   producer N     records dropped (instants), PERF_RECORD_LOST written
//                  (instants, with the count), wakeups, the event's exit,
//                  PERF_RECORD_AUX (with TRUNCATED / PARTIAL), AUX wakeups;
//   consumer       commits of chunks (instants), overwrite gaps, corrupt
//                  rings, releases, polls interrupted;
//   cblock S       each asynchronous write as a slice from submit to
//                  completion, with offset and bytes;
//   disk           synchronous writes (slices), faults (instants), files
//                  opened and closed;
// and counters: "ring fill cpu N" (bytes between tail and head, normal
// mode), "aux_head cpu N" and "writes in flight". Times are virtual microseconds.
#pragma once

#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "sim/config.h"
#include "sim/scheduler.h"

namespace ringsim::sim {

nlohmann::json chrome_trace(const std::vector<TraceEvent>& events, const RunConfig& config);

}  // namespace ringsim::sim
