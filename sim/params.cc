#include "sim/params.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/perf_abi.h"
#include "core/verify.h"
#include "sim/decisions.h"

namespace ringsim::sim {
namespace {

constexpr std::uint64_t kMs = 1'000'000;
constexpr std::uint64_t kS = 1'000'000'000;
constexpr std::uint64_t kPageBytes = 4096;

#define RS_GET(f) [](const RunConfig& c) -> std::uint64_t { return static_cast<std::uint64_t>(c.f); }
#define RS_SET(f) [](RunConfig& c, std::uint64_t v) { c.f = static_cast<decltype(c.f)>(v); }
#define RS_FIELD(f) .get = RS_GET(f), .set = RS_SET(f)
// Shrink steps.
#define RS_TO_ZERO(f) [](RunConfig& c) { return c.f != 0 ? (c.f = 0, true) : false; }
#define RS_HALVE(f, low) [](RunConfig& c) { return c.f / 2 >= (low) ? (c.f /= 2, true) : false; }
#define RS_TO(f, value) \
  [](RunConfig& c) { return c.f != (value) ? (c.f = static_cast<decltype(c.f)>(value), true) : false; }

// Rows whose value goes straight into one setting.
#define RS_ROUTE(f, destination) [](const RunConfig& c, RunPlan& p) { destination = c.f; }

constexpr const char* kBudget = "a budget: a smaller one only makes liveness fail sooner";
constexpr const char* kSpeed =
    "the consumer's and the disk's speeds relative to the kernel are what most failures depend on; "
    "neither end of the range is simpler";

std::vector<Param> kernel_rows() {
  return {
      {.name = "seed", .help = "seed of the run's decisions and of its workload", .min = 0, .max = UINT64_MAX,
       RS_FIELD(seed),
       .fixed = "it is the run's identity: random_config(seed) draws everything else from it; props draw it from "
                "RapidCheck",
       .no_shrink = "the seed fixes the workload; a replay's tape replaces its decisions, and the shrinker "
                    "shrinks the tape",
       .route = [](const RunConfig& c, RunPlan& p) {
         p.seed = c.seed;
         p.kernel.payload_seed = c.seed;
       },
       .goes_to = "the run's decisions (DecisionSource) and the kernel's workload (KernelConfig::payload_seed)"},
      {.name = "cpus", .help = "simulated CPUs (one event and ring each)", .min = 1, .max = 8, RS_FIELD(cpus),
       .draw = [](DrawState& s, RunConfig& c) { c.cpus = static_cast<std::uint32_t>(s.d().between(1, 8)); },
       .shrink = {RS_TO(cpus, 1), [](RunConfig& c) { return c.cpus > 2 ? (c.cpus /= 2, true) : false; },
                  [](RunConfig& c) { return c.cpus > 1 ? (c.cpus -= 1, true) : false; }},
       .route = [](const RunConfig& c, RunPlan& p) {
         p.kernel.cpus = c.cpus;
         p.writer.mappings = c.cpus;
       },
       .goes_to = "KernelConfig::cpus, WriterOptions::mappings, the disk's slots"},
      {.name = "ring_pages", .help = "data area pages per ring (a power of two)", .min = 1, .max = 64,
       RS_FIELD(ring_pages),
       .draw = [](DrawState& s, RunConfig& c) { c.ring_pages = 1u << s.d().between(0, 6); },
       .shrink = {RS_HALVE(ring_pages, 1)},
       .route = [](const RunConfig& c, RunPlan& p) { p.kernel.ring_bytes = c.ring_bytes(); },
       .goes_to = "KernelConfig::ring_bytes, the writer's buffer size"},
      {.name = "mode", .help = "how the rings are mapped and written (writable or not, forward or backward)",
       .choices = {"normal", "backward", "forward_overwrite", "backward_writable"}, RS_FIELD(mode),
       .draw = [](DrawState& s, RunConfig& c) {
         const std::uint64_t m = s.d().draw(8);
         c.mode = m < 2    ? core::RingMode::backward
                  : m == 2 ? core::RingMode::forward_overwrite
                  : m == 3 ? core::RingMode::backward_writable
                           : core::RingMode::normal;
       },
       .no_shrink = "the mode decides which properties apply: a failure in one mode is another bug in the other",
       .route = RS_ROUTE(mode, p.kernel.mode),
       .goes_to = "KernelConfig::mode (the rings' mapping and direction), the record loop's mode"},
      {.name = "size_mix", .help = "record sizes", .choices = {"small", "mixed", "large", "huge"}, RS_FIELD(size_mix),
       .draw = [](DrawState& s, RunConfig& c) {
         const std::uint64_t mix = s.d().draw(10);
         c.size_mix = mix < 3 ? SizeMix::small : mix < 7 ? SizeMix::mixed : mix < 9 ? SizeMix::large : SizeMix::huge;
       },
       .shrink = {RS_TO(size_mix, SizeMix::small)},
       .route = RS_ROUTE(size_mix, p.kernel.size_mix),
       .goes_to = "KernelConfig::size_mix"},
  };
}

// The workload of each CPU: how many records, how they wake the reader,
// their gaps and bursts.
std::vector<Param> workload_rows() {
  return {
      {.name = "records_per_cpu", .help = "samples each CPU generates", .min = 1, .max = 1'000'000,
       RS_FIELD(records_per_cpu),
       .draw = [](DrawState& s, RunConfig& c) {
         const std::uint64_t base = s.d().between(20, 60);
         c.records_per_cpu = static_cast<std::uint32_t>(base << s.d().between(0, 6));
       },
       .shrink = {RS_HALVE(records_per_cpu, 1),
                  [](RunConfig& c) {
                    return c.records_per_cpu > 1 ? (c.records_per_cpu = c.records_per_cpu * 3 / 4, true) : false;
                  }},
       .route = RS_ROUTE(records_per_cpu, p.kernel.records_per_cpu),
       .goes_to = "KernelConfig::records_per_cpu"},
      {.name = "wakeup_events", .help = "wakeup every N samples (0: by bytes; a union with wakeup_watermark_bytes)", .min = 0, .max = 100'000,
       RS_FIELD(wakeup_events),
       .draw = [](DrawState& s, RunConfig& c) {
         c.wakeup_events = s.d().draw(3) == 0 ? static_cast<std::uint32_t>(s.d().between(1, 64)) : 0;
       },
       .shrink = {RS_TO_ZERO(wakeup_events)},
       .route = RS_ROUTE(wakeup_events, p.kernel.wakeup_events),
       .goes_to = "KernelConfig::wakeup_events"},
      {.name = "wakeup_watermark_bytes", .help = "wakeup watermark, bytes (sets attr.watermark; 0: half the ring)", .min = 0, .max = 64 * kPageBytes,
       RS_FIELD(wakeup_watermark_bytes),
       // A union with wakeup_events in perf_event_attr (attr.watermark).
       .draw = [](DrawState& s, RunConfig& c) {
         c.wakeup_watermark_bytes =
             c.wakeup_events == 0 && s.d().draw(2) == 0 ? 8 * s.d().between(1, c.ring_bytes() / 8) : 0;
       },
       .shrink = {RS_TO_ZERO(wakeup_watermark_bytes)},
       .route = RS_ROUTE(wakeup_watermark_bytes, p.kernel.wakeup_watermark_bytes),
       .goes_to = "KernelConfig::wakeup_watermark_bytes"},
      {.name = "gap_ns_max", .help = "largest gap between records, ns", .min = 0, .max = kS, RS_FIELD(gap_ns_max),
       .draw = [](DrawState& s, RunConfig& c) {
         const std::uint64_t base = s.d().between(0, 50);
         c.gap_ns_max = base << s.d().between(0, 10);
       },
       .shrink = {RS_HALVE(gap_ns_max, 1)},
       .route = RS_ROUTE(gap_ns_max, p.kernel.gap_ns_max),
       .goes_to = "KernelConfig::gap_ns_max"},
      {.name = "burst_per_million", .help = "chance per record that a burst starts", .min = 0, .max = 1'000'000,
       RS_FIELD(burst_per_million),
       .draw = [](DrawState& s, RunConfig& c) {
         c.burst_per_million = static_cast<std::uint32_t>(s.d().between(0, 50'000));
       },
       .shrink = {RS_TO_ZERO(burst_per_million)},
       .route = RS_ROUTE(burst_per_million, p.kernel.burst_per_million),
       .goes_to = "KernelConfig::burst_per_million"},
      {.name = "burst_records_max", .help = "largest burst, records", .min = 1, .max = 100'000,
       RS_FIELD(burst_records_max),
       .draw = [](DrawState& s, RunConfig& c) {
         c.burst_records_max = static_cast<std::uint32_t>(s.d().between(1, 256));
       },
       .shrink = {RS_TO(burst_records_max, 1)},
       .route = RS_ROUTE(burst_records_max, p.kernel.burst_records_max),
       .goes_to = "KernelConfig::burst_records_max"},

  };
}

// The events sharing each ring, whom they follow, and the interruptions
// of their writers.
std::vector<Param> event_rows() {
  return {
      {.name = "events_per_cpu", .help = "sampling events per CPU, sharing its ring (SET_OUTPUT)", .min = 1, .max = 3,
       RS_FIELD(events_per_cpu),
       .draw = [](DrawState& s, RunConfig& c) {
         c.events_per_cpu = s.d().draw(3) == 0 ? static_cast<std::uint32_t>(s.d().between(2, 3)) : 1;
       },
       .shrink = {RS_TO(events_per_cpu, 1)},
       .route = RS_ROUTE(events_per_cpu, p.kernel.events_per_cpu),
       .goes_to = "KernelConfig::events_per_cpu"},
      {.name = "sideband",
       .help = "1: a dummy event writes COMM, MMAP2, FORK, SWITCH, THROTTLE and EXIT records; 2: and another "
               "session's build-id event leaves the build-id misc bit on its MMAP2 (fidelity row 20)",
       .min = 0, .max = 2, RS_FIELD(sideband),
       .draw = [](DrawState& s, RunConfig& c) { c.sideband = s.d().draw(3) == 0 ? 1 + s.d().draw(2) : 0; },
       .shrink = {RS_TO_ZERO(sideband), [](RunConfig& c) { return c.sideband == 2 ? (c.sideband = 1, true) : false; }},
       .route =
           [](const RunConfig& c, RunPlan& p) {
             p.kernel.sideband = c.sideband != 0;
             p.kernel.foreign_build_id_misc = c.sideband == 2;
           },
       .goes_to = "KernelConfig::sideband, KernelConfig::foreign_build_id_misc"},
      {.name = "scope", .help = "whom the events follow: a task (POLLHUP at its exit) or the whole system (never)",
       .choices = {"task", "system_wide"}, RS_FIELD(scope),
       .draw = [](DrawState& s, RunConfig& c) { c.scope = s.d().draw(5) == 0 ? Scope::system_wide : Scope::task; },
       .shrink = {RS_TO(scope, Scope::task)},
       .route = [](const RunConfig& c, RunPlan& p) { p.kernel.per_task = c.scope == Scope::task; },
       .goes_to = "KernelConfig::per_task"},
      {.name = "endless", .help = "1: producers keep producing until a stop request", .min = 0, .max = 1,
       RS_FIELD(endless),
       .draw = [](DrawState& s, RunConfig& c) { c.endless = s.d().draw(6) == 0 ? 1 : 0; },
       .shrink = {RS_TO_ZERO(endless)},
       .route = [](const RunConfig& c, RunPlan& p) { p.kernel.endless = c.endless != 0; },
       .goes_to = "KernelConfig::endless"},
      {.name = "nest_per_million", .help = "chance a writer is interrupted by another writer on its ring", .min = 0,
       .max = 1'000'000, RS_FIELD(nest_per_million),
       .draw = [](DrawState& s, RunConfig& c) {
         c.nest_per_million = s.d().draw(2) == 0 ? static_cast<std::uint32_t>(s.d().between(0, 30'000)) : 0;
       },
       .shrink = {RS_TO_ZERO(nest_per_million)},
       .route = RS_ROUTE(nest_per_million, p.kernel.nest_per_million),
       .goes_to = "KernelConfig::nest_per_million"},
      {.name = "late_write_per_million", .help = "chance a writer is held between its checks and its copy", .min = 0,
       .max = 1'000'000, RS_FIELD(late_write_per_million),
       .draw = [](DrawState& s, RunConfig& c) {
         c.late_write_per_million = s.d().draw(2) == 0 ? static_cast<std::uint32_t>(s.d().between(0, 50'000)) : 0;
       },
       .shrink = {RS_TO_ZERO(late_write_per_million)},
       .route = RS_ROUTE(late_write_per_million, p.kernel.late_write_per_million),
       .goes_to = "KernelConfig::late_write_per_million"},  };
}

std::vector<Param> consumer_rows() {
  return {
      {.name = "poll_timeout_ns", .help = "poll timeout, ns", .min = 1'000, .max = 10 * kS, RS_FIELD(poll_timeout_ns),
       .draw = [](DrawState& s, RunConfig& c) { c.poll_timeout_ns = s.d().between(1, 100) * kMs; },
       .no_shrink = kSpeed,
       .route = RS_ROUTE(poll_timeout_ns, p.loop.poll_timeout_ns),
       .goes_to = "LoopOptions::poll_timeout_ns"},
      {.name = "syscall_ns", .help = "virtual cost of a system call, ns", .min = 0, .max = kMs, RS_FIELD(syscall_ns),
       .draw = [](DrawState& s, RunConfig& c) { c.syscall_ns = s.d().between(200, 5'000); },
       .no_shrink = kSpeed,
       .route = RS_ROUTE(syscall_ns, p.session.syscall_ns),
       .goes_to = "SessionConfig::syscall_ns"},
      {.name = "copy_ns_per_kib", .help = "virtual cost of copying 1 KiB, ns", .min = 0, .max = kMs,
       RS_FIELD(copy_ns_per_kib),
       .draw = [](DrawState& s, RunConfig& c) { c.copy_ns_per_kib = s.d().between(20, 2'000); },
       .no_shrink = kSpeed,
       .route = RS_ROUTE(copy_ns_per_kib, p.session.copy_ns_per_kib),
       .goes_to = "SessionConfig::copy_ns_per_kib"},
  };
}

// Requests, fault rates and budgets around the consumer.
std::vector<Param> request_rows() {
  return {
      {.name = "snapshot_interval_ns",
       .help = "snapshot every ns (0: at hangup and stop only; needs a read-only mode or aux_overwrite=1)",
       .min = 0, .max = 10 * kS, RS_FIELD(snapshot_interval_ns),
       .draw = [](DrawState& s, RunConfig& c) {
         c.snapshot_interval_ns =
             !core::writable(c.mode) && s.d().draw(4) != 0 ? s.d().between(10'000, kMs) : 0;
       },
       // Runs with a snapshot-mode AUX area get a second chance.
       .draw_after = [](DrawState& s, RunConfig& c) {
         if (c.aux_overwrite && c.snapshot_interval_ns == 0 && s.d().draw(4) != 0) {
           c.snapshot_interval_ns = s.d().between(10'000, kMs);
         }
       },
       .shrink = {RS_TO_ZERO(snapshot_interval_ns)},
       .route = RS_ROUTE(snapshot_interval_ns, p.snapshot_interval_ns),
       .goes_to = "the run's snapshot fiber"},
      {.name = "stop_at_ns", .help = "stop request at this virtual time (0: none)", .min = 0, .max = 3600 * kS,
       RS_FIELD(stop_at_ns),
       .draw = [](DrawState& s, RunConfig& c) {
         // System-wide and endless events end only on a stop request.
         const bool needed = c.scope == Scope::system_wide || c.endless != 0;
         c.stop_at_ns = needed || s.d().draw(10) == 0 ? s.d().between(1'000, 2 * kMs) : 0;
       },
       .shrink = {RS_TO_ZERO(stop_at_ns)},  // refused by validate() where a stop is needed
       .route = RS_ROUTE(stop_at_ns, p.stop_at_ns),
       .goes_to = "the run's stopper fiber"},
      {.name = "drain_chunks_max", .help = "chunks read per ring per round", .min = 1, .max = 64,
       RS_FIELD(drain_chunks_max),
       .draw = [](DrawState& s, RunConfig& c) {
         c.drain_chunks_max = static_cast<std::uint32_t>(s.d().between(1, 4));
       },
       .shrink = {RS_TO(drain_chunks_max, 1)},
       .route = RS_ROUTE(drain_chunks_max, p.loop.drain_chunks_max),
       .goes_to = "LoopOptions::drain_chunks_max"},
  };
}

// Scheduling, fault rates of the consumer's system calls, budgets.
std::vector<Param> scheduling_rows() {
  return {
      {.name = "yield_per_million", .help = "chance a backend call yields", .min = 0, .max = 1'000'000,
       RS_FIELD(yield_per_million),
       .draw = [](DrawState& s, RunConfig& c) {
         c.yield_per_million = static_cast<std::uint32_t>(s.d().between(0, 300'000));
       },
       .shrink = {RS_TO_ZERO(yield_per_million)},
       .route = RS_ROUTE(yield_per_million, p.limits.yield_per_million),
       .goes_to = "SchedulerLimits::yield_per_million"},
      {.name = "poll_eintr_per_million", .help = "chance poll fails with EINTR", .min = 0, .max = 1'000'000,
       RS_FIELD(poll_eintr_per_million),
       .draw = [](DrawState& s, RunConfig& c) {
         c.poll_eintr_per_million = static_cast<std::uint32_t>(s.d().between(0, 50'000));
       },
       .shrink = {RS_TO_ZERO(poll_eintr_per_million)},
       .route = RS_ROUTE(poll_eintr_per_million, p.session.poll_eintr_per_million),
       .goes_to = "SessionConfig::poll_eintr_per_million"},
      {.name = "copy_interrupt_per_million", .help = "chance the kernel runs inside a copy", .min = 0,
       .max = 1'000'000, RS_FIELD(copy_interrupt_per_million),
       .draw = [](DrawState& s, RunConfig& c) {
         c.copy_interrupt_per_million = static_cast<std::uint32_t>(s.d().between(0, 200'000));
       },
       .shrink = {RS_TO_ZERO(copy_interrupt_per_million)},
       .route = RS_ROUTE(copy_interrupt_per_million, p.session.copy_interrupt_per_million),
       .goes_to = "SessionConfig::copy_interrupt_per_million"},
      {.name = "quiet_budget_ns", .help = "quiet phase budget, virtual ns", .min = kMs, .max = 3600 * kS,
       RS_FIELD(quiet_budget_ns),
       .draw = [](DrawState&, RunConfig& c) { c.quiet_budget_ns = 10 * kS; },
       .fixed = "10 s of virtual time in every run: far more than a correct consumer needs",
       .no_shrink = kBudget,
       .route = RS_ROUTE(quiet_budget_ns, p.quiet_budget_ns),
       .goes_to = "the run's watchdog"},
      {.name = "switches_max", .help = "fiber switch budget", .min = 1'000, .max = 1'000'000'000,
       RS_FIELD(switches_max),
       .draw = [](DrawState&, RunConfig& c) { c.switches_max = 2'000'000; },
       .fixed = "2,000,000 switches in every run: a budget, not a parameter of the workload",
       .no_shrink = kBudget,
       .route = RS_ROUTE(switches_max, p.limits.switches_max),
       .goes_to = "SchedulerLimits::switches_max"},
  };
}

// The writer and the simulated disk.
std::vector<Param> output_rows() {
  return {
      {.name = "output", .help = "where the record loop writes", .choices = {"memory", "serial", "aio"},
       RS_FIELD(output),
       .draw = [](DrawState& s, RunConfig& c) {
         const std::uint64_t output = s.d().draw(3);
         c.output = output == 0 ? Output::memory : output == 1 ? Output::serial : Output::aio;
       },
       .shrink = {[](RunConfig& c) { return c.output != Output::memory ? (set_output(c, Output::memory), true) : false; },
                  RS_TO(output, Output::serial)},
       .route = [](const RunConfig& c, RunPlan& p) {
         p.output = c.output;
         p.writer.mode = c.output == Output::serial ? core::WriteMode::serial : core::WriteMode::aio;
       },
       .goes_to = "the consumer (in memory, or the trace writer), WriterOptions::mode"},
      {.name = "cblocks", .help = "control blocks per ring (output=aio)", .min = 1, .max = 4, RS_FIELD(cblocks),
       .draw = [](DrawState& s, RunConfig& c) { c.cblocks = static_cast<std::uint32_t>(s.d().between(1, 4)); },
       .shrink = {RS_TO(cblocks, 1)},
       .route = RS_ROUTE(cblocks, p.writer.cblocks),
       .goes_to = "WriterOptions::cblocks, the disk's slots"},
      {.name = "eagain_attempts_max",
       .help = "writer: submits refused with EAGAIN before it writes the chunk synchronously (output=aio)", .min = 1,
       .max = 64, RS_FIELD(eagain_attempts_max),
       .draw = [](DrawState& s, RunConfig& c) {
         // The default backs off for about 70 ms in all, longer than most
         // runs' fault phase: one run in four gives up after a few tries.
         c.eagain_attempts_max = s.d().draw(4) == 0 ? static_cast<std::uint32_t>(s.d().between(1, 4)) : 16;
       },
       .shrink = {RS_TO(eagain_attempts_max, 1)},
       .route = RS_ROUTE(eagain_attempts_max, p.writer.eagain_attempts_max),
       .goes_to = "WriterOptions::eagain_attempts_max"},
      {.name = "rotate_bytes", .help = "switch output files after this many data bytes (0: never)", .min = 0,
       .max = std::uint64_t{1} << 40, RS_FIELD(rotate_bytes),
       .draw = [](DrawState& s, RunConfig& c) {
         const std::uint64_t v = s.d().draw(6) == 0 ? kPageBytes * s.d().between(1, 256) : 0;
         c.rotate_bytes = c.output == Output::memory ? 0 : v;
       },
       .shrink = {RS_TO_ZERO(rotate_bytes)},
       .route = RS_ROUTE(rotate_bytes, p.writer.rotate_bytes),
       .goes_to = "WriterOptions::rotate_bytes"},
      {.name = "disk_queue_depth", .help = "disk: writes in flight at most", .min = 1, .max = 64,
       RS_FIELD(disk_queue_depth),
       .draw = [](DrawState& s, RunConfig& c) {
         c.disk_queue_depth = static_cast<std::uint32_t>(s.d().between(1, 16));
       },
       .no_shrink = kSpeed,
       .route = RS_ROUTE(disk_queue_depth, p.disk.queue_depth),
       .goes_to = "DiskConfig::queue_depth"},
      {.name = "disk_latency_ns_min", .help = "disk: least write latency, ns", .min = 0, .max = kS,
       RS_FIELD(disk_latency_ns_min),
       .draw = [](DrawState& s, RunConfig& c) { c.disk_latency_ns_min = s.d().between(0, 50'000); },
       .shrink = {RS_TO_ZERO(disk_latency_ns_min)},
       .route = RS_ROUTE(disk_latency_ns_min, p.disk.latency_ns_min),
       .goes_to = "DiskConfig::latency_ns_min"},
      {.name = "disk_latency_ns_max", .help = "disk: largest write latency, ns", .min = 0, .max = kS,
       RS_FIELD(disk_latency_ns_max),
       .draw = [](DrawState& s, RunConfig& c) {
         c.disk_latency_ns_max = c.disk_latency_ns_min + s.d().between(0, 500'000);
       },
       .shrink = {[](RunConfig& c) {
         return c.disk_latency_ns_max != c.disk_latency_ns_min ? (c.disk_latency_ns_max = c.disk_latency_ns_min, true)
                                                               : false;
       }},
       .route = RS_ROUTE(disk_latency_ns_max, p.disk.latency_ns_max),
       .goes_to = "DiskConfig::latency_ns_max"},
      {.name = "disk_ns_per_kib", .help = "disk: ns per KiB written", .min = 0, .max = kMs, RS_FIELD(disk_ns_per_kib),
       .draw = [](DrawState& s, RunConfig& c) { c.disk_ns_per_kib = s.d().between(0, 5'000); },
       .no_shrink = kSpeed,
       .route = RS_ROUTE(disk_ns_per_kib, p.disk.ns_per_kib),
       .goes_to = "DiskConfig::ns_per_kib"},
  };
}

std::vector<Param> disk_fault_rows() {
  return {
      {.name = "disk_stall_per_million", .help = "disk: chance a write stalls", .min = 0, .max = 1'000'000,
       RS_FIELD(disk_stall_per_million),
       .draw = [](DrawState& s, RunConfig& c) {
         c.disk_stall_per_million = s.faulty() ? static_cast<std::uint32_t>(s.d().between(0, 20'000)) : 0;
       },
       .shrink = {RS_TO_ZERO(disk_stall_per_million)},
       .route = RS_ROUTE(disk_stall_per_million, p.disk.stall_per_million),
       .goes_to = "DiskConfig::stall_per_million"},
      {.name = "disk_stall_ns", .help = "disk: length of a stall, ns", .min = 0, .max = 10 * kS, RS_FIELD(disk_stall_ns),
       .draw = [](DrawState& s, RunConfig& c) { c.disk_stall_ns = s.d().between(100'000, 10 * kMs); },
       .shrink = {RS_HALVE(disk_stall_ns, 1)},
       .route = RS_ROUTE(disk_stall_ns, p.disk.stall_ns),
       .goes_to = "DiskConfig::stall_ns"},
      {.name = "disk_short_per_million", .help = "disk: chance a write is short", .min = 0, .max = 1'000'000,
       RS_FIELD(disk_short_per_million),
       .draw = [](DrawState& s, RunConfig& c) {
         c.disk_short_per_million = s.faulty() ? static_cast<std::uint32_t>(s.d().between(0, 200'000)) : 0;
       },
       .shrink = {RS_TO_ZERO(disk_short_per_million)},
       .route = RS_ROUTE(disk_short_per_million, p.disk.short_per_million),
       .goes_to = "DiskConfig::short_per_million"},
      {.name = "disk_short_any_byte",
       .help = "disk: 1 lets a short write end at any byte (POSIX), 0 at a page boundary of the file (Linux)",
       .min = 0, .max = 1, RS_FIELD(disk_short_any_byte),
       .fixed = "never drawn: the campaign's disk is Linux's page cache, where a write inside one page is never "
                "short (generic_perform_write); 1 asks for POSIX's any-byte bound (FUSE, pipes), under which no "
                "writer can repair a header cut inside a field",
       .shrink = {RS_TO_ZERO(disk_short_any_byte)},
       .route = [](const RunConfig& c, RunPlan& p) { p.disk.short_any_byte = c.disk_short_any_byte != 0; },
       .goes_to = "DiskConfig::short_any_byte"},
      {.name = "disk_eagain_per_million", .help = "disk: chance a submit gets EAGAIN", .min = 0, .max = 1'000'000,
       RS_FIELD(disk_eagain_per_million),
       .draw = [](DrawState& s, RunConfig& c) {
         c.disk_eagain_per_million = s.faulty() ? static_cast<std::uint32_t>(s.d().between(0, 200'000)) : 0;
       },
       .shrink = {RS_TO_ZERO(disk_eagain_per_million)},
       .route = RS_ROUTE(disk_eagain_per_million, p.disk.eagain_per_million),
       .goes_to = "DiskConfig::eagain_per_million"},
      {.name = "disk_eagain_burst_per_million", .help = "disk: chance a burst of EAGAIN starts", .min = 0,
       .max = 1'000'000, RS_FIELD(disk_eagain_burst_per_million),
       .draw = [](DrawState& s, RunConfig& c) {
         c.disk_eagain_burst_per_million = s.faulty() ? static_cast<std::uint32_t>(s.d().between(0, 20'000)) : 0;
       },
       .shrink = {RS_TO_ZERO(disk_eagain_burst_per_million)},
       .route = RS_ROUTE(disk_eagain_burst_per_million, p.disk.eagain_burst_per_million),
       .goes_to = "DiskConfig::eagain_burst_per_million"},
      {.name = "disk_eagain_burst_ns", .help = "disk: length of an EAGAIN burst, ns", .min = 0, .max = kS,
       RS_FIELD(disk_eagain_burst_ns),
       .draw = [](DrawState& s, RunConfig& c) {
         c.disk_eagain_burst_ns = s.d().draw(10) == 0 ? s.d().between(50 * kMs, 300 * kMs) : s.d().between(10'000, 2 * kMs);
       },
       .shrink = {RS_HALVE(disk_eagain_burst_ns, 1)},
       .route = RS_ROUTE(disk_eagain_burst_ns, p.disk.eagain_burst_ns),
       .goes_to = "DiskConfig::eagain_burst_ns"},
  };
}

// Interruptions and hard errors.
std::vector<Param> disk_error_rows() {
  return {
      {.name = "disk_eintr_per_million", .help = "disk: chance a write completes with EINTR", .min = 0,
       .max = 1'000'000, RS_FIELD(disk_eintr_per_million),
       .draw = [](DrawState& s, RunConfig& c) {
         c.disk_eintr_per_million = s.faulty() ? static_cast<std::uint32_t>(s.d().between(0, 100'000)) : 0;
       },
       .shrink = {RS_TO_ZERO(disk_eintr_per_million)},
       .route = RS_ROUTE(disk_eintr_per_million, p.disk.eintr_per_million),
       .goes_to = "DiskConfig::eintr_per_million"},
      {.name = "disk_suspend_eintr_per_million", .help = "disk: chance a wait or pwrite gets EINTR", .min = 0,
       .max = 1'000'000, RS_FIELD(disk_suspend_eintr_per_million),
       .draw = [](DrawState& s, RunConfig& c) {
         c.disk_suspend_eintr_per_million = s.faulty() ? static_cast<std::uint32_t>(s.d().between(0, 100'000)) : 0;
       },
       .shrink = {RS_TO_ZERO(disk_suspend_eintr_per_million)},
       .route = RS_ROUTE(disk_suspend_eintr_per_million, p.disk.suspend_eintr_per_million),
       .goes_to = "DiskConfig::suspend_eintr_per_million"},
      // Hard errors end the recording: on a few runs only.
      {.name = "disk_eio_per_million", .help = "disk: chance a write fails with EIO", .min = 0, .max = 1'000'000,
       RS_FIELD(disk_eio_per_million),
       .draw = [](DrawState& s, RunConfig& c) {
         c.disk_eio_per_million = s.d().draw(20) == 0 ? static_cast<std::uint32_t>(s.d().between(10'000, 200'000)) : 0;
       },
       .shrink = {RS_TO_ZERO(disk_eio_per_million)},
       .route = RS_ROUTE(disk_eio_per_million, p.disk.eio_per_million),
       .goes_to = "DiskConfig::eio_per_million"},
      {.name = "disk_capacity_bytes", .help = "disk: ENOSPC past this file size (0: unlimited)", .min = 0,
       .max = std::uint64_t{1} << 40, RS_FIELD(disk_capacity_bytes),
       .draw = [](DrawState& s, RunConfig& c) {
         const std::uint64_t v = s.d().draw(20) == 0 ? kPageBytes * s.d().between(1, 128) : 0;
         c.disk_capacity_bytes = c.output == Output::memory ? 0 : v;
       },
       .shrink = {RS_TO_ZERO(disk_capacity_bytes)},
       .route = RS_ROUTE(disk_capacity_bytes, p.disk.capacity_bytes),
       .goes_to = "DiskConfig::capacity_bytes"},
      {.name = "disk_open_fails", .help = "disk: 1 makes creating the output fail (EACCES)", .min = 0, .max = 1,
       RS_FIELD(disk_open_fails),
       .draw = [](DrawState& s, RunConfig& c) {
         const std::uint32_t v = s.d().draw(100) == 0 ? 1 : 0;
         c.disk_open_fails = c.output == Output::memory ? 0 : v;
       },
       .shrink = {RS_TO_ZERO(disk_open_fails)},
       .route = [](const RunConfig& c, RunPlan& p) { p.disk.open_fails = c.disk_open_fails != 0; },
       .goes_to = "DiskConfig::open_fails"},
  };
}

// AUX areas, one per CPU, on a third of the runs (DrawState::aux()).
std::vector<Param> aux_rows() {
  return {
      {.name = "aux_pages", .help = "AUX area pages per CPU (0: none; a power of two)", .min = 0, .max = 256,
       RS_FIELD(aux_pages),
       .draw = [](DrawState& s, RunConfig& c) {
         c.aux_pages = s.aux() ? 1u << s.d().between(0, 4) : 0;
         if (s.staged_aux(c)) c.aux_pages = std::max(c.aux_pages, c.ring_pages);
       },
       .shrink = {[](RunConfig& c) { return c.aux_pages != 0 ? (clear_aux(c), true) : false; },
                  RS_HALVE(aux_pages, 1)},
       .route = [](const RunConfig& c, RunPlan& p) { p.kernel.aux.size_bytes = c.aux_bytes(); },
       .goes_to = "AuxConfig::size_bytes, the writer's buffer size"},
      {.name = "aux_overwrite", .help = "1: AUX snapshot (overwrite) mode", .min = 0, .max = 1, RS_FIELD(aux_overwrite),
       .draw = [](DrawState& s, RunConfig& c) {
         c.aux_overwrite = s.aux() && (s.staged_aux(c) || s.d().draw(3) == 0) ? 1 : 0;
       },
       .shrink = {[](RunConfig& c) {
         if (c.aux_overwrite == 0) return false;
         c.aux_overwrite = 0;
         c.aux_offset_heads = 0;
         return true;
       }},
       .route = [](const RunConfig& c, RunPlan& p) { p.kernel.aux.overwrite = c.aux_overwrite != 0; },
       .goes_to = "AuxConfig::overwrite"},
      {.name = "aux_watermark_bytes", .help = "AUX watermark (0: the kernel's default)", .min = 0,
       .max = 256 * kPageBytes, RS_FIELD(aux_watermark_bytes),
       .draw = [](DrawState& s, RunConfig& c) {
         if (s.aux()) c.aux_watermark_bytes = s.d().draw(2) == 0 ? 0 : 8 * s.d().between(1, c.aux_bytes() / 8);
       },
       .shrink = {RS_TO_ZERO(aux_watermark_bytes)},
       .route = RS_ROUTE(aux_watermark_bytes, p.kernel.aux.watermark_bytes),
       .goes_to = "AuxConfig::watermark_bytes"},
      {.name = "aux_offset_heads", .help = "1: in overwrite mode, aux_head is an offset inside the area (Intel PT)",
       .min = 0, .max = 1, RS_FIELD(aux_offset_heads),
       .draw = [](DrawState& s, RunConfig& c) {
         c.aux_offset_heads = s.aux() && c.aux_overwrite != 0 && s.d().draw(2) == 0 ? 1 : 0;
       },
       .shrink = {RS_TO_ZERO(aux_offset_heads)},
       .route = [](const RunConfig& c, RunPlan& p) { p.kernel.aux.offset_heads = c.aux_offset_heads != 0; },
       .goes_to = "AuxConfig::offset_heads"},
      {.name = "aux_late", .help = "1: the PMU reports aux_head only at page boundaries", .min = 0, .max = 1,
       RS_FIELD(aux_late),
       .draw = [](DrawState& s, RunConfig& c) { c.aux_late = s.aux() && s.d().draw(3) == 0 ? 1 : 0; },
       .shrink = {RS_TO_ZERO(aux_late)},
       .route = [](const RunConfig& c, RunPlan& p) { p.kernel.aux.late_reports = c.aux_late != 0; },
       .goes_to = "AuxConfig::late_reports"},
  };
}

// The PMU's transactions.
std::vector<Param> aux_transaction_rows() {
  return {
      {.name = "aux_bursts", .help = "AUX transactions per CPU", .min = 0, .max = 1'000'000, RS_FIELD(aux_bursts),
       .draw = [](DrawState& s, RunConfig& c) {
         if (s.aux()) c.aux_bursts = static_cast<std::uint32_t>(s.staged_aux(c) ? s.d().between(1'000, 2'000)
                                                                                  : s.d().between(1, 400));
       },
       .shrink = {RS_HALVE(aux_bursts, 1)},
       .route = RS_ROUTE(aux_bursts, p.kernel.aux.bursts),
       .goes_to = "AuxConfig::bursts"},
      {.name = "aux_burst_bytes_max", .help = "largest AUX transaction, bytes (each draws 1..this)", .min = 1,
       .max = std::uint64_t{1} << 20, RS_FIELD(aux_burst_bytes_max),
       .draw = [](DrawState& s, RunConfig& c) {
         // Issue 23's corner: many, not large (the area still wraps).
         const std::uint64_t quarter = c.aux_bytes() / 4;
         const std::uint64_t high = s.staged_aux(c) ? std::min<std::uint64_t>(quarter, 4096) : quarter;
         if (s.aux()) c.aux_burst_bytes_max = s.d().between(1, high);
       },
       .shrink = {RS_HALVE(aux_burst_bytes_max, 1)},
       .route = RS_ROUTE(aux_burst_bytes_max, p.kernel.aux.burst_bytes_max),
       .goes_to = "AuxConfig::burst_bytes_max"},
      {.name = "aux_gap_ns_max", .help = "largest gap between AUX transactions, ns", .min = 0, .max = kS,
       RS_FIELD(aux_gap_ns_max),
       .draw = [](DrawState& s, RunConfig& c) {
         if (s.aux()) c.aux_gap_ns_max = s.d().between(0, 100'000);
       },
       .shrink = {RS_HALVE(aux_gap_ns_max, 1)},
       .route = RS_ROUTE(aux_gap_ns_max, p.kernel.aux.gap_ns_max),
       .goes_to = "AuxConfig::gap_ns_max"},
      {.name = "aux_transaction_ns", .help = "longest time a transaction stays open, ns", .min = 0, .max = kMs,
       RS_FIELD(aux_transaction_ns),
       .draw = [](DrawState& s, RunConfig& c) {
         if (s.aux()) c.aux_transaction_ns = s.d().draw(2) == 0 ? 0 : s.d().between(1'000, 200'000);
       },
       .shrink = {RS_TO_ZERO(aux_transaction_ns)},
       .route = RS_ROUTE(aux_transaction_ns, p.kernel.aux.transaction_ns),
       .goes_to = "AuxConfig::transaction_ns"},
      {.name = "aux_partial_per_million", .help = "chance an AUX record is PARTIAL", .min = 0, .max = 1'000'000,
       RS_FIELD(aux_partial_per_million),
       .draw = [](DrawState& s, RunConfig& c) {
         if (s.aux()) c.aux_partial_per_million = static_cast<std::uint32_t>(s.d().between(0, 100'000));
       },
       .shrink = {RS_TO_ZERO(aux_partial_per_million)},
       .route = RS_ROUTE(aux_partial_per_million, p.kernel.aux.partial_per_million),
       .goes_to = "AuxConfig::partial_per_million"},
      {.name = "aux_collision_per_million", .help = "chance an AUX record is COLLISION", .min = 0,
       .max = 1'000'000, RS_FIELD(aux_collision_per_million),
       .draw = [](DrawState& s, RunConfig& c) {
         if (s.aux()) c.aux_collision_per_million = s.d().draw(2) == 0 ? 0 : static_cast<std::uint32_t>(s.d().between(1, 100'000));
       },
       .shrink = {RS_TO_ZERO(aux_collision_per_million)},
       .route = RS_ROUTE(aux_collision_per_million, p.kernel.aux.collision_per_million),
       .goes_to = "AuxConfig::collision_per_million"},
      {.name = "aux_format", .help = "PMU format bits on every RECORD_AUX (a mask of 0xff00)", .min = 0, .max = 0xff00,
       RS_FIELD(aux_format),
       .draw = [](DrawState& s, RunConfig& c) {
         if (s.aux()) c.aux_format = s.d().draw(2) == 0 ? 0 : 0x100 * s.d().between(1, 0xff);
       },
       .shrink = {RS_TO_ZERO(aux_format)},
       .route = RS_ROUTE(aux_format, p.kernel.aux.format_flags),
       .goes_to = "AuxConfig::format_flags"},
  };
}

// The staging buffer, and the mutant.
std::vector<Param> staging_rows() {
  return {
      {.name = "staging_bytes",
       .help = "a staging buffer of this many bytes between a reading and a writing fiber (0: none; a multiple of "
               "8; output=serial/aio)",
       .min = 0, .max = 1u << 30, RS_FIELD(staging_bytes),
       .draw = [](DrawState& s, RunConfig& c) {
         // Half the disk runs: small (two buffers: backpressure), medium,
         // large; half of them a whole number of the largest chunks, as the
         // recorder sizes its buffer (such a chunk can end exactly at the
         // buffer's end), the others rounded up to a KiB. Issue 23's corner:
         // four whole chunks.
         if (s.staged_aux(c)) {
           c.staging_bytes = 4 * c.chunk_bytes_max();
           return;
         }
         if (c.output == Output::memory || s.d().draw(2) == 0) return;
         const std::uint64_t multiple = std::array<std::uint64_t, 3>{2, 4, 16}[s.d().draw(3)];
         const std::uint64_t whole = multiple * c.chunk_bytes_max();
         c.staging_bytes = s.d().draw(2) == 0 ? whole : (whole + 1023) / 1024 * 1024;
       },
       .shrink = {RS_TO_ZERO(staging_bytes)},
       .route = [](const RunConfig& c, RunPlan& p) { p.staging.bytes = c.staging_bytes; },
       .goes_to = "core::StagingOptions::bytes; the writer's buffers and the disk's slots (one set, no ring's)"},
      {.name = "staging_notify_rounds",
       .help = "staged runs: 1 wakes the writing fiber at every round the reading side ends (ringsim-record's "
               "--switch-output=signal), 0 lets it take rounds with the data",
       .min = 0, .max = 1, RS_FIELD(staging_notify_rounds),
       .fixed = "never drawn, so that every seed's decisions stay as they were: set it to run the staged runs "
                "with it (tests/campaign_jobs_test: StagingNotifyRounds...)",
       .shrink = {RS_TO_ZERO(staging_notify_rounds)},
       .route = [](const RunConfig& c, RunPlan& p) { p.staging.notify_rounds = c.staging_notify_rounds != 0; },
       .goes_to = "core::StagingOptions::notify_rounds"},
      {.name = "mutant", .help = "a deliberately broken consumer (sim/mutants.h)",
       .choices = {"none", "early_release", "no_pause", "drop_lost", "shared_offset", "reuse_buffer",
                   "eagain_busy_loop", "error_resubmit", "aux_early_tail", "aux_no_reenable", "period_rule_ignored",
                   "eintr_retry_hidden", "gate_marks_every_round", "help_staged_late"},
       RS_FIELD(mutant),
       .fixed = "never drawn: the campaign runs the correct consumer unless --mutant asks",
       .no_shrink = "the bug under test",
       .route =
           [](const RunConfig& c, RunPlan& p) {
             p.mutant = c.mutant;
             p.kernel.period_rule_ignored = c.mutant == Mutant::period_rule_ignored;
           },
       .goes_to = "the consumer's wrappers (sim/mutants.h); KernelConfig::period_rule_ignored"},
  };
}

// The sampling events' periods (sim/sampling.h), drawn last so that every
// other row draws as it did before they existed.
std::vector<Param> sampling_rows() {
  return {
      {.name = "sample_freq",
       .help = "the sampling events' attr.sample_freq with attr.freq, Hz (0: period mode)", .min = 0,
       .max = 100'000, RS_FIELD(sample_freq),
       .draw = [](DrawState& s, RunConfig& c) {
         // One run in four in frequency mode: the rate at which the run's
         // records would come (mean gap gap_ns_max / 2), halved 0 to 2
         // times, within 1 kHz..perf_event_max_sample_rate's default. The
         // kernel's occurrences come 8 per 1/sample_freq (sim/kernel.cc):
         // the period settles near 8, the samples come at most 4 times as
         // far apart as records did (more where the rate is capped), and a
         // run's virtual time stays short.
         if (s.d().draw(4) != 0) return;
         const std::uint64_t rate = 2'000'000'000 / std::max<std::uint64_t>(c.gap_ns_max, 1);
         c.sample_freq = std::clamp<std::uint64_t>(rate >> s.d().draw(3), 1'000, 100'000);
       },
       .shrink = {RS_TO_ZERO(sample_freq)},
       .route = RS_ROUTE(sample_freq, p.kernel.sampling.sample_freq),
       .goes_to = "KernelConfig::sampling (SamplingAttr::sample_freq)"},
      {.name = "sample_period",
       .help = "the sampling events' attr.sample_period (1 with sample_freq: a union)", .min = 1, .max = 1'000'000,
       RS_FIELD(sample_period),
       .draw = [](DrawState& s, RunConfig& c) {
         // Period mode: half the runs every occurrence, a quarter 2..8, a
         // quarter 9..32 (the kernel's occurrences come N times as close:
         // N per record gap, sim/kernel.cc).
         const std::uint64_t pick = s.d().draw(4);
         if (c.sample_freq > 0 || pick < 2) {
           c.sample_period = 1;
         } else {
           c.sample_period = pick == 2 ? s.d().between(2, 8) : s.d().between(9, 32);
         }
       },
       .shrink = {RS_TO(sample_period, 1)},
       .route = RS_ROUTE(sample_period, p.kernel.sampling.sample_period),
       .goes_to = "KernelConfig::sampling (SamplingAttr::sample_period)"},
      {.name = "period_field", .help = "1: the samples carry PERF_SAMPLE_PERIOD", .min = 0, .max = 1,
       RS_FIELD(period_field),
       .draw = [](DrawState& s, RunConfig& c) { c.period_field = s.d().draw(2) == 0 ? 1 : 0; },
       .shrink = {RS_TO_ZERO(period_field)},
       .route = [](const RunConfig& c, RunPlan& p) { p.kernel.sampling.period_field = c.period_field != 0; },
       .goes_to = "KernelConfig::sampling (SamplingAttr::period_field); EventIdentity::period_field"},
  };
}

// How producers run against the other fibers (replay format version 5)
// and how many fibers read (version 6), drawn after every other row so
// that each draws as it did before.
std::vector<Param> batch_rows() {
  return {
      {.name = "producer_batch",
       .help = "records a producer writes between its sleeps (1: it sleeps each record's gap before the record)",
       .min = 1, .max = 4096, RS_FIELD(producer_batch),
       // Drawn after every other row's draw and draw_after, so that every
       // other field of a seed draws as before version 5.
       .draw = [](DrawState&, RunConfig&) {},
       .draw_after = [](DrawState& s, RunConfig& c) {
         // A quarter of the runs the finest interleaving (a sleep before
         // each record, as before version 5), the others 2..32 records at
         // a time: fewer fiber switches per record.
         c.producer_batch = s.d().draw(4) == 0 ? 1 : 2u << s.d().draw(5);
       },
       .shrink = {RS_TO(producer_batch, 1)},
       .route = RS_ROUTE(producer_batch, p.kernel.producer_batch),
       .goes_to = "KernelConfig::producer_batch"},
      {.name = "readers_per_cpu",
       .help = "2: a reading fiber per CPU into the one staging buffer, each also draining the other CPUs' rings "
               "it can lock, as the recorder's default --readers cpu; 1: each its own CPU's ring only "
               "(--readers cpu-own); both need staging_bytes > 0, mode=normal, rotate_bytes=0; 0: one for every ring",
       .min = 0, .max = 2, RS_FIELD(readers_per_cpu),
       // Drawn last (replay format version 6; 2 since version 7), and only
       // for runs that can have it: every other run draws as before.
       .draw = [](DrawState&, RunConfig&) {},
       .draw_after = [](DrawState& s, RunConfig& c) {
         // Three in four such runs per CPU, as the recorder does by
         // default; two of those three helping, as its default does.
         if (c.staging_bytes > 0 && c.mode == core::RingMode::normal && c.rotate_bytes == 0) {
           const std::uint64_t d = s.d().draw(4);
           c.readers_per_cpu = d == 0 ? 0 : d == 1 ? 1 : 2;
         }
       },
       .shrink = {RS_TO_ZERO(readers_per_cpu),
                  [](RunConfig& c) { return c.readers_per_cpu == 2 ? (c.readers_per_cpu = 1, true) : false; }},
       .route =
           [](const RunConfig& c, RunPlan& p) {
             p.readers_per_cpu = c.readers_per_cpu != 0;
             p.readers_help = c.readers_per_cpu == 2;
           },
       .goes_to = "RunPlan::readers_per_cpu (sim/run.cc: read_rings_per_cpu)"},
      {.name = "help_min_quarters",
       .help = "readers_per_cpu=2: a fiber helps with another CPU's ring holding at least this many quarters of "
               "its size (0: any data; the recorder: 1)",
       .min = 0, .max = 4, RS_FIELD(help_min_quarters),
       // Drawn last (replay format version 7), for helping runs only: every
       // other run draws as before.
       .draw = [](DrawState&, RunConfig&) {},
       .draw_after = [](DrawState& s, RunConfig& c) {
         if (c.readers_per_cpu == 2) c.help_min_quarters = static_cast<std::uint32_t>(s.d().draw(2));
       },
       .shrink = {RS_TO_ZERO(help_min_quarters)},  // 0: no threshold
       .route = RS_ROUTE(help_min_quarters, p.loop.help_min_quarters),
       .goes_to = "core::LoopOptions::help_min_quarters"},
  };
}

#undef RS_GET
#undef RS_SET
#undef RS_FIELD
#undef RS_TO_ZERO
#undef RS_HALVE
#undef RS_TO
#undef RS_ROUTE

std::vector<Param> build_table() {
  std::vector<Param> table;
  for (auto rows : {kernel_rows(), workload_rows(), event_rows(), consumer_rows(), request_rows(), scheduling_rows(), output_rows(),
                    disk_fault_rows(),
                    disk_error_rows(), aux_rows(), aux_transaction_rows(), staging_rows(), sampling_rows(),
                    batch_rows()}) {
    for (Param& p : rows) table.push_back(std::move(p));
  }
  for (const Param& p : table) {
    VERIFY(p.get != nullptr && p.set != nullptr && p.route != nullptr && p.goes_to != nullptr);
    VERIFY(p.draw != nullptr || p.fixed != nullptr);
    VERIFY(!p.shrink.empty() || p.no_shrink != nullptr);
    VERIFY(p.is_choice() || p.min <= p.max);
  }
  return table;
}

class DecisionDraws : public Draws {
 public:
  explicit DecisionDraws(DecisionSource& d) : d_(d) {}
  std::uint64_t draw(std::uint64_t bound) override { return d_.draw(bound); }
  std::uint64_t between(std::uint64_t low, std::uint64_t high) override { return d_.between(low, high); }

 private:
  DecisionSource& d_;
};

}  // namespace

bool DrawState::faulty() {
  if (!faulty_) faulty_ = draws_.draw(4) != 0;
  return *faulty_;
}

bool DrawState::aux() {
  if (!aux_) aux_ = draws_.draw(3) == 0;
  return *aux_;
}

bool DrawState::staged_aux(const RunConfig& c) {
  if (!staged_aux_) staged_aux_ = aux() && c.output != Output::memory && draws_.draw(8) == 0;
  return *staged_aux_;
}

std::string Param::flag() const {
  std::string f = std::string("--") + name;
  for (char& ch : f) ch = ch == '_' ? '-' : ch;
  return f;
}

std::string Param::text(const RunConfig& config) const {
  const std::uint64_t v = get(config);
  if (!is_choice()) return std::to_string(v);
  VERIFY(v < choices.size());
  return choices[v];
}

bool Param::parse(const std::string& text, std::uint64_t& value) const {
  if (is_choice()) {
    for (std::size_t i = 0; i < choices.size(); i++) {
      if (text == choices[i]) {
        value = i;
        return true;
      }
    }
    return false;
  }
  if (text.empty() || text.size() > 20 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < min || v > max) return false;
  value = v;
  return true;
}

const std::vector<Param>& params() {
  static const std::vector<Param> table = build_table();
  return table;
}

const Param* find_param(const std::string& name) {
  for (const Param& p : params()) {
    if (name == p.name) return &p;
  }
  return nullptr;
}

void draw_config(Draws& draws, RunConfig& c) {
  DrawState state(draws);
  for (const Param& p : params()) {
    if (p.draw != nullptr) p.draw(state, c);
  }
  for (const Param& p : params()) {
    if (p.draw_after != nullptr) p.draw_after(state, c);
  }
}

const std::vector<const char*>& swarm_sites() {
  static const std::vector<const char*> sites = {
      "burst_per_million",         "nest_per_million",       "late_write_per_million",
      "yield_per_million",         "poll_eintr_per_million", "copy_interrupt_per_million",
      "disk_stall_per_million",    "disk_short_per_million", "disk_eagain_per_million",
      "disk_eagain_burst_per_million", "disk_eintr_per_million", "disk_suspend_eintr_per_million",
      "disk_eio_per_million",      "aux_partial_per_million", "aux_collision_per_million"};
  return sites;
}

std::uint32_t swarm_config(RunConfig& c) {
  DecisionSource d(c.seed ^ 0x5a4a4a4d5a4a4a4dull, false);
  std::uint32_t off = 0;
  for (const char* name : swarm_sites()) {
    const Param* p = find_param(name);
    VERIFY_MSG(p != nullptr, name);
    if (d.draw(2) == 1 || p->get(c) == 0) continue;  // on (as drawn), or off already
    const std::uint64_t drawn = p->get(c);
    p->set(c, 0);
    if (!validate(c).empty()) {
      p->set(c, drawn);
      continue;
    }
    off++;
  }
  return off;
}

RunConfig random_config(std::uint64_t seed) {
  DecisionSource d(seed ^ 0x5ca1ab1e0ddba11ull, false);
  DecisionDraws draws(d);
  RunConfig c;
  c.seed = seed;
  draw_config(draws, c);
  const std::string invalid = validate(c);
  VERIFY_MSG(invalid.empty(), invalid.c_str());
  return c;
}

std::string validate(const RunConfig& c) {
  for (const Param& p : params()) {
    const std::uint64_t v = p.get(c);
    const std::uint64_t high = p.is_choice() ? p.choices.size() - 1 : p.max;
    const std::uint64_t low = p.is_choice() ? 0 : p.min;
    if (v < low || v > high) {
      return std::string(p.name) + ": " + std::to_string(v) + " is outside " + std::to_string(low) + ".." +
             std::to_string(high);
    }
  }
  return validate_rules(c);
}

std::string describe(const RunConfig& c) {
  std::ostringstream s;
  bool first = true;
  for (const Param& p : params()) {
    if (std::string(p.name) == "mutant" && c.mutant == Mutant::none) continue;  // says nothing
    s << (first ? "" : " ") << p.name << '=' << p.text(c);
    first = false;
  }
  return s.str();
}

nlohmann::json to_json(const RunConfig& c) {
  nlohmann::json j = nlohmann::json::object();
  for (const Param& p : params()) {
    if (p.is_choice()) {
      j[p.name] = p.text(c);
    } else {
      j[p.name] = p.get(c);
    }
  }
  return j;
}

std::string quoted(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string from_json(const nlohmann::json& j, RunConfig& out) {
  if (!j.is_object()) return "config: not an object";
  RunConfig c;
  for (const Param& p : params()) {
    const auto it = j.find(p.name);
    if (it == j.end()) return std::string("config.") + p.name + ": missing";
    std::uint64_t value = 0;
    if (p.is_choice()) {
      if (!it->is_string()) return std::string("config.") + p.name + ": not a string";
      if (!p.parse(it->get<std::string>(), value)) {
        return std::string("config.") + p.name + ": unknown " + p.name + " " + quoted(it->get<std::string>());
      }
    } else {
      if (!it->is_number_unsigned()) return std::string("config.") + p.name + ": not an unsigned integer";
      value = it->get<std::uint64_t>();
      if (value < p.min || value > p.max) {
        return std::string("config.") + p.name + ": " + std::to_string(value) + " is outside " + std::to_string(p.min) +
               ".." + std::to_string(p.max);
      }
    }
    p.set(c, value);
  }
  if (j.size() != params().size()) return "config: has fields this version does not know";
  if (std::string e = validate(c); !e.empty()) return "config." + e;
  out = c;
  return "";
}

RunPlan plan_run(const RunConfig& c) {
  RunPlan p;
  p.loop.rounds_max = 10'000'000;
  // Far beyond any budget: a run that gets there has stopped making progress.
  p.limits.virtual_ns_max = 24ull * 3600 * kS;
  for (const Param& param : params()) param.route(c, p);
  // What follows from several rows.
  const std::uint32_t per_mapping = c.output == Output::aio ? c.cblocks : 1;
  p.disk.slots = c.cpus * per_mapping;
  p.disk.slots_per_mapping = per_mapping;
  // A sink buffer takes a data-ring chunk or an AUXTRACE record of a whole
  // AUX area.
  p.writer.buffer_bytes = c.chunk_bytes_max();
  if (p.staging.bytes > 0) {
    // Staged: the writer's buffers (and the disk's slots) belong to no
    // ring: one set, each a batch of up to two chunks.
    p.staging.chunk_bytes_max = c.chunk_bytes_max();
    p.staging.batch_bytes_max = std::min(2 * c.chunk_bytes_max(), p.staging.bytes / 2);
    p.staging.wake_bytes = p.staging.batch_bytes_max / 2;
    // Waits of 1 ms of virtual time; patience far beyond any disk stall
    // (liveness ends a hung run first).
    p.staging.wait_ns = 1'000'000;
    p.staging.full_waits_max = 1'000'000;
    p.writer.mappings = 1;
    p.writer.buffer_bytes = p.staging.batch_bytes_max;
    p.disk.slots = per_mapping;
    p.disk.slots_per_mapping = per_mapping;
    p.disk.slots_of_no_ring = true;
  }
  return p;
}

void Overrides::set(const Param& param, std::uint64_t value) {
  for (auto& [p, v] : values_) {
    if (p == &param) {
      v = value;
      return;
    }
  }
  values_.emplace_back(&param, value);
  const auto position = [](const Param* p) { return p - params().data(); };
  std::sort(values_.begin(), values_.end(),
            [&](const auto& a, const auto& b) { return position(a.first) < position(b.first); });
}

void Overrides::apply(RunConfig& c) const {
  auto given = [&](const char* name) {
    return std::any_of(values_.begin(), values_.end(), [&](const auto& v) { return std::string(v.first->name) == name; });
  };
  const bool keep_mode_and_output = given("mode") || given("output");
  // Choices first: the mode and the output (each clears what it cannot
  // have), then the mutant, then the others.
  for (const char* name : {"mode", "output", "mutant"}) {
    for (const auto& [p, v] : values_) {
      if (std::string(p->name) != name) continue;
      if (std::string(name) == "mode") set_mode(c, static_cast<core::RingMode>(v));
      if (std::string(name) == "output") set_output(c, static_cast<Output>(v));
      if (std::string(name) == "mutant") set_mutant(c, static_cast<Mutant>(v), keep_mode_and_output);
    }
  }
  for (const auto& [p, v] : values_) {
    if (p->is_choice() && std::string(p->name) != "mode" && std::string(p->name) != "output" &&
        std::string(p->name) != "mutant") {
      p->set(c, v);
    }
  }
  // Then the integers, which win over anything a choice implied.
  for (const auto& [p, v] : values_) {
    if (!p->is_choice()) p->set(c, v);
  }
  // attr.sample_period and sample_freq are a union: the one given decides
  // the mode unless both are.
  if (given("sample_freq") && !given("sample_period") && c.sample_freq > 0) c.sample_period = 1;
  if (given("sample_period") && !given("sample_freq") && c.sample_period > 1) c.sample_freq = 0;
}

std::string Overrides::as_args() const {
  std::string args;
  for (const auto& [p, v] : values_) {
    RunConfig scratch;
    p->set(scratch, v);
    args += (args.empty() ? "" : " ") + p->flag() + "=" + p->text(scratch);
  }
  return args;
}

Overrides reproduce_overrides(const RunConfig& config) {
  const RunConfig base = random_config(config.seed);
  Overrides overrides;
  // Each pass adds the fields that still differ after applying the
  // overrides so far; integers are applied last and exactly, so this ends
  // within a few passes.
  for (std::size_t pass = 0; pass < params().size() + 1; pass++) {
    RunConfig applied = base;
    overrides.apply(applied);
    bool changed = false;
    for (const Param& p : params()) {
      if (p.get(applied) != p.get(config)) {
        overrides.set(p, p.get(config));
        changed = true;
      }
    }
    if (!changed) return overrides;
  }
  VERIFY_MSG(false, "the reproduction of a configuration did not converge");
  return overrides;
}

std::string reproduce_args(const RunConfig& config) {
  const std::string overrides = reproduce_overrides(config).as_args();
  return "--seed=" + std::to_string(config.seed) + " --runs=1" + (overrides.empty() ? "" : " " + overrides);
}

std::string reproduce_command(const RunConfig& config) {
  return "bazel run //sim:campaign -- " + reproduce_args(config);
}

}  // namespace ringsim::sim
