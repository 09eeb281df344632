// Tracepoints (-e SYSTEM:NAME, globs), side by side with perf record of the
// same command:
//   - the same events in the same order (a glob expands in tracefs's
//     order), with perf's type, config, period and sample fields;
//   - TRACING_DATA byte for byte perf's, so perf script prints every
//     event's fields from our file;
//   - a command's write(2) calls counted the same in both files (every
//     event sampled: period 1);
//   - -F and -c override the period as in perf;
//   - bad tracepoints: one line naming the cause, exit 64, no file.
#include <linux/perf_event.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/sanitizers.h"
#include "gtest/gtest.h"
#include "model/perf_data_file.h"
#include "real/tests/perf_tools.h"
#include "real/testing/record_testing.h"
#include "real/tracepoints.h"

namespace ringsim::real {
namespace {

constexpr bool kThreadSanitizer = RINGSIM_TSAN;

using testing::concat;
using testing::RunResult;

// In a TEST body: skip unless tracefs is mounted and readable (root).
#define REQUIRE_TRACEFS()                                                                          \
  do {                                                                                             \
    if (tracefs_root().empty() || ::access((tracefs_root() + "/events/sched").c_str(), R_OK) != 0) { \
      GTEST_SKIP() << "tracefs not mounted or not readable: mount -t tracefs nodev /sys/kernel/tracing"; \
    }                                                                                              \
  } while (0)

// The command recorded: three write(2) calls of its own (dash's echo), and
// a sleep, so that it is switched out.
const std::vector<std::string> kCommand = {"/bin/sh", "-c", "echo a; echo b; sleep 0.01; echo c"};

// perf script -F comm,event: how many samples of `event` the task `comm` has.
std::uint64_t samples_of(const std::string& file, const std::string& comm, const std::string& event) {
  const RunResult r = testing::run({testing::perf_path(), "script", "-i", file, "-F", "comm,event"});
  EXPECT_TRUE(r.exited && r.exit_code == 0) << r.text();
  std::istringstream lines(r.out);
  std::string line;
  std::uint64_t n = 0;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string c;
    std::string e;
    if (words >> c >> e && c == comm && e == event + ":") n++;
  }
  return n;
}

// The TRACING_DATA section's bytes ("" if none).
std::string tracing_section(const model::PerfDataFile& f, const std::string& path) {
  for (const model::FeatureTableEntry& e : f.features.table) {
    if (e.bit != model::kFeatTracingData) continue;
    std::ifstream in(path, std::ios::binary);
    std::string bytes(e.size, '\0');
    in.seekg(static_cast<std::streamoff>(e.offset));
    in.read(bytes.data(), static_cast<std::streamsize>(e.size));
    return bytes;
  }
  return "";
}

TEST(RecordTracepoints, FieldsFormatsAndCountsAreAsPerfs) {
  REQUIRE_PERF();
  REQUIRE_TRACEFS();
  const std::string dir = testing::temp_dir("tracepoints");
  const std::vector<std::string> events = {"-e", "sched:sched_switch", "-e", "syscalls:sys_enter_write*"};
  const RunResult ours = testing::run_record(concat(concat(events, {"-o", dir + "/ours.data", "--"}), kCommand));
  ASSERT_TRUE(ours.exited && ours.exit_code == 0) << ours.text();
  const RunResult perf = testing::run_perf_record(
      concat(concat(concat({testing::perf_path(), "record", "-q"}, events), {"-o", dir + "/perf.data", "--"}), kCommand));
  ASSERT_TRUE(perf.exited && perf.exit_code == 0) << perf.text();
  model::PerfDataFile o;
  model::PerfDataFile p;
  ASSERT_EQ(model::read_perf_data(dir + "/ours.data", o), "");
  ASSERT_EQ(model::read_perf_data(dir + "/perf.data", p), "");
  // The same events, in the same order, sampled alike (perf's ID is our
  // IDENTIFIER; perf adds nothing else).
  ASSERT_EQ(o.attrs.size(), p.attrs.size());
  ASSERT_GE(o.attrs.size(), 3u) << "sched_switch, sys_enter_write and sys_enter_writev";
  const std::uint64_t id_bits = PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER;
  for (std::size_t i = 0; i < o.attrs.size(); i++) {
    SCOPED_TRACE(p.features.events[i].name);
    EXPECT_EQ(o.features.events[i].name, p.features.events[i].name);
    EXPECT_EQ(o.attrs[i].type, std::uint32_t{PERF_TYPE_TRACEPOINT});
    EXPECT_EQ(o.attrs[i].config, p.attrs[i].config);
    EXPECT_EQ(o.attrs[i].sample_type & ~id_bits, p.attrs[i].sample_type & ~id_bits);
  }
  // TRACING_DATA: perf's bytes up to the end of the formats (what follows
  // is tracefs's state at each recorder's moment: printk formats, saved
  // cmdlines); the model finds each event's format, ID its config.
  ASSERT_GT(o.features.tracing_formats_end, 0u);
  EXPECT_EQ(o.features.tracing_formats_end, p.features.tracing_formats_end);
  EXPECT_EQ(tracing_section(o, dir + "/ours.data").substr(0, o.features.tracing_formats_end),
            tracing_section(p, dir + "/perf.data").substr(0, p.features.tracing_formats_end));
  EXPECT_EQ(o.features.tracing_version, "0.6");
  for (std::size_t i = 0; i < o.attrs.size(); i++) {
    bool found = false;
    for (const model::TracepointFormat& t : o.features.tracepoint_formats) {
      found = found || (t.system + ":" + t.name == o.features.events[i].name && t.id == o.attrs[i].config);
    }
    EXPECT_TRUE(found) << o.features.events[i].name << ": no format with its ID in TRACING_DATA";
  }
  // perf script prints the fields, and counts the command's three writes in both.
  const RunResult script = testing::run({testing::perf_path(), "script", "-i", dir + "/ours.data"});
  EXPECT_NE(script.out.find("prev_comm="), std::string::npos) << script.out.substr(0, 2000);
  EXPECT_NE(script.out.find("count: 0x"), std::string::npos) << script.out.substr(0, 2000);
  EXPECT_EQ(samples_of(dir + "/ours.data", "sh", "syscalls:sys_enter_write"), 3u);
  EXPECT_EQ(samples_of(dir + "/perf.data", "sh", "syscalls:sys_enter_write"), 3u);
  EXPECT_GE(samples_of(dir + "/ours.data", "sh", "sched:sched_switch"), 1u) << "the sleep switches it out";
  const testing::ModelEvents model = testing::model_events({dir + "/ours.data"});
  ASSERT_EQ(model.problem, "");
  EXPECT_EQ(testing::perf_samples_per_event(dir + "/ours.data"), model.samples);
}

TEST(RecordTracepoints, FrequencyAndCountOverrideEveryEvent) {
  REQUIRE_PERF();
  REQUIRE_TRACEFS();
  const std::string dir = testing::temp_dir("tracepoint-period");
  for (const auto& [option, value] : std::vector<std::pair<std::string, std::string>>{{"-c", "2"}, {"-F", "99"}}) {
    SCOPED_TRACE(option);
    const std::string out = dir + "/ours" + option + ".data";
    const RunResult r =
        testing::run_record(concat({"-e", "syscalls:sys_enter_write", option, value, "-o", out, "--"}, kCommand));
    ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
    const RunResult evlist = testing::run({testing::perf_path(), "evlist", "-v", "-i", out});
    if (option == "-c") {
      EXPECT_NE(evlist.out.find("sample_freq }: 2,"), std::string::npos) << evlist.out;
      EXPECT_EQ(evlist.out.find("PERIOD"), std::string::npos) << "-c N: every Nth event\n" << evlist.out;
      EXPECT_EQ(samples_of(out, "sh", "syscalls:sys_enter_write"), 1u) << "3 writes, every second one";
    } else {
      EXPECT_NE(evlist.out.find("sample_freq }: 99,"), std::string::npos) << evlist.out;
      EXPECT_NE(evlist.out.find("freq: 1"), std::string::npos) << evlist.out;
    }
  }
}

// --filter as perf: on the tracepoints of the -e before it, set with
// PERF_EVENT_IOC_SET_FILTER; the kernel's own filter language.
TEST(RecordTracepoints, FiltersAreTheKernelsAsPerfSetsThem) {
  REQUIRE_PERF();
  REQUIRE_TRACEFS();
  const std::string dir = testing::temp_dir("tracepoint-filter");
  // Writes of 2, 3 and 2 bytes: one of 3.
  const std::vector<std::string> command = {"/bin/sh", "-c", "echo a; echo bb; echo c"};
  const std::vector<std::string> args = {"-e", "cpu-clock", "-e", "syscalls:sys_enter_write", "--filter", "count == 3"};
  const RunResult ours = testing::run_record(concat(concat(args, {"-o", dir + "/ours.data", "--"}), command));
  ASSERT_TRUE(ours.exited && ours.exit_code == 0) << ours.text();
  const RunResult perf = testing::run_perf_record(
      concat(concat(concat({testing::perf_path(), "record", "-q"}, args), {"-o", dir + "/perf.data", "--"}), command));
  ASSERT_TRUE(perf.exited && perf.exit_code == 0) << perf.text();
  EXPECT_EQ(samples_of(dir + "/ours.data", "sh", "syscalls:sys_enter_write"), 1u);
  EXPECT_EQ(samples_of(dir + "/perf.data", "sh", "syscalls:sys_enter_write"), 1u);
  for (const auto& [bad, why] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--filter", "count == 3", "-e", "syscalls:sys_enter_write"}, "give it after the -e"},
           {{"-e", "cpu-clock", "--filter", "count == 3"}, "cpu-clock is not a tracepoint"},
           {{"-e", "syscalls:sys_enter_write", "--filter", "no_such_field == 1"}, "the kernel refused it"}}) {
    SCOPED_TRACE(bad[1]);
    const RunResult r = testing::run_record(concat(bad, {"-o", dir + "/x.data", "--", "true"}));
    EXPECT_TRUE(r.exited && r.exit_code == 64) << r.text();
    EXPECT_EQ(testing::lines_with(r.err, "error:").size(), 1u) << r.err;
    EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
  }
}

