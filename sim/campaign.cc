#include "sim/campaign.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <mutex>
#include <optional>
#include <ostream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/drops.h"
#include "core/verify.h"
#include "sim/replay.h"
#include "sim/run.h"
#include "sim/shrink.h"

namespace ringsim::sim {
namespace {

using Clock = std::chrono::steady_clock;

std::string with_commas(std::uint64_t v) {
  std::string digits = std::to_string(v);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); i++) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string seconds(double s) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(s < 10 ? 2 : 1) << s << " s";
  return o.str();
}

constexpr const char* kSummaryFormat = "ringsim-campaign-summary";
constexpr std::uint64_t kSummaryFormatVersion = 2;

struct PropertyCount {
  std::uint64_t checked = 0;
  std::uint64_t passed = 0;
};

struct Totals {
  std::uint64_t runs = 0;
  std::uint64_t failed = 0;
  std::uint64_t failed_liveness = 0;
  std::uint64_t samples = 0;
  std::uint64_t records_written = 0;
  std::uint64_t records_delivered = 0;
  std::uint64_t bytes_written = 0;
  std::uint64_t dropped_full = 0;
  std::uint64_t dropped_too_big = 0;
  std::uint64_t dropped_paused = 0;
  std::uint64_t lost_reported = 0;   // by the kernel's LOST records
  std::uint64_t lost_delivered = 0;  // in LOST records the consumer delivered
  std::uint64_t dropped_unreported = 0;
  std::uint64_t overwritten_records = 0;
  std::uint64_t virtual_ns = 0;
  std::uint64_t switches = 0;
  std::uint64_t schedule_points = 0;
  std::uint64_t schedule_points_max = 0;  // of one run
  std::uint64_t fibers_max = 0;           // of one run
  std::uint64_t decisions = 0;
  std::uint64_t determinism_checked = 0;
  std::uint64_t determinism_passed = 0;
  std::uint64_t mode_runs[4] = {0, 0, 0, 0};  // by core::RingMode
  std::uint64_t scope_runs[2] = {0, 0};       // task, system-wide
  std::uint64_t output_runs[3] = {0, 0, 0};  // memory, serial, aio
  // The writer and the disk.
  std::uint64_t file_bytes = 0;
  std::uint64_t files = 0;
  std::uint64_t writes_completed = 0;
  std::uint64_t short_restarted = 0;
  std::uint64_t eagain_retries = 0;
  std::uint64_t sync_fallbacks = 0;
  std::uint64_t eintr_retries = 0;
  std::uint64_t hard_error_runs = 0;
  std::uint64_t records_lost_to_error = 0;
  DiskStats disk;
  std::uint64_t aux_runs = 0;
  std::uint64_t aux_written = 0;
  std::uint64_t aux_delivered = 0;
  std::uint64_t aux_overwritten = 0;
  std::uint64_t aux_truncated = 0;
  std::uint64_t aux_snapshot_runs = 0;
  // Staged runs (staging_bytes > 0).
  std::uint64_t staged_runs = 0;
  std::uint64_t staged_chunks = 0;
  std::uint64_t staged_records = 0;
  std::uint64_t staged_writes = 0;
  std::uint64_t staging_full = 0;       // backpressure episodes
  std::uint64_t staging_full_runs = 0;
  std::uint64_t staging_wrap_skips = 0;
  std::uint64_t staging_dropped = 0;    // staged records never written (after an output error)
  // The data-loss metric, over all runs: total lost time / total elapsed.
  std::uint64_t lost_time_ns = 0;
  std::uint64_t elapsed_ns = 0;
  std::uint64_t runs_with_loss = 0;
  core::Drops drops;      // data rings, and the writer's cut
  core::Drops aux_drops;  // AUX areas
  std::map<std::string, PropertyCount> properties;
  Probes probes;
  std::array<std::uint64_t, kProbeCount> probe_runs{};
  std::vector<nlohmann::json> failures;
};

// Every counter of Totals, for the exact summary a shard's JSON carries
// and the merge of shards adds up (a field missing here is caught by
// campaign_shards_test: the merged summary would differ from one run's).
#define RS_TOTALS_COUNTERS(X)                                                                                      \
  X(runs) X(failed) X(failed_liveness) X(samples) X(records_written) X(records_delivered) X(bytes_written)         \
  X(dropped_full) X(dropped_too_big) X(dropped_paused) X(lost_reported) X(lost_delivered) X(dropped_unreported)    \
  X(overwritten_records) X(virtual_ns) X(switches) X(decisions) X(determinism_checked) X(determinism_passed)      \
  X(file_bytes) X(files) X(writes_completed) X(short_restarted) X(eagain_retries) X(sync_fallbacks)               \
  X(eintr_retries) X(hard_error_runs) X(records_lost_to_error) X(aux_runs) X(aux_written) X(aux_delivered)        \
  X(aux_overwritten) X(aux_truncated) X(aux_snapshot_runs) X(staged_runs) X(staged_chunks) X(staged_records)      \
  X(staged_writes) X(staging_full) X(staging_full_runs) X(staging_wrap_skips) X(staging_dropped) X(lost_time_ns)  \
  X(elapsed_ns) X(runs_with_loss) X(schedule_points)
// Maxima over the runs (a merge takes the largest).
#define RS_TOTALS_MAXIMA(X) X(schedule_points_max) X(fibers_max)
#define RS_DISK_COUNTERS(X)                                                                                        \
  X(writes) X(bytes) X(stalls) X(eagain_single) X(eagain_burst) X(eagain_queue_full) X(short_writes)              \
  X(eintr_writes) X(eintr_suspends) X(eio) X(enospc) X(open_failures)
#define RS_RECORD_COUNTS(X)                                                                                        \
  X(records) X(bytes) X(samples) X(lost_records) X(lost_sum) X(aux_records) X(auxtrace_records) X(auxtrace_bytes) \
  X(other_records)

template <std::size_t N>
nlohmann::json array_json(const std::uint64_t (&a)[N]) {
  return std::vector<std::uint64_t>(std::begin(a), std::end(a));
}

nlohmann::json exact_drops_json(const core::Drops& drops) {
  nlohmann::json j = nlohmann::json::object();
  for (std::size_t i = 0; i < core::kDropCauses; i++) {
    const auto cause = static_cast<core::DropCause>(i);
    const core::DropCount& c = drops[cause];
    nlohmann::json r = {{"events", c.events}};
#define RS_PUT(f) r[#f] = c.records.f;
    RS_RECORD_COUNTS(RS_PUT)
#undef RS_PUT
    j[core::to_string(cause)] = r;
  }
  return j;
}

