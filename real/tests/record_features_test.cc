// The recorder's files against the perf ecosystem's readers, next to perf
// record's own files of the same deterministic workload
// (//real/testing:shares: f1..f4 take 40/30/20/10% of its CPU time):
//   - perf report --header-only decodes every feature section we write,
//     with no warning, and says what this machine says (uname, sysconf,
//     /proc, /sys) and what the model's reader finds;
//   - perf script and perf report give the samples per event the recorder
//     and the model count, and the same top symbols and shares as perf's
//     own recording;
//   - hotspot-perfparser parses the file with no message that perf's own
//     file does not also produce, and counts the same samples;
//   - perf buildid-list lists the build-ids, perf archive packages the
//     binaries, and perf report resolves symbols through the build-id cache
//     once the binary has moved away.
// Skipped (one line) when perf or hotspot is not installed.
#include <linux/perf_event.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model/perf_data_file.h"
#include "real/recorder.h"
#include "real/tests/perf_tools.h"
#include "real/testing/record_testing.h"

namespace ringsim::real {
namespace {

using testing::concat;
using testing::RunResult;

// Records `command` with ringsim-record (`args` first) into `out`.
RunResult record_ours(const std::string& out, const std::vector<std::string>& args,
                      const std::vector<std::string>& command) {
  return testing::run_record(concat(concat(args, {"-o", out, "--"}), command));
}

// The same with perf record (-q), its time stamps on CLOCK_MONOTONIC as ours;
// perf's own abort retried (testing::run_perf_record).
RunResult record_perfs(const std::string& out, const std::vector<std::string>& args,
                       const std::vector<std::string>& command) {
  const std::string cache = std::filesystem::path(out).parent_path().string() + "/perf-cache";
  return testing::run_perf_record(concat(
      concat({testing::perf_path(), "--buildid-dir", cache, "record", "-q", "-k", "CLOCK_MONOTONIC", "-o", out}, args),
      concat({"--"}, command)));
}

// "# name : value" from perf report --header-only (first match; "" if none).
std::string header_value(const std::string& header, const std::string& name) {
  for (const std::string& line : testing::lines_with(header, "# " + name)) {
    const std::size_t colon = line.find(" : ");
    if (colon == std::string::npos) continue;
    std::string key = line.substr(2, colon - 2);
    while (!key.empty() && key.back() == ' ') key.pop_back();
    if (key == name) return line.substr(colon + 3);
  }
  return "";
}

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

TEST(RecordFeatures, PerfReportHeaderOnlyDecodesEverySectionWithNoWarning) {
  REQUIRE_PERF();
  const std::string out = testing::temp_dir("header") + "/ours.data";
  const RunResult r = record_ours(out, {"-F", "1000", "-g", "-N", "-e", "cpu-clock,page-faults"}, testing::shares(60));
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  const RunResult h = testing::run({testing::perf_path(), "report", "--header-only", "-I", "-i", out});
  ASSERT_TRUE(h.exited && h.exit_code == 0) << h.text();
  EXPECT_EQ(h.err, "") << "perf warns about the header";
  std::printf("perf report --header-only -I:\n%s\n", h.out.c_str());
  model::PerfDataFile f;
  ASSERT_EQ(model::read_perf_data(out, f), "");
  utsname u{};
  ASSERT_EQ(uname(&u), 0);
  EXPECT_EQ(header_value(h.out, "hostname"), u.nodename);
  EXPECT_EQ(header_value(h.out, "os release"), u.release);
  EXPECT_EQ(header_value(h.out, "arch"), u.machine);
  EXPECT_EQ(header_value(h.out, "perf version"), f.features.version);
  EXPECT_EQ(header_value(h.out, "nrcpus online"), std::to_string(sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_EQ(header_value(h.out, "nrcpus avail"), std::to_string(f.features.cpus_avail));
  EXPECT_EQ(header_value(h.out, "cpudesc"), f.features.cpudesc);
  EXPECT_FALSE(f.features.cpudesc.empty());
  EXPECT_EQ(header_value(h.out, "cpuid"), f.features.cpuid);
  EXPECT_EQ(header_value(h.out, "total memory"), std::to_string(f.features.total_mem_kib) + " kB");
  EXPECT_NE(first_line("/proc/meminfo").find(" " + std::to_string(f.features.total_mem_kib) + " kB"), std::string::npos)
      << "MemTotal, the first line of /proc/meminfo";
  EXPECT_NE(header_value(h.out, "cmdline").find(testing::record_path() + " -F 1000 -g -N -e cpu-clock,page-faults"),
            std::string::npos);
  const std::vector<std::string> events = testing::lines_with(h.out, "# event : name = ");
  ASSERT_EQ(events.size(), 2u) << h.out;
  EXPECT_EQ(events[0].find("# event : name = cpu-clock,"), 0u) << events[0];
  EXPECT_EQ(events[1].find("# event : name = page-faults,"), 0u) << events[1];
  EXPECT_NE(events[1].find("id = { " + std::to_string(f.features.events[1].ids[0])), std::string::npos) << events[1];
  for (const char* needle : {"# sibling sockets : ", "# sibling threads : ", "# CPU 0: Core ID ", "# node0 meminfo  : ",
                             "# node0 cpu list : ", "# time of first sample : ", "# sample duration : ",
                             "# clockid frequency: ", "# clockid: monotonic", "# reference time: "}) {
    EXPECT_NE(h.out.find(needle), std::string::npos) << needle;
  }
  char first[64];  // seconds, microseconds truncated (as perf prints them)
  std::snprintf(first, sizeof first, "%llu.%06llu",
                static_cast<unsigned long long>(f.features.first_sample_ns / 1'000'000'000),
                static_cast<unsigned long long>(f.features.first_sample_ns % 1'000'000'000 / 1000));
  EXPECT_EQ(header_value(h.out, "time of first sample"), first);
  const std::vector<std::string> missing = testing::lines_with(h.out, "# missing features:");
  ASSERT_EQ(missing.size(), 1u);
  for (const model::FeatureTableEntry& e : f.features.table) {
    EXPECT_EQ(missing[0].find(" " + model::feature_name(e.bit) + " "), std::string::npos)
        << "perf misses " << model::feature_name(e.bit) << " that we wrote: " << missing[0];
  }
}

// Every file of a --switch-output recording is finished with its own
// feature sections: its sample time, the DSOs its samples hit.
// The rings are read every 100 ms (--header-interval-ms): at the default
// 10 s this short workload's 200 KB would be read once, at its end, in one
// chunk (a ring's watermark is half its 512 KiB), and fill 2 files.
TEST(RecordFeatures, EveryRotatedFileHasItsOwnFeatures) {
  const std::string out = testing::temp_dir("rotated") + "/ours.data";
  const RunResult r = record_ours(
      out, {"-e", "task-clock", "-c", "100000", "--switch-output", "64K", "--header-interval-ms", "100", "-N"},
      testing::shares(150));
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  // The kernel names the binary by its real path (the runfiles hold a link).
  const std::string workload = std::filesystem::canonical(testing::shares_path()).string();
  int files = 0, files_hitting_workload = 0;
  for (int index = 0; index < 1000; index++) {
    const std::string path = index == 0 ? out : out + "." + std::to_string(index);
    if (!std::filesystem::exists(path)) break;
    SCOPED_TRACE(path);
    files++;
    model::PerfDataFile f;
    ASSERT_EQ(model::read_perf_data(path, f), "");
    EXPECT_EQ(std::filesystem::file_size(path), f.end());
    EXPECT_TRUE(f.features.has(model::kFeatSampleTime) && f.features.has(model::kFeatEventDesc));
    bool any = false;
    std::uint64_t first = 0, last = 0;
    ASSERT_EQ(f.for_each_record([&](const model::PerfRecord& rec) {
                std::uint64_t t = 0;
                if (rec.type != model::kTypeSample || !f.time_of(rec, t)) return;
                first = any ? std::min(first, t) : t;
                last = any ? std::max(last, t) : t;
                any = true;
              }),
              "");
    EXPECT_EQ(f.features.first_sample_ns, first);
    EXPECT_EQ(f.features.last_sample_ns, last);
    // perf is the judge of which DSOs the samples hit: the last file may
    // hold only the exit path (the kernel, libc, LSan's leak scan under
    // ASan), and then the workload must not be required.
    const RunResult script = testing::run({testing::perf_path(), "script", "-i", path, "-F", "ip,dso"});
    ASSERT_EQ(script.exit_code, 0) << script.text();
    const bool perf_sees_workload = script.out.find("(" + workload + ")") != std::string::npos;
    files_hitting_workload += perf_sees_workload ? 1 : 0;
    bool lists_workload = false;
    for (const model::BuildIdFeature& b : f.features.build_ids) lists_workload |= b.name == workload;
    EXPECT_EQ(lists_workload, perf_sees_workload) << "perf script -F ip,dso finds samples in the workload: "
                                                  << perf_sees_workload << "; any samples: " << any;
  }
  EXPECT_GE(files, 3);
  EXPECT_GE(files_hitting_workload, 2);
}

// What one recorder's file gives: samples per event, shares per event.
struct Side {
  std::string name;
  std::map<std::string, std::uint64_t> samples;
  std::map<std::string, std::vector<testing::SymbolShare>> shares;
};

Side side(const std::string& name, const std::string& file) {
  Side s{name, testing::perf_samples_per_event(file), {}};
  RunResult report;
  s.shares = testing::perf_symbol_shares(file, "", &report);
  EXPECT_TRUE(report.exited && report.exit_code == 0) << name << ": " << report.text();
  return s;
}

void print_side_by_side(const Side& perf, const Side& ours) {
  std::printf("%-18s %10s %10s\n", "event / symbol", perf.name.c_str(), ours.name.c_str());
  for (const auto& [event, n] : perf.samples) {
    const auto it = ours.samples.find(event);
    std::printf("%-18s %10llu %10llu  samples\n", event.c_str(), static_cast<unsigned long long>(n),
                static_cast<unsigned long long>(it == ours.samples.end() ? 0 : it->second));
    const auto p = perf.shares.find(event);
    const auto o = ours.shares.find(event);
    for (std::size_t i = 0; p != perf.shares.end() && i < 5 && i < p->second.size(); i++) {
      const std::string& symbol = p->second[i].symbol;
      std::printf("  %-16s %9.2f%% %9.2f%%\n", symbol.c_str(), p->second[i].percent,
                  o == ours.shares.end() ? 0.0 : testing::share_of(o->second, symbol));
    }
  }
}

TEST(RecordFeatures, SameSamplesPerEventAndTopSymbolsAsPerfsOwnRecording) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("side-by-side");
  const std::vector<std::string> args = {"-e", "cpu-clock,page-faults", "-F", "2000", "-g"};
  const RunResult p = record_perfs(dir + "/perf.data", args, testing::shares(400));
  ASSERT_TRUE(p.exited && p.exit_code == 0) << p.text();
  const RunResult r = record_ours(dir + "/ours.data", concat(args, {"-N"}), testing::shares(400));
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  const Side perf = side("perf", dir + "/perf.data");
  const Side ours = side("ringsim", dir + "/ours.data");
  print_side_by_side(perf, ours);
  // Ours: perf's count of each event is the recorder's and the model's.
  const testing::ModelEvents model = testing::model_events({dir + "/ours.data"});
  ASSERT_EQ(model.problem, "");
  EXPECT_EQ(ours.samples, model.samples);
  EXPECT_NE(r.err.find("samples per event (read back): cpu-clock " + std::to_string(model.samples.at("cpu-clock")) +
                       ", page-faults " + std::to_string(model.samples.at("page-faults"))),
            std::string::npos)
      << r.err;
  // Both recordings: the same events, and f1..f4 in the same order with
  // their known shares (the work is fixed; the samples are of CPU time).
  ASSERT_EQ(perf.samples.size(), 2u);
  EXPECT_EQ(ours.samples.size(), perf.samples.size());
  for (const Side* s : {&perf, &ours}) {
    SCOPED_TRACE(s->name);
    ASSERT_GE(s->samples.at("cpu-clock"), 1000u) << "400 rounds of ~3 ms at 2 kHz";
    EXPECT_GT(s->samples.at("page-faults"), 0u);
    const std::vector<testing::SymbolShare>& top = s->shares.at("cpu-clock");
    ASSERT_GE(top.size(), 4u);
    const char* symbols[] = {"f1", "f2", "f3", "f4"};
    const double expected[] = {40, 30, 20, 10};
    // Shares among f1..f4: the time outside them (interrupts, the kernel,
    // ASan's runtime) grows with the machine's load and is not the work.
    double work = 0;
    for (const char* symbol : symbols) work += testing::share_of(top, symbol);
    ASSERT_GT(work, 50.0) << "most samples are in f1..f4";
    for (int i = 0; i < 4; i++) {
      EXPECT_EQ(top[static_cast<std::size_t>(i)].symbol, symbols[i]);
      EXPECT_NEAR(100 * testing::share_of(top, symbols[i]) / work, expected[i], 3.0) << symbols[i];
    }
  }
  const double ratio = static_cast<double>(ours.samples.at("cpu-clock")) / static_cast<double>(perf.samples.at("cpu-clock"));
  EXPECT_NEAR(ratio, 1.0, 0.25) << "the same work at the same frequency";
}

TEST(RecordFeatures, HotspotParsesOursWithNoMessagePerfsFileDoesNotAlsoGive) {
  REQUIRE_PERF();
  if (testing::perfparser_path().empty()) GTEST_SKIP() << "hotspot-perfparser not found: install hotspot (scripts/setup.sh)";
  const std::string dir = testing::temp_dir("hotspot");
  const std::vector<std::string> args = {"-F", "1000", "-g"};
  const RunResult p = record_perfs(dir + "/perf.data", args, testing::shares(80));
  ASSERT_TRUE(p.exited && p.exit_code == 0) << p.text();
  const RunResult r = record_ours(dir + "/ours.data", concat(args, {"-N"}), testing::shares(80));
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  const testing::PerfparserView theirs = testing::perfparser_view(dir + "/perf.data");
  const testing::PerfparserView mine = testing::perfparser_view(dir + "/ours.data");
  std::printf("hotspot-perfparser on perf's file: exit %d, samples %llu, messages %s\n", theirs.run.exit_code,
              static_cast<unsigned long long>(theirs.samples), ::testing::PrintToString(theirs.messages).c_str());
  std::printf("hotspot-perfparser on ours:        exit %d, samples %llu, messages %s\n", mine.run.exit_code,
              static_cast<unsigned long long>(mine.samples), ::testing::PrintToString(mine.messages).c_str());
  ASSERT_TRUE(theirs.run.exited && theirs.run.exit_code == 0) << theirs.run.text();
  ASSERT_TRUE(mine.run.exited && mine.run.exit_code == 0) << mine.run.text();
  for (const std::string& m : mine.messages) {
    EXPECT_NE(std::find(theirs.messages.begin(), theirs.messages.end(), m), theirs.messages.end())
        << "only ours gives: " << m;
  }
  std::uint64_t written = 0;
  ASSERT_TRUE(testing::summary_value(r.err, "samples written", written));
  EXPECT_EQ(mine.samples, written);
  const std::map<std::string, std::uint64_t> perf_count = testing::perf_samples_per_event(dir + "/perf.data");
  EXPECT_EQ(theirs.samples, perf_count.begin()->second) << "hotspot and perf script agree on perf's file";
}

std::string readelf_build_id(const std::string& path) {
  const RunResult r = testing::run({"readelf", "-n", path});
  for (const std::string& line : testing::lines_with(r.out, "Build ID: ")) {
    return line.substr(line.find("Build ID: ") + 10);
  }
  return "";
}

// perf report through the cache at `cache`: f1..f4 resolved (4) or not (0).
int resolved_symbols(const std::string& file, const std::string& cache) {
  const auto shares = testing::perf_symbol_shares(file, cache);
  const auto it = shares.find("cpu-clock");
  int found = 0;
  for (const char* f : {"f1", "f2", "f3", "f4"}) found += it != shares.end() && testing::share_of(it->second, f) > 5;
  return found;
}

TEST(RecordFeatures, BuildIdsAreListedArchivedAndResolveSymbolsOnceTheBinaryMoved) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("build-ids");
  std::filesystem::create_directories(dir + "/app");
  std::filesystem::copy_file(testing::shares_path(), dir + "/app/shares");
  const std::string id = readelf_build_id(dir + "/app/shares");
  ASSERT_EQ(id.size(), 40u) << "the workload is built with a build-id";
  const std::string out = dir + "/ours.data";
  const RunResult r = record_ours(out, {"-F", "2000", "--buildid-dir", dir + "/cache"}, {dir + "/app/shares", "80"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  const RunResult list = testing::run({testing::perf_path(), "buildid-list", "-i", out});
  ASSERT_TRUE(list.exited && list.exit_code == 0) << list.text();
  std::printf("perf buildid-list -i ours.data:\n%s", list.out.c_str());
  EXPECT_EQ(testing::lines_with(list.out, id + " " + dir + "/app/shares").size(), 1u) << list.out;
  EXPECT_EQ(testing::lines_with(list.out, " [vdso]").size(), 1u) << list.out;
  // The summary's features line against what the model reads.
  model::PerfDataFile f;
  ASSERT_EQ(model::read_perf_data(out, f), "");
  const std::string features = "ringsim-record: features: 1 file(s) with feature sections (" +
                               std::to_string(f.end() - f.data_offset - f.data_size) + " bytes); build-ids listed " +
                               std::to_string(f.features.build_ids.size()) + ", cached in " + dir + "/cache";
  EXPECT_EQ(testing::lines_with(r.err, features).size(), 1u) << features << "\n" << r.err;
  std::filesystem::rename(dir + "/app", dir + "/app.moved");
  EXPECT_EQ(resolved_symbols(out, dir + "/cache"), 4) << "through the recorder's cache";
  std::filesystem::create_directories(dir + "/empty");
  EXPECT_EQ(resolved_symbols(out, dir + "/empty"), 0) << "control: no cache, no symbols";
  const RunResult archive = testing::run({"/bin/sh", "-c", "cd " + dir + " && " + testing::perf_path() +
                                                               " --buildid-dir " + dir + "/cache archive ours.data"});
  std::printf("perf archive ours.data: exit %d\n%s%s", archive.exit_code, archive.out.c_str(), archive.err.c_str());
  ASSERT_TRUE(archive.exited && archive.exit_code == 0) << archive.text();
  EXPECT_EQ(archive.err, "") << "tar found every file the build-ids name";
  std::filesystem::create_directories(dir + "/fresh");
  const RunResult untar = testing::run({"tar", "xjf", out + ".tar.bz2", "-C", dir + "/fresh"});
  ASSERT_TRUE(untar.exited && untar.exit_code == 0) << untar.text();
  EXPECT_EQ(resolved_symbols(out, dir + "/fresh"), 4) << "through the archive, unpacked into an empty cache";
}

}  // namespace
// -B (--no-buildid), as perf's: no BUILD_ID section and nothing put in
// the build-id cache; perf's own -B file has no BUILD_ID either. Without -B
// the same recording lists and caches the workload (the control).
TEST(RecordFeatures, NoBuildIdWritesNoBuildIdSectionAndCachesNothing) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("no-buildid");
  for (const bool no_buildid : {true, false}) {
    SCOPED_TRACE(no_buildid ? "-B" : "without -B");
    const std::string cache = dir + (no_buildid ? "/cache-b" : "/cache");
    const std::string out = dir + (no_buildid ? "/ours-b.data" : "/ours.data");
    std::vector<std::string> args = {"-F", "2000", "--buildid-dir", cache};
    if (no_buildid) args.push_back("-B");
    const RunResult r = record_ours(out, args, testing::shares(40));
    ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
    model::PerfDataFile f;
    ASSERT_EQ(model::read_perf_data(out, f), "");
    EXPECT_EQ(f.features.has(model::kFeatBuildId), !no_buildid);
    EXPECT_EQ(std::filesystem::exists(cache), !no_buildid);
  }
  const RunResult perfs = record_perfs(dir + "/perf-b.data", {"-F", "2000", "-B"}, testing::shares(40));
  ASSERT_TRUE(perfs.exited && perfs.exit_code == 0) << perfs.text();
  model::PerfDataFile p;
  ASSERT_EQ(model::read_perf_data(dir + "/perf-b.data", p), "");
  EXPECT_FALSE(p.features.has(model::kFeatBuildId)) << "perf -B writes no BUILD_ID";
}

// --no-buildid-mmap (perf's default): no event asks the kernel for
// build-ids in MMAP2 (`perf evlist -v` shows no build_id), and BUILD_ID
// lists the same build-ids as with them (for the DSOs both runs' samples
// hit), read from the files. What it is
// for: a perf record started beside a system-wide recording of ours
// completes. Beside the default it aborts on Linux 6.x with perf 6.1
// (docs/fidelity.md, row 20), which is not run here (see below).
TEST(RecordFeatures, NoBuildIdMmapReadsTheFilesAndSparesAPerfRecordBeside) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("no-buildid-mmap");
  std::map<std::string, std::string> ids[2];
  for (const bool mmap : {true, false}) {
    SCOPED_TRACE(mmap ? "default" : "--no-buildid-mmap");
    const std::string out = dir + (mmap ? "/mmap.data" : "/files.data");
    std::vector<std::string> args = {"-F", "2000", "-N"};
    if (!mmap) args.push_back("--no-buildid-mmap");
    const RunResult r = record_ours(out, args, testing::shares(40));
    ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
    const RunResult evlist = testing::run({testing::perf_path(), "evlist", "-v", "-i", out});
    ASSERT_TRUE(evlist.exited && evlist.exit_code == 0) << evlist.text();
    EXPECT_EQ(testing::lines_with(evlist.out, "build_id: 1").size(), mmap ? 1u : 0u) << evlist.out;
    model::PerfDataFile f;
    ASSERT_EQ(model::read_perf_data(out, f), "");
    for (const model::BuildIdFeature& b : f.features.build_ids) ids[mmap][b.name] = b.id_hex;
  }
  // Which libraries the samples hit varies from run to run: the DSOs both
  // list have the same build-id.
  std::size_t common = 0;
  for (const auto& [name, id] : ids[false]) {
    if (ids[true].count(name) == 0) continue;
    common++;
    EXPECT_EQ(id, ids[true][name]) << name;
  }
  EXPECT_GE(common, 3u) << "the workload, [kernel.kallsyms] and [vdso] at least";
  const std::string workload = std::filesystem::canonical(testing::shares_path()).string();
  ASSERT_EQ(ids[false].count(workload), 1u) << workload << ": the workload's build-id, read from its file";
  EXPECT_EQ(ids[false][workload], readelf_build_id(workload));
  // (The default's abort is not run here: it would abort every perf record
  // Bazel runs beside this test for those seconds. Measured by hand:
  // victim=134 beside the default, 2026-11-27.)
  const std::string script = testing::record_path() + " -q -a -N --no-buildid-mmap -o " + dir +
                             "/beside.data -- sleep 2 & sleep 1; " + testing::perf_path() + " record -q -o " + dir +
                             "/victim.data -- /bin/true; echo victim=$?; wait";
  // The shell is no recorder to testing::run: the lock is taken here, so
  // that no other test's recording (ours' default asks for build-ids) runs
  // beside the victim (CI-like runs aborted it so, 2026-11-27).
  const testing::RecordingLockScope lock(testing::kRecordingLockWaitS);
  const RunResult r = testing::run({"/bin/sh", "-c", script});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  EXPECT_EQ(testing::lines_with(r.out, "victim=0").size(), 1u) << r.text();
}

// The sample times perf script prints (seconds, --ns), in order.
std::vector<double> sample_times(const std::string& file) {
  const RunResult r = testing::run({testing::perf_path(), "script", "-F", "time", "--ns", "-i", file});
  EXPECT_TRUE(r.exited && r.exit_code == 0) << r.text();
  std::vector<double> out;
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    const std::size_t colon = line.find(':');
    if (colon != std::string::npos) out.push_back(std::stod(line.substr(0, colon)));
  }
  return out;
}

double seconds_now(clockid_t clock) {
  timespec t{};
  EXPECT_EQ(::clock_gettime(clock, &t), 0);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

// -k, as perf's: each of the five clocks the kernel stamps samples with.
// The header's clockid line is the one perf's own file has for the same
// -k, and every sample's time (perf script) lies between the clock's
// readings before and after the recording: realtime and tai read ~1.8e9 s
// here, the others the uptime (a recorder that kept CLOCK_MONOTONIC fails
// both), and monotonic_raw runs apart from monotonic by NTP's corrections.
TEST(RecordFeatures, ClockidStampsTheSamplesWithTheClockAsked) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("clockid");
  const struct {
    const char* k;
    clockid_t clock;
    const char* header;
  } clocks[] = {{"mono", CLOCK_MONOTONIC, "monotonic (1)"},
                {"raw", CLOCK_MONOTONIC_RAW, "monotonic_raw (4)"},
                {"CLOCK_REALTIME", CLOCK_REALTIME, "realtime (0)"},
                {"boottime", CLOCK_BOOTTIME, "boottime (7)"},
                {"tai", CLOCK_TAI, "tai (11)"}};
  const auto clockid_line = [](const std::string& file) {
    const RunResult h = testing::run({testing::perf_path(), "report", "--header-only", "-i", file});
    const std::vector<std::string> lines = testing::lines_with(h.out, "# clockid: ");
    return lines.size() == 1 ? lines[0] : h.text();
  };
  for (const auto& c : clocks) {
    SCOPED_TRACE(c.k);
    const std::string ours = dir + "/ours-" + c.k + ".data";
    const double before = seconds_now(c.clock);
    const RunResult r = record_ours(ours, {"-k", c.k, "-e", "cpu-clock", "-F", "1000", "-N"}, testing::shares(20));
    const double after = seconds_now(c.clock);
    ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
    EXPECT_EQ(clockid_line(ours), std::string("# clockid: ") + c.header);
    const std::vector<double> times = sample_times(ours);
    ASSERT_FALSE(times.empty());
    EXPECT_GE(*std::min_element(times.begin(), times.end()), before - 1e-3);
    EXPECT_LE(*std::max_element(times.begin(), times.end()), after + 1e-3);
    const std::string perfs = dir + "/perf-" + c.k + ".data";
    const RunResult p = testing::run_perf_record({testing::perf_path(), "record", "-q", "-k", c.k, "-e", "cpu-clock",
                                                  "-F", "1000", "-N", "-o", perfs, "--", "true"});
    ASSERT_TRUE(p.exited && p.exit_code == 0) << p.text();
    EXPECT_EQ(clockid_line(ours), clockid_line(perfs)) << "perf's own file for -k " << c.k;
  }
}

// The regular files in `dir`, sorted.
std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.is_regular_file()) out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// --timestamp-filename, as perf's: the file, when finished, is renamed
// perf.data.<YYYYmmddHHMMSScc> (perf's own recording gets the same form of
// name), and with --switch-output every file is; perf reads each. Without
// it (the control) ours keeps perf.data, perf.data.1, ...
TEST(RecordFeatures, TimestampFilenameNamesTheFilesAsPerfs) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("timestamp-filename");
  const auto stamped = [](const std::string& name) {  // perf.data.<16 digits>
    return name.size() == 10 + 16 && name.rfind("perf.data.", 0) == 0 &&
           name.find_first_not_of("0123456789", 10) == std::string::npos;
  };
  for (const char* who : {"ours", "perf"}) {
    SCOPED_TRACE(who);
    const std::string sub = dir + "/" + who;
    std::filesystem::create_directories(sub);
    const RunResult r = std::string(who) == "ours"
                            ? record_ours(sub + "/perf.data", {"-e", "cpu-clock", "--timestamp-filename", "-N"},
                                          testing::shares(20))
                            : testing::run_perf_record({testing::perf_path(), "record", "-q", "-e", "cpu-clock",
                                                        "--timestamp-filename", "-N", "-o", sub + "/perf.data", "--",
                                                        testing::shares_path(), "20"});
    ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
    const std::vector<std::string> files = files_in(sub);
    ASSERT_EQ(files.size(), 1u) << ::testing::PrintToString(files);
    EXPECT_TRUE(stamped(files[0])) << files[0];
    EXPECT_GT(testing::perf_samples_per_event(sub + "/" + files[0]).count("cpu-clock"), 0u) << files[0];
  }
  for (const bool stamp : {true, false}) {
    SCOPED_TRACE(stamp ? "--switch-output --timestamp-filename" : "--switch-output");
    const std::string sub = dir + (stamp ? "/switch-stamped" : "/switch");
    std::filesystem::create_directories(sub);
    std::vector<std::string> args = {"-e", "task-clock", "-c", "100000", "--switch-output", "64K", "-N"};
    if (stamp) args.push_back("--timestamp-filename");
    const RunResult r = record_ours(sub + "/perf.data", args, testing::shares(200));
    ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
    const std::vector<std::string> files = files_in(sub);
    ASSERT_GE(files.size(), 2u) << ::testing::PrintToString(files);
    for (std::size_t i = 0; i < files.size(); i++) {
      if (stamp) {
        EXPECT_TRUE(stamped(files[i])) << files[i];
      } else {
        EXPECT_EQ(files[i], i == 0 ? std::string("perf.data") : "perf.data." + std::to_string(i)) << "numbered";
      }
      model::PerfDataFile f;
      EXPECT_EQ(model::read_perf_data(sub + "/" + files[i], f), "") << files[i];
    }
    std::string listed;
    for (const std::string& f : files) listed += (listed.empty() ? "" : ", ") + sub + "/" + f;
    if (stamp) {
      EXPECT_EQ(testing::lines_with(r.err, "wrote " + std::to_string(files.size()) + " file(s): " + listed).size(), 1u)
          << "the summary names the renamed files, in order:\n" << r.err;
    }
  }
}

// --dry-run, as perf's: the options and events checked, exit 0, no file
// (and no perf.data.old); a bad event still fails with its line.
TEST(RecordFeatures, DryRunChecksTheOptionsAndWritesNothing) {
  const std::string dir = testing::temp_dir("dry-run");
  const RunResult ok = testing::run_record({"--dry-run", "-e", "cpu-clock", "-o", dir + "/x.data", "--", "true"});
  EXPECT_TRUE(ok.exited && ok.exit_code == 0) << ok.text();
  EXPECT_FALSE(std::filesystem::exists(dir + "/x.data"));
  const RunResult bad = testing::run_record({"--dry-run", "-e", "no-such-event", "-o", dir + "/x.data", "--", "true"});
  EXPECT_TRUE(bad.exited && bad.exit_code == kExitUsage) << bad.text();
  EXPECT_EQ(testing::lines_with(bad.err, "unknown event").size(), 1u) << bad.err;
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

// --max-size, as perf's: the recording stops once the file holds that much
// data (the workload ended by SIGTERM, and the recorder by it: the same
// status as perf's), one line saying so; the file perf reads is about the
// limit, not the whole run's.
TEST(RecordFeatures, MaxSizeStopsTheRecordingAsPerfs) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("max-size");
  const std::vector<std::string> args = {"-e", "cpu-clock", "-F", "20000", "--max-size", "64K"};
  const RunResult ours = record_ours(dir + "/ours.data", concat(args, {"-N"}), testing::shares(1000));
  const RunResult perfs = record_perfs(dir + "/perf.data", args, testing::shares(1000));
  EXPECT_EQ(ours.status, perfs.status) << ours.text() << perfs.text();  // wait statuses: both by SIGTERM
  EXPECT_FALSE(ours.exited) << ours.text();
  EXPECT_EQ(testing::lines_with(ours.err, "--max-size 65536: the file holds").size(), 1u) << ours.err;
  for (const char* name : {"ours", "perf"}) {
    model::PerfDataFile f;
    ASSERT_EQ(model::read_perf_data(dir + "/" + std::string(name) + ".data", f), "") << name;
    EXPECT_GE(f.data_size, 64u << 10) << name;
    EXPECT_LE(f.data_size, 1u << 20) << name << ": stopped near the limit";
  }
}

// --buildid-all, as perf's: BUILD_ID lists every DSO the command mapped,
// samples or not: the same names as perf's own --buildid-all file (and,
// the control, more than without it: `true` runs too briefly for its
// samples to hit every library).
TEST(RecordFeatures, BuildIdAllListsWhatPerfsDoes) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("buildid-all");
  const auto names = [](const std::string& path) {
    model::PerfDataFile f;
    EXPECT_EQ(model::read_perf_data(path, f), "") << path;
    std::vector<std::string> out;
    for (const model::BuildIdFeature& b : f.features.build_ids) out.push_back(b.name);
    std::sort(out.begin(), out.end());
    return out;
  };
  const RunResult ours = record_ours(dir + "/ours.data", {"--buildid-all", "-N"}, {"true"});
  ASSERT_TRUE(ours.exited && ours.exit_code == 0) << ours.text();
  const RunResult perfs = record_perfs(dir + "/perf.data", {"--buildid-all"}, {"true"});
  ASSERT_TRUE(perfs.exited && perfs.exit_code == 0) << perfs.text();
  const RunResult hit_only = record_ours(dir + "/hit.data", {"-N"}, {"true"});
  ASSERT_TRUE(hit_only.exited && hit_only.exit_code == 0) << hit_only.text();
  const std::vector<std::string> all = names(dir + "/ours.data");
  EXPECT_EQ(all, names(dir + "/perf.data"));
  EXPECT_GT(all.size(), names(dir + "/hit.data").size());
  EXPECT_TRUE(std::find(all.begin(), all.end(), "/usr/bin/true") != all.end() ||
              std::find(all.begin(), all.end(), "/bin/true") != all.end());
}

