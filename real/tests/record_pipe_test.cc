// Pipe mode (-o -, or no -o with standard output a pipe), against perf's
// tools reading the stream:
//   - perf report -i - and perf script -i - read it: the samples per event
//     are those the recorder says it wrote, tracepoint fields print;
//   - the model reads the stream (and perf inject's copy of it) with the
//     same samples per event as perf script;
//   - perf report --header-only -i - finds the host features perf's own
//     stream has;
//   - live: ringsim-record -- CMD | perf report -i - (no file written);
//   - the command's standard output goes to standard error, not into the
//     stream;
//   - -z streams are read by perf;
//   - a reader that goes away (| head -c 100) is one error line, exit 74;
//     options that write several files or at offsets are refused.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model/perf_data_file.h"
#include "real/tests/perf_tools.h"
#include "real/testing/record_testing.h"
#include "real/testing/recording_lock.h"

namespace ringsim::real {
namespace {

using testing::concat;
using testing::RunResult;

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  ASSERT_TRUE(out.good()) << path;
}

// A shell line with every word single-quoted.
std::string quoted(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "'" : " '") + w + "'";
  return out;
}

RunResult shell(const std::string& line) { return testing::run({"/bin/bash", "-c", line}); }

// perf script -F event of a stream: samples per event.
std::map<std::string, std::uint64_t> stream_samples(const std::string& stream) {
  const RunResult r = shell(quoted({testing::perf_path(), "script", "-i", "-", "-F", "event"}) + " < '" + stream + "'");
  EXPECT_TRUE(r.exited && r.exit_code == 0) << r.text();
  std::map<std::string, std::uint64_t> out;
  std::istringstream lines(r.out);
  std::string word;
  while (lines >> word) {
    if (!word.empty() && word.back() == ':') word.pop_back();
    out[word]++;
  }
  return out;
}

std::uint64_t sum(const std::map<std::string, std::uint64_t>& m) {
  std::uint64_t n = 0;
  for (const auto& [k, v] : m) n += v;
  return n;
}

// The "# key :" lines of perf report --header-only.
std::set<std::string> header_keys(const std::string& stream) {
  const RunResult r =
      shell(quoted({testing::perf_path(), "report", "--header-only", "-i", "-"}) + " < '" + stream + "'");
  EXPECT_TRUE(r.exited && r.exit_code == 0) << r.text();
  std::set<std::string> keys;
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    const std::size_t colon = line.find(" :");
    if (line.rfind("# ", 0) == 0 && colon != std::string::npos) keys.insert(line.substr(2, colon - 2));
  }
  return keys;
}

TEST(RecordPipe, PerfReadsTheStreamAsTheRecorderWroteIt) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("pipe");
  std::vector<std::string> events = {"-e", "cpu-clock"};
  // A tracepoint every run hits once: the command's exit (a CPU-bound
  // command may never be switched out).
  if (::access("/sys/kernel/tracing/events/sched/sched_process_exit/id", R_OK) == 0) {
    events = {"-e", "cpu-clock,sched:sched_process_exit"};
  }
  const RunResult r = testing::run_record(concat(concat(events, {"-o", "-", "--"}), testing::shares(60)));
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  ASSERT_NE(r.err.find("streamed "), std::string::npos) << r.err;
  const std::string stream = dir + "/ours.pipe";
  write_file(stream, r.out);
  std::uint64_t written = 0;
  ASSERT_TRUE(testing::summary_value(r.err, "samples written", written)) << r.err;
  const std::map<std::string, std::uint64_t> samples = stream_samples(stream);
  EXPECT_EQ(sum(samples), written) << "perf script -i - reads every sample written";
  EXPECT_GT(samples.count("cpu-clock") ? samples.at("cpu-clock") : 0, 100u);
  const RunResult report = shell(quoted({testing::perf_path(), "report", "--stdio", "-i", "-"}) + " < '" + stream + "'");
  ASSERT_TRUE(report.exited && report.exit_code == 0) << report.text();
  EXPECT_NE(report.out.find("] f1"), std::string::npos) << report.out.substr(0, 2000);
  if (events[1].find("sched") != std::string::npos) {
    const RunResult script = shell(quoted({testing::perf_path(), "script", "-i", "-"}) + " < '" + stream + "'");
    EXPECT_NE(script.out.find("sched:sched_process_exit: comm=shares pid="), std::string::npos)
        << "TRACING_DATA in the stream\n"
                                                                 << script.out.substr(0, 2000);
  }
  // The same host features as perf's own stream of the same command.
  const RunResult perf = testing::run_perf_record(concat({testing::perf_path(), "record", "-q", "-e", "cpu-clock", "-o", "-", "--"},
                                             testing::shares(10)));
  ASSERT_TRUE(perf.exited && perf.exit_code == 0) << perf.text();
  write_file(dir + "/perf.pipe", perf.out);
  const std::set<std::string> ours_keys = header_keys(stream);
  for (const std::string& key : header_keys(dir + "/perf.pipe")) {
    // perf's own extras: PMU mappings, caches, memory topology, BPF, ... (docs/recorder.md)
    static const std::set<std::string> perf_only = {"pmu mappings", "CPU cache info", "memory", "bpf_prog_info",
                                                    "btf info", "cpu pmu capabilities", "sample duration",
                                                    "time of first sample", "time of last sample"};
    if (perf_only.count(key) == 0) {
      EXPECT_EQ(ours_keys.count(key), 1u) << "perf's stream has \"" << key << "\"";
    }
  }
}