// Totals exactly: what a merge needs to print the summary a single run of
// all the shards' seeds prints.
nlohmann::json totals_json(const Totals& t) {
  nlohmann::json j;
#define RS_PUT(f) j[#f] = t.f;
  RS_TOTALS_COUNTERS(RS_PUT)
  RS_TOTALS_MAXIMA(RS_PUT)
#undef RS_PUT
  nlohmann::json disk;
#define RS_PUT(f) disk[#f] = t.disk.f;
  RS_DISK_COUNTERS(RS_PUT)
#undef RS_PUT
  j["disk"] = disk;
  j["mode_runs"] = array_json(t.mode_runs);
  j["scope_runs"] = array_json(t.scope_runs);
  j["output_runs"] = array_json(t.output_runs);
  j["drops"] = exact_drops_json(t.drops);
  j["aux_drops"] = exact_drops_json(t.aux_drops);
  nlohmann::json properties = nlohmann::json::object();
  for (const auto& [name, count] : t.properties) properties[name] = {count.checked, count.passed};
  j["properties"] = properties;
  nlohmann::json probes = nlohmann::json::object();
  for (std::size_t i = 0; i < kProbeCount; i++) probes[kProbeInfo[i].name] = {t.probes.count(i), t.probe_runs[i]};
  j["probes"] = probes;
  return j;
}

// A counter of `j` added to `into` ("" or the problem).
std::string add_counter(const nlohmann::json& j, const char* name, std::uint64_t& into) {
  if (!j.contains(name) || !j[name].is_number_unsigned()) return std::string("totals: no counter ") + name;
  into += j[name].get<std::uint64_t>();
  return "";
}

template <std::size_t N>
std::string add_array(const nlohmann::json& j, const char* name, std::uint64_t (&into)[N]) {
  if (!j.contains(name) || !j[name].is_array() || j[name].size() != N) return std::string("totals: bad ") + name;
  for (std::size_t i = 0; i < N; i++) {
    if (!j[name][i].is_number_unsigned()) return std::string("totals: bad ") + name;
    into[i] += j[name][i].get<std::uint64_t>();
  }
  return "";
}

