// ringsim-record -z (zstd, PERF_RECORD_COMPRESSED) against perf 6.1:
//   - perf script sees, per event, the samples the recorder counted before
//     compressing (its summary), as it does for the same recording made
//     without -z, and perf report the workload's known symbol shares;
//   - the data is really compressed: perf report --stats counts the
//     COMPRESSED records the recorder wrote, and a sample costs a fraction
//     of the bytes it costs without -z;
//   - perf report --header-only decodes HEADER_COMPRESSED: zstd, the level
//     given, the ratio the recorder reported;
//   - rotated files (--switch-output) each start a zstd stream of their
//     own: perf reads every one alone; AIO writes them as well;
//   - a level out of 1..22 is refused with one line and no file.
// Skipped (one line) when perf is not installed.
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "real/tests/perf_tools.h"
#include "real/testing/record_testing.h"

namespace ringsim::real {
namespace {

using testing::concat;
using testing::RunResult;

// "KEY: N" from the summary, or fails the test.
std::uint64_t summary(const RunResult& r, const std::string& key) {
  std::uint64_t value = 0;
  EXPECT_TRUE(testing::summary_value(r.err, key, value)) << key << "\n" << r.text();
  return value;
}

// "samples per event (read back): a N, b M" as a map.
std::map<std::string, std::uint64_t> summary_per_event(const RunResult& r) {
  std::map<std::string, std::uint64_t> out;
  const std::vector<std::string> lines = testing::lines_with(r.err, "samples per event (read back): ");
  if (lines.empty()) return out;
  std::string rest = lines[0].substr(lines[0].find("): ") + 3);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(", ");
    const std::string item = rest.substr(0, comma);
    const std::size_t space = item.rfind(' ');
    out[item.substr(0, space)] = std::strtoull(item.c_str() + space + 1, nullptr, 10);
    rest = comma == std::string::npos ? "" : rest.substr(comma + 2);
  }
  return out;
}

// The numbers of the summary's "compression:" line: bytes in, records,
// bytes out.
struct CompressionLine {
  std::uint64_t bytes_in = 0;
  std::uint64_t records = 0;
  std::uint64_t bytes_out = 0;
  bool found = false;
};
CompressionLine compression_line(const RunResult& r) {
  CompressionLine c;
  const std::vector<std::string> lines = testing::lines_with(r.err, "compression: zstd level ");
  if (lines.size() != 1) return c;
  const char* at = std::strstr(lines[0].c_str(), ", ");
  c.found = at != nullptr && std::sscanf(at, ", %lu bytes of records in %lu COMPRESSED records of %lu bytes",
                                         &c.bytes_in, &c.records, &c.bytes_out) == 3;
  return c;
}

// "COMPRESSED events: N" of perf report --stats (0 if none).
std::uint64_t perf_compressed_records(const std::string& file) {
  const RunResult s = testing::run({testing::perf_path(), "report", "--stats", "-i", file});
  EXPECT_TRUE(s.exited && s.exit_code == 0) << s.text();
  for (const std::string& line : testing::lines_with(s.out, "COMPRESSED events:")) {
    return std::strtoull(line.c_str() + line.find(':') + 1, nullptr, 10);
  }
  return 0;
}

struct Recorded {
  RunResult run;
  std::map<std::string, std::uint64_t> perf_samples;  // perf script -F event
  std::uint64_t file_bytes = 0;
};

// The shares workload with cpu-clock and page-faults, -g, `extra` options.
Recorded record(const std::string& out, const std::vector<std::string>& extra) {
  Recorded r;
  const std::vector<std::string> args = concat({"-e", "cpu-clock,page-faults", "-F", "2000", "-g", "-N", "-o", out}, extra);
  r.run = testing::run_record(concat(concat(args, {"--"}), testing::shares(300)));
  RunResult script;
  r.perf_samples = testing::perf_samples_per_event(out, &script);
  EXPECT_TRUE(script.exited && script.exit_code == 0) << script.text();
  EXPECT_EQ(script.err.find("WARNING"), std::string::npos) << script.err;
  EXPECT_EQ(script.err.find("failed"), std::string::npos) << script.err;
  r.file_bytes = testing::file_size(out);
  return r;
}

TEST(RecordCompression, PerfScriptSeesTheSameSamplesPerEventWithAndWithoutZ) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("z-side-by-side");
  const Recorded plain = record(dir + "/plain.data", {});
  const Recorded packed = record(dir + "/z.data", {"-z"});
  for (const Recorded* r : {&plain, &packed}) {
    SCOPED_TRACE(r == &plain ? "without -z" : "with -z");
    ASSERT_TRUE(r->run.exited && r->run.exit_code == 0) << r->run.text();
    // perf's count of each event is the recorder's; the total is the one
    // counted from the rings before anything was compressed.
    EXPECT_EQ(r->perf_samples, summary_per_event(r->run));
    std::uint64_t total = 0;
    for (const auto& [event, n] : r->perf_samples) total += n;
    EXPECT_EQ(total, summary(r->run, "samples written"));
    ASSERT_EQ(r->perf_samples.size(), 2u) << "cpu-clock and page-faults";
    ASSERT_GE(r->perf_samples.at("cpu-clock"), 500u);
    EXPECT_GT(r->perf_samples.at("page-faults"), 0u);
  }
  // The same work: about the same samples per event.
  const double ratio = static_cast<double>(packed.perf_samples.at("cpu-clock")) /
                       static_cast<double>(plain.perf_samples.at("cpu-clock"));
  EXPECT_NEAR(ratio, 1.0, 0.2);
  // perf report resolves f1..f4 with their known shares in the -z file.
  RunResult report;
  const auto shares = testing::perf_symbol_shares(dir + "/z.data", "", &report);
  ASSERT_TRUE(report.exited && report.exit_code == 0) << report.text();
  ASSERT_EQ(shares.count("cpu-clock"), 1u) << report.out;
  const char* symbols[] = {"f1", "f2", "f3", "f4"};
  const double expected[] = {40, 30, 20, 10};
  // Shares among f1..f4: the samples outside them (ASan's start-up, the
  // kernel, interrupts) grow with the machine's load and are not the work,
  // and push every raw share down alike.
  double work = 0;
  for (const char* symbol : symbols) work += testing::share_of(shares.at("cpu-clock"), symbol);
  ASSERT_GT(work, 50.0) << "most samples are in f1..f4:\n" << report.out.substr(0, 3000);
  for (int i = 0; i < 4; i++) {
    EXPECT_NEAR(100 * testing::share_of(shares.at("cpu-clock"), symbols[i]) / work, expected[i], 4.0) << symbols[i];
  }
  // Really compressed: the COMPRESSED records perf counts are the
  // recorder's, and a sample takes a fraction of its bytes without -z.
  const CompressionLine c = compression_line(packed.run);
  ASSERT_TRUE(c.found) << packed.run.text();
  EXPECT_EQ(perf_compressed_records(dir + "/z.data"), c.records);
  EXPECT_EQ(perf_compressed_records(dir + "/plain.data"), 0u);
  EXPECT_GT(c.bytes_in, 2 * c.bytes_out);
  const double plain_per_sample = static_cast<double>(plain.file_bytes) / plain.perf_samples.at("cpu-clock");
  const double packed_per_sample = static_cast<double>(packed.file_bytes) / packed.perf_samples.at("cpu-clock");
  std::printf("bytes per cpu-clock sample: %.1f without -z, %.1f with -z (%.2fx)\n", plain_per_sample,
              packed_per_sample, plain_per_sample / packed_per_sample);
  EXPECT_GT(plain_per_sample, 2 * packed_per_sample);
}

