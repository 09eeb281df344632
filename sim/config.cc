#include "sim/config.h"

#include <algorithm>
#include <sstream>

#include "core/perf_abi.h"
#include "core/verify.h"

namespace ringsim::sim {

const char* to_string(Mutant mutant) {
  switch (mutant) {
    case Mutant::none: return "none";
    case Mutant::early_release: return "early_release";
    case Mutant::no_pause: return "no_pause";
    case Mutant::drop_lost: return "drop_lost";
    case Mutant::shared_offset: return "shared_offset";
    case Mutant::reuse_buffer: return "reuse_buffer";
    case Mutant::eagain_busy_loop: return "eagain_busy_loop";
    case Mutant::error_resubmit: return "error_resubmit";
    case Mutant::aux_early_tail: return "aux_early_tail";
    case Mutant::aux_no_reenable: return "aux_no_reenable";
    case Mutant::period_rule_ignored: return "period_rule_ignored";
    case Mutant::eintr_retry_hidden: return "eintr_retry_hidden";
    case Mutant::gate_marks_every_round: return "gate_marks_every_round";
    case Mutant::help_staged_late: return "help_staged_late";
  }
  return "unknown";
}

const char* to_string(Output output) {
  switch (output) {
    case Output::memory: return "memory";
    case Output::serial: return "serial";
    case Output::aio: return "aio";
  }
  return "unknown";
}

const char* to_string(Scope scope) { return scope == Scope::task ? "task" : "system_wide"; }

void set_mode(RunConfig& c, core::RingMode mode) {
  c.mode = mode;
  if (core::writable(mode) && c.aux_overwrite == 0) c.snapshot_interval_ns = 0;
  if (mode != core::RingMode::normal) c.readers_per_cpu = 0;  // the recorder's overwrite mode reads with one
}

void clear_aux(RunConfig& c) {
  const RunConfig defaults;
  c.aux_pages = defaults.aux_pages;
  c.aux_overwrite = defaults.aux_overwrite;
  c.aux_watermark_bytes = defaults.aux_watermark_bytes;
  c.aux_late = defaults.aux_late;
  c.aux_bursts = defaults.aux_bursts;
  c.aux_burst_bytes_max = defaults.aux_burst_bytes_max;
  c.aux_gap_ns_max = defaults.aux_gap_ns_max;
  c.aux_transaction_ns = defaults.aux_transaction_ns;
  c.aux_partial_per_million = defaults.aux_partial_per_million;
  c.aux_collision_per_million = defaults.aux_collision_per_million;
  c.aux_offset_heads = defaults.aux_offset_heads;
  c.aux_format = defaults.aux_format;
  if (core::writable(c.mode)) c.snapshot_interval_ns = 0;
}

void set_output(RunConfig& c, Output output) {
  c.output = output;
  if (output == Output::memory) {
    c.rotate_bytes = 0;
    c.disk_capacity_bytes = 0;
    c.disk_open_fails = 0;
    c.staging_bytes = 0;
    c.readers_per_cpu = 0;  // no staging: one reader
  }
}

std::uint64_t RunConfig::chunk_bytes_max() const {
  return std::max(ring_bytes(), aux_pages ? aux_bytes() + core::kAuxtraceHeaderBytes : std::uint64_t{0});
}

// An AUX area in non-overwrite mode that a busy PMU overruns: transactions
// of half the area, close together.
static void overrun_aux_area(RunConfig& c) {
  if (c.aux_pages == 0) c.aux_pages = 1;
  c.aux_bursts = std::max<std::uint32_t>(c.aux_bursts, 200);
  c.aux_overwrite = 0;
  c.aux_offset_heads = 0;
  c.aux_burst_bytes_max = c.aux_bytes() / 2;
  c.aux_gap_ns_max = 2'000;
  if (c.snapshot_interval_ns != 0 && core::writable(c.mode)) c.snapshot_interval_ns = 0;
}

// gate_marks_every_round's and help_staged_late's world: staged, normal
// mode, a reading fiber per CPU (at least two), one output file; helping
// (readers_per_cpu=2) for help_staged_late.
static void read_per_cpu(RunConfig& c) {
  if (c.output == Output::memory) set_output(c, Output::serial);
  set_mode(c, core::RingMode::normal);
  c.cpus = std::max<std::uint32_t>(c.cpus, 2);
  c.rotate_bytes = 0;
  c.staging_bytes = 4 * c.chunk_bytes_max();
  c.readers_per_cpu = c.mutant == Mutant::help_staged_late ? 2 : 1;
  if (c.mutant == Mutant::help_staged_late) c.help_min_quarters = 0;  // as much helping as there can be
}

void set_mutant(RunConfig& c, Mutant mutant, bool keep_mode_and_output) {
  c.mutant = mutant;
  c.readers_per_cpu = 0;
  c.staging_bytes = 0;  // the mutants but one are bugs of the consumer without staging
  if (mutant == Mutant::gate_marks_every_round || mutant == Mutant::help_staged_late) read_per_cpu(c);
  if (keep_mode_and_output) return;
  switch (mutant) {
    case Mutant::none:
      break;
    case Mutant::early_release:
      c.mode = core::RingMode::normal;
      c.snapshot_interval_ns = 0;
      break;
    case Mutant::no_pause:
      c.mode = core::RingMode::backward;
      if (c.snapshot_interval_ns == 0) c.snapshot_interval_ns = 20'000 + 1'000 * (c.seed % 64);
      break;
    case Mutant::drop_lost:
      set_output(c, Output::memory);
      break;
    case Mutant::aux_early_tail:
      // A reader that lags and a PMU that writes a lot: the space handed
      // back early gets reused before it is copied.
      overrun_aux_area(c);
      c.copy_interrupt_per_million = 500'000;
      c.copy_ns_per_kib = std::max<std::uint64_t>(c.copy_ns_per_kib, 2'000);
      break;
    case Mutant::aux_no_reenable:
      // Truncations, then a consumer that frees the space and never turns
      // the event back on.
      overrun_aux_area(c);
      break;
    case Mutant::period_rule_ignored:
      // Period mode, a period above 1 and samples that carry PERIOD: Linux
      // samples every occurrence, the broken kernel every N-th.
      c.sample_freq = 0;
      c.sample_period = 2 + c.seed % 7;
      c.period_field = 1;
      break;
    case Mutant::eintr_retry_hidden:
      // Every chunk is a pwrite; some of them interrupted.
      set_output(c, Output::serial);
      if (c.disk_eintr_per_million == 0) c.disk_eintr_per_million = 20'000;
      break;
    case Mutant::gate_marks_every_round:
    case Mutant::help_staged_late:
      break;  // their world is set above (read_per_cpu)
    case Mutant::shared_offset:
    case Mutant::reuse_buffer:
    case Mutant::eagain_busy_loop:
    case Mutant::error_resubmit:
      set_output(c, Output::aio);
      break;
  }
  if (mutant == Mutant::eagain_busy_loop && c.disk_eagain_burst_per_million == 0) {
    c.disk_eagain_burst_per_million = 20'000;
  }
  if (mutant == Mutant::error_resubmit && c.disk_eio_per_million == 0 && c.disk_capacity_bytes == 0) {
    c.disk_capacity_bytes = 4096 * (16 + c.seed % 256);
  }
}

// The rules a mutant's run must meet (its bug shows only there).
static std::string mutant_rule(const RunConfig& c) {
  const bool aio_mutant = c.mutant == Mutant::shared_offset || c.mutant == Mutant::reuse_buffer ||
                          c.mutant == Mutant::eagain_busy_loop || c.mutant == Mutant::error_resubmit;
  if (aio_mutant && c.output != Output::aio) {
    return std::string("mutant: ") + to_string(c.mutant) + " needs output=aio";
  }
  if (c.mutant == Mutant::drop_lost && c.output != Output::memory) return "mutant: drop_lost needs output=memory";
  if (c.mutant == Mutant::eintr_retry_hidden && c.output == Output::memory) {
    return "mutant: eintr_retry_hidden needs output=serial or aio";
  }
  if (c.mutant == Mutant::early_release && c.mode != core::RingMode::normal) {
    return "mutant: early_release needs mode=normal";
  }
  if (c.mutant == Mutant::no_pause && c.mode != core::RingMode::backward) {
    return "mutant: no_pause needs mode=backward";
  }
  if (c.mutant == Mutant::gate_marks_every_round && c.readers_per_cpu == 0) {
    return "mutant: gate_marks_every_round needs readers_per_cpu=1 or 2";
  }
  if (c.mutant == Mutant::help_staged_late && c.readers_per_cpu != 2) {
    return "mutant: help_staged_late needs readers_per_cpu=2";
  }
  if (c.mutant == Mutant::period_rule_ignored && (c.sample_freq > 0 || c.sample_period < 2 || c.period_field == 0)) {
    return "mutant: period_rule_ignored needs sample_freq=0, sample_period>1 and period_field=1";
  }
  return "";
}

std::string validate_rules(const RunConfig& c) {
  if ((c.ring_pages & (c.ring_pages - 1)) != 0) {
    return "ring_pages: " + std::to_string(c.ring_pages) + " is not a power of two";
  }
  if (c.wakeup_watermark_bytes > c.ring_bytes()) {
    return "wakeup_watermark_bytes: " + std::to_string(c.wakeup_watermark_bytes) + " is larger than the ring (" +
           std::to_string(c.ring_bytes()) + " bytes)";
  }
  if (c.snapshot_interval_ns != 0 && c.snapshot_interval_ns < 1'000) {
    return "snapshot_interval_ns: must be 0 or at least 1000";
  }
  if (c.snapshot_interval_ns != 0 && core::writable(c.mode) && c.aux_overwrite == 0) {
    return "snapshot_interval_ns: snapshots need a read-only mode (backward, forward_overwrite) or aux_overwrite=1";
  }
  if (c.wakeup_events != 0 && c.wakeup_watermark_bytes != 0) {
    return "wakeup_events: a union with wakeup_watermark_bytes in perf_event_attr: give one of them";
  }
  if ((c.scope == Scope::system_wide || c.endless != 0) && c.stop_at_ns == 0) {
    return "stop_at_ns: system-wide or endless events never end by themselves: give a stop request";
  }
  if (c.aux_pages != 0 && (c.aux_pages & (c.aux_pages - 1)) != 0) {
    return "aux_pages: " + std::to_string(c.aux_pages) + " is not a power of two";
  }
  if (c.aux_offset_heads != 0 && c.aux_overwrite == 0) {
    return "aux_offset_heads: offset heads are a snapshot (aux_overwrite=1) driver's";
  }
  if (c.aux_format % 0x100 != 0) return "aux_format: PMU format bits are a mask of 0xff00";
  if (c.aux_pages == 0 && (c.aux_overwrite != 0 || c.aux_bursts != 0 || c.aux_late != 0)) {
    return "aux_pages: AUX settings need aux_pages > 0";
  }
  if (c.aux_watermark_bytes > c.aux_bytes()) {
    return "aux_watermark_bytes: " + std::to_string(c.aux_watermark_bytes) + " is larger than the AUX area";
  }
  if (c.disk_latency_ns_max < c.disk_latency_ns_min) {
    return "disk_latency_ns_max: " + std::to_string(c.disk_latency_ns_max) + " is below disk_latency_ns_min (" +
           std::to_string(c.disk_latency_ns_min) + ")";
  }
  if (c.rotate_bytes != 0 && c.rotate_bytes < 4096) return "rotate_bytes: must be 0 or at least 4096";
  if (c.staging_bytes != 0 && c.output == Output::memory) {
    return "staging_bytes: a staging buffer stands before the trace writer: needs output=serial or aio";
  }
  if (c.staging_bytes != 0 && c.staging_bytes < 2 * c.chunk_bytes_max()) {
    return "staging_bytes: " + std::to_string(c.staging_bytes) + " is less than two sink buffers (" +
           std::to_string(2 * c.chunk_bytes_max()) + " bytes: a ring, or an AUX area and its header, each)";
  }
  if (c.staging_bytes % 8 != 0) {
    return "staging_bytes: " + std::to_string(c.staging_bytes) + " is not a multiple of 8";
  }
  if (c.disk_capacity_bytes != 0 && c.disk_capacity_bytes < 4096) {
    return "disk_capacity_bytes: must be 0 or at least 4096";
  }
  if (c.output == Output::memory &&
      (c.rotate_bytes != 0 || c.disk_capacity_bytes != 0 || c.disk_open_fails != 0)) {
    return "output: rotation and disk capacity or open failures need output=serial or aio";
  }
  if (std::string e = mutant_rule(c); !e.empty()) return e;
  if (c.readers_per_cpu != 0 && (c.staging_bytes == 0 || c.mode != core::RingMode::normal || c.rotate_bytes != 0)) {
    return "readers_per_cpu: a reading fiber per CPU needs staging_bytes > 0, mode=normal and rotate_bytes=0 (as "
           "the recorder reads with one thread without staging, with --overwrite and with --switch-output)";
  }
  if (c.sample_freq > 0 && c.sample_period != 1) {
    return "sample_period: must be 1 with sample_freq (attr.sample_period and sample_freq are a union)";
  }
  return "";
}

}  // namespace ringsim::sim