std::string add_exact_drops(const nlohmann::json& j, core::Drops& into) {
  if (!j.is_object() || j.size() != core::kDropCauses) return "totals: bad drops";
  for (std::size_t i = 0; i < core::kDropCauses; i++) {
    const auto cause = static_cast<core::DropCause>(i);
    const char* name = core::to_string(cause);
    if (!j.contains(name) || !j[name].is_object()) return std::string("totals: no drop cause ") + name;
    const nlohmann::json& r = j[name];
    core::DropCount c;
    std::string e = add_counter(r, "events", c.events);
#define RS_GET(f) \
  if (e.empty()) e = add_counter(r, #f, c.records.f);
    RS_RECORD_COUNTS(RS_GET)
#undef RS_GET
    if (!e.empty()) return e;
    into.add(cause, c);
  }
  return "";
}

// A shard's totals (totals_json) added to `t`: "" or the problem.
std::string add_totals_json(const nlohmann::json& j, Totals& t) {
  if (!j.is_object()) return "totals: not an object";
  std::string e;
#define RS_GET(f) \
  if (e.empty()) e = add_counter(j, #f, t.f);
  RS_TOTALS_COUNTERS(RS_GET)
#undef RS_GET
  if (!e.empty()) return e;
#define RS_GET(f)                                      \
  if (e.empty()) {                                     \
    std::uint64_t value = 0;                           \
    e = add_counter(j, #f, value);                     \
    t.f = std::max(t.f, value);                        \
  }
  RS_TOTALS_MAXIMA(RS_GET)
#undef RS_GET
  if (!e.empty()) return e;
  if (!j.contains("disk") || !j["disk"].is_object()) return "totals: no disk";
#define RS_GET(f) \
  if (e.empty()) e = add_counter(j["disk"], #f, t.disk.f);
  RS_DISK_COUNTERS(RS_GET)
#undef RS_GET
  if (!e.empty()) return e;
  for (const std::string& problem :
       {add_array(j, "mode_runs", t.mode_runs), add_array(j, "scope_runs", t.scope_runs),
        add_array(j, "output_runs", t.output_runs), j.contains("drops") ? add_exact_drops(j["drops"], t.drops) : "totals: no drops",
        j.contains("aux_drops") ? add_exact_drops(j["aux_drops"], t.aux_drops) : "totals: no aux_drops"}) {
    if (!problem.empty()) return problem;
  }
  if (!j.contains("properties") || !j["properties"].is_object()) return "totals: no properties";
  for (const auto& [name, pair] : j["properties"].items()) {
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number_unsigned() || !pair[1].is_number_unsigned()) {
      return "totals: bad property " + name;
    }
    PropertyCount& count = t.properties[name];
    count.checked += pair[0].get<std::uint64_t>();
    count.passed += pair[1].get<std::uint64_t>();
  }
  if (!j.contains("probes") || !j["probes"].is_object() || j["probes"].size() != kProbeCount) {
    return "totals: the probes are not this build's (" + std::to_string(kProbeCount) + " probes)";
  }
  for (std::size_t i = 0; i < kProbeCount; i++) {
    const char* name = kProbeInfo[i].name;
    if (!j["probes"].contains(name)) return std::string("totals: no probe ") + name + " (another build's summary)";
    const nlohmann::json& pair = j["probes"][name];
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number_unsigned() || !pair[1].is_number_unsigned()) {
      return std::string("totals: bad probe ") + name;
    }
    t.probes.hit(static_cast<Probe>(i), pair[0].get<std::uint64_t>());
    t.probe_runs[i] += pair[1].get<std::uint64_t>();
  }
  return "";
}

// What the VERIFY hook needs to report a crash in the middle of a run: set
// (core::set_verify_context) on the thread that runs it, which passes it on
// to the run's own thread (sim/scheduler.cc).
struct CrashContext {
  const CampaignOptions* options = nullptr;
  const RunConfig* config = nullptr;
  const DecisionSource* decisions = nullptr;
};

// The run's one-line reproduction: its configuration, and PCT's settings
// (they are not part of the configuration: the picks they made are on the
// tape, which replays without them).
std::string reproduce_line(const CampaignOptions& options, const RunConfig& config) {
  std::string line = reproduce_command(config);
  if (options.pct.depth > 0) {
    line += " --pct-depth=" + std::to_string(options.pct.depth) + " --pct-steps=" + std::to_string(options.pct.steps);
  }
  return line;
}

std::string replay_path(const CampaignOptions& options, std::uint64_t seed, const char* suffix) {
  return (std::filesystem::path(options.replay_dir) / ("seed-" + std::to_string(seed) + suffix)).string();
}

void crash_hook(const char* description) {
  const auto* context = static_cast<const CrashContext*>(core::verify_context());
  if (context == nullptr || context->options == nullptr || context->config == nullptr) return;
  const CrashContext& c = *context;
  std::fprintf(stderr, "CRASH seed=%llu: %s\n  config: %s\n  reproduce: %s\n",
               static_cast<unsigned long long>(c.config->seed), description, describe(*c.config).c_str(),
               reproduce_line(*c.options, *c.config).c_str());
  if (c.decisions != nullptr) {
    std::error_code ec;
    std::filesystem::create_directories(c.options->replay_dir, ec);
    ReplayFile replay;
    replay.config = *c.config;
    replay.tape = c.decisions->recorded();
    replay.property = model::kCrash;
    replay.detail = description;
    replay.note = "recorded up to the failed check";
    const std::string path = replay_path(*c.options, c.config->seed, ".replay.json");
    const std::string error = write_replay(path, replay);
    if (error.empty()) {
      std::fprintf(stderr, "  replay: %s %s\n", c.options->replay_command.c_str(),
                   std::filesystem::absolute(path).c_str());
    } else {
      std::fprintf(stderr, "  could not write the replay: %s\n", error.c_str());
    }
  }
  std::fflush(stderr);
  std::_Exit(kExitCrash);
}

// What the kernel wrote, dropped and reported, and what was delivered.
void add_kernel_figures(Totals& t, const RunResult& r) {
  t.samples += r.samples_attempted;
  t.records_written += r.oracle.records_written;
  t.records_delivered += r.oracle.records_delivered;
  t.bytes_written += r.bytes_written;
  for (const model::CpuLog& cpu : r.log.cpus) {
    t.dropped_full += cpu.dropped_full;
    t.dropped_too_big += cpu.dropped_too_big;
    t.dropped_paused += cpu.dropped_paused;
    t.lost_reported += cpu.lost_reported;
    t.dropped_unreported += cpu.dropped_unreported;
  }
  t.lost_delivered += r.oracle.lost_delivered;
  t.overwritten_records += r.oracle.records_overwritten;
  t.virtual_ns += r.virtual_ns;
  t.switches += r.switches;
  t.schedule_points += r.schedule_points;
  t.schedule_points_max = std::max(t.schedule_points_max, r.schedule_points);
  t.fibers_max = std::max(t.fibers_max, r.fibers);
  t.decisions += r.decisions;
  t.mode_runs[static_cast<std::size_t>(r.config.mode)]++;
  t.scope_runs[r.config.scope == Scope::task ? 0 : 1]++;
  t.lost_time_ns += r.loss.lost_time_ns;
  t.elapsed_ns += r.loss.last_time_ns - r.loss.first_time_ns;
  if (r.loss.lost_sum > 0) t.runs_with_loss++;
  // What the consumer dropped, by cause (core/drops.h).
  t.drops.add(r.loop.drops);
  t.drops.add(r.writer.drops);
  t.aux_drops.add(r.loop.aux_drops);
}

void add_disk_stats(DiskStats& t, const DiskStats& d) {
  t.writes += d.writes;
  t.bytes += d.bytes;
  t.stalls += d.stalls;
  t.eagain_single += d.eagain_single;
  t.eagain_burst += d.eagain_burst;
  t.eagain_queue_full += d.eagain_queue_full;
  t.short_writes += d.short_writes;
  t.eintr_writes += d.eintr_writes;
  t.eintr_suspends += d.eintr_suspends;
  t.eio += d.eio;
  t.enospc += d.enospc;
  t.open_failures += d.open_failures;
}

// The writer and the disk.
void add_output_figures(Totals& t, const RunResult& r) {
  t.output_runs[static_cast<int>(r.config.output)]++;
  t.file_bytes += r.file_bytes;
  t.files += r.files;
  t.writes_completed += r.writer.writes_completed;
  t.short_restarted += r.writer.short_writes_restarted;
  t.eagain_retries += r.writer.eagain_retries;
  t.sync_fallbacks += r.writer.eagain_sync_fallbacks;
  t.eintr_retries += r.writer.eintr_retries;
  if (r.writer.error != 0) t.hard_error_runs++;
  t.records_lost_to_error += r.writer.drops[core::DropCause::output_error].records.records;
  add_disk_stats(t.disk, r.disk);
}

void add_staging_figures(Totals& t, const RunResult& r) {
  if (r.config.staging_bytes == 0) return;
  t.staged_runs++;
  t.staged_chunks += r.staging.chunks;
  t.staged_records += r.staging.records.records;
  t.staged_writes += r.staging.writes;
  t.staging_full += r.staging.full;
  if (r.staging.full > 0) t.staging_full_runs++;
  t.staging_wrap_skips += r.staging.wrap_skips;
  t.staging_dropped += r.staging.drops[core::DropCause::output_error].records.records;
}

void add_aux_figures(Totals& t, const RunResult& r) {
  if (r.config.aux_pages > 0) {
    t.aux_runs++;
    if (r.config.aux_overwrite) t.aux_snapshot_runs++;
  }
  t.aux_written += r.oracle.aux_written;
  t.aux_delivered += r.oracle.aux_delivered;
  t.aux_overwritten += r.oracle.aux_overwritten;
  t.aux_truncated += r.oracle.aux_truncated;
}

void add_checks(Totals& t, const RunResult& r) {
  for (const std::string& p : r.properties) {
    PropertyCount& count = t.properties[p];
    count.checked++;
    bool violated = false;
    for (const model::Violation& v : r.violations) violated |= v.property == p;
    if (!violated) count.passed++;
  }
  t.probes.add(r.probes);
  for (std::size_t i = 0; i < kProbeCount; i++) {
    if (r.probes.count(i) > 0) t.probe_runs[i]++;
  }
}

void add_run(Totals& t, const RunResult& r) {
  t.runs++;
  if (!r.ok()) t.failed++;
  if (r.liveness_failed()) t.failed_liveness++;
  add_kernel_figures(t, r);
  add_output_figures(t, r);
  add_aux_figures(t, r);
  add_staging_figures(t, r);
  add_checks(t, r);
}

class Progress {
 public:
  Progress(std::ostream& log, bool enabled, std::uint64_t total)
      : log_(log), enabled_(enabled), tty_(isatty(STDERR_FILENO) == 1), total_(total), start_(Clock::now()) {}

  void update(std::uint64_t done, std::uint64_t failed, std::uint64_t seed, bool force = false) {
    if (!enabled_) return;
    const auto now = Clock::now();
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const std::uint64_t percent = total_ == 0 ? 100 : done * 100 / total_;
    if (tty_) {
      if (!force && now - last_ < std::chrono::milliseconds(200)) return;
      last_ = now;
      log_ << "\r[" << std::setw(7) << done << "/" << total_ << "] " << std::setw(3) << percent << "% "
           << seconds(elapsed) << ", " << std::fixed << std::setprecision(0) << (elapsed > 0 ? done / elapsed : 0)
           << " runs/s, " << failed << " failed, seed " << seed << "   " << std::flush;
    } else if (percent >= next_percent_ || (force && done != last_done_)) {
      while (next_percent_ <= percent) next_percent_ += 10;
      last_done_ = done;
      log_ << "progress: " << done << "/" << total_ << " runs (" << percent << "%), " << failed << " failed, "
           << seconds(elapsed) << "\n" << std::flush;
    }
  }
  void finish() {
    if (enabled_ && tty_) log_ << "\n";
  }

 private:
  std::ostream& log_;
  const bool enabled_;
  const bool tty_;
  const std::uint64_t total_;
  const Clock::time_point start_;
  Clock::time_point last_{};
  std::uint64_t next_percent_ = 0;
  std::uint64_t last_done_ = UINT64_MAX;
};

// Prints the failure (with its replay files, shrunk) to `log`; returns it
// for the JSON summary.
nlohmann::json report_failure(const CampaignOptions& options, const RunResult& r, const std::vector<Decision>& tape,
                              std::ostream& log) {
  const model::Violation& first = r.violations.front();
  const std::uint64_t seed = r.config.seed;
  log << "FAIL seed=" << seed << " property=" << first.property << ": " << first.detail << "\n";
  for (std::size_t i = 1; i < r.violations.size() && i < 4; i++) {
    log << "  also " << r.violations[i].property << ": " << r.violations[i].detail << "\n";
  }
  log << "  config: " << describe(r.config) << "\n";
  log << "  reproduce: " << reproduce_line(options, r.config) << "\n";
  nlohmann::json failure = {{"seed", seed},
                            {"property", first.property},
                            {"detail", first.detail},
                            {"config", to_json(r.config)},
                            {"reproduce", reproduce_line(options, r.config)}};
  std::error_code ec;
  std::filesystem::create_directories(options.replay_dir, ec);
  ReplayFile replay;
  replay.config = r.config;
  replay.tape = tape;
  replay.property = first.property;
  replay.detail = first.detail;
  replay.trace_hash = r.trace_hash;
  replay.output_hash = r.output_hash;
  replay.note = "recorded by the campaign";
  const std::string path = replay_path(options, seed, ".replay.json");
  const std::string error = write_replay(path, replay);
  if (!error.empty()) {
    log << "  could not write the replay: " << error << "\n";
  } else {
    const std::string absolute = std::filesystem::absolute(path).string();
    log << "  replay: " << options.replay_command << " " << absolute << "\n";
    failure["replay"] = absolute;
    if (options.shrink_s > 0) {
      ShrinkOptions shrink_options;
      shrink_options.budget_s = options.shrink_s;
      ShrinkStats stats;
      ReplayFile shrunk = shrink(replay, shrink_options, stats);
      shrunk.note = "shrunk from " + std::to_string(stats.decisions_before) + " to " +
                    std::to_string(stats.decisions_after) + " decisions in " + std::to_string(stats.attempts) +
                    " attempts";
      const std::string shrunk_path = replay_path(options, seed, ".shrunk.replay.json");
      const std::string shrunk_error = write_replay(shrunk_path, shrunk);
      if (shrunk_error.empty()) {
        const std::string shrunk_absolute = std::filesystem::absolute(shrunk_path).string();
        log << "  shrunk: " << options.replay_command << " " << shrunk_absolute << "  (" << shrunk.note
            << "; cpus=" << shrunk.config.cpus << " records_per_cpu=" << shrunk.config.records_per_cpu
            << (stats.budget_exhausted ? "; budget reached" : "") << ")\n";
        failure["shrunk_replay"] = shrunk_absolute;
      } else {
        log << "  could not write the shrunk replay: " << shrunk_error << "\n";
      }
    }
  }
  return failure;
}

nlohmann::json drops_json(const core::Drops& drops) {
  nlohmann::json j = nlohmann::json::object();
  for (std::size_t i = 0; i < core::kDropCauses; i++) {
    const auto cause = static_cast<core::DropCause>(i);
    const core::DropCount& c = drops[cause];
    j[core::to_string(cause)] = {{"events", c.events}, {"records", c.records.records}, {"bytes", c.records.bytes}};
  }
  return j;
}

// The options that fix what every run draws: the overrides, --swarm, PCT.
std::string fixed_args(const CampaignOptions& options) {
  std::string out = options.overrides.as_args();
  const auto add = [&](const std::string& arg) { out += (out.empty() ? "" : " ") + arg; };
  if (options.swarm) add("--swarm");
  if (options.pct.depth > 0) {
    add("--pct-depth=" + std::to_string(options.pct.depth) + " --pct-steps=" + std::to_string(options.pct.steps));
  }
  return out;
}

// PCT's guarantee: a bug of depth d (d ordering constraints among the
// scheduling points) shows in one run with probability at least
// 1 / (n * k^(d-1)), n the fibers, k the scheduling points.
void print_pct(std::ostream& out, const PctSettings& pct, const Totals& t) {
  const double n = static_cast<double>(std::max<std::uint64_t>(t.fibers_max, 1));
  const double bound = 1.0 / (n * std::pow(static_cast<double>(pct.steps), pct.depth - 1.0));
  out << "  search           PCT, depth " << pct.depth << ", change points among the first " << pct.steps
      << " scheduling points: a bug of depth " << pct.depth << " shows in a run with probability >= 1/(n*k^"
      << pct.depth - 1 << ") = " << std::scientific << std::setprecision(2) << bound << std::defaultfloat
      << " (n = " << t.fibers_max << " fibers, k = " << pct.steps << ")";
  if (t.schedule_points_max > pct.steps) {
    out << "; runs with more than " << pct.steps << " points (up to " << t.schedule_points_max
        << ") have their change points in the first " << pct.steps;
  }
  out << "\n";
}

nlohmann::json summary_json(const CampaignOptions& options, const Totals& t, double wall_s, bool budget_hit,
                            std::uint64_t planned) {
  nlohmann::json j;
  j["format"] = kSummaryFormat;
  j["format_version"] = kSummaryFormatVersion;
  j["first_seed"] = options.first_seed;
  j["runs_requested"] = options.runs;
  j["fixed"] = options.overrides.empty() && !options.swarm && options.pct.depth == 0 ? options.merged_fixed
                                                                                    : fixed_args(options);
  j["determinism_every"] = options.determinism_every;
  j["runs_planned"] = planned;
  j["runs"] = t.runs;
  j["failed"] = t.failed;
  j["failed_liveness"] = t.failed_liveness;
  j["stopped_by_budget"] = budget_hit;
  j["shard"] = {{"index", options.shard_index}, {"count", options.shard_count}};
  j["wall_s"] = wall_s;
  j["virtual_s"] = static_cast<double>(t.virtual_ns) / 1e9;
  j["samples_generated"] = t.samples;
  j["records_written"] = t.records_written;
  j["records_delivered"] = t.records_delivered;
  j["bytes_written"] = t.bytes_written;
  j["dropped"] = {{"ring_full", t.dropped_full},
                  {"never_fits", t.dropped_too_big},
                  {"paused", t.dropped_paused},
                  {"reported_by_lost_records", t.lost_reported},
                  {"delivered_in_lost_records", t.lost_delivered},
                  {"unreported", t.dropped_unreported}};
  j["overwritten_records"] = t.overwritten_records;
  j["consumer_drops"] = {{"data", drops_json(t.drops)}, {"aux", drops_json(t.aux_drops)}};
  j["fiber_switches"] = t.switches;
  j["decisions"] = t.decisions;
  j[model::kDeterminism] = {{"checked", t.determinism_checked}, {"identical", t.determinism_passed}};
  j["modes"] = {{"normal", t.mode_runs[0]},
                {"backward", t.mode_runs[1]},
                {"forward_overwrite", t.mode_runs[2]},
                {"backward_writable", t.mode_runs[3]}};
  j["scopes"] = {{"task", t.scope_runs[0]}, {"system_wide", t.scope_runs[1]}};
  j["outputs"] = {{"memory", t.output_runs[0]}, {"serial", t.output_runs[1]}, {"aio", t.output_runs[2]}};
  j["files"] = {{"count", t.files}, {"bytes", t.file_bytes}, {"writes_completed", t.writes_completed}};
  j["disk_faults"] = {{"short_writes", t.disk.short_writes},   {"eagain", t.disk.eagain_single},
                      {"eagain_burst", t.disk.eagain_burst},   {"queue_full", t.disk.eagain_queue_full},
                      {"eintr_writes", t.disk.eintr_writes},   {"eintr_waits", t.disk.eintr_suspends},
                      {"stalls", t.disk.stalls},               {"eio", t.disk.eio},
                      {"enospc", t.disk.enospc},               {"open_failures", t.disk.open_failures}};
  j["writer"] = {{"short_writes_restarted", t.short_restarted}, {"eagain_retries", t.eagain_retries},
                 {"sync_fallbacks", t.sync_fallbacks},           {"eintr_retries", t.eintr_retries},
                 {"hard_error_runs", t.hard_error_runs},         {"records_cut_by_errors", t.records_lost_to_error}};
  j["data_loss_metric"] = t.elapsed_ns ? static_cast<double>(t.lost_time_ns) / static_cast<double>(t.elapsed_ns) : 0.0;
  j["runs_with_loss"] = t.runs_with_loss;
  j["staging"] = {{"runs", t.staged_runs},          {"chunks", t.staged_chunks}, {"records", t.staged_records},
                  {"writes", t.staged_writes},       {"full", t.staging_full},
                  {"full_runs", t.staging_full_runs}, {"wrap_skips", t.staging_wrap_skips},
                  {"records_dropped", t.staging_dropped}};
  j["aux"] = {{"runs", t.aux_runs},           {"snapshot_runs", t.aux_snapshot_runs}, {"written", t.aux_written},
              {"delivered", t.aux_delivered}, {"overwritten", t.aux_overwritten},   {"truncated", t.aux_truncated}};
  nlohmann::json properties = nlohmann::json::object();
  for (const auto& [name, count] : t.properties) {
    properties[name] = {{"checked", count.checked}, {"passed", count.passed}};
  }
  j["properties"] = properties;
  nlohmann::json probes = nlohmann::json::object();
  for (std::size_t i = 0; i < kProbeCount; i++) {
    probes[kProbeInfo[i].name] = {{"hits", t.probes.count(i)}, {"runs", t.probe_runs[i]}};
  }
  j["probes"] = probes;
  j["failures"] = t.failures;
  j["totals"] = totals_json(t);
  return j;
}

void print_summary(std::ostream& out, const CampaignOptions& options, const Totals& t, double wall_s,
                   bool budget_hit, std::uint64_t planned) {
  out << "ringsim campaign: " << t.runs << " runs";
  if (options.shard_count > 1) out << " (shard " << options.shard_index << " of " << options.shard_count << ")";
  out << " from seed " << options.first_seed << ", " << t.failed << " failed";
  if (t.failed_liveness) out << " (" << t.failed_liveness << " on liveness)";
  out << "\n";
  if (budget_hit) out << "  stopped by the wall-clock budget after " << t.runs << " of " << planned << " runs\n";
  if (options.swarm) {
    out << "  swarm            each of " << swarm_sites().size()
        << " fault sites on in a run with probability 1/2 (reproduction lines name the sites off)\n";
  }
  out << "  wall time        " << seconds(wall_s) << " (" << std::fixed << std::setprecision(0)
      << (wall_s > 0 ? t.runs / wall_s : 0) << " runs/s)\n";
  out << "  virtual time     " << seconds(static_cast<double>(t.virtual_ns) / 1e9) << " simulated\n";
  out << "  modes            " << t.mode_runs[0] << " normal, " << t.mode_runs[1] << " backward overwrite, "
      << t.mode_runs[2] << " forward overwrite, " << t.mode_runs[3] << " backward writable; " << t.scope_runs[0]
      << " per-task, " << t.scope_runs[1] << " system-wide\n";
  out << "  samples          " << with_commas(t.samples) << " generated\n";
  out << "  records          " << with_commas(t.records_written) << " written into rings, "
      << with_commas(t.records_delivered) << " delivered\n";
  out << "  bytes            " << with_commas(t.bytes_written) << " written into rings\n";
  out << "  dropped          " << with_commas(t.dropped_full + t.dropped_too_big + t.dropped_paused)
      << " by the kernel (ring full " << with_commas(t.dropped_full) << ", never fit "
      << with_commas(t.dropped_too_big) << ", paused " << with_commas(t.dropped_paused) << ")\n";
  out << "  lost reported    " << with_commas(t.lost_reported) << " in LOST records written, "
      << with_commas(t.lost_delivered) << " in LOST records delivered, " << with_commas(t.dropped_unreported)
      << " never reported (stopped or cancelled first)\n";
  out << "  overwritten      " << with_commas(t.overwritten_records)
      << " records overwritten before a snapshot read them (reported gaps)\n";
  out << "  consumer drops   " << core::describe(t.drops) << "; AUX: " << core::describe(t.aux_drops) << "\n";
  out << "  outputs          " << t.output_runs[0] << " in memory, " << t.output_runs[1] << " serial write(), "
      << t.output_runs[2] << " AIO\n";
  out << "  files            " << with_commas(t.files) << " perf.data files, " << with_commas(t.file_bytes)
      << " bytes; " << with_commas(t.writes_completed) << " chunk writes completed\n";
  out << "  disk faults      " << with_commas(t.disk.short_writes) << " short writes, "
      << with_commas(t.disk.eagain_single) << " EAGAIN, " << with_commas(t.disk.eagain_burst) << " EAGAIN in bursts, "
      << with_commas(t.disk.eagain_queue_full) << " queue full, " << with_commas(t.disk.eintr_writes)
      << " EINTR writes, " << with_commas(t.disk.eintr_suspends) << " EINTR waits, " << with_commas(t.disk.stalls)
      << " stalls, " << t.disk.eio << " EIO, " << t.disk.enospc << " ENOSPC, " << t.disk.open_failures
      << " open failures\n";
  out << "  writer           " << with_commas(t.short_restarted) << " short writes restarted, "
      << with_commas(t.eagain_retries) << " EAGAIN retries, " << with_commas(t.sync_fallbacks)
      << " synchronous fallbacks, " << with_commas(t.eintr_retries) << " EINTR retries; " << t.hard_error_runs
      << " runs ended by a hard error (" << with_commas(t.records_lost_to_error) << " records cut off)\n";
  out << "  staging          " << t.staged_runs << " staged runs: " << with_commas(t.staged_chunks)
      << " chunks in " << with_commas(t.staged_writes) << " writes; full (backpressure) "
      << with_commas(t.staging_full) << " times in " << t.staging_full_runs << " runs; "
      << with_commas(t.staging_wrap_skips) << " wrap skips; " << with_commas(t.staging_dropped)
      << " staged records dropped after an output error\n";
  out << "  AUX              " << t.aux_runs << " runs with AUX areas (" << t.aux_snapshot_runs
      << " in snapshot mode): " << with_commas(t.aux_written) << " bytes written, " << with_commas(t.aux_delivered)
      << " delivered, " << with_commas(t.aux_overwritten) << " overwritten before a snapshot, "
      << with_commas(t.aux_truncated) << " truncated\n";
  out << "  data-loss metric " << std::fixed << std::setprecision(2)
      << (t.elapsed_ns ? 100.0 * static_cast<double>(t.lost_time_ns) / static_cast<double>(t.elapsed_ns) : 0.0)
      << "% (lost time / elapsed, all runs), " << t.runs_with_loss << " runs lost records\n";
  out << "  scheduling       " << with_commas(t.switches) << " fiber switches, " << with_commas(t.decisions)
      << " decisions; " << with_commas(t.schedule_points) << " scheduling points (picks among two or more ready "
      << "fibers), up to " << with_commas(t.schedule_points_max) << " in a run of up to " << t.fibers_max << " fibers\n";
  if (options.pct.depth > 0) print_pct(out, options.pct, t);
  out << "  determinism      " << t.determinism_checked << " seeds run twice, " << t.determinism_passed
      << " identical\n";
  out << "  properties (passed/checked):\n";
  for (const auto& [name, count] : t.properties) {
    out << "    " << std::left << std::setw(21) << name << std::right << count.passed << "/" << count.checked << "\n";
  }
  out << "  probes (hits, runs that hit it):\n";
  for (std::size_t i = 0; i < kProbeCount; i++) {
    out << "    " << std::left << std::setw(28) << kProbeInfo[i].name << std::right << std::setw(12)
        << with_commas(t.probes.count(i)) << std::setw(7) << t.probe_runs[i] << "  " << kProbeInfo[i].text << "\n";
  }
  out << std::flush;
}

}  // namespace

RunConfig campaign_config(const CampaignOptions& options, std::uint64_t seed) {
  RunConfig config = random_config(seed);
  if (options.swarm) swarm_config(config);
  options.overrides.apply(config);
  config.seed = seed;
  return config;
}

namespace {

// The same seed again, without recording: the same trace and output.
// Prints a failure to `log`.
bool deterministic(const CampaignOptions& options, const RunConfig& config, const RunResult& result,
                   std::ostream& log) {
  DecisionSource decisions(config.seed, false, options.pct);
  const RunResult again = run_simulation(config, decisions);
  if (again.trace_hash == result.trace_hash && again.output_hash == result.output_hash &&
      again.decisions == result.decisions) {
    return true;
  }
  log << "FAIL seed=" << config.seed << " property=" << model::kDeterminism << ": the same seed gave trace hash "
      << std::hex << result.trace_hash << " then " << again.trace_hash << ", output hash " << result.output_hash
      << " then " << again.output_hash << std::dec << "\n  reproduce: " << reproduce_line(options, config) << "\n";
  return false;
}

// What one seed gave: everything the merge adds to the totals and prints.
struct SeedOutcome {
  RunResult result;  // without the bytes of the kernel's log and of the output
  int code = kExitOk;  // the exit code the seed asks for
  std::string report;  // FAIL lines, as printed
  std::optional<nlohmann::json> failure;
  bool determinism_checked = false;
  bool determinism_passed = false;
};

// One seed: run, report a failure (replay files, shrinking) or check
// determinism. A failed check on this thread, or on the run's own, reports
// this seed (crash_hook).
SeedOutcome run_seed(const CampaignOptions& options, std::uint64_t seed, bool check_determinism) {
  SeedOutcome o;
  const RunConfig config = campaign_config(options, seed);
  DecisionSource decisions(seed, true, options.pct);
  CrashContext crash{&options, &config, &decisions};
  core::set_verify_context(&crash);
  o.result = run_simulation(config, decisions);
  crash.decisions = nullptr;  // what follows runs other simulations of the seed
  std::ostringstream report;
  if (!o.result.ok()) {
    o.failure = report_failure(options, o.result, decisions.recorded(), report);
    bool safety = false;
    for (const model::Violation& v : o.result.violations) safety |= model::is_safety(v.property);
    o.code = safety ? kExitCorrectness : kExitLiveness;
  } else if (check_determinism) {
    o.determinism_checked = true;
    o.determinism_passed = deterministic(options, config, o.result, report);
    if (!o.determinism_passed) o.code = kExitCorrectness;
  }
  core::set_verify_context(nullptr);
  o.report = report.str();
  for (model::CpuLog& cpu : o.result.log.cpus) {
    cpu.bytes = {};
    cpu.written = {};
  }
  o.result.output = {};
  return o;
}

// Runs the seeds of one shard on `jobs` threads, one simulation per thread
// (each run has a thread of its own besides: sim/scheduler.h), and hands
// their outcomes back in seed order, so the merged summary is the same
// whatever the number of threads. At most kAheadPerJob x jobs outcomes
// wait for the merge.
class SeedPool {
 public:
  static constexpr std::uint64_t kAheadPerJob = 4;

  SeedPool(const CampaignOptions& options, std::uint64_t planned)
      : options_(options), planned_(planned), window_(kAheadPerJob * options.jobs) {
    for (std::uint32_t j = 0; j < options.jobs; j++) threads_.emplace_back([this] { work(); });
  }
  SeedPool(const SeedPool&) = delete;
  SeedPool& operator=(const SeedPool&) = delete;
  // Stops handing out seeds; waits for the runs in progress.
  ~SeedPool() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  std::uint64_t seed_of(std::uint64_t k) const {
    return options_.first_seed + options_.shard_index + k * options_.shard_count;
  }

  // The outcome of the k-th seed of the shard; k = 0, 1, ... in order.
  SeedOutcome take(std::uint64_t k) {
    std::unique_lock<std::mutex> lock(mutex_);
    VERIFY(k == taken_ && k < planned_);
    changed_.wait(lock, [&] { return done_.count(k) > 0; });
    SeedOutcome o = std::move(done_.at(k));
    done_.erase(k);
    taken_ = k + 1;
    lock.unlock();
    changed_.notify_all();
    return o;
  }

 private:
  void work() {
    for (std::uint64_t round = 0; round < planned_; round++) {
      std::uint64_t k = 0;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return stopping_ || next_ >= planned_ || next_ < taken_ + window_; });
        if (stopping_ || next_ >= planned_) return;
        k = next_++;
      }
      // Every Nth seed of the campaign, whichever shard runs it.
      const bool check =
          options_.determinism_every > 0 && (seed_of(k) - options_.first_seed) % options_.determinism_every == 0;
      SeedOutcome o = run_seed(options_, seed_of(k), check);
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        done_.emplace(k, std::move(o));
      }
      changed_.notify_all();
    }
  }

  const CampaignOptions& options_;
  const std::uint64_t planned_;
  const std::uint64_t window_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::uint64_t next_ = 0;   // the next seed to start
  std::uint64_t taken_ = 0;  // seeds merged
  bool stopping_ = false;
  std::map<std::uint64_t, SeedOutcome> done_;
  std::vector<std::thread> threads_;
};

