#include "real/host_facts.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <climits>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "real/real_backend.h"

namespace ringsim::real {
namespace {

constexpr std::size_t kLinesMax = 1 << 20;
constexpr std::uint32_t kNodesMax = 1 << 12;

// The first line of a file, without its newline ("" if unreadable).
std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  return line;
}

std::uint32_t read_u32(const std::string& path, std::uint32_t fallback) {
  const std::string line = first_line(path);
  char* end = nullptr;
  const long value = std::strtol(line.c_str(), &end, 10);
  if (line.empty() || end == line.c_str() || value < 0 || value > INT_MAX) return fallback;
  return static_cast<std::uint32_t>(value);
}

// Runs of white space squashed to one space, none at the ends.
std::string squashed(const std::string& text) {
  std::istringstream in(text);
  std::string word;
  std::string out;
  while (in >> word) out += (out.empty() ? "" : " ") + word;
  return out;
}

// "Name:   123 kB" lines: the number of `key` ("" if absent).
std::uint64_t kib_field(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  for (std::size_t n = 0; n < kLinesMax && std::getline(in, line); n++) {
    const std::size_t at = line.find(key + ":");
    if (at == std::string::npos) continue;
    return std::strtoull(line.c_str() + at + key.size() + 1, nullptr, 10);
  }
  return 0;
}

std::uint32_t cpus_avail() {
  std::vector<int> present;
  if (!parse_cpu_list(first_line("/sys/devices/system/cpu/present"), present).ok() || present.empty()) {
    const long n = ::sysconf(_SC_NPROCESSORS_CONF);
    return n > 0 ? static_cast<std::uint32_t>(n) : 0;
  }
  int highest = 0;
  for (const int cpu : present) highest = std::max(highest, cpu);
  return static_cast<std::uint32_t>(highest) + 1;
}

void add_unique(std::vector<std::string>& lists, const std::string& list) {
  if (list.empty()) return;
  for (const std::string& l : lists) {
    if (l == list) return;
  }
  lists.push_back(list);
}

std::vector<core::NumaNode> numa_nodes() {
  std::vector<core::NumaNode> nodes;
  for (std::uint32_t node = 0; node < kNodesMax; node++) {
    const std::string dir = "/sys/devices/system/node/node" + std::to_string(node);
    if (!std::filesystem::exists(dir)) continue;
    // meminfo lines read "Node 0 MemTotal:  123 kB".
    nodes.push_back(core::NumaNode{node, kib_field(dir + "/meminfo", "MemTotal"), kib_field(dir + "/meminfo", "MemFree"),
                                   first_line(dir + "/cpulist")});
  }
  return nodes;
}

std::string cpuid() {
#if defined(__x86_64__) || defined(__i386__)
  return cpuinfo_field("vendor_id") + "," + cpuinfo_field("cpu family") + "," + cpuinfo_field("model") + "," +
         cpuinfo_field("stepping");
#else
  return "";
#endif
}

std::uint64_t ns_of(const timespec& t) {
  return static_cast<std::uint64_t>(t.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(t.tv_nsec);
}

// As perf's record__init_clock: the clock's resolution, and the time of
// day and the clock's time read one after the other.
void clock_features(int clockid, core::HostFeatures& h) {
  timespec resolution{};
  if (::clock_getres(clockid, &resolution) == 0) h.clock_resolution_ns = ns_of(resolution);
  timespec tod{};
  timespec clock{};
  if (::clock_gettime(CLOCK_REALTIME, &tod) == 0 && ::clock_gettime(clockid, &clock) == 0) {
    h.clock_data = core::ClockData{static_cast<std::uint32_t>(clockid), ns_of(tod), ns_of(clock)};
  }
}

}  // namespace

std::string cpuinfo_field(const std::string& name) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  for (std::size_t n = 0; n < kLinesMax && std::getline(in, line); n++) {
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    if (squashed(line.substr(0, colon)) == name) return squashed(line.substr(colon + 1));
  }
  return "";
}

core::CpuTopology cpu_topology(std::uint32_t avail) {
  core::CpuTopology t;
  t.has_dies = true;
  for (std::uint32_t cpu = 0; cpu < avail; cpu++) {
    const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    std::string package = first_line(dir + "package_cpus_list");
    if (package.empty()) package = first_line(dir + "core_siblings_list");
    std::string threads = first_line(dir + "core_cpus_list");
    if (threads.empty()) threads = first_line(dir + "thread_siblings_list");
    add_unique(t.package_cpu_lists, package);
    add_unique(t.thread_cpu_lists, threads);
    const std::uint32_t absent = 0xffffffffu;
    t.cpus.push_back(core::CpuIds{read_u32(dir + "core_id", absent), read_u32(dir + "physical_package_id", absent),
                                  read_u32(dir + "die_id", absent)});
    const std::string dies = first_line(dir + "die_cpus_list");
    if (dies.empty() && !package.empty()) t.has_dies = false;
    add_unique(t.die_cpu_lists, dies);
  }
  if (!t.has_dies) t.die_cpu_lists.clear();
  return t;
}

core::HostFeatures host_features(const std::vector<std::string>& argv, int clockid) {
  core::HostFeatures h;
  utsname u{};
  if (::uname(&u) == 0) {
    h.hostname = u.nodename;
    h.osrelease = u.release;
    h.arch = u.machine;
  }
  h.version = kRecorderVersion;
  h.cpus_avail = cpus_avail();
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  h.cpus_online = online > 0 ? static_cast<std::uint32_t>(online) : 0;
  h.cpudesc = cpuinfo_field("model name");
  h.cpuid = cpuid();
  h.total_mem_kib = kib_field("/proc/meminfo", "MemTotal");
  std::error_code ignored;
  h.cmdline.push_back(std::filesystem::read_symlink("/proc/self/exe", ignored).string());
  for (std::size_t i = 1; i < argv.size(); i++) h.cmdline.push_back(argv[i]);
  h.topology = cpu_topology(h.cpus_avail);
  h.numa = numa_nodes();
  clock_features(clockid, h);
  return h;
}

}  // namespace ringsim::real
