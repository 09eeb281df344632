// What the recorder says about this machine in a file's feature sections
// (core/perf_data_features.h), read where perf reads it:
//   HOSTNAME, OSRELEASE, ARCH   uname(2)
//   NRCPUS                      /sys/devices/system/cpu/present (highest + 1), sysconf online
//   CPUDESC, CPUID              /proc/cpuinfo: "model name"; x86 "vendor,family,model,stepping"
//   TOTAL_MEM                   /proc/meminfo MemTotal (KiB)
//   CMDLINE                     /proc/self/exe, then argv[1..]
//   CPU_TOPOLOGY                /sys/devices/system/cpu/cpuN/topology/*
//   NUMA_TOPOLOGY               /sys/devices/system/node/nodeN/{meminfo,cpulist}
//   CLOCKID, CLOCK_DATA         clock_getres of the samples' clock (-k), and a CLOCK_REALTIME/clock pair
// A fact that cannot be read is left empty (or 0), never guessed: perf
// prints what the file holds.
#pragma once

#include <string>
#include <vector>

#include "core/perf_data_features.h"

namespace ringsim::real {

// The recorder's version, as the VERSION feature gives it.
inline constexpr const char* kRecorderVersion = "ringsim-record 0.11";

// argv: the recorder's command line (argv[0] is replaced by its path);
// clockid: the clock the samples are stamped with (-k).
core::HostFeatures host_features(const std::vector<std::string>& argv, int clockid);

// The CPU_TOPOLOGY of CPUs 0..cpus_avail-1 (absent CPUs get ids -1).
core::CpuTopology cpu_topology(std::uint32_t cpus_avail);

// A "name : value" field of /proc/cpuinfo's first CPU ("" if absent).
std::string cpuinfo_field(const std::string& name);

}  // namespace ringsim::real