// Adds one seed's outcome to the totals, prints its report.
void merge(SeedOutcome& o, Totals& totals, int& exit_code, Progress& progress, std::ostream& log) {
  add_run(totals, o.result);
  if (o.determinism_checked) {
    totals.determinism_checked++;
    if (o.determinism_passed) {
      totals.determinism_passed++;
    } else {
      totals.failed++;
    }
  }
  if (!o.report.empty()) {
    progress.finish();
    log << o.report << std::flush;
  }
  if (o.failure) totals.failures.push_back(std::move(*o.failure));
  if (o.code == kExitCorrectness || (o.code == kExitLiveness && exit_code == kExitOk)) exit_code = o.code;
}

// The summary, printed and (with --json) written. Returns kExitIo if the
// JSON file cannot be written.
int write_summary(const CampaignOptions& options, Totals& totals, double wall_s, bool budget_hit,
                  std::uint64_t planned, std::ostream& out, std::ostream& log) {
  if (totals.determinism_checked > 0) {
    PropertyCount& count = totals.properties[model::kDeterminism];
    count.checked = totals.determinism_checked;
    count.passed = totals.determinism_passed;
  }
  print_summary(out, options, totals, wall_s, budget_hit, planned);
  if (options.json_path.empty()) return kExitOk;
  std::ofstream json(options.json_path);
  json << summary_json(options, totals, wall_s, budget_hit, planned).dump(2) << "\n";
  json.close();
  if (json) return kExitOk;
  log << "campaign: cannot write " << options.json_path << "\n";
  return kExitIo;
}

}  // namespace

