// Reading a perf.data file back, in production code: the recorder's summary
// (what its files hold) and the benchmark's measure of every recorder's
// files, perf's own included.
//
// Independent of model/perf_data_file.h on purpose: that one is the
// oracle's, and the oracle must not share code with what it checks.
//
// Everything is checked before it is used (magic, header size, section
// bounds, attribute sizes, every record header through walk_records); a
// problem is one line, never a crash. The reader keeps views into the
// caller's bytes: they must outlive the PerfDataView.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/perf_data.h"
#include "core/records.h"

namespace ringsim::core {

struct PerfDataAttr {
  perf_event_attr attr{};  // the file's attribute, cut or zero-extended to ours
  std::vector<std::uint64_t> ids;
};

struct PerfDataView {
  PerfFileHeader file_header;
  std::vector<PerfDataAttr> attrs;
  std::span<const std::byte> data;  // the data section
  std::uint64_t file_bytes = 0;

  // The attribute a record belongs to: by its identifier when every
  // attribute samples PERF_SAMPLE_IDENTIFIER, else the first. nullptr for
  // records with no sample_id (user-space types, no sample_id_all).
  const PerfDataAttr* attr_of(const perf_event_header& header, std::span<const std::byte> record) const;
  // Time and CPU of a sample, or of another record's sample_id trailer.
  // false when the record does not carry the field.
  bool time_of(const perf_event_header& header, std::span<const std::byte> record, std::uint64_t& time_ns) const;
  bool cpu_of(const perf_event_header& header, std::span<const std::byte> record, std::uint32_t& cpu) const;
};

// "" or the problem. `out` views `file`.
std::string read_perf_data(std::span<const std::byte> file, PerfDataView& out);

// What a recording holds and lost. The data-loss metric of the perf AIO
// series, lost_time / elapsed_time: a LOST record on a CPU covers the
// interval from the previous sample or LOST record on that CPU (or the
// start of the recording) to itself; intervals of different CPUs that
// overlap count once. Elapsed time runs from the first to the last sample
// or LOST record (records a recorder synthesizes carry time 0 and are left
// out).
struct LossStats {
  RecordCounts records;  // every record of the data sections
  std::uint64_t first_time_ns = 0;
  std::uint64_t last_time_ns = 0;
  std::uint64_t lost_time_ns = 0;
  double loss_metric() const;
  double lost_fraction() const;  // lost_sum / (samples + lost_sum)
};

// Adds the records of `view` (one file of a recording, in order) to a
// running measure; finish() computes the metric.
class LossMeter {
 public:
  // "" or the first problem (the walk stops at a bad record).
  std::string add(const PerfDataView& view);
  LossStats finish() const;

 private:
  struct Interval {
    std::uint64_t begin;
    std::uint64_t end;
  };
  void note(std::uint32_t type, std::uint64_t time_ns, std::uint32_t cpu);

  RecordCounts records_;
  bool any_time_ = false;
  std::uint64_t first_ns_ = 0;
  std::uint64_t last_ns_ = 0;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> previous_;  // (cpu, time of its last record)
  std::vector<Interval> intervals_;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> pending_;  // LOST with no earlier record: (cpu, time)
};

}  // namespace ringsim::core
