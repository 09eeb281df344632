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

#include <nlohmann/json.hpp>

#include "core/ring_reader.h"
#include "sim/kernel.h"

namespace ringsim::sim {

// Deliberately broken consumers, to show that the properties catch the
// bugs they are meant to catch. Never used by default.
enum class Mutant : std::uint8_t {
  none,
  early_release,  // stores tail = head before copying (normal mode)
  no_pause,       // snapshots without PAUSE_OUTPUT (overwrite mode)
  drop_lost,      // the output loses PERF_RECORD_LOST records
};
const char* to_string(Mutant mutant);
bool parse_mutant(const std::string& text, Mutant& out);

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
  Mutant mutant = Mutant::none;

  std::uint64_t ring_bytes() const { return std::uint64_t{ring_pages} * 4096; }
  bool operator==(const RunConfig&) const = default;
};

// A configuration drawn from the seed (its own PRNG stream, not the run's
// decisions), covering every mode and knob.
RunConfig random_config(std::uint64_t seed);

// Empty if valid, else "<field>: <problem>".
std::string validate(const RunConfig& config);

// One line: "cpus=4 pages=8 mode=normal ...".
std::string describe(const RunConfig& config);

nlohmann::json to_json(const RunConfig& config);
// Strict: every field present, of the right type, in range; no unknown
// field. Returns an empty string or the first problem.
std::string from_json(const nlohmann::json& json, RunConfig& out);

}  // namespace ringsim::sim

namespace ringsim::sim {

// The integer fields, as a table: the campaign's options, JSON and
// validation all read it.
struct ConfigField {
  const char* name;
  const char* help;
  std::uint64_t min;
  std::uint64_t max;
  std::uint64_t (*get)(const RunConfig&);
  void (*set)(RunConfig&, std::uint64_t);
};
const std::vector<ConfigField>& config_fields();

bool parse_mode(const std::string& text, core::RingMode& out);
bool parse_size_mix(const std::string& text, SizeMix& out);

}  // namespace ringsim::sim