TEST(RecordPipe, PerfInjectMakesAFileOfItWithTheSameSamples) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("pipe-inject");
  const RunResult r =
      testing::run_record(concat({"-e", "cpu-clock,page-faults", "-o", "-", "--"}, testing::shares(40)));
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  write_file(dir + "/ours.pipe", r.out);
  const RunResult inject = shell(quoted({testing::perf_path(), "inject", "-i", "-", "-o", dir + "/injected.data"}) +
                                 " < '" + dir + "/ours.pipe'");
  ASSERT_TRUE(inject.exited && inject.exit_code == 0) << inject.text();
  // The model reads the stream itself, and perf inject's copy of it (perf
  // 6.1 writes a pipe's copy in the pipe format too).
  for (const std::string& path : {dir + "/ours.pipe", dir + "/injected.data"}) {
    SCOPED_TRACE(path);
    model::PerfDataFile f;
    ASSERT_EQ(model::read_perf_data(path, f), "");
    ASSERT_EQ(f.attrs.size(), 2u);
    ASSERT_EQ(f.features.events.size(), 2u) << "EVENT_DESC names the events";
    EXPECT_EQ(f.features.events[1].name, "page-faults");
    EXPECT_FALSE(f.features.hostname.empty());
    const testing::ModelEvents model = testing::model_events({path});
    ASSERT_EQ(model.problem, "");
    EXPECT_EQ(model.samples, stream_samples(dir + "/ours.pipe"));
    std::uint64_t written = 0;
    ASSERT_TRUE(testing::summary_value(r.err, "samples written", written)) << r.err;
    EXPECT_EQ(sum(model.samples), written);
  }
}

TEST(RecordPipe, LiveIntoPerfReportWithTheCommandsOutputOnStderr) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("pipe-live");
  testing::RecordingLockScope lock;
  // No -o: standard output is a pipe, so the stream goes to it (as perf).
  const std::string line = "cd '" + dir + "' && " +
                           quoted(concat({testing::record_path(), "-q", "-e", "cpu-clock", "--", "/bin/sh", "-c"},
                                         {"echo hello-from-the-command; exec " + quoted(testing::shares(40))})) +
                           " | " + quoted({testing::perf_path(), "report", "--stdio", "-i", "-"});
  const RunResult r = shell(line);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  EXPECT_NE(r.out.find("] f1"), std::string::npos) << r.out.substr(0, 2000);
  EXPECT_NE(r.err.find("hello-from-the-command"), std::string::npos) << "the command's stdout, on stderr\n" << r.err;
  EXPECT_EQ(r.out.find("hello-from-the-command"), std::string::npos);
  struct stat st {};
  EXPECT_NE(::stat((dir + "/perf.data").c_str(), &st), 0) << "no perf.data with a pipe as standard output";
}

TEST(RecordPipe, CompressedStreamsAreReadByPerf) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("pipe-z");
  const RunResult r = testing::run_record(concat({"-e", "cpu-clock", "-z", "-o", "-", "--"}, testing::shares(40)));
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  write_file(dir + "/ours.pipe", r.out);
  std::uint64_t written = 0;
  ASSERT_TRUE(testing::summary_value(r.err, "samples written", written)) << r.err;
  EXPECT_GT(written, 100u);
  EXPECT_EQ(sum(stream_samples(dir + "/ours.pipe")), written);
}

TEST(RecordPipe, AReaderThatGoesAwayIsOneErrorAndOptionsThatCannotStreamAreRefused) {
  REQUIRE_PERF();
  {
    testing::RecordingLockScope lock;
    const RunResult r =
        shell(quoted(concat({testing::record_path(), "-e", "cpu-clock", "-o", "-", "--"}, testing::shares(400))) +
              " | head -c 100 > /dev/null; exit ${PIPESTATUS[0]}");
    EXPECT_TRUE(r.exited && r.exit_code == 74) << r.text();
    EXPECT_EQ(testing::lines_with(r.err, "error:").size(), 1u) << r.err;
    EXPECT_NE(r.err.find("EPIPE"), std::string::npos) << r.err;
  }
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"--aio", "2"}, {"--switch-output=signal"}, {"--overwrite"}}) {
    const RunResult r = testing::run_record(concat(concat({"-o", "-"}, bad), {"--", "true"}));
    EXPECT_TRUE(r.exited && r.exit_code == 64) << r.text();
    EXPECT_EQ(testing::lines_with(r.err, "error:").size(), 1u) << r.err;
    EXPECT_NE(r.err.find("-o -"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << "nothing streamed";
  }
}

}  // namespace
}  // namespace ringsim::real
