// A simulation run's configuration: everything besides the decisions.
//
// A campaign derives one configuration per seed (random_config), unless
// options fix some fields; a replay file stores the whole configuration.
// Every field has a documented range; validate() names the first field out
// of range. Nothing is ever clamped.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/ring_mode.h"
#include "sim/kernel.h"

namespace ringsim::sim {

// Deliberately broken consumers, to show that the properties catch the
// bugs they are meant to catch. Never used by default.
enum class Mutant : std::uint8_t {
  none,
  early_release,      // stores tail = head before copying (normal mode)
  no_pause,           // snapshots without PAUSE_OUTPUT (overwrite mode)
  drop_lost,          // the output loses PERF_RECORD_LOST records
  shared_offset,      // AIO: writes at the file's current end, not the reserved offset
  reuse_buffer,       // AIO: believes a write complete as soon as it is queued
  eagain_busy_loop,   // AIO: retries EAGAIN at once, without back-off or bound
  error_resubmit,     // AIO: resubmits the whole chunk after a hard error, forever
  aux_early_tail,     // AUX: stores aux_tail = aux_head before copying the data
  aux_no_reenable,    // AUX: never re-enables an event the PMU disabled (truncation)
  // Not a consumer's: the simulated kernel without perf_swevent_event's
  // PERF_SAMPLE_PERIOD rule (it samples every sample_period-th occurrence
  // even when the samples carry PERIOD), to show sampling_periods catches
  // a kernel that gets the rule wrong.
  period_rule_ignored,
  // A consumer whose counter is wrong and nothing else: the backend
  // retries an interrupted pwrite itself (TEMP_FAILURE_RETRY), so the
  // writer never sees, and never counts, those EINTRs (counters_agree).
  eintr_retry_hidden,
  // Reading fibers per CPU (readers_per_cpu): the staging gate marks every
  // round its reader drained as finished, as a single reader may, instead
  // of only the round that ends an epoch (every reader drained since the
  // last marker). perf's ordered events then flush one CPU's records before
  // another CPU's older ones arrive: round_order.
  gate_marks_every_round,
  // Reading fibers that help each other (readers_per_cpu=2): a fiber
  // stages what it read from another CPU's ring after it gave the ring's
  // lock back (core/ring_share.h holds it to the commit), so the owner can
  // stage that CPU's newer records first: exactly_once (in order).
  help_staged_late,
};

// Whom the events follow: a task (they exit with it: POLLHUP) or every
// task on their CPU (system-wide: they never hang up; a stop ends the
// recording).
enum class Scope : std::uint8_t { task, system_wide };

// Where the record loop's output goes.
enum class Output : std::uint8_t {
  memory,  // an in-memory sink (the ring path alone)
  serial,  // the trace writer, write() (pwrite) per chunk
  aio,     // the trace writer, asynchronous writes with control blocks
};
const char* to_string(Output output);
const char* to_string(Mutant mutant);
const char* to_string(Scope scope);

struct RunConfig {
  std::uint64_t seed = 1;
  // Kernel and workload.
  std::uint32_t cpus = 2;                    // 1..8
  std::uint32_t ring_pages = 4;              // 1..64, a power of two; 4 KiB pages
  core::RingMode mode = core::RingMode::normal;
  SizeMix size_mix = SizeMix::small;
  std::uint32_t records_per_cpu = 500;       // 1..1,000,000
  std::uint32_t wakeup_events = 0;           // 0..100,000; 0: watermark only
  std::uint64_t wakeup_watermark_bytes = 0;  // 0..ring bytes; 0: half the ring
  std::uint64_t gap_ns_max = 20'000;         // 0..1 s
  std::uint32_t burst_per_million = 20'000;  // 0..1,000,000
  std::uint32_t burst_records_max = 64;      // 1..100,000
  std::uint32_t events_per_cpu = 1;          // sampling events sharing a CPU's ring
  std::uint32_t sideband = 0;                // 1: a dummy event writes side-band records; 2: and
                                             // another session's build-id misc lands on its MMAP2
  Scope scope = Scope::task;
  std::uint32_t endless = 0;                 // 1: producers run until a stop request
  std::uint32_t nest_per_million = 0;        // a writer interrupted by another
  std::uint32_t late_write_per_million = 0;  // a writer held between its check and its copy
  // Sampling (sim/sampling.h): the sampling events' attr.sample_period, or
  // attr.freq with sample_freq (then sample_period 1: they are a union),
  // and PERF_SAMPLE_PERIOD in their sample_type.
  std::uint64_t sample_period = 1;           // 1..1,000,000
  std::uint64_t sample_freq = 0;             // 0: period mode; else 1..100,000 Hz
  std::uint32_t period_field = 0;            // 1: samples carry PERF_SAMPLE_PERIOD
  // Records a producer writes between its sleeps (1: it sleeps each
  // record's gap before writing it; N: the N gaps at once, before the
  // N-th record, the N - 1 before it written early). 1..4096.
  std::uint32_t producer_batch = 1;
  // Consumer.
  std::uint64_t poll_timeout_ns = 10'000'000;    // 1 us..10 s
  std::uint64_t syscall_ns = 1'000;              // 0..1 ms
  std::uint64_t copy_ns_per_kib = 250;           // 0..1 ms
  std::uint64_t snapshot_interval_ns = 0;        // overwrite mode; 0: at hangup only; else 1 us..10 s
  std::uint64_t stop_at_ns = 0;                  // 0: until every event exits; else 1 ns..1 h
  std::uint32_t drain_chunks_max = 4;            // 1..64
  // Scheduling and faults (fault phase).
  std::uint32_t yield_per_million = 100'000;          // 0..1,000,000
  std::uint32_t poll_eintr_per_million = 10'000;      // 0..1,000,000
  std::uint32_t copy_interrupt_per_million = 50'000;  // 0..1,000,000
  // Budgets (liveness).
  std::uint64_t quiet_budget_ns = 10'000'000'000;  // 1 ms..1 h of virtual time
  std::uint64_t switches_max = 50'000'000;         // 1,000..1,000,000,000
  // Output and the simulated disk.
  Output output = Output::memory;
  std::uint32_t cblocks = 2;                        // 1..4 (aio)
  std::uint32_t eagain_attempts_max = 16;           // 1..64: refused submits before a synchronous write
  std::uint64_t rotate_bytes = 0;                   // 0: one file; else 4096..2^40
  std::uint32_t disk_queue_depth = 8;               // 1..64
  std::uint64_t disk_latency_ns_min = 20'000;       // 0..1 s
  std::uint64_t disk_latency_ns_max = 200'000;      // min..1 s
  std::uint64_t disk_ns_per_kib = 500;              // 0..1 ms
  std::uint32_t disk_stall_per_million = 0;
  std::uint64_t disk_stall_ns = 5'000'000;          // 0..10 s
  std::uint32_t disk_short_per_million = 0;
  // 0: a short write ends at a page boundary of the file, as Linux's page
  // cache writes (generic_perform_write) do; 1: at any byte, as POSIX
  // allows and a FUSE or pipe target may do. Never drawn: 0 unless set.
  std::uint32_t disk_short_any_byte = 0;
  std::uint32_t disk_eagain_per_million = 0;
  std::uint32_t disk_eagain_burst_per_million = 0;
  std::uint64_t disk_eagain_burst_ns = 1'000'000;   // 0..1 s
  std::uint32_t disk_eintr_per_million = 0;
  std::uint32_t disk_suspend_eintr_per_million = 0;
  std::uint32_t disk_eio_per_million = 0;
  std::uint64_t disk_capacity_bytes = 0;            // 0: unlimited; else 4096..2^40
  std::uint32_t disk_open_fails = 0;                // 0 or 1
  // The staging buffer between the reading fiber and the writing fiber
  // (core/staging.h), bytes; 0: none (one fiber reads and writes).
  std::uint64_t staging_bytes = 0;                  // 0, or 2 writer buffers..1 GiB by 8s (output=serial/aio)
  // 1: each staged round wakes the writing fiber
  // (core::StagingOptions::notify_rounds, ringsim-record's with
  // --switch-output=signal); never drawn.
  std::uint32_t staging_notify_rounds = 0;
  // 1: one reading fiber per CPU, each with its own record loop over its
  // CPU's ring into the one staging buffer through a core::StagingGate
  // (--readers cpu-own); 2: the same, each fiber also draining the other
  // CPUs' rings it can lock (core/ring_share.h), as the recorder's default
  // (--readers cpu); 0: one reading fiber for every ring (--readers one).
  // Normal mode with staging only.
  std::uint32_t readers_per_cpu = 0;
  // readers_per_cpu=2: a fiber helps with another CPU's ring holding at
  // least this many quarters of its size (core::LoopOptions).
  std::uint32_t help_min_quarters = 1;
  // AUX areas (one per CPU).
  std::uint32_t aux_pages = 0;                      // 0: none; else 1..256, a power of two
  std::uint32_t aux_overwrite = 0;                  // 1: snapshot mode
  std::uint64_t aux_watermark_bytes = 0;            // 0: the kernel's default
  std::uint32_t aux_late = 0;                       // 1: head reported only at page boundaries
  std::uint32_t aux_bursts = 0;                     // PMU transactions per CPU
  std::uint64_t aux_burst_bytes_max = 4096;         // 1..1 MiB, bytes
  std::uint64_t aux_gap_ns_max = 20'000;
  std::uint64_t aux_transaction_ns = 0;             // how long a transaction stays open
  std::uint32_t aux_partial_per_million = 0;
  std::uint32_t aux_collision_per_million = 0;
  std::uint32_t aux_offset_heads = 0;               // 1: overwrite mode's aux_head an offset in the area
  std::uint64_t aux_format = 0;                     // PMU format bits on every RECORD_AUX
  Mutant mutant = Mutant::none;

