// What the oracle reads: the simulated kernel's log of what it wrote into
// each ring and what it dropped, and what the consumer delivered.
//
// The model depends on the standard library only; it does not share code
// with core/, so a bug in the core's record parsing cannot hide itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ringsim::model {

enum class Mode : std::uint8_t { normal, backward };

// One record the kernel wrote into a ring (samples and its own LOST records).
struct WrittenRecord {
  std::uint64_t position = 0;  // ring position of the record's first byte
  std::uint64_t offset = 0;    // of its bytes in CpuLog::bytes
  std::uint32_t size = 0;
  std::uint32_t type = 0;
  std::uint64_t time_ns = 0;
  std::uint64_t lost = 0;      // PERF_RECORD_LOST: the count it reports
};

struct CpuLog {
  std::vector<std::byte> bytes;         // every written record, in write order
  std::vector<WrittenRecord> written;
  std::uint64_t samples_attempted = 0;  // samples the workload generated
  std::uint64_t dropped_full = 0;       // no room (non-overwrite)
  std::uint64_t dropped_paused = 0;     // output paused
  std::uint64_t dropped_too_big = 0;    // larger than the ring: never fits
  std::uint64_t lost_reported = 0;      // sum of `lost` over LOST records written
  // Drops still pending when the event was disabled (stop request) with no
  // room for a LOST record (the real kernel never reports these either), or
  // when the run was cancelled.
  std::uint64_t dropped_unreported = 0;

  std::uint64_t dropped() const { return dropped_full + dropped_paused + dropped_too_big; }
};

struct KernelLog {
  Mode mode = Mode::normal;
  std::uint64_t ring_bytes = 0;
  std::vector<CpuLog> cpus;
};

// Overwrite mode: the consumer reports positions [begin, end) overwritten
// before it read them, found by the snapshot taken at `head`.
struct Gap {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::uint64_t head = 0;
};

struct CpuOutput {
  std::vector<std::byte> bytes;  // delivered records, in delivery order
  std::vector<Gap> gaps;
  bool corrupt = false;          // the consumer declared the ring corrupt
  std::string corrupt_reason;
};

struct RunOutput {
  std::vector<CpuOutput> cpus;
};

}  // namespace ringsim::model
