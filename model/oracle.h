// The reference model: given what the simulated kernel wrote and dropped,
// what a correct consumer must deliver, and the check of what it did.
//
// Properties (their names appear in campaign summaries and replay files):
//   exactly_once     per CPU, the delivered records are exactly the records
//                    the kernel wrote, each once, byte for byte, in write
//                    order, except those inside a reported overwrite gap;
//   no_torn_records  overwrite mode: no delivered record differs from the
//                    record the kernel wrote there (a torn read);
//   lost_accounting  the `lost` counts of the LOST records delivered (plus
//                    those of LOST records inside reported gaps) add up to
//                    exactly the records the kernel dropped, and the kernel
//                    itself reported every drop;
//   gaps_genuine     a reported gap starts and ends on record boundaries
//                    and its first record really was (partly) overwritten
//                    when the snapshot that reported it was taken.
// AUX areas:
//   aux_delivery     the delivered AUX bytes are exactly the bytes the PMU
//                    wrote, each once, at their positions, in order; in
//                    snapshot mode minus genuine gaps (a gap is followed by a
//                    snapshot of a whole area); delivered + overwritten =
//                    written, and written + truncated = attempted;
//   aux_wakeup       replaying the rules on the PMU's log: a wakeup happened
//                    at exactly the ends where aux_head passed aux_wakeup +
//                    watermark (or the record was truncated), aux_wakeup is
//                    then aux_head rounded down to a watermark boundary and
//                    never behind the last boundary below aux_head;
//                    overwrite mode keeps no bookkeeping (watermark 0);
//   aux_truncation   a TRUNCATED record woke the consumer and was the last
//                    one (the event was disabled); bytes were truncated only
//                    when a TRUNCATED record or a full-area disable says so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/log.h"
#include "model/properties.h"

namespace ringsim::model {

struct CheckOptions {
  // The output was cut short by a hard write error: per CPU, the delivered
  // records must be a prefix of what a full run delivers; the rest counts
  // as records_cut, not as a violation.
  bool allow_truncation = false;
};

struct OracleReport {
  std::vector<Violation> violations;
  std::uint64_t records_written = 0;
  std::uint64_t records_expected = 0;
  std::uint64_t records_delivered = 0;
  std::uint64_t samples_delivered = 0;    // of those, PERF_RECORD_SAMPLE
  std::uint64_t records_overwritten = 0;  // inside reported gaps
  std::uint64_t bytes_overwritten = 0;    // their sizes, from the kernel's log
  std::uint64_t gaps = 0;                 // overwrite gaps the consumer reported (each one checked)
  std::uint64_t records_aliased = 0;      // backward: met by the reader at a nested record's place (oracle.cc: aliased_record)
  std::uint64_t dropped = 0;              // by the kernel (LOST-reported)
  std::uint64_t lost_delivered = 0;       // sum of `lost` in delivered LOST records
  std::uint64_t records_cut = 0;          // missing at the end after a hard error
  std::uint64_t bytes_cut = 0;            // their sizes
  std::uint64_t aux_written = 0;          // AUX bytes the PMU reported
  std::uint64_t aux_delivered = 0;
  std::uint64_t aux_overwritten = 0;      // in snapshot gaps
  std::uint64_t aux_gaps = 0;             // those gaps: AUXTRACE records that skip ahead
  std::uint64_t aux_truncated = 0;

  bool ok() const { return violations.empty(); }
  // Whether `property` was violated.
  bool violated(const std::string& property) const;
};

// The properties this mode checks (for pass counts).
std::vector<std::string> oracle_properties(Mode mode, bool aux);

OracleReport check(const KernelLog& log, const RunOutput& output, const CheckOptions& options = {});

}  // namespace ringsim::model
