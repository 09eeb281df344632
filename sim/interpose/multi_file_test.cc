// Runs that write several files (perf record --switch-output) and read
// read-only backward rings at pauses (perf record --overwrite): the oracle
// on hand-made logs and files (so it is seen to fail: a file dropped from
// the set, a record in two files, a record cut at a file boundary, a read
// that is not a pause's newest run), then Debian's perf record in both
// modes under ringsim-run: runs pass, and the same seed gives the same
// file names and the same bytes in each file's data section.
#include <linux/perf_event.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/sanitizers.h"
#include "gtest/gtest.h"
#include "model/perf_data_file.h"
#include "sim/interpose/oracle.h"
#include "sim/interpose/run_log.h"

namespace ringsim::sim::interpose {
namespace {

namespace fs = std::filesystem;

using Bytes = std::vector<std::byte>;

// A 16-byte record: a header and a payload that makes it unique.
Bytes record(std::uint64_t payload) {
  Bytes b(16);
  const perf_event_header h{PERF_RECORD_SAMPLE, 0, 16};
  std::memcpy(b.data(), &h, sizeof h);
  std::memcpy(b.data() + 8, &payload, 8);
  return b;
}

void write_file(const fs::path& path, const std::vector<Bytes>& records) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  for (const Bytes& r : records) out.write(reinterpret_cast<const char*>(r.data()), static_cast<long>(r.size()));
}

class MultiFileOracle : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(std::getenv("TEST_TMPDIR") != nullptr ? std::getenv("TEST_TMPDIR") : "/tmp") /
           ("multi-file-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    output_ = (dir_ / "out.raw").string();
  }
  // A writable ring of `n` records (forward positions).
  LoggedRing writable(std::uint64_t n) {
    LoggedRing r;
    r.size_bytes = 4096;
    for (std::uint64_t k = 0; k < n; k++) {
      LoggedRecord rec;
      rec.position = 16 * k;
      rec.bytes = record(100 + k);
      r.records.push_back(rec);
    }
    r.head = r.tail = 16 * n;
    return r;
  }
  // The output renamed to out.raw.1, .2, ... in turn, each holding `split`.
  void switched(RunLog& log, const std::vector<std::vector<Bytes>>& split) {
    for (std::size_t i = 0; i < split.size(); i++) {
      const std::string name = output_ + "." + std::to_string(i + 1);
      write_file(name, split[i]);
      log.renamed.push_back(name);
    }
  }
  Verdict judged(const RunLog& log) {
    TargetEnd end;
    end.exited = true;
    stats_ = OracleStats{};
    return judge(log, output_, OutputFormat::raw, end, stats_);
  }
  fs::path dir_;
  std::string output_;
  OracleStats stats_;
};

// ringsim-record --switch-output: OUTPUT, then OUTPUT.1, OUTPUT.2 opened
// anew (no rename). Every file is read, in that order; one left out of the
// log is records consumed but in no file.
TEST_F(MultiFileOracle, NumberedFilesAreReadAfterTheOutput) {
  RunLog log;
  log.rings.push_back(writable(5));
  const auto& r = log.rings[0].records;
  write_file(output_, {r[0].bytes, r[1].bytes});
  write_file(output_ + ".1", {r[2].bytes});
  write_file(output_ + ".2", {r[3].bytes, r[4].bytes});
  log.numbered = {output_ + ".1", output_ + ".2"};
  EXPECT_EQ(output_files(log, output_), (std::vector<std::string>{output_, output_ + ".1", output_ + ".2"}));
  const Verdict v = judged(log);
  EXPECT_EQ(v.property, "") << v.detail;
  EXPECT_EQ(stats_.files, 3u);
  EXPECT_EQ(stats_.found, 5u);
  log.numbered.pop_back();
  EXPECT_EQ(judged(log).property, "exactly_once");
}

