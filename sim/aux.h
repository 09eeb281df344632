// The simulated AUX area of one CPU (the PMU's side).
//
// Behaviour model (facts from the kernel's ring_buffer.c, seed 004):
//   - aux_head is the PMU driver's, aux_tail the reader's; positions are
//     byte counts (any byte, not words: a PMU stops where its packets
//     stop), free-running u64 except in overwrite mode with offset heads
//     (the Intel PT way: the driver reports aux_head as an offset inside
//     the area, and RECORD_AUX's size as the whole area); the area is a
//     power of two.
//   - A PMU transaction is begin -> hardware writes -> end. begin needs the
//     area mapped (aux_mmap_count > 0) and takes a reference
//     (aux_refcount, only if not already zero); end drops it. The mapping
//     holds one reference of its own.
//   - Non-overwrite mode: a transaction may use only the free space
//     CIRC_SPACE(head, tail, size): size - 1 - (head - tail), never the
//     last byte. No space at all at begin: the event is disabled and the
//     consumer woken (probe aux_full_disable). Less space than the
//     hardware had data: the end reports what fit with
//     PERF_AUX_FLAG_TRUNCATED, which disables the event and wakes the
//     consumer. Either way the event stays disabled (the PMU keeps
//     producing into nothing, counted as disabled_bytes) until the
//     consumer, having made room, re-enables it (PERF_EVENT_IOC_ENABLE);
//     a consumer that moved aux_tail and went back to poll without doing
//     so violates aux_truncation.
//   - Each end advances the driver's aux_head and writes PERF_RECORD_AUX
//     {aux_offset, aux_size, flags} into the data ring when it reported
//     bytes or a flag other than OVERWRITE, *then* publishes aux_head in
//     the user page (perf_aux_output_end's order): a reader can see the
//     record before the head it reports (probe aux_record_before_head).
//     aux_offset is the old aux_head in non-overwrite mode, the new one
//     (as the driver gives it) in overwrite mode. PARTIAL marks a gap for
//     another reason and does not imply a wakeup; COLLISION says the
//     hardware lost data of its own (sample collisions); the PMU's format
//     bits (PERF_AUX_FLAG_PMU_FORMAT_TYPE_MASK) ride on every record. In
//     overwrite mode every record carries OVERWRITE.
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
#include "sim/aux_rules.h"

namespace ringsim::sim {

struct AuxConfig {
  std::uint64_t size_bytes = 0;         // 0: no AUX area
  bool overwrite = false;
  std::uint64_t watermark_bytes = 0;    // requested; 0: default
  bool late_reports = false;
  std::uint32_t bursts = 0;             // transactions per CPU
  std::uint64_t burst_bytes_max = 4096; // bytes, any
  bool offset_heads = false;            // overwrite mode: aux_head an offset inside the area
  std::uint32_t collision_per_million = 0;
  std::uint64_t format_flags = 0;       // PMU format bits, on every record
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
  std::uint64_t head = 0;       // the driver's (rb->aux_head), a stream position
  std::uint64_t published = 0;  // what the user page says (a stream position)
  std::uint64_t tail = 0;
  std::uint64_t wakeup = 0;
  std::uint64_t pending = 0;        // written, not yet reported (late reporting)
  std::uint32_t mmap_count = 1;
  std::uint32_t refcount = 1;       // the mapping's own
  bool enabled = true;   // false while disabled by the PMU (truncation, full area)
  std::uint64_t tail_at_disable = 0;  // aux_tail when the PMU disabled the event
  bool paused = false;   // the reader stopped the output for a snapshot
  bool freed = false;
  // The open transaction.
  bool handle_open = false;
  std::uint64_t handle_bytes = 0;
  std::uint64_t handle_flags = 0;
  std::vector<std::string> violations;          // aux_refcount / aux_unmapped
  std::vector<std::string> consumer_violations;  // aux_truncation: never re-enabled

  bool present() const { return config.size_bytes > 0; }
  // Free space for a transaction (non-overwrite): CIRC_SPACE.
  std::uint64_t space() const { return aux_free_space(head + pending, tail, config.size_bytes); }
  // aux_head as the user page shows stream position p.
  std::uint64_t user_head(std::uint64_t p) const {
    return config.offset_heads ? p & (config.size_bytes - 1) : p;
  }
};

// Writes PERF_RECORD_AUX {offset, size, flags} with the event's sample_id.
void build_aux_record(std::span<std::byte> out, std::uint64_t id, std::uint32_t pid, std::uint32_t cpu,
                      std::uint64_t time_ns, std::uint64_t offset, std::uint64_t size, std::uint64_t flags);

}  // namespace ringsim::sim
