// The simulated AUX area of one CPU (the PMU's side).
//
// Behaviour model (facts from the kernel's ring_buffer.c, seed 004):
//   - aux_head is the PMU driver's, aux_tail the reader's; positions are
//     free-running u64 byte counts; the area is a power of two.
//   - A PMU transaction is begin -> hardware writes -> end. begin needs the
//     area mapped (aux_mmap_count > 0) and takes a reference
//     (aux_refcount, only if not already zero); end drops it. The mapping
//     holds one reference of its own.
//   - Non-overwrite mode: a transaction may use only the free space
//     (size - (head - tail)). No space at all at begin: the event is
//     disabled and the consumer woken (probe aux_full_disable). Less space
//     than the hardware had data: the end reports what fit with
//     PERF_AUX_FLAG_TRUNCATED, which disables the event and wakes the
//     consumer.
//   - Each end advances aux_head and writes PERF_RECORD_AUX {aux_offset,
//     aux_size, flags} into the data ring. PARTIAL marks a gap for another
//     reason and does not imply a wakeup. In overwrite mode every record
//     carries OVERWRITE.
//   - Wakeups (non-overwrite only): aux_watermark defaults to half the area
//     (overwrite mode: 0, and no wakeup bookkeeping at all: that is where a
//     division by a zero watermark would happen). When aux_head - aux_wakeup
//     >= watermark, a wakeup fires and aux_wakeup becomes aux_head rounded
//     down to a watermark boundary.
//   - Late reporting (hardware that can interrupt only at page boundaries):
//     the bytes are in the area, but the driver ends the transaction only
//     when aux_head would cross a page boundary, so aux_head jumps by more
//     than the watermark at once.
//   - Disabling the event (stop, error, exit, truncation) stops the PMU,
//     which ends an open transaction at once. Unmapping the area first
//     drops aux_mmap_count, then stops the output (ending any open
//     transaction from the unmapping context), then drops the mapping's
//     reference: the last reference is never dropped by a writer (in the
//     kernel: never in atomic context). A writer that finds it holds the
//     last reference is an aux_refcount violation.
// The bytes written at AUX position p are model::aux_byte(seed, cpu, p).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "model/log.h"

namespace ringsim::sim {

struct AuxConfig {
  std::uint64_t size_bytes = 0;         // 0: no AUX area
  bool overwrite = false;
  std::uint64_t watermark_bytes = 0;    // requested; 0: default
  bool late_reports = false;
  std::uint32_t bursts = 0;             // transactions per CPU
  std::uint64_t burst_bytes_max = 4096; // a multiple of 8
  std::uint64_t gap_ns_max = 10'000;
  std::uint64_t transaction_ns = 0;     // how long a transaction stays open
  std::uint32_t partial_per_million = 0;
  bool output_stop_on_unmap = true;     // false only in unit tests
  bool operator==(const AuxConfig&) const = default;
};

inline constexpr std::uint64_t kAuxPageBytes = 4096;
inline constexpr std::uint32_t kAuxRecordBytes = 64;  // PERF_RECORD_AUX with our sample_id

struct SimAux {
  SimAux(const AuxConfig& config, model::AuxLog& aux_log);

  const AuxConfig config;
  model::AuxLog& log;
  std::vector<std::byte> data;
  std::uint64_t watermark_bytes = 0;
  std::uint64_t head = 0;
  std::uint64_t tail = 0;
  std::uint64_t wakeup = 0;
  std::uint64_t pending = 0;        // written, not yet reported (late reporting)
  std::uint32_t mmap_count = 1;
  std::uint32_t refcount = 1;       // the mapping's own
  bool enabled = true;   // false once disabled (truncation, full area, stop)
  bool paused = false;   // the reader stopped the output for a snapshot
  bool freed = false;
  // The open transaction.
  bool handle_open = false;
  std::uint64_t handle_bytes = 0;
  std::uint64_t handle_flags = 0;
  std::vector<std::string> violations;  // aux_refcount / aux_unmapped

  bool present() const { return config.size_bytes > 0; }
  // Free space for a transaction (non-overwrite).
  std::uint64_t space() const { return config.size_bytes - (head + pending - tail); }
};

// Writes PERF_RECORD_AUX {offset, size, flags} with the event's sample_id.
void build_aux_record(std::span<std::byte> out, std::uint64_t id, std::uint32_t pid, std::uint32_t cpu,
                      std::uint64_t time_ns, std::uint64_t offset, std::uint64_t size, std::uint64_t flags);

}  // namespace ringsim::sim