// ringsim-record starts each numbered file with copies of the side-band
// records of the files before it: one copy per later numbered file is
// carried, not a duplicate; a second copy in one file, a copied sample, or
// a copy in the output itself (not numbered) still is.
TEST_F(MultiFileOracle, ASideBandCopyPerNumberedFileIsCarriedNothingElse) {
  RunLog log;
  log.rings.push_back(writable(4));
  auto& recs = log.rings[0].records;
  const std::uint32_t comm = PERF_RECORD_COMM;
  std::memcpy(recs[0].bytes.data(), &comm, sizeof comm);  // the header's type
  recs[0].type = PERF_RECORD_COMM;
  const Bytes c = recs[0].bytes, a = recs[1].bytes, b = recs[2].bytes, d = recs[3].bytes;
  log.numbered = {output_ + ".1", output_ + ".2"};
  const auto files = [&](std::vector<Bytes> first, std::vector<Bytes> one, std::vector<Bytes> two) {
    write_file(output_, first);
    write_file(output_ + ".1", one);
    write_file(output_ + ".2", two);
    return judged(log);
  };
  Verdict v = files({c, a}, {c, b}, {c, d});
  EXPECT_EQ(v.property, "") << v.detail;
  EXPECT_EQ(stats_.carried, 2u);
  EXPECT_EQ(files({c, a}, {c, c, b}, {d}).property, "exactly_once") << "two copies in one file";
  EXPECT_EQ(files({c, a}, {a, b}, {d}).property, "exactly_once") << "a sample is never carried";
  EXPECT_EQ(files({c, c, a}, {b}, {d}).property, "exactly_once") << "the output is not a numbered file";
}

TEST_F(MultiFileOracle, EveryRecordOnceAcrossThreeFilesPasses) {
  RunLog log;
  log.rings.push_back(writable(6));
  const auto& r = log.rings[0].records;
  switched(log, {{r[0].bytes, r[1].bytes}, {r[2].bytes}, {r[3].bytes, r[4].bytes, r[5].bytes}});
  const Verdict v = judged(log);
  EXPECT_EQ(v.property, "") << v.detail;
  EXPECT_EQ(stats_.files, 3u);
  EXPECT_EQ(stats_.found, 6u);
  EXPECT_EQ(output_files(log, output_), log.renamed);
}

TEST_F(MultiFileOracle, AFileDroppedFromTheSetFails) {
  RunLog log;
  log.rings.push_back(writable(4));
  const auto& r = log.rings[0].records;
  switched(log, {{r[0].bytes, r[1].bytes}, {r[2].bytes, r[3].bytes}});
  // Gone from the disk: the set names it, it cannot be read.
  fs::remove(log.renamed[0]);
  EXPECT_EQ(judged(log).property, "file_valid");
  // Not in the set at all (its rename not seen): its records are missing.
  write_file(log.renamed[0], {r[0].bytes, r[1].bytes});
  log.renamed.erase(log.renamed.begin());
  const Verdict v = judged(log);
  EXPECT_EQ(v.property, "exactly_once");
  EXPECT_NE(v.detail.find("in no file"), std::string::npos) << v.detail;
}

TEST_F(MultiFileOracle, ARecordInTwoFilesFails) {
  RunLog log;
  log.rings.push_back(writable(4));
  const auto& r = log.rings[0].records;
  switched(log, {{r[0].bytes, r[1].bytes}, {r[1].bytes, r[2].bytes, r[3].bytes}});
  const Verdict v = judged(log);
  EXPECT_EQ(v.property, "exactly_once");
  EXPECT_NE(v.detail.find("in the files 2 times"), std::string::npos) << v.detail;
}

TEST_F(MultiFileOracle, ARecordCutAtAFileBoundaryFails) {
  RunLog log;
  log.rings.push_back(writable(3));
  const auto& r = log.rings[0].records;
  const Bytes head(r[1].bytes.begin(), r[1].bytes.begin() + 10);
  const Bytes rest(r[1].bytes.begin() + 10, r[1].bytes.end());
  switched(log, {{r[0].bytes, head}, {rest, r[2].bytes}});
  EXPECT_EQ(judged(log).property, "file_valid");
}

TEST_F(MultiFileOracle, FilesOutOfOrderFailAndANameUsedTwiceIsNamed) {
  RunLog log;
  log.rings.push_back(writable(4));
  const auto& r = log.rings[0].records;
  switched(log, {{r[2].bytes, r[3].bytes}, {r[0].bytes, r[1].bytes}});
  EXPECT_EQ(judged(log).property, "order");
  // perf renaming two files onto one name: the earlier is gone.
  RunLog twice;
  twice.rings.push_back(writable(4));
  switched(twice, {{r[0].bytes, r[1].bytes}, {r[2].bytes, r[3].bytes}});
  fs::rename(twice.renamed[1], twice.renamed[0]);
  twice.renamed[1] = twice.renamed[0];
  EXPECT_EQ(output_files(twice, output_).size(), 1u);
  const Verdict v = judged(twice);
  EXPECT_EQ(v.property, "exactly_once");
  EXPECT_NE(v.detail.find("the earlier file is gone"), std::string::npos) << v.detail;
}