// The first NAMESPACES record of a file: {pid, tid, the 7 {dev, ino}} as
// numbers, or empty when there is none.
std::vector<std::uint64_t> first_namespaces(const std::string& path, std::uint32_t& count) {
  model::PerfDataFile f;
  EXPECT_EQ(model::read_perf_data(path, f), "") << path;
  std::vector<std::uint64_t> first;
  count = 0;
  EXPECT_EQ(f.for_each_record([&](const model::PerfRecord& rec) {
              if (rec.type != PERF_RECORD_NAMESPACES) return;
              if (count++ > 0 || rec.bytes.size() < 8 + 8 + 8 + 7 * 16) return;
              std::uint32_t ids[2];
              std::memcpy(ids, rec.bytes.data() + 8, sizeof ids);
              first = {ids[0], ids[1]};
              std::uint64_t v[1 + 14];
              std::memcpy(v, rec.bytes.data() + 16, sizeof v);
              first.insert(first.end(), v, v + 15);
            }),
            "");
  return first;
}

// --namespaces, as perf's: attr.namespaces on the side-band event (the
// side-by-side case checks the attrs), and the command's NAMESPACES
// record, 7 namespaces, the same links (both run in this machine's
// namespaces) as the one perf's own file has for its workload; `perf
// script --show-namespace-events` prints it. Without --namespaces none.
TEST(RecordFeatures, NamespacesAsPerfs) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("namespaces");
  ASSERT_TRUE(record_ours(dir + "/ours.data", {"--namespaces", "-N"}, {"true"}).exit_code == 0);
  ASSERT_TRUE(record_perfs(dir + "/perf.data", {"--namespaces"}, {"true"}).exit_code == 0);
  ASSERT_TRUE(record_ours(dir + "/none.data", {"-N"}, {"true"}).exit_code == 0);
  std::uint32_t ours_count = 0, perfs_count = 0, none_count = 0;
  const std::vector<std::uint64_t> ours = first_namespaces(dir + "/ours.data", ours_count);
  const std::vector<std::uint64_t> perfs = first_namespaces(dir + "/perf.data", perfs_count);
  first_namespaces(dir + "/none.data", none_count);
  EXPECT_EQ(none_count, 0u);
  ASSERT_EQ(ours.size(), 17u);
  ASSERT_EQ(perfs.size(), 17u);
  EXPECT_EQ(ours[0], ours[1]) << "the command's pid and tid";
  EXPECT_EQ(ours[2], 7u);
  EXPECT_EQ(std::vector<std::uint64_t>(ours.begin() + 2, ours.end()),
            std::vector<std::uint64_t>(perfs.begin() + 2, perfs.end()));
  EXPECT_NE(ours[4], 0u) << "a real inode for the net namespace";
  const RunResult script = testing::run({testing::perf_path(), "script", "-i", dir + "/ours.data",
                                         "--show-namespace-events"});
  EXPECT_EQ(testing::lines_with(script.out, "PERF_RECORD_NAMESPACES " + std::to_string(ours[0])).size(), 1u)
      << script.text();
}

}  // namespace ringsim::real
