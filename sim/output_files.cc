#include "sim/output_files.h"

#include <cstring>

#include "core/perf_abi.h"
#include "core/perf_data.h"
#include "sim/feature_check.h"
#include "sim/sample.h"

namespace ringsim::sim {
namespace {

model::PerfAttr sim_attr() {
  model::PerfAttr attr;
  attr.sample_type = kSampleType;
  attr.sample_id_all = true;
  return attr;
}

}  // namespace

model::PerfDataFile memory_output_file(const model::RunOutput& output) {
  model::PerfDataFile file;
  file.attrs.push_back(sim_attr());
  for (const model::CpuOutput& cpu : output.cpus) file.data.insert(file.data.end(), cpu.bytes.begin(), cpu.bytes.end());
  file.data_size = file.data.size();
  return file;
}

OutputFiles read_output_files(const SimDisk& disk, std::uint32_t cpus, bool finished) {
  OutputFiles out;
  out.output.cpus.assign(cpus, model::CpuOutput{});
  out.combined.attrs.push_back(sim_attr());
  auto violate = [&](const std::string& detail) {
    if (out.violations.size() < 20) out.violations.push_back(model::Violation{"file_valid", detail});
  };
  const std::vector<SimFile>& files = disk.files();
  for (std::size_t index = 0; index < files.size(); index++) {
    const SimFile& f = files[index];
    const std::string name = "output file " + std::to_string(index);
    if (f.removed) continue;
    out.files++;
    out.bytes += f.bytes.size();
    if (finished && !f.closed) violate(name + " was never closed");
    model::PerfDataFile parsed;
    if (const std::string problem = model::parse_perf_data(f.bytes, parsed); !problem.empty()) {
      violate(name + ": " + problem);
      continue;
    }
    if (parsed.attrs.size() != 1 || parsed.attrs[0].sample_type != kSampleType || !parsed.attrs[0].sample_id_all ||
        parsed.attrs[0].ids.size() != cpus) {
      violate(name + ": the attribute section does not describe the simulated event");
    }
    const std::uint64_t data_end = parsed.data_offset + parsed.data_size;
    if (finished && f.bytes.size() != parsed.end()) {
      violate(name + " is " + std::to_string(f.bytes.size()) + " bytes, its data section and features end at " +
              std::to_string(parsed.end()) + " (not cut to its valid prefix)");
    }
    check_file_features(parsed, cpus, finished, [&](const std::string& problem) { violate(name + ": " + problem); });
    // No hole: every byte of the data section was written by a write that
    // completed.
    if (parsed.data_size > 0) {
      const auto it = f.data_written.upper_bound(parsed.data_offset);
      const bool covered = it != f.data_written.begin() && std::prev(it)->first <= parsed.data_offset &&
                           std::prev(it)->second >= data_end;
      if (!covered) {
        violate(name + ": the data section [" + std::to_string(parsed.data_offset) + ", " + std::to_string(data_end) +
                ") has bytes no completed write put there (a hole)");
      }
    }
    const std::string problem = parsed.for_each_record([&](const model::PerfRecord& r) {
      if (r.type == core::kRecordFinishedRound) {
        if (r.size != 8) violate(name + ": a finished-round record of " + std::to_string(r.size) + " bytes");
        out.rounds++;
        return;
      }
      if (r.type == core::kRecordAuxtrace) {
        core::AuxtraceHeader h;
        std::memcpy(&h, r.bytes.data(), sizeof h);
        if (h.cpu >= cpus) {
          violate(name + ": an AUXTRACE record for cpu " + std::to_string(h.cpu));
          return;
        }
        model::AuxChunk chunk;
        chunk.offset = h.offset;
        chunk.data.assign(r.bytes.begin() + core::kAuxtraceHeaderBytes, r.bytes.end());
        out.output.cpus[h.cpu].aux.push_back(std::move(chunk));
        return;
      }
      std::uint32_t cpu = 0;
      const bool known = r.type == PERF_RECORD_SAMPLE || r.type == PERF_RECORD_LOST || r.type == PERF_RECORD_AUX;
      if (!known || !parsed.cpu_of(r, cpu) || cpu >= cpus) {
        violate(name + ": record at data offset " + std::to_string(r.offset) + " (type " + std::to_string(r.type) +
                ") is not a record of a simulated CPU");
        return;
      }
      std::vector<std::byte>& bytes = out.output.cpus[cpu].bytes;
      bytes.insert(bytes.end(), r.bytes.begin(), r.bytes.end());
    });
    if (!problem.empty()) violate(name + ": " + problem);
    out.combined.data.insert(out.combined.data.end(), parsed.data.begin(), parsed.data.end());
  }
  out.combined.data_size = out.combined.data.size();
  return out;
}

}  // namespace ringsim::sim
