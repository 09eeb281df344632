#include "sim/config.h"

#include <sstream>

#include "core/verify.h"
#include "sim/decisions.h"

namespace ringsim::sim {

namespace {
constexpr Mutant kMutants[] = {Mutant::none,          Mutant::early_release, Mutant::no_pause,
                               Mutant::drop_lost,     Mutant::shared_offset, Mutant::reuse_buffer,
                               Mutant::eagain_busy_loop, Mutant::error_resubmit, Mutant::aux_early_tail};
}  // namespace

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
  }
  return "unknown";
}

bool parse_mutant(const std::string& text, Mutant& out) {
  for (Mutant m : kMutants) {
    if (text == to_string(m)) {
      out = m;
      return true;
    }
  }
  return false;
}

const std::vector<std::string>& mutant_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (Mutant m : kMutants) v.push_back(to_string(m));
    return v;
  }();
  return names;
}

const char* to_string(Output output) {
  switch (output) {
    case Output::memory: return "memory";
    case Output::serial: return "serial";
    case Output::aio: return "aio";
  }
  return "unknown";
}

bool parse_output(const std::string& text, Output& out) {
  for (Output o : {Output::memory, Output::serial, Output::aio}) {
    if (text == to_string(o)) {
      out = o;
      return true;
    }
  }
  return false;
}

bool parse_mode(const std::string& text, core::RingMode& out) {
  for (core::RingMode m : {core::RingMode::normal, core::RingMode::backward}) {
    if (text == core::to_string(m)) {
      out = m;
      return true;
    }
  }
  return false;
}

bool parse_size_mix(const std::string& text, SizeMix& out) {
  for (SizeMix m : {SizeMix::small, SizeMix::mixed, SizeMix::large, SizeMix::huge}) {
    if (text == to_string(m)) {
      out = m;
      return true;
    }
  }
  return false;
}

namespace {
constexpr std::uint64_t kMs = 1'000'000;
constexpr std::uint64_t kS = 1'000'000'000;
}  // namespace

#define RINGSIM_FIELD(field, help, low, high)                                               \
  ConfigField {                                                                             \
    #field, help, low, high, [](const RunConfig& c) { return std::uint64_t(c.field); },     \
        [](RunConfig& c, std::uint64_t v) { c.field = static_cast<decltype(c.field)>(v); } \
  }

