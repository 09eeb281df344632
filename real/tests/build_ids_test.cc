// real/build_ids.h: the DSOs samples hit, found in time order as perf's
// ordered events see them, not in file order.
#include "real/build_ids.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/perf_data.h"

namespace ringsim::real {
namespace {

constexpr std::uint64_t kType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
constexpr std::uint64_t kId = 77;
constexpr std::int32_t kPid = 4242;

void put64(std::vector<std::byte>& out, std::uint64_t v) {
  const auto* p = reinterpret_cast<const std::byte*>(&v);
  out.insert(out.end(), p, p + 8);
}
void put32x2(std::vector<std::byte>& out, std::uint32_t a, std::uint32_t b) { put64(out, a | std::uint64_t{b} << 32); }
void finish(std::vector<std::byte>& out, std::size_t start, std::uint32_t type, std::uint16_t misc) {
  perf_event_header h{type, misc, static_cast<std::uint16_t>(out.size() - start)};
  std::memcpy(out.data() + start, &h, sizeof h);
}

// A user-mode sample at `ip` of kPid at `time`.
void sample(std::vector<std::byte>& out, std::uint64_t ip, std::uint64_t time) {
  const std::size_t start = out.size();
  out.resize(start + 8);
  put64(out, kId);
  put64(out, ip);
  put32x2(out, kPid, kPid);
  put64(out, time);
  finish(out, start, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
}

// An MMAP2 of `path` at [start, start + len) for kPid, with its sample_id
// trailer (pid/tid, time, identifier).
void mmap2(std::vector<std::byte>& out, std::uint64_t addr, std::uint64_t len, const std::string& path,
           std::uint64_t time) {
  const std::size_t start = out.size();
  out.resize(start + 8);
  put32x2(out, kPid, kPid);
  put64(out, addr);
  put64(out, len);
  put64(out, 0);                 // pgoff
  for (int k = 0; k < 3; k++) put64(out, 0);  // maj/min, ino, ino_generation
  put32x2(out, 5, 2);            // prot, flags
  std::string name = path;
  name.resize((path.size() / 8 + 1) * 8, '\0');
  for (char c : name) out.push_back(static_cast<std::byte>(c));
  put32x2(out, kPid, kPid);
  put64(out, time);
  put64(out, kId);
  finish(out, start, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
}

std::vector<core::EventDescription> events() {
  core::EventDescription e;
  e.attr.size = sizeof e.attr;
  e.attr.sample_type = kType;
  e.attr.sample_id_all = 1;
  e.ids = {kId};
  e.name = "cpu-clock";
  return {e};
}

TEST(HitDsos, ASampleAheadOfItsMmapInTheFileStillHitsIt) {
  // Ring 1 read first: the sample (time 200) lands before the loader's
  // MMAP2 (time 100, ring 0) in the file.
  std::vector<std::byte> data;
  sample(data, 0x7f0000001000, 200);
  mmap2(data, 0x7f0000000000, 0x10000, "/lib64/ld-linux-x86-64.so.2", 100);
  HitDsos hits;
  ASSERT_EQ(find_hit_dsos(data, 0, events(), hits), "");
  EXPECT_EQ(hits.samples, 1u);
  EXPECT_EQ(hits.unresolved, 0u);
  ASSERT_EQ(hits.user.size(), 1u);
  EXPECT_EQ(hits.user[0].name, "/lib64/ld-linux-x86-64.so.2");
}

TEST(HitDsos, AMappingAfterTheSampleDoesNotCount) {
  // The control: a mapping made after the sample (by time) is not hit.
  std::vector<std::byte> data;
  mmap2(data, 0x7f0000000000, 0x10000, "/lib64/ld-linux-x86-64.so.2", 300);
  sample(data, 0x7f0000001000, 200);
  HitDsos hits;
  ASSERT_EQ(find_hit_dsos(data, 0, events(), hits), "");
  EXPECT_EQ(hits.unresolved, 1u);
  EXPECT_TRUE(hits.user.empty());
}

}  // namespace
}  // namespace ringsim::real