// Two --filter on one tracepoint: perf ANDs them ("(first) && (second)",
// evsel__append_tp_filter); ours kept only the second until 2026-11-27.
TEST(RecordTracepoints, TwoFiltersOnOneTracepointAreAndedAsPerfs) {
  REQUIRE_PERF();
  REQUIRE_TRACEFS();
  const std::string dir = testing::temp_dir("tracepoint-filters-and");
  // Writes of 2, 3 and 4 bytes: count >= 3 and count <= 3 pass one; the
  // second filter alone would pass two.
  const std::vector<std::string> command = {"/bin/sh", "-c", "echo a; echo bb; echo ccc"};
  const std::vector<std::string> args = {"-e", "syscalls:sys_enter_write", "--filter", "count >= 3", "--filter",
                                         "count <= 3"};
  const RunResult ours = testing::run_record(concat(concat(args, {"-o", dir + "/ours.data", "--"}), command));
  ASSERT_TRUE(ours.exited && ours.exit_code == 0) << ours.text();
  const RunResult perf = testing::run_perf_record(
      concat(concat(concat({testing::perf_path(), "record", "-q"}, args), {"-o", dir + "/perf.data", "--"}), command));
  ASSERT_TRUE(perf.exited && perf.exit_code == 0) << perf.text();
  EXPECT_EQ(samples_of(dir + "/perf.data", "sh", "syscalls:sys_enter_write"), 1u);
  EXPECT_EQ(samples_of(dir + "/ours.data", "sh", "syscalls:sys_enter_write"), 1u);
}

