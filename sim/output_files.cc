#include "sim/output_files.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <span>

#include "core/mmap2.h"
#include "core/perf_abi.h"
#include "core/perf_data.h"
#include "core/verify.h"
#include "sim/feature_check.h"
#include "sim/sample.h"

namespace ringsim::sim {
namespace {

struct SimEventDescription {
  std::uint32_t type;
  std::uint64_t config;
  RecordLayout layout;
  std::uint64_t first_id;  // the id on CPU 0; CPU n has first_id + n
};

std::vector<SimEventDescription> sim_events(const KernelConfig& k) {
  static constexpr std::uint64_t kConfigs[] = {PERF_COUNT_SW_CPU_CLOCK, PERF_COUNT_SW_TASK_CLOCK,
                                               PERF_COUNT_SW_PAGE_FAULTS};
  std::vector<SimEventDescription> out;
  for (std::uint32_t e = 0; e < k.events_per_cpu; e++) {
    out.push_back({PERF_TYPE_SOFTWARE, kConfigs[e % 3], e % 2 == 0 ? RecordLayout::a : RecordLayout::b,
                   1000ull * (e + 1)});
  }
  if (k.sideband) out.push_back({PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, RecordLayout::b, 9000});
  return out;
}

std::vector<model::PerfAttr> model_attrs(const KernelConfig& k) {
  std::vector<model::PerfAttr> out;
  for (const SimEventDescription& e : sim_events(k)) {
    model::PerfAttr attr;
    attr.type = e.type;
    attr.config = e.config;
    attr.sample_type = sample_type_of(e.layout, k.sampling.period_field && e.config != PERF_COUNT_SW_DUMMY);
    attr.sample_id_all = true;
    for (std::uint32_t cpu = 0; cpu < k.cpus; cpu++) attr.ids.push_back(e.first_id + cpu);
    out.push_back(attr);
  }
  return out;
}

bool simulated_type(std::uint32_t type) {
  switch (type) {
    case PERF_RECORD_SAMPLE:
    case PERF_RECORD_LOST:
    case PERF_RECORD_AUX:
    case PERF_RECORD_COMM:
    case PERF_RECORD_MMAP2:
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT:
    case PERF_RECORD_SWITCH:
    case PERF_RECORD_THROTTLE:
    case PERF_RECORD_UNTHROTTLE:
      return true;
    default:
      return false;
  }
}

// round_order: at each FINISHED_ROUND, perf's ordered events flush every
// queued record up to the newest time seen at the marker before (two
// rounds: ordered_events' next_flush); a record after the marker that is
// older than what was flushed reaches perf out of order. It is the
// writer's fault if the kernel had published that record before the
// marker before was written: the round that ended with this marker began
// after that, so it should have read the record. Otherwise the kernel
// published it late (a writer held between taking its time stamp and
// reserving space, an interrupted outermost writer), which perf's
// two-round rule cannot absorb either ("Timestamp below last timeslice
// flush"): counted, not a violation.
class RoundOrder {
 public:
  RoundOrder(const model::KernelLog& log, const std::vector<std::uint64_t>& marks_ns)
      : log_(log), marks_ns_(marks_ns) {}

  void marker() {
    markers_++;
    flushed_ns_ = newest_at_marker_ns_;
    newest_at_marker_ns_ = newest_ns_;
  }
  void record(const std::string& name, const model::PerfRecord& r, std::uint32_t cpu, std::uint64_t time_ns,
              std::vector<model::Violation>& out) {
    if (time_ns < flushed_ns_) check(name, r, cpu, time_ns, out);
    newest_ns_ = std::max(newest_ns_, time_ns);
  }
  std::uint64_t published_late() const { return published_late_; }

 private:
  void check(const std::string& name, const model::PerfRecord& r, std::uint32_t cpu, std::uint64_t time_ns,
             std::vector<model::Violation>& out) {
    VERIFY(markers_ >= 2);  // nothing is flushed before the second marker
    const bool known_round = markers_ - 2 < marks_ns_.size();
    const std::uint64_t round_began_ns = known_round ? marks_ns_[markers_ - 2] : 0;
    const std::optional<std::uint64_t> published = published_ns(cpu, r.bytes);
    if (known_round && published && *published >= round_began_ns) {
      published_late_++;
      return;
    }
    if (reported_ || out.size() >= 20) return;
    reported_ = true;
    std::string why = !known_round ? "the writer noted fewer markers than the file holds"
                      : !published ? "the kernel never wrote it"
                                   : "the kernel published it at " + std::to_string(*published) +
                                         ", before the round that ended with this marker began at " +
                                         std::to_string(round_began_ns);
    out.push_back(model::Violation{model::kRoundOrder,
                                   name + ": the record at data offset " + std::to_string(r.offset) + " (time " +
                                       std::to_string(time_ns) + ") comes after a FINISHED_ROUND that let a " +
                                       "reader flush up to " + std::to_string(flushed_ns_) + "; " + why});
  }