const std::vector<ConfigField>& config_fields() {
  static const std::vector<ConfigField> fields = {
      RINGSIM_FIELD(seed, "seed of the run's decisions", 0, UINT64_MAX),
      RINGSIM_FIELD(cpus, "simulated CPUs (one event and ring each)", 1, 8),
      RINGSIM_FIELD(ring_pages, "data area pages per ring (power of two)", 1, 64),
      RINGSIM_FIELD(records_per_cpu, "samples each CPU generates", 1, 1'000'000),
      RINGSIM_FIELD(wakeup_events, "wakeup every N records (0: watermark only)", 0, 100'000),
      RINGSIM_FIELD(wakeup_watermark_bytes, "wakeup watermark (0: half the ring)", 0, 64 * 4096),
      RINGSIM_FIELD(gap_ns_max, "largest gap between records, ns", 0, kS),
      RINGSIM_FIELD(burst_per_million, "chance per record that a burst starts", 0, 1'000'000),
      RINGSIM_FIELD(burst_records_max, "largest burst, records", 1, 100'000),
      RINGSIM_FIELD(poll_timeout_ns, "poll timeout, ns", 1'000, 10 * kS),
      RINGSIM_FIELD(syscall_ns, "virtual cost of a system call, ns", 0, kMs),
      RINGSIM_FIELD(copy_ns_per_kib, "virtual cost of copying 1 KiB, ns", 0, kMs),
      RINGSIM_FIELD(snapshot_interval_ns, "overwrite mode: snapshot every ns (0: at hangup only)", 0, 10 * kS),
      RINGSIM_FIELD(stop_at_ns, "stop request at this virtual time (0: none)", 0, 3600 * kS),
      RINGSIM_FIELD(drain_chunks_max, "chunks read per ring per round", 1, 64),
      RINGSIM_FIELD(yield_per_million, "chance a backend call yields", 0, 1'000'000),
      RINGSIM_FIELD(poll_eintr_per_million, "chance poll fails with EINTR", 0, 1'000'000),
      RINGSIM_FIELD(copy_interrupt_per_million, "chance the kernel runs inside a copy", 0, 1'000'000),
      RINGSIM_FIELD(quiet_budget_ns, "quiet phase budget, virtual ns", kMs, 3600 * kS),
      RINGSIM_FIELD(switches_max, "fiber switch budget", 1'000, 1'000'000'000),
      RINGSIM_FIELD(cblocks, "control blocks per ring (output=aio)", 1, 4),
      RINGSIM_FIELD(rotate_bytes, "switch output files after this many data bytes (0: never)", 0, std::uint64_t{1} << 40),
      RINGSIM_FIELD(disk_queue_depth, "disk: writes in flight at most", 1, 64),
      RINGSIM_FIELD(disk_latency_ns_min, "disk: least write latency, ns", 0, kS),
      RINGSIM_FIELD(disk_latency_ns_max, "disk: largest write latency, ns", 0, kS),
      RINGSIM_FIELD(disk_ns_per_kib, "disk: ns per KiB written", 0, kMs),
      RINGSIM_FIELD(disk_stall_per_million, "disk: chance a write stalls", 0, 1'000'000),
      RINGSIM_FIELD(disk_stall_ns, "disk: length of a stall, ns", 0, 10 * kS),
      RINGSIM_FIELD(disk_short_per_million, "disk: chance a write is short", 0, 1'000'000),
      RINGSIM_FIELD(disk_eagain_per_million, "disk: chance a submit gets EAGAIN", 0, 1'000'000),
      RINGSIM_FIELD(disk_eagain_burst_per_million, "disk: chance a burst of EAGAIN starts", 0, 1'000'000),
      RINGSIM_FIELD(disk_eagain_burst_ns, "disk: length of an EAGAIN burst, ns", 0, kS),
      RINGSIM_FIELD(disk_eintr_per_million, "disk: chance a write completes with EINTR", 0, 1'000'000),
      RINGSIM_FIELD(disk_suspend_eintr_per_million, "disk: chance a wait or pwrite gets EINTR", 0, 1'000'000),
      RINGSIM_FIELD(disk_eio_per_million, "disk: chance a write fails with EIO", 0, 1'000'000),
      RINGSIM_FIELD(disk_capacity_bytes, "disk: ENOSPC past this file size (0: unlimited)", 0, std::uint64_t{1} << 40),
      RINGSIM_FIELD(disk_open_fails, "disk: 1 makes creating the output fail (EACCES)", 0, 1),
      RINGSIM_FIELD(aux_pages, "AUX area pages per CPU (0: none; a power of two)", 0, 256),
      RINGSIM_FIELD(aux_overwrite, "1: AUX snapshot (overwrite) mode", 0, 1),
      RINGSIM_FIELD(aux_watermark_bytes, "AUX watermark (0: the kernel's default)", 0, 256 * 4096),
      RINGSIM_FIELD(aux_late, "1: the PMU reports aux_head only at page boundaries", 0, 1),
      RINGSIM_FIELD(aux_bursts, "AUX transactions per CPU", 0, 1'000'000),
      RINGSIM_FIELD(aux_burst_bytes_max, "largest AUX transaction, bytes (a multiple of 8)", 8, std::uint64_t{1} << 20),
      RINGSIM_FIELD(aux_gap_ns_max, "largest gap between AUX transactions, ns", 0, kS),
      RINGSIM_FIELD(aux_transaction_ns, "longest time a transaction stays open, ns", 0, kMs),
      RINGSIM_FIELD(aux_partial_per_million, "chance an AUX record is PARTIAL", 0, 1'000'000),
  };
  return fields;
}
#undef RINGSIM_FIELD

void set_output(RunConfig& c, Output output) {
  c.output = output;
  if (output == Output::memory) {
    c.rotate_bytes = 0;
    c.disk_capacity_bytes = 0;
    c.disk_open_fails = 0;
  }
}

void set_mutant(RunConfig& c, Mutant mutant, bool keep_mode_and_output) {
  c.mutant = mutant;
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
      if (c.aux_pages == 0) c.aux_pages = 1;
      c.aux_bursts = std::max<std::uint32_t>(c.aux_bursts, 200);
      c.aux_overwrite = 0;
      c.aux_burst_bytes_max = c.aux_bytes() / 2;
      c.aux_gap_ns_max = 2'000;
      c.copy_interrupt_per_million = 500'000;
      c.copy_ns_per_kib = std::max<std::uint64_t>(c.copy_ns_per_kib, 2'000);
      if (c.snapshot_interval_ns != 0 && c.mode == core::RingMode::normal) c.snapshot_interval_ns = 0;
      break;
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

RunConfig random_config(std::uint64_t seed) {
  DecisionSource d(seed ^ 0x5ca1ab1e0ddba11ull, false);
  RunConfig c;
  c.seed = seed;
  c.cpus = static_cast<std::uint32_t>(d.between(1, 8));
  c.ring_pages = 1u << d.between(0, 6);
  c.mode = d.draw(4) == 0 ? core::RingMode::backward : core::RingMode::normal;
  const std::uint64_t mix = d.draw(10);
  c.size_mix = mix < 3 ? SizeMix::small : mix < 7 ? SizeMix::mixed : mix < 9 ? SizeMix::large : SizeMix::huge;
  c.records_per_cpu = static_cast<std::uint32_t>(d.between(20, 60) << d.between(0, 6));
  c.wakeup_events = d.draw(2) == 0 ? 0 : static_cast<std::uint32_t>(d.between(1, 64));
  c.wakeup_watermark_bytes = d.draw(2) == 0 ? 0 : 8 * d.between(1, c.ring_bytes() / 8);
  c.gap_ns_max = d.between(0, 50) << d.between(0, 10);
  c.burst_per_million = static_cast<std::uint32_t>(d.between(0, 50'000));
  c.burst_records_max = static_cast<std::uint32_t>(d.between(1, 256));
  c.poll_timeout_ns = d.between(1, 100) * kMs;
  c.syscall_ns = d.between(200, 5'000);
  c.copy_ns_per_kib = d.between(20, 2'000);
  c.snapshot_interval_ns =
      c.mode == core::RingMode::backward && d.draw(4) != 0 ? d.between(10'000, kMs) : 0;
  c.stop_at_ns = d.draw(10) == 0 ? d.between(1'000, 2 * kMs) : 0;
  c.drain_chunks_max = static_cast<std::uint32_t>(d.between(1, 4));
  c.yield_per_million = static_cast<std::uint32_t>(d.between(0, 300'000));
  c.poll_eintr_per_million = static_cast<std::uint32_t>(d.between(0, 50'000));
  c.copy_interrupt_per_million = static_cast<std::uint32_t>(d.between(0, 200'000));
  c.quiet_budget_ns = 10 * kS;
  c.switches_max = 2'000'000;
  // Output: a third each; the disk's faults on most writer runs.
  const std::uint64_t output = d.draw(3);
  c.output = output == 0 ? Output::memory : output == 1 ? Output::serial : Output::aio;
  c.cblocks = static_cast<std::uint32_t>(d.between(1, 4));
  c.rotate_bytes = d.draw(6) == 0 ? 4096 * d.between(1, 256) : 0;
  c.disk_queue_depth = static_cast<std::uint32_t>(d.between(1, 16));
  c.disk_latency_ns_min = d.between(0, 50'000);
  c.disk_latency_ns_max = c.disk_latency_ns_min + d.between(0, 500'000);
  c.disk_ns_per_kib = d.between(0, 5'000);
  const bool faulty = d.draw(4) != 0;
  c.disk_stall_per_million = faulty ? static_cast<std::uint32_t>(d.between(0, 20'000)) : 0;
  c.disk_stall_ns = d.between(100'000, 10 * kMs);
  c.disk_short_per_million = faulty ? static_cast<std::uint32_t>(d.between(0, 200'000)) : 0;
  c.disk_eagain_per_million = faulty ? static_cast<std::uint32_t>(d.between(0, 200'000)) : 0;
  c.disk_eagain_burst_per_million = faulty ? static_cast<std::uint32_t>(d.between(0, 20'000)) : 0;
  c.disk_eagain_burst_ns = d.draw(10) == 0 ? d.between(50 * kMs, 300 * kMs) : d.between(10'000, 2 * kMs);
  c.disk_eintr_per_million = faulty ? static_cast<std::uint32_t>(d.between(0, 100'000)) : 0;
  c.disk_suspend_eintr_per_million = faulty ? static_cast<std::uint32_t>(d.between(0, 100'000)) : 0;
  // Hard errors end the recording: on a few runs only.
  c.disk_eio_per_million = d.draw(20) == 0 ? static_cast<std::uint32_t>(d.between(10'000, 200'000)) : 0;
  c.disk_capacity_bytes = d.draw(20) == 0 ? 4096 * d.between(1, 128) : 0;
  c.disk_open_fails = d.draw(100) == 0 ? 1 : 0;
  set_output(c, c.output);
  // AUX areas on a third of the runs.
  if (d.draw(3) == 0) {
    c.aux_pages = 1u << d.between(0, 4);
    c.aux_overwrite = d.draw(3) == 0 ? 1 : 0;
    c.aux_watermark_bytes = d.draw(2) == 0 ? 0 : 8 * d.between(1, c.aux_bytes() / 8);
    c.aux_late = d.draw(3) == 0 ? 1 : 0;
    c.aux_bursts = static_cast<std::uint32_t>(d.between(1, 400));
    c.aux_burst_bytes_max = 8 * d.between(1, c.aux_bytes() / 4);
    c.aux_gap_ns_max = d.between(0, 100'000);
    c.aux_transaction_ns = d.draw(2) == 0 ? 0 : d.between(1'000, 200'000);
    c.aux_partial_per_million = static_cast<std::uint32_t>(d.between(0, 100'000));
    if (c.aux_overwrite && c.snapshot_interval_ns == 0 && d.draw(4) != 0) {
      c.snapshot_interval_ns = d.between(10'000, kMs);
    }
  }
  c.mutant = Mutant::none;
  VERIFY(validate(c).empty());
  return c;
}

std::string validate(const RunConfig& c) {
  for (const ConfigField& f : config_fields()) {
    const std::uint64_t v = f.get(c);
    if (v < f.min || v > f.max) {
      return std::string(f.name) + ": " + std::to_string(v) + " is outside " + std::to_string(f.min) + ".." +
             std::to_string(f.max);
    }
  }
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
  if (c.snapshot_interval_ns != 0 && c.mode != core::RingMode::backward && c.aux_overwrite == 0) {
    return "snapshot_interval_ns: snapshots need mode=backward or aux_overwrite=1";
  }
  if (c.aux_pages != 0 && (c.aux_pages & (c.aux_pages - 1)) != 0) {
    return "aux_pages: " + std::to_string(c.aux_pages) + " is not a power of two";
  }
  if (c.aux_pages == 0 && (c.aux_overwrite != 0 || c.aux_bursts != 0 || c.aux_late != 0)) {
    return "aux_pages: AUX settings need aux_pages > 0";
  }
  if (c.aux_watermark_bytes > c.aux_bytes()) {
    return "aux_watermark_bytes: " + std::to_string(c.aux_watermark_bytes) + " is larger than the AUX area";
  }
  if (c.aux_burst_bytes_max % 8 != 0) return "aux_burst_bytes_max: not a multiple of 8";
  if (c.disk_latency_ns_max < c.disk_latency_ns_min) {
    return "disk_latency_ns_max: " + std::to_string(c.disk_latency_ns_max) + " is below disk_latency_ns_min (" +
           std::to_string(c.disk_latency_ns_min) + ")";
  }
  if (c.rotate_bytes != 0 && c.rotate_bytes < 4096) return "rotate_bytes: must be 0 or at least 4096";
  if (c.disk_capacity_bytes != 0 && c.disk_capacity_bytes < 4096) {
    return "disk_capacity_bytes: must be 0 or at least 4096";
  }
  if (c.output == Output::memory &&
      (c.rotate_bytes != 0 || c.disk_capacity_bytes != 0 || c.disk_open_fails != 0)) {
    return "output: rotation and disk capacity or open failures need output=serial or aio";
  }
  const bool aio_mutant = c.mutant == Mutant::shared_offset || c.mutant == Mutant::reuse_buffer ||
                          c.mutant == Mutant::eagain_busy_loop || c.mutant == Mutant::error_resubmit;
  if (aio_mutant && c.output != Output::aio) {
    return std::string("mutant: ") + to_string(c.mutant) + " needs output=aio";
  }
  if (c.mutant == Mutant::drop_lost && c.output != Output::memory) return "mutant: drop_lost needs output=memory";
  if (c.mutant == Mutant::early_release && c.mode != core::RingMode::normal) {
    return "mutant: early_release needs mode=normal";
  }
  if (c.mutant == Mutant::no_pause && c.mode != core::RingMode::backward) {
    return "mutant: no_pause needs mode=backward";
  }
  return "";
}

std::string describe(const RunConfig& c) {
  std::ostringstream s;
  s << "mode=" << core::to_string(c.mode) << " size_mix=" << to_string(c.size_mix) << " output=" << to_string(c.output);
  for (const ConfigField& f : config_fields()) s << ' ' << f.name << '=' << f.get(c);
  if (c.mutant != Mutant::none) s << " mutant=" << to_string(c.mutant);
  return s.str();
}

nlohmann::json to_json(const RunConfig& c) {
  nlohmann::json j = nlohmann::json::object();
  for (const ConfigField& f : config_fields()) j[f.name] = f.get(c);
  j["mode"] = core::to_string(c.mode);
  j["size_mix"] = to_string(c.size_mix);
  j["mutant"] = to_string(c.mutant);
  j["output"] = to_string(c.output);
  return j;
}

std::string from_json(const nlohmann::json& j, RunConfig& out) {
  if (!j.is_object()) return "config: not an object";
  RunConfig c;
  std::size_t known = 0;
  for (const ConfigField& f : config_fields()) {
    const auto it = j.find(f.name);
    if (it == j.end()) return std::string("config.") + f.name + ": missing";
    if (!it->is_number_unsigned()) return std::string("config.") + f.name + ": not an unsigned integer";
    f.set(c, it->get<std::uint64_t>());
    if (f.get(c) != it->get<std::uint64_t>()) return std::string("config.") + f.name + ": out of range";
    known++;
  }
  auto text = [&](const char* name, std::string& value) -> std::string {
    const auto it = j.find(name);
    if (it == j.end()) return std::string("config.") + name + ": missing";
    if (!it->is_string()) return std::string("config.") + name + ": not a string";
    value = it->get<std::string>();
    return "";
  };
  std::string value;
  if (std::string e = text("mode", value); !e.empty()) return e;
  if (!parse_mode(value, c.mode)) return "config.mode: unknown mode '" + value + "'";
  if (std::string e = text("size_mix", value); !e.empty()) return e;
  if (!parse_size_mix(value, c.size_mix)) return "config.size_mix: unknown mix '" + value + "'";
  if (std::string e = text("mutant", value); !e.empty()) return e;
  if (!parse_mutant(value, c.mutant)) return "config.mutant: unknown mutant '" + value + "'";
  if (std::string e = text("output", value); !e.empty()) return e;
  if (!parse_output(value, c.output)) return "config.output: unknown output '" + value + "'";
  known += 4;
  if (j.size() != known) return "config: has fields this version does not know";
  if (std::string e = validate(c); !e.empty()) return "config." + e;
  out = c;
  return "";
}

}  // namespace ringsim::sim