TEST(RecordCompression, HeaderOnlyShowsTheCompressedFeature) {
  REQUIRE_PERF();
  const std::string out = testing::temp_dir("z-header") + "/z.data";
  const Recorded r = record(out, {"-z3"});
  ASSERT_TRUE(r.run.exited && r.run.exit_code == 0) << r.run.text();
  const RunResult h = testing::run({testing::perf_path(), "report", "--header-only", "-i", out});
  ASSERT_TRUE(h.exited && h.exit_code == 0) << h.text();
  EXPECT_EQ(h.err, "") << "perf warns about the header";
  const CompressionLine c = compression_line(r.run);
  ASSERT_TRUE(c.found) << r.run.text();
  // perf's ratio: bytes in / bytes out, rounded (record__finish_output).
  const auto ratio = static_cast<std::uint64_t>(static_cast<double>(c.bytes_in) / static_cast<double>(c.bytes_out) + 0.5);
  EXPECT_GE(ratio, 2u);
  const std::vector<std::string> lines = testing::lines_with(h.out, "# compressed : ");
  ASSERT_EQ(lines.size(), 1u) << h.out;
  EXPECT_EQ(lines[0], "# compressed : Zstd, level = 3, ratio = " + std::to_string(ratio));
  EXPECT_EQ(h.out.find("COMPRESSED"), std::string::npos) << "not among the missing features";
}

TEST(RecordCompression, RotatedFilesAndAioAreEachReadByPerf) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("z-rotated");
  const std::string out = dir + "/z.data";
  const RunResult r = testing::run_record(
      {"-z", "--aio", "2", "-e", "cpu-clock", "-F", "4000", "-g", "-N", "--switch-output", "16K", "-o", out, "--",
       testing::self_path(), "--burn-ms", "600", "--threads", "2"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  std::uint64_t samples = 0;
  std::uint64_t compressed = 0;
  int files = 0;
  for (int index = 0; index < 1000; index++) {
    const std::string path = index == 0 ? out : out + "." + std::to_string(index);
    if (testing::file_size(path) == 0) break;
    files++;
    const testing::PerfView v = testing::perf_view(path, /*report=*/false);
    EXPECT_TRUE(v.script.exited && v.script.exit_code == 0) << path << ": " << v.script.text();
    EXPECT_TRUE(v.complaints.empty()) << path << ": " << ::testing::PrintToString(v.complaints);
    samples += v.samples;
    compressed += perf_compressed_records(path);
  }
  EXPECT_GE(files, 2) << r.text();
  EXPECT_EQ(samples, summary(r, "samples written"));
  EXPECT_EQ(compressed, compression_line(r).records);
}

TEST(RecordCompression, ALevelOutOfRangeIsRefusedWithOneLine) {
  const std::string dir = testing::temp_dir("z-bad");
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"-z", "23"}, {"-z0"},
                                              {"--compression-level=fast"}, {"-z", "--staging", "off"}}) {
    const std::string out = dir + "/bad.data";
    const RunResult r = testing::run_record(concat(concat(bad, {"-o", out, "--"}), {"true"}));
    EXPECT_TRUE(r.exited && r.exit_code == 64) << r.text();
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.find("ringsim-record: error: -z/--compression-level"), 0u) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out));
  }
}

}  // namespace
}  // namespace ringsim::real