// A read-only backward ring of 64 bytes, paused twice: 8 records of 16
// bytes (positions 0-16, 0-32, ...), pauses after the 5th and the 8th.
// The first read holds the newest 4 (the 1st was overwritten), the second
// the 3 written since.
class OverwriteOracle : public MultiFileOracle {
 protected:
  RunLog paused_log() {
    RunLog log;
    LoggedRing r;
    r.writable = false;
    r.backward = true;
    r.size_bytes = 64;
    for (std::uint64_t k = 0; k < 8; k++) {
      LoggedRecord rec;
      rec.position = std::uint64_t{0} - 16 * (k + 1);
      rec.bytes = record(200 + k);
      r.records.push_back(rec);
    }
    r.pauses = {std::uint64_t{0} - 16 * 5, std::uint64_t{0} - 16 * 8};
    r.head = std::uint64_t{0} - 16 * 8;
    log.rings.push_back(r);
    return log;
  }
  const Bytes& rec(const RunLog& log, std::size_t k) { return log.rings[0].records[k].bytes; }
};

TEST_F(OverwriteOracle, EachPausesNewestRunReadNewestFirstPasses) {
  RunLog log = paused_log();
  write_file(output_, {rec(log, 4), rec(log, 3), rec(log, 2), rec(log, 1), rec(log, 7), rec(log, 6), rec(log, 5)});
  const Verdict v = judged(log);
  EXPECT_EQ(v.property, "") << v.detail;
  EXPECT_EQ(stats_.found, 7u);
  EXPECT_EQ(stats_.overwritten, 1u);
}

TEST_F(OverwriteOracle, ARecordOfAPausesRunMissingFails) {
  RunLog log = paused_log();
  write_file(output_, {rec(log, 4), rec(log, 3), rec(log, 2), rec(log, 7), rec(log, 6), rec(log, 5)});
  const Verdict v = judged(log);
  EXPECT_EQ(v.property, "exactly_once");
  EXPECT_NE(v.detail.find("at pause 1"), std::string::npos) << v.detail;
}

TEST_F(OverwriteOracle, AnOverwrittenRecordReadFails) {
  RunLog log = paused_log();
  write_file(output_, {rec(log, 4), rec(log, 3), rec(log, 2), rec(log, 1), rec(log, 0), rec(log, 7), rec(log, 6),
                       rec(log, 5)});
  EXPECT_EQ(judged(log).property, "overwrite");
}

TEST_F(OverwriteOracle, ReadsOutOfPauseOrderFail) {
  RunLog log = paused_log();
  write_file(output_, {rec(log, 7), rec(log, 6), rec(log, 5), rec(log, 4), rec(log, 3), rec(log, 2), rec(log, 1)});
  EXPECT_EQ(judged(log).property, "order");
}

TEST_F(OverwriteOracle, RecordsAfterTheLastPauseNeverReadFail) {
  RunLog log = paused_log();
  log.rings[0].pauses.pop_back();  // resumed after the first read, never paused again
  write_file(output_, {rec(log, 4), rec(log, 3), rec(log, 2), rec(log, 1)});
  const Verdict v = judged(log);
  EXPECT_EQ(v.property, "exactly_once");
  EXPECT_NE(v.detail.find("after the last pause"), std::string::npos) << v.detail;
}

// --- Debian's perf record under ringsim-run ---------------------------------

constexpr bool kSanitized = RINGSIM_ASAN || RINGSIM_TSAN;  // a sanitized interposer cannot be preloaded (interpose_test.cc)

std::string runfile(const std::string& path) {
  const char* dir = std::getenv("TEST_SRCDIR");
  return dir == nullptr ? path : std::string(dir) + "/ringsim/" + path;
}

std::string run(const std::string& command, int& status) {
  std::string out;
  std::FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int s = ::pclose(p);
  status = WIFEXITED(s) ? WEXITSTATUS(s) : 128 + WTERMSIG(s);
  return out;
}

