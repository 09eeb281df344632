// The simulated disk's short writes (sim/disk.h): where a write may stop.
// On Linux a write to a page-cache file is copied page by page
// (generic_perform_write, mm/filemap.c) and stops short only between two
// pages of the file, so a write inside one page is whole or fails whole;
// the campaign's disk does the same unless short_any_byte is set.
#include <gtest/gtest.h>

#include <cstddef>
#include <set>
#include <vector>

#include "sim/disk.h"
#include "sim/probes.h"
#include "sim/scheduler.h"

namespace ringsim::sim {
namespace {

struct Outcome {
  std::set<std::int64_t> results;  // bytes written by the first attempt of each write
  std::uint64_t short_writes = 0;
};

// `writes` writes of `size` bytes at `offset`, each to a new file, every
// one drawn short (short_per_million = 10^6), seeds 1..writes.
Outcome write_many(std::uint64_t offset, std::uint64_t size, bool any_byte, int writes) {
  Outcome out;
  for (int seed = 1; seed <= writes; seed++) {
    DecisionSource decisions(static_cast<std::uint64_t>(seed), false);
    Scheduler scheduler(decisions, SchedulerLimits{});
    Probes probes;
    DiskConfig config;
    config.latency_ns_min = 0;
    config.latency_ns_max = 0;
    config.ns_per_kib = 0;
    config.short_per_million = 1'000'000;
    config.short_any_byte = any_byte;
    SimDisk disk(scheduler, config, probes);
    const std::vector<std::byte> data(size, std::byte{0x5a});
    scheduler.run([&] {
      scheduler.spawn("writer", [&] {
        EXPECT_EQ(disk.open_output(0), 0);
        out.results.insert(disk.write_at(data, offset));
        EXPECT_EQ(disk.close_output(), 0);
      });
    });
    out.short_writes += disk.stats().short_writes;
    EXPECT_TRUE(disk.violations().empty());
  }
  return out;
}

TEST(SimDisk, AHeaderWriteInsideOnePageIsNeverShort) {
  // A perf.data header fix-up: 104 bytes at offset 0.
  const Outcome o = write_many(0, 104, false, 200);
  EXPECT_EQ(o.results, std::set<std::int64_t>{104});
  EXPECT_EQ(o.short_writes, 0u);
}

TEST(SimDisk, AShortWriteEndsAtAPageBoundaryOfTheFile) {
  // 10,000 bytes at offset 1000: the page boundaries inside are 4096 and
  // 8192, so a short write writes 3096 or 7192 bytes, or the write is whole.
  const Outcome o = write_many(1000, 10'000, false, 200);
  for (const std::int64_t n : o.results) {
    EXPECT_TRUE(n == 3096 || n == 7192 || n == 10'000) << n;
  }
  EXPECT_TRUE(o.results.count(3096) == 1 && o.results.count(7192) == 1) << "both boundaries reached";
  EXPECT_GT(o.short_writes, 100u);
}

TEST(SimDisk, AnyByteLetsAHeaderWriteStopInside) {
  const Outcome o = write_many(0, 104, true, 200);
  EXPECT_GT(o.results.size(), 20u);
  for (const std::int64_t n : o.results) EXPECT_TRUE(n >= 1 && n <= 103) << n;
  EXPECT_EQ(o.short_writes, 200u);
}

}  // namespace
}  // namespace ringsim::sim