// One run of argv, started here so that its pid is known.
RunResult run_with_pid(const std::vector<std::string>& argv, pid_t& pid) {
  Process p;
  const Error started = testing::start(p, argv);
  RunResult r;
  if (p.started()) {
    pid = p.pid();
    r = testing::finish(p);
  }
  if (!started.ok()) r.err = started.message + "\n" + r.err;
  return r;
}

// perf script -F pid,tid: the samples of process `pid` (main_only: of its
// main thread alone).
std::uint64_t samples_of_process(const std::string& file, pid_t pid, bool main_only) {
  const RunResult r = testing::run({testing::perf_path(), "script", "-i", file, "-F", "pid,tid"});
  EXPECT_TRUE(r.exited && r.exit_code == 0) << r.text();
  std::istringstream lines(r.out);
  std::string line;
  std::uint64_t n = 0;
  const std::string p = std::to_string(pid);
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string ids;
    if (!(words >> ids)) continue;
    const std::size_t slash = ids.find('/');
    if (slash == std::string::npos || ids.substr(0, slash) != p) continue;
    if (!main_only || ids.substr(slash + 1) == p) n++;
  }
  return n;
}

// --exclude-perf: perf's 'common_pid != getpid()' on the tracepoints of the
// -e before it (a glob's every one), ANDed with their --filter. Recording
// every system call system-wide, perf's main thread's calls are in its file
// without it and not with it. Ours' main thread makes no call while it
// records (its reading threads read, the writer writes at the end), so ours
// excludes every thread it has when the events start (with --aio glibc's
// helpers, started before): without the option its file holds its own
// process's calls, with it none.
TEST(RecordTracepoints, ExcludePerfDropsTheRecordersOwnCalls) {
  REQUIRE_PERF();
  REQUIRE_TRACEFS();
  const std::string dir = testing::temp_dir("tracepoint-exclude-perf");
  for (const bool exclude : {false, true}) {
    SCOPED_TRACE(exclude ? "--exclude-perf" : "without");
    std::vector<std::string> args = {"-a", "-e", "raw_syscalls:sys_enter"};
    if (exclude) args.push_back("--exclude-perf");
    const std::string ours_out = dir + "/ours" + (exclude ? "-x" : "") + ".data";
    const std::string perf_out = dir + "/perf" + (exclude ? "-x" : "") + ".data";
    pid_t ours_pid = -1;
    const RunResult ours = run_with_pid(
        concat(concat({testing::record_path()}, args), {"--no-buildid-mmap", "-o", ours_out, "--", "sleep", "0.5"}),
        ours_pid);
    ASSERT_TRUE(ours.exited && ours.exit_code == 0) << ours.text();
    pid_t perf_pid = -1;
    const RunResult perf = testing::retry_perf_record([&] {
      return run_with_pid(concat(concat({testing::perf_path(), "record", "-q"}, args),
                                 {"-o", perf_out, "--", "sleep", "0.5"}),
                          perf_pid);
    });
    ASSERT_TRUE(perf.exited && perf.exit_code == 0) << perf.text();
    const std::uint64_t ours_calls = samples_of_process(ours_out, ours_pid, false);
    const std::uint64_t perf_calls = samples_of_process(perf_out, perf_pid, true);
    if (exclude) {
      EXPECT_EQ(ours_calls, 0u);
      EXPECT_EQ(perf_calls, 0u);
    } else {
      EXPECT_GT(ours_calls, 0u) << "the control: ours' threads make calls while it records";
      EXPECT_GT(perf_calls, 0u) << "the control: perf's main thread makes calls while it records";
    }
  }
  // With --aio, glibc's AIO helper threads too: ours starts them before
  // the filter is set and keeps them (before 2026-11-27 they started at the
  // first write, after it, and their pwrite64 calls were in the file).
  pid_t aio_pid = -1;
  const RunResult aio = run_with_pid(concat({testing::record_path(), "-a", "-e", "raw_syscalls:sys_enter",
                                             "--exclude-perf", "--aio", "2", "--no-buildid-mmap", "-o",
                                             dir + "/ours-aio.data"},
                                            {"--", "sleep", "0.5"}),
                                     aio_pid);
  ASSERT_TRUE(aio.exited && aio.exit_code == 0) << aio.text();
  EXPECT_EQ(samples_of_process(dir + "/ours-aio.data", aio_pid, false), 0u) << "--exclude-perf --aio 2";
  for (const auto& [bad, why] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--exclude-perf", "-e", "syscalls:sys_enter_write"}, "give it after the -e"},
           {{"-e", "syscalls:sys_enter_write,cpu-clock", "--exclude-perf"}, "cpu-clock is not a tracepoint"},
           // Set when the events start (the reading threads exist then):
           // refused there, the recording ends with the one line.
           {{"-a", "-e", "syscalls:sys_enter_write", "--filter", "no_such_field == 1", "--exclude-perf"},
            "the kernel refused it"}}) {
    SCOPED_TRACE(bad[1]);
    const RunResult r = testing::run_record(concat(bad, {"-o", dir + "/bad.data", "--", "true"}));
    EXPECT_TRUE(r.exited && r.exit_code == 64) << r.text();
    EXPECT_EQ(testing::lines_with(r.err, "error:").size(), 1u) << r.err;
    EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
  }
}

