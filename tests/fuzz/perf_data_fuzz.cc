// Fuzzes both perf.data readers on arbitrary files: the model's
// (model/perf_data_file.h, the oracle's) and the production one
// (core/perf_data_reader.h), the latter also as the recorder reads its
// files back (real/file_stats.h: the file opened, mapped, read, measured). For each:
//   - a problem is one line, never a crash, an exception, a read outside
//     the file (ASan: the input is an exactly sized copy) or a hang;
//   - what is read lies inside the file, and the figures are sane (counts
//     add up, the loss metric and lost fraction within [0, 1]);
//   - the recorder's read-back of the file (real/file_stats.h, through a
//     file descriptor) gives exactly the figures core's reader gives over
//     the bytes;
//   - the two readers, which share no code, agree on a file both accept:
//     the same data section and attributes, and when both walk every
//     record, the same samples, LOST records and loss figures.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "core/perf_data_reader.h"
#include "core/verify.h"
#include "model/perf_data_file.h"
#include "real/file_stats.h"
#include "real/zstd_records.h"

namespace {

using namespace ringsim;

struct ModelResult {
  bool parsed = false;
  bool walked = false;
  model::PerfDataFile file;
  model::LossStats loss;
};

ModelResult read_with_model(std::span<const std::byte> bytes) {
  ModelResult m;
  m.parsed = model::parse_perf_data(bytes, m.file).empty();
  if (!m.parsed) return m;
  VERIFY(m.file.data.size() == m.file.data_size);
  VERIFY(m.file.data_offset + m.file.data_size <= bytes.size());
  m.walked = model::loss_stats(m.file, m.loss).empty();
  VERIFY(m.loss.samples + m.loss.lost_records <= m.loss.records);
  VERIFY(m.loss.loss_metric() >= 0 && m.loss.loss_metric() <= 1);
  VERIFY(m.loss.lost_fraction() >= 0 && m.loss.lost_fraction() <= 1);
  VERIFY(m.loss.first_time_ns <= m.loss.last_time_ns);
  return m;
}

struct CoreResult {
  bool parsed = false;
  bool walked = false;
  core::PerfDataView view;
  core::LossStats loss;
};

CoreResult read_with_core(std::span<const std::byte> bytes) {
  CoreResult c;
  c.parsed = core::read_perf_data(bytes, c.view).empty();
  if (!c.parsed) return c;
  VERIFY(c.view.file_bytes == bytes.size());
  VERIFY(c.view.data.data() >= bytes.data());
  VERIFY(c.view.data.data() + c.view.data.size() <= bytes.data() + bytes.size());
  core::LossMeter meter;
  c.walked = meter.add(c.view).empty();
  c.loss = meter.finish();
  const core::RecordCounts& r = c.loss.records;
  VERIFY(r.bytes <= c.view.data.size());
  VERIFY(c.walked == (r.bytes == c.view.data.size()));
  VERIFY(r.records == r.samples + r.lost_records + r.aux_records + r.auxtrace_records + r.other_records);
  VERIFY(c.loss.loss_metric() >= 0 && c.loss.loss_metric() <= 1);
  VERIFY(c.loss.lost_fraction() >= 0 && c.loss.lost_fraction() <= 1);
  VERIFY(c.loss.first_time_ns <= c.loss.last_time_ns);
  return c;
}

// The file read back as the recorder reads its files (open, fstat, mmap),
// here from a memfd (no disk in the loop) through its /proc/self/fd path.
void check_read_back(std::span<const std::byte> bytes, const CoreResult& c) {
  static const int fd = ::memfd_create("perf_data_fuzz", MFD_CLOEXEC);
  VERIFY_MSG(fd >= 0, "memfd_create failed");
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  VERIFY(::ftruncate(fd, 0) == 0);
  VERIFY(::pwrite(fd, bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size()));
  const real::FileStats back = real::read_back({path});
  VERIFY(back.files == (c.parsed ? 1u : 0u));
  if (!c.parsed) {
    VERIFY(!back.problem.empty());
    return;
  }
  VERIFY(back.file_bytes == bytes.size());
  VERIFY(back.data_bytes == c.view.data.size());
  // The read-back counts what PERF_RECORD_COMPRESSED records hold (perf -z
  // files), the core's walker the records as they are: compare with the
  // core's meter over the expanded data then.
  std::vector<std::byte> expanded;
  bool compressed = false;
  const std::string bad = real::expand_compressed(c.view.data, expanded, compressed);
  core::LossStats want = c.loss;
  bool walked = c.walked;
  if (compressed) {
    core::PerfDataView view = c.view;
    view.data = expanded;
    core::LossMeter meter;
    walked = bad.empty() && meter.add(view).empty();
    want = meter.finish();
  }
  VERIFY(back.problem.empty() == walked);
  if (!bad.empty()) return;
  VERIFY(back.loss.records == want.records);
  VERIFY(back.loss.lost_time_ns == want.lost_time_ns);
  VERIFY(back.loss.first_time_ns == want.first_time_ns);
  VERIFY(back.loss.last_time_ns == want.last_time_ns);
}

// Both readers accepted the file.
void check_agreement(const ModelResult& m, const CoreResult& c) {
  VERIFY(m.file.data_offset == c.view.file_header.data.offset);
  VERIFY(m.file.data_size == c.view.data.size());
  VERIFY(m.file.attrs.size() == c.view.attrs.size());
  for (std::size_t i = 0; i < m.file.attrs.size(); i++) {
    VERIFY(m.file.attrs[i].sample_type == c.view.attrs[i].attr.sample_type);
    VERIFY(m.file.attrs[i].ids == c.view.attrs[i].ids);
  }
  if (!m.walked || !c.walked) return;
  VERIFY(m.loss.records == c.loss.records.records);
  VERIFY(m.loss.samples == c.loss.records.samples);
  VERIFY(m.loss.lost_records == c.loss.records.lost_records);
  VERIFY(m.loss.lost_sum == c.loss.records.lost_sum);
  // The model reads time and CPU through the first attribute; the core
  // through the record's own (by identifier) when there are several.
  if (c.view.attrs.size() != 1) return;
  VERIFY(m.loss.first_time_ns == c.loss.first_time_ns);
  VERIFY(m.loss.last_time_ns == c.loss.last_time_ns);
  VERIFY(m.loss.lost_time_ns == c.loss.lost_time_ns);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  const ModelResult m = read_with_model(bytes);
  const CoreResult c = read_with_core(bytes);
  check_read_back(bytes, c);
  if (m.parsed && c.parsed) check_agreement(m, c);
  return 0;
}
