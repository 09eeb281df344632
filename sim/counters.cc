#include "sim/counters.h"

#include <string>

#include "model/counters.h"

namespace ringsim::sim {
namespace {

class CounterCheck {
 public:
  explicit CounterCheck(const RunResult& r) : r_(r) {}

  std::vector<model::Violation> run() {
    out_ = model::check_kernel_counters(r_.log);
    if (!r_.consumer_finished) return std::move(out_);
    check_gaps();
    check_delivered();
    check_loss_metric();
    if (r_.config.output != Output::memory && r_.writer_started) {
      check_writer_against_disk();
      check_chunk_writes();
      check_records_cut();
      if (r_.config.staging_bytes > 0) check_staging();
    }
    return std::move(out_);
  }

 private:
  bool cut_short() const { return r_.writer.error != 0; }

  // "<counter>: <what> <a>, <what> <b>": the two counts, one line.
  void disagree(const std::string& counter, const std::string& first, std::uint64_t a, const std::string& second,
                std::uint64_t b) {
    out_.push_back(model::Violation{model::kCountersAgree, counter + ": " + first + " " + std::to_string(a) + ", " +
                                                               second + " " + std::to_string(b)});
  }
  void equal(const std::string& counter, const std::string& first, std::uint64_t a, const std::string& second,
             std::uint64_t b) {
    if (a != b) disagree(counter, first, a, second, b);
  }

  // The gaps the readers counted (consumer drops, overwritten: one event
  // each) against the gaps the oracle checked in the output. After an
  // output error an AUX gap may have lost the AUXTRACE record that shows
  // it (clean_finish allows the same for its bytes).
  void check_gaps() {
    equal("overwritten gaps (data rings)", "the readers counted", r_.loop.drops[core::DropCause::overwritten].events,
          "the oracle checked", r_.oracle.gaps);
    const std::uint64_t aux = r_.loop.aux_drops[core::DropCause::overwritten].events;
    if (cut_short() ? aux < r_.oracle.aux_gaps : aux != r_.oracle.aux_gaps) {
      disagree("overwritten gaps (AUX)", "the AUX readers counted", aux, "the oracle found", r_.oracle.aux_gaps);
    }
  }

  // What the consumer says reached its output against what the oracle
  // found there: data-ring records (not the AUXTRACE records the consumer
  // made), their samples and the losses their LOST records report. In
  // memory: what the record loop committed (core's LoopResult::records).
  // On disk: what the writer took, less what it counted cut off by an
  // output error (compared as taken = found + cut: no count goes below 0).
  void check_delivered() {
    const model::OracleReport& o = r_.oracle;
    if (r_.config.output == Output::memory) {
      const core::RecordCounts& in = r_.loop.records;
      const std::string loop = "the record loop committed";
      equal("records delivered", loop, in.records - in.auxtrace_records, "the oracle found", o.records_delivered);
      equal("samples delivered", loop, in.samples, "the oracle found", o.samples_delivered);
      equal("lost delivered", loop, in.lost_sum, "the oracle found", o.lost_delivered);
      return;
    }
    const core::RecordCounts& in = r_.writer.records;
    const core::RecordCounts& cut = r_.writer.drops[core::DropCause::output_error].records;
    const auto taken = [&](const char* counter, std::uint64_t writer, std::uint64_t writer_cut, std::uint64_t oracle) {
      if (writer == oracle + writer_cut) return;
      out_.push_back(model::Violation{
          model::kCountersAgree, std::string(counter) + ": the writer took " + std::to_string(writer) + " and counted " +
                                     std::to_string(writer_cut) + " cut off, the oracle found " +
                                     std::to_string(oracle) + " in the files"});
    };
    taken("records delivered", in.records - in.auxtrace_records, cut.records - cut.auxtrace_records,
          o.records_delivered);
    taken("samples delivered", in.samples, cut.samples, o.samples_delivered);
    taken("lost delivered", in.lost_sum, cut.lost_sum, o.lost_delivered);
  }

  // The data-loss metric's counts (model::loss_stats, from the perf.data
  // files or the memory output) against the oracle's walk of the output.
  void check_loss_metric() {
    equal("loss metric's lost count", "loss_stats read", r_.loss.lost_sum, "the oracle found", r_.oracle.lost_delivered);
  }

