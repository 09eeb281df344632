#include "sim/feature_check.h"

#include <algorithm>
#include <vector>

#include "sim/output_files.h"
#include "sim/sim_features.h"

namespace ringsim::sim {
namespace {

// The bits every simulated file has; AUXTRACE (18) comes with AUX areas.
const std::vector<std::uint32_t>& required_bits() {
  static const std::vector<std::uint32_t> bits = {
      model::kFeatBuildId,      model::kFeatHostname,   model::kFeatOsrelease,    model::kFeatVersion,
      model::kFeatArch,         model::kFeatNrcpus,     model::kFeatCpudesc,      model::kFeatCpuid,
      model::kFeatTotalMem,     model::kFeatCmdline,    model::kFeatEventDesc,    model::kFeatCpuTopology,
      model::kFeatNumaTopology, model::kFeatSampleTime, model::kFeatClockid};
  return bits;
}

// The host's sections against the values the run wrote.
std::string host_problem(const model::PerfFeatures& f, std::uint32_t cpus) {
  const core::HostFeatures h = sim_host_features(cpus);
  if (f.hostname != h.hostname || f.osrelease != h.osrelease || f.version != h.version || f.arch != h.arch ||
      f.cpudesc != h.cpudesc || f.cpuid != h.cpuid || f.cmdline != h.cmdline) {
    return "a string feature differs from the run's (hostname \"" + f.hostname + "\", cpuid \"" + f.cpuid + "\")";
  }
  if (f.cpus_avail != h.cpus_avail || f.cpus_online != h.cpus_online || f.total_mem_kib != h.total_mem_kib) {
    return "NRCPUS or TOTAL_MEM differs from the run's";
  }
  const model::CpuTopologyFeature& t = f.topology;
  bool ids_ok = t.core_ids.size() == cpus && t.socket_ids.size() == cpus && t.die_ids.size() == cpus;
  for (std::uint32_t cpu = 0; ids_ok && cpu < cpus; cpu++) {
    const core::CpuIds& want = h.topology.cpus[cpu];
    ids_ok = t.core_ids[cpu] == want.core_id && t.socket_ids[cpu] == want.socket_id && t.die_ids[cpu] == want.die_id;
  }
  if (!ids_ok || t.package_lists != h.topology.package_cpu_lists || t.thread_lists != h.topology.thread_cpu_lists ||
      !t.has_dies || t.die_lists != h.topology.die_cpu_lists) {
    return "CPU_TOPOLOGY differs from the run's";
  }
  const core::NumaNode& n = h.numa.front();
  if (f.numa.size() != 1 || f.numa[0].node != n.node || f.numa[0].mem_total_kib != n.mem_total_kib ||
      f.numa[0].mem_free_kib != n.mem_free_kib || f.numa[0].cpu_list != n.cpu_list) {
    return "NUMA_TOPOLOGY differs from the run's";
  }
  if (f.clock_resolution_ns != *h.clock_resolution_ns) return "CLOCKID differs from the run's";
  return "";
}

// EVENT_DESC and BUILD_ID against the attribute section and the run's id.
std::string event_problem(const model::PerfDataFile& file) {
  const model::PerfFeatures& f = file.features;
  if (f.events.size() != file.attrs.size()) return "EVENT_DESC describes " + std::to_string(f.events.size()) + " events";
  for (std::size_t i = 0; i < f.events.size(); i++) {
    const model::EventDescFeature& e = f.events[i];
    const model::PerfAttr& a = file.attrs[i];
    if (e.name != sim_event_name(a.config) || e.type != a.type || e.config != a.config || e.sample_type != a.sample_type ||
        e.ids != a.ids) {
      return "EVENT_DESC event " + std::to_string(i) + " (\"" + e.name + "\") is not the attribute section's";
    }
  }
  const core::BuildIdEntry want = sim_kernel_build_id();
  if (f.build_ids.size() != 1 || f.build_ids[0].name != want.name || f.build_ids[0].id_hex != core::to_hex(want.id) ||
      f.build_ids[0].misc != (core::kBuildIdMiscHasSize | want.cpumode) || f.build_ids[0].pid != -1) {
    return "BUILD_ID is not the simulated kernel's";
  }
  return "";
}

// SAMPLE_TIME and AUXTRACE against the data section, as the model walks it.
std::string data_problem(const model::PerfDataFile& file) {
  const model::PerfFeatures& f = file.features;
  bool any = false;
  std::uint64_t first = 0, last = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> auxtrace;
  file.for_each_record([&](const model::PerfRecord& r) {
    if (r.type == model::kTypeAuxtrace) auxtrace.emplace_back(file.data_offset + r.offset, r.size);
    std::uint64_t time = 0;
    if (r.type != model::kTypeSample || !file.time_of(r, time)) return;
    first = any ? std::min(first, time) : time;
    last = any ? std::max(last, time) : time;
    any = true;
  });
  if (f.first_sample_ns != first || f.last_sample_ns != last) {
    return "SAMPLE_TIME " + std::to_string(f.first_sample_ns) + ".." + std::to_string(f.last_sample_ns) +
           ", the samples span " + std::to_string(first) + ".." + std::to_string(last);
  }
  if (f.has(model::kFeatAuxtrace) ? f.auxtrace != auxtrace : !auxtrace.empty()) {
    return "the AUXTRACE index lists " + std::to_string(f.auxtrace.size()) + " records, the data section holds " +
           std::to_string(auxtrace.size());
  }
  return "";
}

}  // namespace

void check_file_features(const model::PerfDataFile& file, std::uint32_t cpus, bool finished,
                         const std::function<void(const std::string&)>& violate) {
  const model::PerfFeatures& f = file.features;
  if (f.table.empty()) {
    if (finished) violate("no feature sections in a file the writer finished");
    return;
  }
  for (const std::uint32_t bit : required_bits()) {
    if (!f.has(bit)) violate("feature " + model::feature_name(bit) + " missing");
  }
  for (std::uint32_t bit = 0; bit < 256; bit++) {
    const bool known = bit == model::kFeatAuxtrace ||
                       std::find(required_bits().begin(), required_bits().end(), bit) != required_bits().end();
    if (f.has(bit) && !known) violate("feature " + model::feature_name(bit) + " was never written");
  }
  for (const std::string& problem : {host_problem(f, cpus), event_problem(file), data_problem(file)}) {
    if (!problem.empty()) violate(problem);
  }
}

}  // namespace ringsim::sim