int run_campaign(const CampaignOptions& options, std::ostream& out, std::ostream& log) {
  VERIFY(options.shard_count >= 1);
  VERIFY(options.shard_index < options.shard_count);
  VERIFY(options.jobs >= 1);
  Totals totals;
  const Clock::time_point start = Clock::now();
  std::uint64_t planned = 0;
  for (std::uint64_t i = options.shard_index; i < options.runs; i += options.shard_count) planned++;
  Progress progress(log, options.progress, planned);
  bool budget_hit = false;
  int exit_code = kExitOk;
  const core::VerifyHook previous_hook = core::set_verify_hook(crash_hook);
  std::uint64_t done = 0;
  {
    SeedPool pool(options, planned);
    for (; done < planned; done++) {
      const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      if (options.budget_s > 0 && elapsed >= options.budget_s) {
        budget_hit = true;
        break;
      }
      if (totals.failed >= options.failures_max) break;
      SeedOutcome o = pool.take(done);
      merge(o, totals, exit_code, progress, log);
      progress.update(done + 1, totals.failed, pool.seed_of(done));
    }
  }
  core::set_verify_hook(previous_hook);
  progress.update(done, totals.failed, options.first_seed + options.runs, true);
  progress.finish();
  const double wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  const int written = write_summary(options, totals, wall_s, budget_hit, planned, out, log);
  if (written != kExitOk && exit_code == kExitOk) exit_code = written;
  return exit_code;
}