// The files in `dir` whose names begin with `prefix`, each read by perf.
std::size_t readable_files(const std::string& dir, const std::string& prefix) {
  std::size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind(prefix, 0) != 0) continue;
    const RunResult r = testing::run({testing::perf_path(), "script", "-i", entry.path().string()});
    EXPECT_TRUE(r.exited && r.exit_code == 0) << entry.path() << ": " << r.text();
    n++;
  }
  return n;
}

// --switch-output-event, as perf's: each record of the event asks for a
// new file (perf's side-band thread sends its main thread SIGUSR2), with
// --overwrite a snapshot of its own. The command calls getpriority(2)
// (rare on this machine: the event counts every task, as perf's for a
// command) three times 0.5 s apart, then sleeps 1 s: 4 files in perf's
// recording and in ours, in both modes, each file read by perf script; ours' summary counts
// the 3 records and 3 requests. Refused before 2026-11-27.
TEST(RecordTracepoints, SwitchOutputEventStartsAFileAtEachHitAsPerfs) {
  REQUIRE_PERF();
  REQUIRE_TRACEFS();
  const std::vector<std::string> command = {
      "perl", "-e", "for (1..3) { select(undef, undef, undef, 0.5); getpriority(0, 0) } select(undef, undef, undef, 1.0)"};
  for (const std::vector<std::string>& mode : {std::vector<std::string>{}, std::vector<std::string>{"--overwrite"}}) {
    SCOPED_TRACE(mode.empty() ? "normal" : "--overwrite");
    const std::string dir = testing::temp_dir(mode.empty() ? "switch-event" : "switch-event-overwrite");
    const std::vector<std::string> args =
        concat(mode, {"-e", "page-faults", "--switch-output-event", "syscalls:sys_enter_getpriority"});
    const RunResult ours = testing::run_record(concat(concat(args, {"-o", dir + "/ours.data", "--"}), command));
    ASSERT_TRUE(ours.exited && ours.exit_code == 0) << ours.text();
    const RunResult perf = testing::run_perf_record(concat(
        concat(concat({testing::perf_path(), "record", "-q", "--no-bpf-event"}, args), {"-o", dir + "/perf.data", "--"}),
        command));
    ASSERT_TRUE(perf.exited && perf.exit_code == 0) << perf.text();
    EXPECT_EQ(readable_files(dir, "perf.data."), 4u);
    // Under ThreadSanitizer a switch of ours (its file's features and
    // build-ids read back) can outlast the gap between two hits, and the
    // requests then coalesce (CI-like runs: 3 files): every request made,
    // at least one switch, there.
    if (kThreadSanitizer) {
      EXPECT_GE(readable_files(dir, "ours.data"), 2u) << ours.err;
    } else {
      EXPECT_EQ(readable_files(dir, "ours.data"), 4u) << ours.err;
    }
    const std::vector<std::string> line = testing::lines_with(ours.err, "switch-output-event: ");
    ASSERT_EQ(line.size(), 1u) << ours.err;
    EXPECT_NE(line[0].find(": 3 records in "), std::string::npos) << line[0];
    EXPECT_NE(line[0].find(", 3 switch requests"), std::string::npos) << line[0];
  }
  // One line for an event that is not there, exit 64, no file.
  const std::string dir = testing::temp_dir("switch-event-bad");
  const RunResult bad = testing::run_record(
      {"--switch-output-event", "syscalls:no_such_tracepoint", "-o", dir + "/bad.data", "--", "true"});
  EXPECT_TRUE(bad.exited && bad.exit_code == 64) << bad.text();
  EXPECT_EQ(testing::lines_with(bad.err, "error:").size(), 1u) << bad.err;
  EXPECT_EQ(testing::file_size(dir + "/bad.data"), 0u);
  // An event the kernel refuses (cycles, with no hardware PMU here): one
  // line naming the option and the event, exit 69 (unavailable), no file.
  if (::access("/sys/bus/event_source/devices/cpu", F_OK) != 0) {
    const RunResult refused = testing::run_record(
        {"--switch-output-event", "cycles", "-e", "page-faults", "-o", dir + "/refused.data", "--", "true"});
    EXPECT_TRUE(refused.exited && refused.exit_code == 69) << refused.text();
    const std::vector<std::string> errors = testing::lines_with(refused.err, "error:");
    ASSERT_EQ(errors.size(), 1u) << refused.err;
    EXPECT_NE(errors[0].find("--switch-output-event cycles: perf_event_open"), std::string::npos) << errors[0];
    EXPECT_EQ(testing::file_size(dir + "/refused.data"), 0u);
  }
}

TEST(RecordTracepoints, BadTracepointsAreOneLineErrorsWithNoFile) {
  REQUIRE_TRACEFS();
  const std::string dir = testing::temp_dir("tracepoint-errors");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"nosuchsystem:x", "nor a tracepoint system"},
      {"sched:no_such_event", "no tracepoint of that name"},
      {"sched:no_such_*", "no tracepoint matches it"},
      {"sched:", "a tracepoint is SYSTEM:NAME"},
  };
  for (const auto& [event, message] : cases) {
    SCOPED_TRACE(event);
    const std::string out = dir + "/x.data";
    const RunResult r = testing::run_record({"-e", event, "-o", out, "--", "true"});
    EXPECT_TRUE(r.exited && r.exit_code == 64) << r.text();
    EXPECT_EQ(testing::lines_with(r.err, "error:").size(), 1u) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    struct stat st {};
    EXPECT_NE(::stat(out.c_str(), &st), 0) << "no file for a refused event";
  }
}

}  // namespace
}  // namespace ringsim::real