// One seed of perf record under ringsim-run: its output, and the names
// and data sections of the files it left (out.data.<timestamp>, sorted).
struct PerfFiles {
  std::string out;
  int status = -1;
  std::vector<std::string> names;
  std::vector<std::string> data;
};

class PerfMultiFile : public testing::Test {
 protected:
  void SetUp() override {
    if (kSanitized) GTEST_SKIP() << "a sanitized interposer cannot be preloaded";
    if (::access("/usr/bin/perf", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/perf (linux-perf)";
    dir_ = fs::path(std::getenv("TEST_TMPDIR") != nullptr ? std::getenv("TEST_TMPDIR") : "/tmp") /
           ("perf-multi-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  PerfFiles perf(const std::string& seeds, const std::string& options) {
    PerfFiles p;
    p.out = run(runfile("sim/interpose/ringsim-run") + " -v " + seeds + " --shrink-s 0 --failures-dir " +
                    (dir_ / "failures").string() + " -- /usr/bin/perf record -q " + options +
                    " --no-bpf-event -o " + (dir_ / "out.data").string() + " -- /bin/true",
                p.status);
    std::vector<fs::path> files;
    for (const fs::directory_entry& e : fs::directory_iterator(dir_)) {
      if (e.path().filename().string().rfind("out.data", 0) == 0) files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      p.names.push_back(f.filename().string());
      model::PerfDataFile parsed;
      EXPECT_EQ(model::read_perf_data(f.string(), parsed), "");
      p.data.emplace_back(reinterpret_cast<const char*>(parsed.data.data()), parsed.data.size());
    }
    return p;
  }
  // `seed` twice: it passes, with the same files and data sections.
  void same_twice(std::uint64_t seed, const std::string& options, std::size_t files_min) {
    const std::string seeds = "--seed " + std::to_string(seed);
    const PerfFiles first = perf(seeds, options);
    ASSERT_NE(first.out.find("1 runs, 0 failed"), std::string::npos) << first.out;
    EXPECT_GE(first.names.size(), files_min) << first.out;
    const PerfFiles second = perf(seeds, options);
    ASSERT_NE(second.out.find("1 runs, 0 failed"), std::string::npos) << second.out;
    EXPECT_EQ(second.names, first.names) << "seed " << seed << ": other file names";
    ASSERT_EQ(second.data.size(), first.data.size());
    for (std::size_t i = 0; i < first.data.size(); i++) {
      EXPECT_GT(first.data[i].size(), 0u) << first.names[i];
      EXPECT_TRUE(second.data[i] == first.data[i]) << "seed " << seed << ": " << first.names[i] << " differs";
    }
  }
  fs::path dir_;
};

// Size-based switching: seeds 8 and 9 switch once and four times.
TEST_F(PerfMultiFile, SwitchOutputBySizePassesAndIsDeterministic) {
  // 50K: perf's cpu-clock at its default 4000 Hz samples once per 250 us
  // of task time (sim/call_kernel.cc's hrtimer), fewer records than
  // the kernel drew before it had periods (100K then made 2 and 5 files).
  same_twice(8, "-m 8 --switch-output=50K", 2);
  same_twice(9, "-m 8 --switch-output=50K", 5);
}

// --overwrite: the rings are read at the end (a pause, a read); with
// --switch-output (SIGUSR2, drawn by the kernel) at each signal too.
TEST_F(PerfMultiFile, OverwritePassesAndIsDeterministic) {
  const PerfFiles many = perf("--seed 1 --runs 6", "--overwrite");
  EXPECT_NE(many.out.find("6 runs, 0 failed"), std::string::npos) << many.out;
  EXPECT_NE(many.out.find("overwritten before a read"), std::string::npos) << many.out;
  same_twice(5, "--overwrite --switch-output", 2);
  same_twice(7, "--overwrite --switch-output", 2);
}

TEST_F(PerfMultiFile, SwitchingByTimeIsRefusedWithOneLine) {
  const PerfFiles p = perf("--seed 1", "--switch-output=1s");
  EXPECT_EQ(p.status, 1) << p.out;
  EXPECT_NE(p.out.find("ringsim-run: refused: alarm() is a real-time timer"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("property=refused"), std::string::npos) << p.out;
}

}  // namespace
}  // namespace ringsim::sim::interpose