namespace {

// One shard's summary file, read for a merge.
struct ShardFile {
  std::string path;
  nlohmann::json j;
  std::uint64_t index = 0, count = 0;
};

// "" or the problem with `path`'s summary (one line).
std::string read_shard(const std::string& path, ShardFile& shard) {
  std::ifstream in(path);
  if (!in) return path + ": cannot be read";
  shard.path = path;
  shard.j = nlohmann::json::parse(in, nullptr, false);
  const nlohmann::json& j = shard.j;
  if (j.is_discarded() || !j.is_object()) return path + ": not JSON";
  if (!j.contains("format") || j["format"] != kSummaryFormat) return path + ": not a campaign summary (--json)";
  if (!j.contains("format_version") || j["format_version"] != kSummaryFormatVersion) {
    return path + ": a summary of another format version (this ringsim reads " +
           std::to_string(kSummaryFormatVersion) + ")";
  }
  for (const char* key : {"first_seed", "runs_requested", "runs_planned", "runs", "determinism_every"}) {
    if (!j.contains(key) || !j[key].is_number_unsigned()) return path + ": no " + key;
  }
  if (!j.contains("fixed") || !j["fixed"].is_string() || !j.contains("failures") || !j["failures"].is_array() ||
      !j.contains("wall_s") || !j["wall_s"].is_number() || !j.contains("shard") ||
      !j["shard"]["index"].is_number_unsigned() || !j["shard"]["count"].is_number_unsigned() ||
      !j.contains("stopped_by_budget") || !j["stopped_by_budget"].is_boolean() || !j.contains("totals")) {
    return path + ": a field is missing or of the wrong type";
  }
  shard.index = j["shard"]["index"].get<std::uint64_t>();
  shard.count = j["shard"]["count"].get<std::uint64_t>();
  if (shard.count == 0 || shard.index >= shard.count) return path + ": shard " + std::to_string(shard.index) + " of " + std::to_string(shard.count);
  return "";
}

// The shards must be one campaign's, each once, all there, each complete.
std::string check_shards(const std::vector<ShardFile>& shards) {
  const ShardFile& first = shards.front();
  const std::uint64_t count = first.count;
  std::vector<const ShardFile*> by_index(count, nullptr);
  for (const ShardFile& s : shards) {
    for (const char* key : {"first_seed", "runs_requested", "fixed", "determinism_every"}) {
      if (s.j[key] != first.j[key]) {
        return s.path + ": another campaign than " + first.path + " (" + key + " " + s.j[key].dump() + ", not " +
               first.j[key].dump() + ")";
      }
    }
    if (s.count != count) {
      return s.path + ": one of " + std::to_string(s.count) + " shards, " + first.path + " one of " +
             std::to_string(count);
    }
    if (by_index[s.index] != nullptr) {
      return "shard " + std::to_string(s.index) + " of " + std::to_string(count) + " given twice: " +
             by_index[s.index]->path + " and " + s.path + " (its seeds would count twice)";
    }
    by_index[s.index] = &s;
  }
  for (std::uint64_t i = 0; i < count; i++) {
    if (by_index[i] == nullptr) {
      return "shard " + std::to_string(i) + " of " + std::to_string(count) + " is missing (its seeds: first_seed + " +
             std::to_string(i) + " + k x " + std::to_string(count) + ")";
    }
  }
  const std::uint64_t runs = first.j["runs_requested"].get<std::uint64_t>();
  for (const ShardFile& s : shards) {
    std::uint64_t planned = 0;
    for (std::uint64_t i = s.index; i < runs; i += count) planned++;
    const std::uint64_t ran = s.j["runs"].get<std::uint64_t>();
    if (s.j["runs_planned"].get<std::uint64_t>() != planned || ran != planned) {
      const std::uint64_t from = first.j["first_seed"].get<std::uint64_t>() + s.index + ran * count;
      return s.path + ": shard " + std::to_string(s.index) + " of " + std::to_string(count) + " ran " +
             std::to_string(ran) + " of its " + std::to_string(planned) + " seeds (" +
             (s.j["stopped_by_budget"].get<bool>() ? "stopped by its budget" : "stopped after --max-failures") +
             "): its seeds from " + std::to_string(from) + " on were not run";
    }
  }
  return "";
}

}  // namespace

