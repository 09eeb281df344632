// real/build_ids.h: the DSOs samples hit, found in time order as perf's
// ordered events see them, not in file order.
#include "real/build_ids.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <filesystem>
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
// `body`: the 24 bytes of maj/min, ino, ino_generation (or build-id).
void mmap2(std::vector<std::byte>& out, std::uint64_t addr, std::uint64_t len, const std::string& path,
           std::uint64_t time, std::uint16_t misc = PERF_RECORD_MISC_USER,
           const std::array<std::uint64_t, 3>& body = {0, 0, 0}) {
  const std::size_t start = out.size();
  out.resize(start + 8);
  put32x2(out, kPid, kPid);
  put64(out, addr);
  put64(out, len);
  put64(out, 0);                 // pgoff
  for (const std::uint64_t word : body) put64(out, word);
  put32x2(out, 5, 2);            // prot, flags
  std::string name = path;
  name.resize((path.size() / 8 + 1) * 8, '\0');
  for (char c : name) out.push_back(static_cast<std::byte>(c));
  put32x2(out, kPid, kPid);
  put64(out, time);
  put64(out, kId);
  finish(out, start, PERF_RECORD_MMAP2, misc);
}

std::vector<core::EventDescription> events(bool mmap2 = false, bool build_id = false) {
  core::EventDescription e;
  e.attr.size = sizeof e.attr;
  e.attr.mmap = e.attr.mmap2 = mmap2;
  e.attr.build_id = build_id;
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

// docs/fidelity.md row 20: Linux leaves PERF_RECORD_MISC_MMAP_BUILD_ID
// set over a device/inode body (here /dev/sda1's 8:1, inode 1234) for an
// event that never asked for build-ids. Read as a build-id it would be 8
// bytes of min and inode (with /dev/vda's 254:0, 254 bytes: perf 6.1
// overflows its stack on it); the DSO must keep no build-id from it, and
// the untrusted bit is counted.
TEST(HitDsos, ABuildIdMiscOnAnEventThatNeverAskedIsNotTrusted) {
  const std::uint16_t lying = PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID;
  std::vector<std::byte> data;
  mmap2(data, 0x7f0000000000, 0x10000, "/usr/lib/x.so", 100, lying, {8 | std::uint64_t{1} << 32, 1234, 0});
  sample(data, 0x7f0000001000, 200);
  HitDsos hits;
  ASSERT_EQ(find_hit_dsos(data, 0, events(true, false), hits), "");
  ASSERT_EQ(hits.user.size(), 1u);
  EXPECT_TRUE(hits.user[0].id.empty());
  EXPECT_EQ(hits.untrusted_build_id_misc, 1u);
  EXPECT_EQ(hits.bad_mmap2, 0u);
}

// The control: an event that asked for build-ids gets the kernel's word
// (a 20-byte build-id 01 02 .. 14 after its size byte).
TEST(HitDsos, ABuildIdTheEventAskedForIsTaken) {
  const std::uint16_t misc = PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID;
  std::array<std::uint64_t, 3> body{};
  std::array<std::uint8_t, 24> bytes{};
  bytes[0] = 20;
  for (int k = 0; k < 20; k++) bytes[4 + k] = static_cast<std::uint8_t>(k + 1);
  std::memcpy(body.data(), bytes.data(), bytes.size());
  std::vector<std::byte> data;
  mmap2(data, 0x7f0000000000, 0x10000, "/usr/lib/x.so", 100, misc, body);
  sample(data, 0x7f0000001000, 200);
  HitDsos hits;
  ASSERT_EQ(find_hit_dsos(data, 0, events(true, true), hits), "");
  ASSERT_EQ(hits.user.size(), 1u);
  ASSERT_EQ(hits.user[0].id.size(), 20u);
  EXPECT_EQ(hits.user[0].id[0], 1u);
  EXPECT_EQ(hits.user[0].id[19], 20u);
  EXPECT_EQ(hits.untrusted_build_id_misc, 0u);
  // The same body with a size of 254 on an event that asked: corrupt, counted.
  data.clear();
  body[0] = 254;
  mmap2(data, 0x7f0000000000, 0x10000, "/usr/lib/x.so", 100, misc, body);
  HitDsos bad;
  ASSERT_EQ(find_hit_dsos(data, 0, events(true, true), bad), "");
  EXPECT_EQ(bad.bad_mmap2, 1u);
  EXPECT_TRUE(bad.user.empty());
}

// Issue 19: a file is cached only under its own build-id. The recording
// saw one build-id; the file at that path now (changed since, or another
// mount namespace's file of the same path) has another: not cached, said.
TEST(BuildIdCache, AFileIsNeverCachedUnderABuildIdItDoesNotHave) {
  const std::string path = "/bin/true";
  BuildId real_id;
  ASSERT_EQ(elf_file_build_id(path, real_id), "");
  const std::string dir = ::testing::TempDir() + "/build-id-cache-verify";
  std::filesystem::remove_all(dir);
  BuildId wrong(20, 0xab);
  const std::string problem =
      fill_build_id_cache(dir, {core::BuildIdEntry{PERF_RECORD_MISC_USER, -1, wrong, path}}, HitDsos{});
  EXPECT_NE(problem.find("not cached"), std::string::npos) << problem;
  EXPECT_NE(problem.find(core::to_hex(real_id)), std::string::npos) << problem;
  EXPECT_FALSE(std::filesystem::exists(dir + path + "/" + core::to_hex(wrong) + "/elf"));
  // The control: its own build-id is cached.
  EXPECT_EQ(fill_build_id_cache(dir, {core::BuildIdEntry{PERF_RECORD_MISC_USER, -1, real_id, path}}, HitDsos{}), "");
  EXPECT_TRUE(std::filesystem::exists(dir + path + "/" + core::to_hex(real_id) + "/elf"));
}

// A live process's files are read through its root (its mount namespace);
// a process that is gone leaves the path as recorded.
TEST(BuildIdCache, FilesAreReadThroughTheProcesssRoot) {
  EXPECT_EQ(dso_source("/bin/true", static_cast<std::int32_t>(getpid())),
            "/proc/" + std::to_string(getpid()) + "/root/bin/true");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  EXPECT_EQ(dso_source("/bin/true", static_cast<std::int32_t>(child)), "/bin/true");
  EXPECT_EQ(dso_source("[vdso]", static_cast<std::int32_t>(getpid())), "[vdso]");
}

}  // namespace
}  // namespace ringsim::real
