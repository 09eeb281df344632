#include "sim/sim_features.h"

#include <algorithm>
#include <string>
#include <utility>

#include "core/verify.h"

namespace ringsim::sim {

core::HostFeatures sim_host_features(std::uint32_t cpus) {
  VERIFY(cpus > 0);
  core::HostFeatures h;
  h.hostname = "ringsim-sim";
  h.osrelease = "simulated";
  h.version = "ringsim";
  h.arch = "x86_64";
  h.cpus_avail = cpus;
  h.cpus_online = cpus;
  h.cpudesc = "simulated CPU";
  h.cpuid = "ringsim,0,0,0";
  h.total_mem_kib = 1 << 20;
  h.cmdline = {"ringsim-sim"};
  const std::string all = cpus == 1 ? "0" : "0-" + std::to_string(cpus - 1);
  h.topology.package_cpu_lists = {all};
  for (std::uint32_t cpu = 0; cpu < cpus; cpu++) {
    h.topology.thread_cpu_lists.push_back(std::to_string(cpu));
    h.topology.cpus.push_back(core::CpuIds{cpu, 0, 0});
  }
  h.topology.has_dies = true;
  h.topology.die_cpu_lists = {all};
  h.numa = {core::NumaNode{0, 1 << 20, 1 << 19, all}};
  h.clock_resolution_ns = 1;
  return h;
}

core::BuildIdEntry sim_kernel_build_id() {
  core::BuildIdEntry e;
  e.cpumode = PERF_RECORD_MISC_KERNEL;
  for (std::uint8_t i = 0; i < core::kBuildIdBytesMax; i++) e.id.push_back(static_cast<std::uint8_t>(0xa0 + i));
  e.name = "[kernel.kallsyms]";
  return e;
}

core::FeatureSource sim_feature_source(const SimDisk& disk, std::vector<core::EventDescription> events,
                                       std::uint32_t cpus, bool aux) {
  return [&disk, events = std::move(events), cpus, aux](const core::FinishedFile& file, core::PerfFeatures& out) {
    VERIFY(file.index < disk.files().size());
    const std::vector<std::byte>& bytes = disk.files()[file.index].bytes;
    // A mutant disk's writes can leave the file shorter than the data
    // section the writer counted; the scan takes what is there and the
    // file checks (no_overlap, file_valid) report the file.
    const std::uint64_t data_bytes =
        std::min<std::uint64_t>(file.data_bytes, bytes.size() - std::min<std::uint64_t>(bytes.size(), file.data_offset));
    out.host = sim_host_features(cpus);
    out.file.build_ids = {sim_kernel_build_id()};
    out.file.aux_recorded = aux;
    // A data section that does not walk (only a mutant disk makes one)
    // keeps what the scan found before the bad record: the file check
    // reports the file.
    core::scan_data_section(std::span<const std::byte>(bytes).subspan(std::min<std::uint64_t>(file.data_offset, bytes.size()), data_bytes),
                            file.data_offset, events, out.file);
    return true;
  };
}

}  // namespace ringsim::sim
