// What the consumer side dropped, counted once, by cause, where it happened
// (the LTTng way). The kernel's own drops (a full ring, a paused one) are
// not here: the kernel counts those and reports them in PERF_RECORD_LOST
// records, which the consumer delivers like any other record
// (RecordCounts::lost_records / lost_sum).
//
//   overwritten   overwrite mode: bytes the kernel overwrote before a
//                 snapshot read them (a gap), data rings and AUX areas.
//                 Filled by the readers. Records: not known (their headers
//                 are gone), so records.records stays 0.
//   corrupt       a ring declared corrupt: the bytes from the first bad
//                 header to head, or a snapshot whose copy did not match
//                 its walk. Filled by the record loop. Records: not known
//                 (the headers are not trusted). One event per ring.
//   abandoned     left in a ring when the recording ended early (an output
//                 error, a poll error, the round budget). Filled by the
//                 record loop. Records: not counted (bytes only).
//   output_error  read and handed to the trace writer, then cut off by a
//                 hard output error: not in the file's valid prefix.
//                 Filled by the writer, from its reservations: records and
//                 their bytes (the writer's own FINISHED_ROUND markers are
//                 not records and are not counted).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/records.h"

namespace ringsim::core {

enum class DropCause : std::uint8_t { overwritten, corrupt, abandoned, output_error };
inline constexpr std::size_t kDropCauses = 4;
const char* to_string(DropCause cause);

struct DropCount {
  std::uint64_t events = 0;  // gaps, rings declared corrupt, rings abandoned, files cut
  RecordCounts records;      // records.bytes is always the byte count
  bool operator==(const DropCount&) const = default;
};

class Drops {
 public:
  // One event of `cause` that dropped `records` (records.bytes bytes).
  void add(DropCause cause, const RecordCounts& records);
  // More records dropped by the last event of `cause` (counted already):
  // no new event.
  void add_records(DropCause cause, const RecordCounts& records);
  // Bytes only (records not known).
  void add_bytes(DropCause cause, std::uint64_t bytes);
  void add(const Drops& other);
  // `count` as it stands (its events and records): how a summary read back
  // from a file is added (sim/campaign.cc's merge of shards).
  void add(DropCause cause, const DropCount& count);

  const DropCount& operator[](DropCause cause) const { return counts_[static_cast<std::size_t>(cause)]; }
  std::uint64_t bytes() const;
  bool any() const;
  bool operator==(const Drops&) const = default;

 private:
  std::array<DropCount, kDropCauses> counts_{};
};

// One line for summaries: "none", or e.g. "overwritten 4096 bytes in 2
// gaps; output error 10 records (8 samples), 2048 bytes".
std::string describe(const Drops& drops);

}  // namespace ringsim::core
