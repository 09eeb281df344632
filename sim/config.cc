#include "sim/config.h"

#include <sstream>

#include "core/verify.h"
#include "sim/decisions.h"

namespace ringsim::sim {

const char* to_string(Mutant mutant) {
  switch (mutant) {
    case Mutant::none: return "none";
    case Mutant::early_release: return "early_release";
    case Mutant::no_pause: return "no_pause";
    case Mutant::drop_lost: return "drop_lost";
  }
  return "unknown";
}

bool parse_mutant(const std::string& text, Mutant& out) {
  for (Mutant m : {Mutant::none, Mutant::early_release, Mutant::no_pause, Mutant::drop_lost}) {
    if (text == to_string(m)) {
      out = m;
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
  };
  return fields;
}
#undef RINGSIM_FIELD

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
  if (c.snapshot_interval_ns != 0 && c.mode != core::RingMode::backward) {
    return "snapshot_interval_ns: snapshots need mode=backward";
  }
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
  s << "mode=" << core::to_string(c.mode) << " size_mix=" << to_string(c.size_mix);
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
  known += 3;
  if (j.size() != known) return "config: has fields this version does not know";
  if (std::string e = validate(c); !e.empty()) return "config." + e;
  out = c;
  return "";
}

}  // namespace ringsim::sim
