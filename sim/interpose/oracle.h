// The oracle over an unmodified consumer's output: the target's file
// against the simulated kernel's log of what it wrote (sim/interpose/
// run_log.h), as the campaign's oracle checks the core's output.
//
// Properties, in the order they are judged (the first violated names the
// run's failure):
//   refused       the target made a call the simulator does not simulate
//                 (not a finding about the target: the run cannot be judged)
//   crash         the target died of a signal it was not sent
//   liveness      it did not end: real-time timeout, or still calling in
//                 10 virtual seconds after its workload ended
//   tail          it stored a data_tail the kernel could not take
//   failure       it exited non-zero though the disk injected no hard error
//   file_valid    its output does not parse (perf.data: model/perf_data_file;
//                 raw: records back to back)
//   exactly_once  a record the kernel wrote into a writable ring is missing
//                 from the file, or is there twice; missing records are told
//                 apart: consumed (below the final data_tail) but not
//                 written, or never read
//   torn          a record in the file carries one of the kernel's event ids
//                 and a time, and is none of the records the kernel wrote
//   order         the records of one ring are not in ring order in the file
// After a hard error (EIO, ENOSPC) the target may stop early: only crash,
// liveness and tail are judged then. Records the target synthesizes itself
// (perf's from /proc: no kernel event id, or time 0) are counted and
// ignored. A read-only (overwrite) ring's records may be overwritten before
// they are read: there only torn and duplicates are judged.
#pragma once

#include <cstdint>
#include <string>

#include "sim/interpose/run_log.h"

namespace ringsim::sim::interpose {

enum class OutputFormat : std::uint8_t { perf, raw };

struct TargetEnd {
  bool exited = false;  // else killed by `signal`
  int code = 0;
  int signal = 0;
  bool timed_out = false;
};

struct OracleStats {
  std::uint64_t kernel_records = 0;  // written into the rings
  std::uint64_t found = 0;           // of those, in the file
  std::uint64_t dropped = 0;         // the kernel dropped (ring full, paused)
  std::uint64_t lost_reported = 0;   // counts in the LOST records the kernel wrote
  std::uint64_t unreported = 0;      // drops no LOST record reported (Linux neither)
  std::uint64_t synthesized = 0;     // the target's own records, ignored
  std::uint64_t file_records = 0;
};

struct Verdict {
  std::string property;  // "" when every property holds
  std::string detail;
};

Verdict judge(const RunLog& log, const std::string& output, OutputFormat format, const TargetEnd& end,
              OracleStats& stats);

}  // namespace ringsim::sim::interpose
