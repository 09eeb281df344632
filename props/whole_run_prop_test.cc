// Whole-run properties over random seeds and configurations: every record
// produced is delivered exactly once, byte-identical, in per-CPU order,
// except the records reported lost, and the lost counts match exactly; an
// overwrite-mode snapshot never returns a torn record; every run finishes
// (liveness). A failure prints the seed and the one-line reproduction.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cerrno>
#include <sstream>

#include "props/run_gen.h"
#include "sim/params.h"
#include "sim/run.h"

namespace ringsim {
namespace {

std::string failure_report(const sim::RunResult& r) {
  std::ostringstream s;
  for (const model::Violation& v : r.violations) s << v.property << ": " << v.detail << "\n";
  s << "config: " << sim::describe(r.config) << "\n";
  s << "reproduce: " << sim::reproduce_command(r.config);
  return s.str();
}

RC_GTEST_PROP(WholeRun, EveryRecordOnceOrReportedLost, ()) {
  const sim::RunConfig config = *props::gen_run_config();
  const sim::RunResult r = sim::run_simulation(config);
  RC_CLASSIFY(r.oracle.dropped > 0, "drops");
  RC_CLASSIFY(r.oracle.records_overwritten > 0, "overwritten");
  RC_CLASSIFY(r.probes.count(sim::Probe::pollhup_with_data) > 0, "hangup with data");
  if (!r.ok()) RC_FAIL(failure_report(r));
  // The oracle's own figures agree with each other (a hard output error
  // cuts the end off: records_cut).
  RC_CLASSIFY(r.writer.error != 0, "cut short by an output error");
  RC_ASSERT(r.oracle.records_delivered + r.oracle.records_cut == r.oracle.records_expected);
  RC_ASSERT(r.oracle.records_expected + r.oracle.records_overwritten == r.oracle.records_written);
}

// Overwrite mode with the kernel often running inside the reader's copies:
// a snapshot must never hand out a torn record.
RC_GTEST_PROP(WholeRun, BackwardSnapshotsNeverTorn, ()) {
  sim::RunConfig config = *props::gen_run_config(800);
  sim::set_mode(config, core::RingMode::backward);
  config.snapshot_interval_ns = *rc::gen::inRange<std::uint64_t>(1'000, 200'000);
  config.copy_interrupt_per_million = *rc::gen::inRange<std::uint32_t>(200'000, 1'000'001);
  config.yield_per_million = *rc::gen::inRange<std::uint32_t>(100'000, 600'000);
  const sim::RunResult r = sim::run_simulation(config);
  RC_CLASSIFY(r.probes.count(sim::Probe::copy_interleaved) > 0, "kernel ran inside a copy");
  RC_CLASSIFY(r.oracle.records_overwritten > 0, "overwritten");
  if (!r.ok()) RC_FAIL(failure_report(r));
}

// AUX areas: wakeups exactly when the rules say (aux_wakeup never behind
// the last watermark boundary below aux_head), no bookkeeping (and so no
// division) with the zero watermark of snapshot mode, delivered = written
// - truncated - overwritten byte for byte, truncation disables and wakes,
// no writer drops the last reference or writes an unmapped area; byte
// heads, offset heads (Intel PT), COLLISION and format bits, re-enables.
RC_GTEST_PROP(WholeRun, AuxAreas, ()) {
  sim::RunConfig config = *props::gen_run_config(400);
  config.aux_pages = 1u << *rc::gen::inRange(0, 5);
  config.aux_overwrite = *rc::gen::inRange(0, 3) == 0;
  config.aux_watermark_bytes = *rc::gen::element<std::uint64_t>(0, 8, 1000, config.aux_bytes() / 3 & ~7ull);
  config.aux_late = *rc::gen::arbitrary<bool>();
  config.aux_bursts = *rc::gen::inRange<std::uint32_t>(1, 400);
  config.aux_burst_bytes_max = *rc::gen::inRange<std::uint64_t>(1, config.aux_bytes() / 2 + 1);
  config.aux_gap_ns_max = *rc::gen::inRange<std::uint64_t>(0, 50'000);
  config.aux_transaction_ns = *rc::gen::inRange<std::uint64_t>(0, 50'000);
  config.aux_partial_per_million = *rc::gen::inRange<std::uint32_t>(0, 300'000);
  config.aux_collision_per_million = *rc::gen::inRange<std::uint32_t>(0, 300'000);
  config.aux_offset_heads = config.aux_overwrite && *rc::gen::arbitrary<bool>();
  config.aux_format = 0x100 * *rc::gen::inRange<std::uint64_t>(0, 0x100);
  if (config.aux_overwrite && config.snapshot_interval_ns == 0) {
    config.snapshot_interval_ns = *rc::gen::inRange<std::uint64_t>(1'000, 500'000);
  }
  if (config.aux_watermark_bytes > config.aux_bytes()) config.aux_watermark_bytes = 0;
  RC_PRE(sim::validate(config).empty());
  const sim::RunResult r = sim::run_simulation(config);
  RC_CLASSIFY(config.aux_overwrite, "snapshot mode");
  RC_CLASSIFY(config.aux_offset_heads, "offset heads");
  RC_CLASSIFY(r.probes.count(sim::Probe::aux_reenabled) > 0, "re-enabled after truncation");
  RC_CLASSIFY(r.probes.count(sim::Probe::aux_late_report) > 0, "late head reports");
  RC_CLASSIFY(r.probes.count(sim::Probe::aux_truncated) > 0, "truncated");
  RC_CLASSIFY(r.oracle.aux_overwritten > 0, "overwritten before a snapshot");
  if (!r.ok()) RC_FAIL(failure_report(r));
  if (r.writer.error == 0) {
    RC_ASSERT(r.oracle.aux_delivered + r.oracle.aux_overwritten == r.oracle.aux_written);
  } else {
    RC_ASSERT(r.oracle.aux_delivered + r.oracle.aux_overwritten <= r.oracle.aux_written);
  }
}

// A hard write error (EIO, or ENOSPC on a full disk) ends the recording
// with that error named, a file that parses and holds, per CPU, exactly a
// prefix of what a full run delivers (the oracle's truncation mode), and no
// write left in flight.
RC_GTEST_PROP(WholeRun, HardErrorEndsCleanlyWithAValidPrefix, ()) {
  sim::RunConfig config = *props::gen_run_config(800);
  config.output = *rc::gen::element(sim::Output::serial, sim::Output::aio);
  if (*rc::gen::arbitrary<bool>()) {
    config.disk_eio_per_million = *rc::gen::inRange<std::uint32_t>(20'000, 300'000);
  } else {
    config.disk_capacity_bytes = 4096 * *rc::gen::inRange<std::uint64_t>(1, 64);
  }
  const sim::RunResult r = sim::run_simulation(config);
  RC_CLASSIFY(r.writer.error == EIO, "EIO");
  RC_CLASSIFY(r.writer.error == ENOSPC, "ENOSPC");
  RC_CLASSIFY(r.writer.error == 0, "no error reached");
  if (!r.ok()) RC_FAIL(failure_report(r));
  if (r.writer.error != 0) {
    RC_ASSERT(!r.writer.error_context.empty());
    const int injected = config.disk_open_fails ? EACCES : r.disk.first_hard_error;
    RC_ASSERT(injected == r.writer.error);
  }
}

}  // namespace
}  // namespace ringsim
