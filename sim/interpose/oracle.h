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
// AUX areas (the simulated AUX PMU, CallKernel::map_aux): the target's
// PERF_RECORD_AUXTRACE records (perf.data's: a 48-byte header, then the
// data) are judged as torn when their data is not what the PMU wrote at
// their offset, and as exactly_once when an area's bytes [0, aux_head) are
// not covered once each (a gap: read by nobody; an overlap: twice).
// After a hard error (EIO, ENOSPC) the target may stop early: only crash,
// liveness and tail are judged then. Records the target synthesizes itself
// (perf's from /proc: no kernel event id, or time 0) are counted and
// ignored.
//
// Several files (perf record --switch-output) are judged as one stream, in
// the order the target made them: every record once across them, each file
// valid on its own (a record cut at a boundary makes both invalid).
//
// A read-only backward ring its reader pauses (perf record --overwrite):
//   overwrite     at each pause the reader must read the whole newest run
//                 of records written since its previous read that fits in
//                 the ring, each once (exactly_once), the reads in pause
//                 order (order), and nothing else of the ring: records the
//                 kernel overwrote before a pause are lost with no LOST
//                 record, as in Linux (counted, not a failure); records
//                 written after the last pause and never read are missing.
// A read-only ring never paused: only torn and duplicates are judged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
  std::uint64_t files = 0;           // the output files judged
  std::uint64_t overwritten = 0;     // of a paused read-only ring: overwritten before a read (no LOST, as Linux)
  std::uint64_t carried = 0;         // side-band copies a numbered file starts with (ringsim-record)
  std::uint64_t aux_written = 0;     // AUX bytes the AUX PMU wrote (every area)
  std::uint64_t aux_found = 0;       // AUX bytes in the files' AUXTRACE records
};

struct Verdict {
  std::string property;  // "" when every property holds
  std::string detail;
};

// The files a run wrote, in order: the names the target renamed `output`
// to (perf record --switch-output: out.data.<timestamp>, one per switch and
// one at the end), then `output` itself if it is still there (always, when
// it was never renamed), then the files it opened as `output`.N
// (ringsim-record --switch-output: OUTPUT.1, OUTPUT.2, ...). A name used
// twice is one file, at its last place.
std::vector<std::string> output_files(const RunLog& log, const std::string& output);

// The run judged: its files (output_files) read as one stream, each valid
// on its own.
Verdict judge(const RunLog& log, const std::string& output, OutputFormat format, const TargetEnd& end,
              OracleStats& stats);

}  // namespace ringsim::sim::interpose
