// Replay files: everything needed to reproduce one simulation run exactly.
//
// A replay file is a JSON object (format described in docs/replay-format.md):
//   format     "ringsim-replay"
//   version    2 (1: before staging_kib became staging_bytes)
//   config     the RunConfig, every field
//   violation  {property, detail} seen when it was recorded ("" if none)
//   recorded   {trace_hash, output_hash} of the recorded run, hex
//   decisions  {count, tape: [bound0, value0, bound1, value1, ...]}
//   note       free text (e.g. how it was shrunk)
//   checksum   "xxh3:<16 hex digits>" over the canonical JSON of all the
//              fields above (the object without `checksum`, keys sorted,
//              no spaces)
// Reading refuses, with one line naming the file and the problem, a file
// that cannot be read, is not JSON or is cut short, has another format or
// version, fails its checksum, or holds a field out of range.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/config.h"
#include "sim/decisions.h"

namespace ringsim::sim {

// The version written. Versions 4 to 7 are read too: their runs are
// version 8's (which adds staging_notify_rounds) with staging_notify_rounds
// 0, version 7's (which adds readers_per_cpu 2) with readers_per_cpu 0 for
// versions 4 and 5 (and version 4's with producer_batch 1)
// (docs/replay-format.md).
inline constexpr int kReplayVersion = 8;
inline constexpr int kReplayVersionOldest = 4;

struct ReplayFile {
  RunConfig config;
  std::vector<Decision> tape;
  std::string property;  // violated when recorded; "" if none
  std::string detail;
  std::uint64_t trace_hash = 0;
  std::uint64_t output_hash = 0;
  std::string note;
};

// Returns "" or an error line.
std::string write_replay(const std::string& path, const ReplayFile& replay);
std::string read_replay(const std::string& path, ReplayFile& out);

// The same, to and from text (for tests).
std::string replay_to_text(const ReplayFile& replay);
std::string replay_from_text(const std::string& text, ReplayFile& out);

}  // namespace ringsim::sim