  std::uint64_t aux_bytes() const { return std::uint64_t{aux_pages} * 4096; }

  std::uint64_t ring_bytes() const { return std::uint64_t{ring_pages} * 4096; }
  // A sink buffer: a data-ring chunk or an AUXTRACE record of a whole AUX area.
  std::uint64_t chunk_bytes_max() const;
  bool operator==(const RunConfig&) const = default;
};

// Sets the mode; mode=normal clears the snapshot interval unless an AUX
// area in snapshot mode needs it.
void set_mode(RunConfig& config, core::RingMode mode);
// Sets the output; output=memory clears the fields only a disk has.
void set_output(RunConfig& config, Output output);
// No AUX areas: every AUX field back to its default (and no snapshot
// interval in normal mode, where only AUX snapshots need one).
void clear_aux(RunConfig& config);
// Sets the mutant and, unless told not to, the mode and output it breaks
// (and a fault for it to meet: EAGAIN bursts, a full disk).
void set_mutant(RunConfig& config, Mutant mutant, bool keep_mode_and_output);

// The rules between fields (ranges are the table's: sim/params.h
// validate()). "" or "<field>: <problem>".
std::string validate_rules(const RunConfig& config);

nlohmann::json to_json(const RunConfig& config);
// Strict: every field present, of the right type, in range; no unknown
// field. Returns an empty string or the first problem.
std::string from_json(const nlohmann::json& json, RunConfig& out);

// A string read from a file, as JSON writes it (in double quotes, control
// characters and quotes escaped), so that an error message quoting it
// stays one line whatever the file holds.
std::string quoted(const std::string& text);

}  // namespace ringsim::sim