  // The writer's retries, by the fault that made them, against the faults
  // the disk injected. EAGAIN comes only from aio_submit (a synchronous
  // pwrite never returns it here); EINTR from a pwrite, a completion or an
  // aio_suspend; a short completion only from AIO (a synchronous short
  // write is continued, not counted).
  void check_writer_against_disk() {
    const core::WriterStats& w = r_.writer;
    const DiskStats& d = r_.disk;
    equal("short writes restarted", "the writer counted", w.short_writes_restarted, "the disk completed short",
          d.async_short);
    const std::uint64_t eagain = d.eagain_single + d.eagain_burst + d.eagain_queue_full;
    equal("EAGAIN retries", "the writer counted", w.eagain_retries, "the disk refused", eagain);
    // Each fallback comes after eagain_attempts_max refusals of one submit.
    if (w.eagain_sync_fallbacks * r_.config.eagain_attempts_max > eagain) {
      disagree("synchronous fallbacks", "the writer counted", w.eagain_sync_fallbacks,
               "each after " + std::to_string(r_.config.eagain_attempts_max) + " refusals, the disk refused", eagain);
    }
    equal("EINTR retries", "the writer counted (writes and waits)", w.eintr_retries + w.suspend_interrupted,
          "the disk interrupted", d.eintr_writes + d.eintr_suspends);
    equal("files", "the writer opened", w.files, "the disk created", r_.disk_files);
  }

  // AIO: each chunk handed to the writer completes once (a synchronous
  // fallback too), unless a hard error cut it off; serial writes count no
  // control-block completions.
  void check_chunk_writes() {
    const bool staged = r_.config.staging_bytes > 0;
    const std::uint64_t handed = staged ? r_.staging_batches : r_.sink_commits;
    const std::uint64_t done = r_.writer.writes_completed;
    if (r_.config.output == Output::serial) {
      equal("chunk writes completed", "the serial writer counted", done, "control-block writes, which it has", 0);
    } else if (cut_short() ? done > handed : done != handed) {
      disagree("chunk writes completed", "the writer counted", done,
               staged ? "batches handed to it" : "chunks committed to it", handed);
    }
  }

  // Cut by an output error: the records the writer and the staging
  // buffer counted cut off are among the data-ring records the oracle
  // finds missing at the end. In a writable ring with nothing abandoned
  // they are all of them (abandoned data is counted in bytes only, and
  // clean_finish compares the bytes in normal mode). A read-only ring's
  // unread data at an early end is counted in bytes (abandoned: what the
  // area still holds since the last snapshot; clean_finish bounds it by the
  // oracle's missing bytes), its records by nobody: a bound there.
  void check_records_cut() {
    if (!cut_short()) return;
    core::RecordCounts cut = r_.writer.drops[core::DropCause::output_error].records;
    cut.add(r_.staging.drops[core::DropCause::output_error].records);
    const std::uint64_t counted = cut.records - cut.auxtrace_records;
    const bool exact =
        core::writable(r_.config.mode) && r_.loop.drops[core::DropCause::abandoned].records.bytes == 0;
    if (exact ? counted != r_.oracle.records_cut : counted > r_.oracle.records_cut) {
      disagree("records cut off", "the writer and the staging counted", counted,
               exact ? "the oracle found missing" : "more than the oracle found missing", r_.oracle.records_cut);
    }
  }

  // The staging buffer's counts against the writing fiber's: the batches
  // it took, and the staged records it walked in them or counted dropped.
  void check_staging() {
    const core::StagingStats& s = r_.staging;
    equal("staged writes", "the staging counted", s.writes, "the writing fiber took", r_.staging_batches);
    const std::uint64_t dropped = s.drops[core::DropCause::output_error].records.records;
    if (s.records.records != r_.staged_walked.records + dropped) {
      disagree("staged records", "the staging counted", s.records.records,
               "the writing fiber walked " + std::to_string(r_.staged_walked.records) + " and it counted dropped",
               dropped);
    }
  }

  const RunResult& r_;
  std::vector<model::Violation> out_;
};

}  // namespace

std::vector<model::Violation> check_counters(const RunResult& r) { return CounterCheck(r).run(); }

}  // namespace ringsim::sim
