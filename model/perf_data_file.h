// Reading perf.data files: ours (from the simulated disk or the real
// recorder) and perf's own. Standard library only, no code shared with
// core/: the oracle must not trust the writer it checks.
//
// Everything is checked before it is used: magic, header size, section
// bounds, attribute sizes, every record header. A problem is returned as
// one line, never an exception or a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "model/perf_features.h"
#include "model/records.h"

namespace ringsim::model {

struct PerfAttr {
  std::uint32_t type = 0;
  std::uint64_t config = 0;
  std::uint64_t sample_type = 0;
  bool sample_id_all = false;
  std::vector<std::uint64_t> ids;
};

struct PerfDataFile {
  std::vector<PerfAttr> attrs;
  std::uint64_t data_offset = 0;
  std::uint64_t data_size = 0;
  std::uint64_t file_size = 0;
  std::vector<std::byte> data;  // the data section
  PerfFeatures features;        // the feature sections the header's bitmap announces

  // Where the file's last part ends: the feature sections, or the data.
  std::uint64_t end() const { return features.table.empty() ? data_offset + data_size : features.end; }

  // Calls on_record for each record in order (model::walk_records; offsets
  // are in the data section); stops at a malformed header and returns the
  // problem ("" if every record is well formed).
  std::string for_each_record(const std::function<void(const PerfRecord&)>& on_record) const;

  // The event id of a record: PERF_SAMPLE_IDENTIFIER, the first field of
  // a sample and the last of a sample_id trailer, when every attribute has
  // it. false if the record does not carry one.
  bool id_of(const PerfRecord& record, std::uint64_t& id) const;
  // The attribute of the record's event (by its id; the only one if there
  // is one), or nullptr.
  const PerfAttr* attr_of(const PerfRecord& record) const;
  // Fields found through the attribute's sample_type (samples) or the
  // sample_id trailer (other records, with sample_id_all). false if the
  // record does not carry it.
  bool cpu_of(const PerfRecord& record, std::uint32_t& cpu) const;
  bool time_of(const PerfRecord& record, std::uint64_t& time_ns) const;

 private:
  long field_offset(const PerfRecord& record, std::uint64_t field) const;

 public:
};

// "" or the problem.
std::string parse_perf_data(std::span<const std::byte> file, PerfDataFile& out);
std::string read_perf_data(const std::string& path, PerfDataFile& out);

// What a recording holds and lost. The data-loss metric of the perf AIO
// series: lost_time / elapsed_time, lost_time being the total length of the
// time intervals that contain PERF_RECORD_LOST records. Here, a LOST record
// on a CPU covers the interval from the previous record on that CPU (or the
// start of the recording) to the LOST record itself: the drops it reports
// happened in there. Overlapping intervals of different CPUs count once.
// Elapsed time runs from the first to the last sample or LOST record
// (records a recorder synthesizes carry time 0 and are left out).
struct LossStats {
  std::uint64_t records = 0;
  std::uint64_t samples = 0;
  std::uint64_t lost_records = 0;
  std::uint64_t lost_sum = 0;
  std::uint64_t first_time_ns = 0;
  std::uint64_t last_time_ns = 0;
  std::uint64_t lost_time_ns = 0;
  double loss_metric() const;
  double lost_fraction() const;  // lost_sum / (samples + lost_sum)
};

std::string loss_stats(const PerfDataFile& file, LossStats& out);
// The same for a data section given in parts (file.data unused): the stats
// of their concatenation, without copying them together when each part is
// whole records.
std::string loss_stats(const PerfDataFile& file, std::span<const std::span<const std::byte>> parts, LossStats& out);

}  // namespace ringsim::model