  // When the kernel published the record with these bytes on `cpu` (the
  // latest, if several are alike).
  std::optional<std::uint64_t> published_ns(std::uint32_t cpu, std::span<const std::byte> bytes) const {
    if (cpu >= log_.cpus.size()) return std::nullopt;
    const model::CpuLog& c = log_.cpus[cpu];
    std::optional<std::uint64_t> found;
    for (const model::WrittenRecord& w : c.written) {
      if (w.size != bytes.size() || w.offset + w.size > c.bytes.size()) continue;
      if (std::memcmp(c.bytes.data() + w.offset, bytes.data(), w.size) != 0) continue;
      found = std::max(found.value_or(0), w.published_ns);
    }
    return found;
  }

  const model::KernelLog& log_;
  const std::vector<std::uint64_t>& marks_ns_;
  std::uint64_t markers_ = 0;
  std::uint64_t newest_ns_ = 0;
  std::uint64_t newest_at_marker_ns_ = 0;
  std::uint64_t flushed_ns_ = 0;
  std::uint64_t published_late_ = 0;
  bool reported_ = false;
};

class FileReader {
 public:
  FileReader(const KernelConfig& kernel, bool finished, const model::KernelLog& log,
             const std::vector<std::uint64_t>& marks_ns, OutputFiles& out)
      : kernel_(kernel), finished_(finished), attrs_(model_attrs(kernel)), out_(out), order_(log, marks_ns) {
    for (const model::PerfAttr& a : attrs_) {
      for (std::uint32_t cpu = 0; cpu < a.ids.size(); cpu++) cpu_of_id_[a.ids[cpu]] = cpu;
    }
  }

  std::uint64_t published_late() const { return order_.published_late(); }

  void read(const SimFile& f, const std::string& name) {
    out_.files++;
    out_.bytes += f.bytes.size();
    if (finished_ && !f.closed) violate(name + " was never closed");
    model::PerfDataFile parsed;
    if (const std::string problem = model::parse_perf_data(f.bytes, parsed); !problem.empty()) {
      violate(name + ": " + problem);
      return;
    }
    check_head(f, parsed, name);
    const std::string problem = parsed.for_each_record([&](const model::PerfRecord& r) { record(parsed, r, name); });
    if (!problem.empty()) violate(name + ": " + problem);
    out_.combined.data.insert(out_.combined.data.end(), parsed.data.begin(), parsed.data.end());
  }

 private:
  void violate(const std::string& detail) {
    if (out_.violations.size() < 20) out_.violations.push_back(model::Violation{model::kFileValid, detail});
  }

  void check_head(const SimFile& f, const model::PerfDataFile& parsed, const std::string& name) {
    bool same = parsed.attrs.size() == attrs_.size();
    for (std::size_t i = 0; same && i < attrs_.size(); i++) {
      same = parsed.attrs[i].sample_type == attrs_[i].sample_type && parsed.attrs[i].sample_id_all &&
             parsed.attrs[i].ids == attrs_[i].ids && parsed.attrs[i].config == attrs_[i].config;
    }
    if (!same) violate(name + ": the attribute section does not describe the simulated events");
    const std::uint64_t data_end = parsed.data_offset + parsed.data_size;
    if (finished_ && f.bytes.size() != parsed.end()) {
      violate(name + " is " + std::to_string(f.bytes.size()) + " bytes, its data section and features end at " +
              std::to_string(parsed.end()) + " (not cut to its valid prefix)");
    }
    check_file_features(parsed, kernel_.cpus, finished_, [&](const std::string& problem) { violate(name + ": " + problem); });
    // No hole: every byte of the data section was written by a write that
    // completed.
    if (parsed.data_size == 0) return;
    const auto it = f.data_written.upper_bound(parsed.data_offset);
    const bool covered = it != f.data_written.begin() && std::prev(it)->first <= parsed.data_offset &&
                         std::prev(it)->second >= data_end;
    if (!covered) {
      violate(name + ": the data section [" + std::to_string(parsed.data_offset) + ", " + std::to_string(data_end) +
              ") has bytes no completed write put there (a hole)");
    }
  }

  void auxtrace(const model::PerfRecord& r, const std::string& name) {
    core::AuxtraceHeader h;
    std::memcpy(&h, r.bytes.data(), sizeof h);
    if (h.cpu >= kernel_.cpus) {
      violate(name + ": an AUXTRACE record for cpu " + std::to_string(h.cpu));
      return;
    }
    model::AuxChunk chunk;
    chunk.offset = h.offset;
    chunk.data.assign(r.bytes.begin() + core::kAuxtraceHeaderBytes, r.bytes.end());
    out_.output.cpus[h.cpu].aux.push_back(std::move(chunk));
  }

