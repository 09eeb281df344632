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

// One perf_aux_output_end of the simulated PMU: the PERF_RECORD_AUX it
// emitted, and the wakeup bookkeeping after it.
struct AuxEnd {
  std::uint64_t offset = 0;        // aux_head before
  std::uint64_t size = 0;          // bytes it reported
  std::uint64_t flags = 0;         // PERF_AUX_FLAG_*
  std::uint64_t head_after = 0;
  std::uint64_t wakeup_after = 0;  // aux_wakeup after it
  bool woke = false;               // it woke the consumer
  std::uint64_t time_ns = 0;
};

// The AUX area of one CPU, as the simulated PMU wrote it. Its bytes are
// aux_byte(seed, cpu, position) (model/aux_content.h).
struct AuxLog {
  bool present = false;
  bool overwrite = false;
  std::uint64_t size_bytes = 0;
  std::uint64_t watermark_bytes = 0;  // 0 in overwrite mode
  std::uint64_t attempted_bytes = 0;  // what the PMU tried to write
  std::uint64_t truncated_bytes = 0;  // what did not fit (non-overwrite)
  std::uint64_t full_disables = 0;    // begin found the area full: disabled, woke
  std::uint64_t head = 0;             // final aux_head
  std::vector<AuxEnd> ends;
  std::uint64_t disabled_after_end = UINT64_MAX;  // index of the end after which the event was disabled
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
  AuxLog aux;

  std::uint64_t dropped() const { return dropped_full + dropped_paused + dropped_too_big; }
};

struct KernelLog {
  Mode mode = Mode::normal;
  std::uint64_t seed = 0;  // of the AUX content
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

// AUX data delivered in one PERF_RECORD_AUXTRACE record.
struct AuxChunk {
  std::uint64_t offset = 0;      // AUX position of data[0]
  std::vector<std::byte> data;   // padded to a multiple of 8
};

struct CpuOutput {
  std::vector<std::byte> bytes;  // delivered data-ring records, in delivery order
  std::vector<AuxChunk> aux;     // delivered AUX data, in delivery order
  std::vector<Gap> gaps;
  bool corrupt = false;          // the consumer declared the ring corrupt
  std::string corrupt_reason;
};

struct RunOutput {
  std::vector<CpuOutput> cpus;
};

}  // namespace ringsim::model