int merge_campaign_files(const std::vector<std::string>& files, const std::string& json_path, std::ostream& out,
                         std::ostream& log) {
  VERIFY(!files.empty());
  std::vector<ShardFile> shards(files.size());
  for (std::size_t i = 0; i < files.size(); i++) {
    if (const std::string e = read_shard(files[i], shards[i]); !e.empty()) {
      log << "campaign merge: error: " << e << "\n";
      return kExitBadInput;
    }
  }
  if (const std::string e = check_shards(shards); !e.empty()) {
    log << "campaign merge: error: " << e << "\n";
    return kExitBadInput;
  }
  Totals totals;
  double wall_s = 0;
  std::vector<nlohmann::json> failures;
  for (const ShardFile& s : shards) {
    if (const std::string e = add_totals_json(s.j["totals"], totals); !e.empty()) {
      log << "campaign merge: error: " << s.path << ": " << e << "\n";
      return kExitBadInput;
    }
    wall_s = std::max(wall_s, s.j["wall_s"].get<double>());
    for (const nlohmann::json& f : s.j["failures"]) {
      if (!f.contains("seed") || !f["seed"].is_number_unsigned() || !f.contains("property") ||
          !f["property"].is_string()) {
        log << "campaign merge: error: " << s.path << ": a failure without its seed or property\n";
        return kExitBadInput;
      }
      failures.push_back(f);
    }
  }
  CampaignOptions options;
  options.first_seed = shards.front().j["first_seed"].get<std::uint64_t>();
  options.runs = shards.front().j["runs_requested"].get<std::uint64_t>();
  options.determinism_every = shards.front().j["determinism_every"].get<std::uint64_t>();
  options.json_path = json_path;
  if (totals.runs != options.runs) {
    log << "campaign merge: error: the shards ran " << totals.runs << " runs, the campaign has " << options.runs << "\n";
    return kExitBadInput;
  }
  // In seed order, as one run reports them.
  std::stable_sort(failures.begin(), failures.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a["seed"].get<std::uint64_t>() < b["seed"].get<std::uint64_t>();
  });
  int exit_code = kExitOk;
  for (const nlohmann::json& f : failures) {
    log << "FAIL seed=" << f["seed"].get<std::uint64_t>() << " property=" << f["property"].get<std::string>() << ": "
        << f.value("detail", "") << "\n  reproduce: " << f.value("reproduce", "") << "\n";
    if (f.contains("replay")) log << "  replay: " << options.replay_command << " " << f.value("replay", "") << "\n";
    const int code = model::is_safety(f["property"].get<std::string>()) ? kExitCorrectness : kExitLiveness;
    if (code == kExitCorrectness || exit_code == kExitOk) exit_code = code;
  }
  if (totals.determinism_passed < totals.determinism_checked) exit_code = kExitCorrectness;
  totals.failures = std::move(failures);
  // The shards' own JSON reports carried it; recomputed from the totals.
  totals.properties.erase(model::kDeterminism);
  const std::string fixed = shards.front().j["fixed"].get<std::string>();
  options.merged_fixed = fixed;
  out << "ringsim campaign: seeds " << options.first_seed << ".." << options.first_seed + options.runs - 1
      << (fixed.empty() ? "" : ", fixed: " + fixed) << "\n";
  const int written = write_summary(options, totals, wall_s, false, options.runs, out, log);
  return written != kExitOk && exit_code == kExitOk ? written : exit_code;
}

}  // namespace ringsim::sim