  // What a consumer reads from an MMAP2 (core/mmap2.h): the simulated
  // events never ask for build-ids, so every body is the kernel's device and
  // inode, whatever its misc says (another session's bit: row 20).
  void mmap2(const model::PerfRecord& r, const std::string& name) {
    core::Mmap2Identity identity;
    const std::string problem = core::decode_mmap2(r.bytes, /*asked_build_id=*/false, identity);
    const std::string at = name + ": the MMAP2 at data offset " + std::to_string(r.offset);
    if (!problem.empty()) {
      violate(at + ": " + problem);
    } else if (identity.has_build_id) {
      violate(at + " was read as a build-id its event never asked for (fidelity row 20)");
    } else if (identity.maj != kSimMmapMajor || identity.min != kSimMmapMinor) {
      violate(at + " reads as device " + std::to_string(identity.maj) + ":" + std::to_string(identity.min) +
              ", the kernel wrote 8:1");
    }
  }

  void record(const model::PerfDataFile& parsed, const model::PerfRecord& r, const std::string& name) {
    if (r.type == core::kRecordFinishedRound) {
      if (r.size != 8) violate(name + ": a finished-round record of " + std::to_string(r.size) + " bytes");
      out_.rounds++;
      order_.marker();
      return;
    }
    if (r.type == core::kRecordAuxtrace) {
      auxtrace(r, name);
      return;
    }
    std::uint64_t id = 0;
    const auto cpu = parsed.id_of(r, id) ? cpu_of_id_.find(id) : cpu_of_id_.end();
    if (!simulated_type(r.type) || cpu == cpu_of_id_.end()) {
      violate(name + ": record at data offset " + std::to_string(r.offset) + " (type " + std::to_string(r.type) +
              ") is not a record of a simulated event");
      return;
    }
    if (r.type == PERF_RECORD_MMAP2) mmap2(r, name);
    std::uint64_t time_ns = 0;
    if (parsed.time_of(r, time_ns)) order_.record(name, r, cpu->second, time_ns, out_.order_violations);
    std::vector<std::byte>& bytes = out_.output.cpus[cpu->second].bytes;
    bytes.insert(bytes.end(), r.bytes.begin(), r.bytes.end());
  }

  const KernelConfig& kernel_;
  const bool finished_;
  const std::vector<model::PerfAttr> attrs_;
  OutputFiles& out_;
  std::map<std::uint64_t, std::uint32_t> cpu_of_id_;
  RoundOrder order_;
};

}  // namespace

std::string sim_event_name(std::uint64_t config) {
  switch (config) {
    case PERF_COUNT_SW_CPU_CLOCK: return "cpu-clock";
    case PERF_COUNT_SW_TASK_CLOCK: return "task-clock";
    case PERF_COUNT_SW_PAGE_FAULTS: return "page-faults";
    case PERF_COUNT_SW_DUMMY: return "dummy";
    default: return "";
  }
}

core::PerfDataHead sim_head(const KernelConfig& k) {
  std::vector<core::EventDescription> events;
  for (const SimEventDescription& e : sim_events(k)) {
    core::EventDescription d;
    d.name = sim_event_name(e.config);
    d.attr.type = e.type;
    d.attr.config = e.config;
    const bool sampling = e.config != PERF_COUNT_SW_DUMMY;
    d.attr.sample_type = sample_type_of(e.layout, k.sampling.period_field && sampling);
    d.attr.sample_period = 1;
    if (sampling && k.sampling.freq()) {
      d.attr.freq = 1;
      d.attr.sample_freq = k.sampling.sample_freq;  // a union with sample_period
    } else if (sampling) {
      d.attr.sample_period = k.sampling.sample_period;
    }
    d.attr.sample_id_all = 1;
    d.attr.write_backward = core::backward(k.mode) ? 1 : 0;
    for (std::uint32_t cpu = 0; cpu < k.cpus; cpu++) d.ids.push_back(e.first_id + cpu);
    events.push_back(d);
  }
  return core::PerfDataHead(std::move(events));
}

void memory_loss_stats(const model::RunOutput& output, const KernelConfig& kernel, model::LossStats& out) {
  model::PerfDataFile file;
  file.attrs = model_attrs(kernel);
  std::vector<std::span<const std::byte>> parts;
  parts.reserve(output.cpus.size());
  for (const model::CpuOutput& cpu : output.cpus) parts.emplace_back(cpu.bytes);
  model::loss_stats(file, parts, out);
}

OutputFiles read_output_files(const SimDisk& disk, const KernelConfig& kernel, bool finished,
                              const model::KernelLog& log, const std::vector<std::uint64_t>& round_marks_ns) {
  OutputFiles out;
  out.output.cpus.assign(kernel.cpus, model::CpuOutput{});
  out.combined.attrs = model_attrs(kernel);
  FileReader reader(kernel, finished, log, round_marks_ns, out);
  const std::vector<SimFile>& files = disk.files();
  for (std::size_t index = 0; index < files.size(); index++) {
    if (files[index].removed) continue;
    reader.read(files[index], "output file " + std::to_string(index));
  }
  out.combined.data_size = out.combined.data.size();
  out.published_late = reader.published_late();
  return out;
}

}  // namespace ringsim::sim
