// Shrinking a failing run to a shorter one that fails the same property.
//
// Works on the replay (configuration + decision tape), never on the code:
//   1. configuration: the edits of the table of run parameters
//      (sim/params.h), row by row: fewer CPUs, smaller rings, fewer
//      records, faults, bursts and AUX off, plain wakeups, small records...;
//   2. the tape: shorter prefixes (decisions past the end replay as 0),
//      then blocks of decisions set to 0 (the plain choice).
// Every candidate is a full simulation replayed leniently; a candidate is
// kept if it still violates the same property and its recorded tape is no
// larger (length, then non-zero decisions, then sum). The result replays
// strictly. Bounded by wall time and by attempts.
#pragma once

#include <cstdint>
#include <string>

#include "sim/replay.h"

namespace ringsim::sim {

struct ShrinkOptions {
  double budget_s = 30;
  std::uint64_t attempts_max = 5'000;
};

struct ShrinkStats {
  std::uint64_t attempts = 0;
  std::uint64_t accepted = 0;
  std::uint64_t decisions_before = 0;
  std::uint64_t decisions_after = 0;
  bool budget_exhausted = false;
};

// `failing` must violate failing.property when replayed. Returns the
// smallest replay found (failing itself if nothing smaller fails).
ReplayFile shrink(const ReplayFile& failing, const ShrinkOptions& options, ShrinkStats& stats);

}  // namespace ringsim::sim
