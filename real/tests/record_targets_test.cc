// Several events per recording and the recorder's targets, against perf
// and the model's reader:
//   - -e a,b,c: one ring per CPU shared by every event (SET_OUTPUT), each
//     event with one id per CPU; perf report shows each event, perf script
//     counts what the recorder and the model count per event;
//   - LOST records: each names one of the file's events (the kernel's
//     attribution, kept), counted per ring as the model counts them;
//   - -p PID (every thread), -t TID (that thread), -C LIST (those CPUs):
//     the samples are those tasks' or CPUs' only; a COMMAND then only sets
//     how long;
//   - bad input for these options: one error line naming the cause, a
//     non-zero exit status, no file.
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <deque>
#include <filesystem>
#include <fstream>
#include <set>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model/perf_data_file.h"
#include "core/perf_data_features.h"
#include "real/elf_build_id.h"
#include "real/process.h"
#include "real/recorder.h"
#include "real/tests/perf_tools.h"
#include "real/testing/record_testing.h"

namespace ringsim::real {
namespace {

using testing::concat;
using testing::RunResult;

// The values of one perf script field per sample line.
std::vector<std::string> script_field(const std::string& file, const std::string& field) {
  const RunResult r = testing::run({testing::perf_path(), "script", "-i", file, "-F", field});
  EXPECT_TRUE(r.exited && r.exit_code == 0) << r.text();
  std::vector<std::string> out;
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string word;
    if (words >> word) out.push_back(word);
  }
  return out;
}

std::uint64_t online_cpu_count() { return static_cast<std::uint64_t>(sysconf(_SC_NPROCESSORS_ONLN)); }

TEST(RecordTargets, SeveralEventsShareOneRingPerCpu) {
  REQUIRE_PERF();
  const std::string out = testing::temp_dir("events") + "/ours.data";
  const RunResult r = testing::run_record(
      concat({"-e", "cpu-clock,page-faults", "-e", "context-switches", "-F", "1000", "-N", "-o", out, "--"},
             testing::shares(100)));
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  model::PerfDataFile f;
  ASSERT_EQ(model::read_perf_data(out, f), "");
  ASSERT_EQ(f.attrs.size(), 3u);
  ASSERT_EQ(f.features.events.size(), 3u);
  const char* names[] = {"cpu-clock", "page-faults", "context-switches"};
  for (std::size_t e = 0; e < 3; e++) {
    EXPECT_EQ(f.features.events[e].name, names[e]);
    EXPECT_EQ(f.features.events[e].ids, f.attrs[e].ids);
    EXPECT_EQ(f.attrs[e].ids.size(), online_cpu_count()) << "one event per CPU, writing into that CPU's ring";
  }
  const testing::ModelEvents model = testing::model_events({out});
  ASSERT_EQ(model.problem, "");
  EXPECT_EQ(testing::perf_samples_per_event(out), model.samples);
  EXPECT_GT(model.samples.at("cpu-clock"), 100u);
  // perf report leaves out an event with no samples unless told not to; a
  // run with no context switch (it happens on an idle machine) must still
  // show the event, with 0 samples.
  const RunResult report =
      testing::run({testing::perf_path(), "report", "--stdio", "--no-skip-empty", "-i", out});
  ASSERT_TRUE(report.exited && report.exit_code == 0) << report.text();
  for (const char* name : names) {
    const auto it = model.samples.find(name);
    const std::string count = it == model.samples.end() ? "0" : std::to_string(it->second);
    EXPECT_EQ(testing::lines_with(report.out, "# Samples: " + count + "  of event '" + name + "'").size(), 1u)
        << name << " " << count << "\n" << report.out.substr(0, 2000);
  }
}

// Event groups {a,b}: perf lists the same group in both files (GROUP_DESC)
// and reports the group's members side by side.
TEST(RecordTargets, EventGroupsAreThoseOfPerf) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("groups");
  const std::vector<std::string> events = {"-e", "{cpu-clock,page-faults},context-switches"};
  const RunResult r = testing::run_record(concat(concat(events, {"-o", dir + "/ours.data", "--"}), testing::shares(40)));
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  const RunResult perf = testing::run_perf_record(
      concat(concat(concat({testing::perf_path(), "record", "-q"}, events), {"-o", dir + "/perf.data", "--"}),
             testing::shares(10)));
  ASSERT_TRUE(perf.exited && perf.exit_code == 0) << perf.text();
  for (const std::string& file : {dir + "/ours.data", dir + "/perf.data"}) {
    const RunResult groups = testing::run({testing::perf_path(), "evlist", "-g", "-i", file});
    EXPECT_EQ(groups.out, "{cpu-clock,page-faults}\ncontext-switches\n") << file << "\n" << groups.text();
  }
  const RunResult report =
      testing::run({testing::perf_path(), "report", "--group", "--stdio", "-i", dir + "/ours.data"});
  EXPECT_EQ(testing::lines_with(report.out, "of events 'anon group { cpu-clock, page-faults }'").size(), 1u)
      << report.out.substr(0, 2000);
  const testing::ModelEvents model = testing::model_events({dir + "/ours.data"});
  ASSERT_EQ(model.problem, "");
  EXPECT_EQ(testing::perf_samples_per_event(dir + "/ours.data"), model.samples);
  EXPECT_GT(model.samples.at("cpu-clock"), 100u);
}

// Leader sampling {a,b}:S, held against perf's file: the same attrs (READ,
// a group read with ids, no inherit; the member not sampling), every
// sample of the leader carrying both counters ("group nr 2" in perf report
// -D), and perf report making the member's samples of them (page-faults
// samples where the leader's samples saw its count grow), in both files.
TEST(RecordTargets, LeaderSamplingCarriesTheGroupsCountsAsPerfs) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("leader-sampling");
  // A shell that faults (a child per command) while it burns.
  const std::vector<std::string> command = {"/bin/sh", "-c",
                                            "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; ls / >/dev/null; "
                                            "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"};
  const std::vector<std::string> events = {"-e", "{cpu-clock,page-faults}:S"};
  const RunResult r = testing::run_record(concat(concat(events, {"-o", dir + "/ours.data", "--"}), command));
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  const RunResult perf = testing::run_perf_record(
      concat(concat(concat({testing::perf_path(), "record", "-q"}, events), {"-o", dir + "/perf.data", "--"}), command));
  ASSERT_TRUE(perf.exited && perf.exit_code == 0) << perf.text();
  for (const std::string& file : {dir + "/ours.data", dir + "/perf.data"}) {
    const RunResult evlist = testing::run({testing::perf_path(), "evlist", "-v", "-i", file});
    ASSERT_TRUE(evlist.exited && evlist.exit_code == 0) << evlist.text();
    const std::vector<std::string> leader = testing::lines_with(evlist.out, "cpu-clock: ");
    const std::vector<std::string> member = testing::lines_with(evlist.out, "page-faults: ");
    ASSERT_EQ(leader.size(), 1u) << file << "\n" << evlist.out;
    ASSERT_EQ(member.size(), 1u) << file << "\n" << evlist.out;
    for (const std::string& line : {leader[0], member[0]}) {
      EXPECT_NE(line.find("|READ|"), std::string::npos) << file << ": " << line;
      EXPECT_NE(line.find("read_format: ID|GROUP"), std::string::npos) << file << ": " << line;
      EXPECT_EQ(line.find("inherit: 1"), std::string::npos) << file << ": " << line;
    }
    EXPECT_NE(leader[0].find("{ sample_period, sample_freq }: 4000"), std::string::npos) << file << ": " << leader[0];
    EXPECT_EQ(member[0].find("sample_period"), std::string::npos) << file << ": " << member[0];
    EXPECT_EQ(member[0].find("freq: 1"), std::string::npos) << file << ": " << member[0];
    const RunResult dump = testing::run({testing::perf_path(), "report", "-D", "-i", file});
    ASSERT_TRUE(dump.exited && dump.exit_code == 0) << dump.text();
    const std::size_t samples = testing::lines_with(dump.out, "PERF_RECORD_SAMPLE(").size();
    EXPECT_GT(samples, 10u) << file;
    EXPECT_EQ(testing::lines_with(dump.out, ".... group nr 2").size(), samples) << file;
    const RunResult report =
        testing::run({testing::perf_path(), "report", "--stdio", "--no-group", "--sort", "comm", "-i", file});
    ASSERT_TRUE(report.exited && report.exit_code == 0) << report.text();
    const std::vector<std::string> faults = testing::lines_with(report.out, "of event 'page-faults'");
    ASSERT_EQ(faults.size(), 1u) << file << "\n" << report.out.substr(0, 2000);
    EXPECT_EQ(faults[0].find("# Samples: 0 "), std::string::npos) << file << ": " << faults[0];
  }
  // The model's reading of ours: the leader's samples only.
  const testing::ModelEvents model = testing::model_events({dir + "/ours.data"});
  ASSERT_EQ(model.problem, "");
  EXPECT_GT(model.samples.at("cpu-clock"), 10u);
  EXPECT_EQ(model.samples.count("page-faults"), 0u);
}

// A hardware breakpoint, -e mem:ADDR:w (perf's syntax; refused as unknown
// until 2026-12-01), on a global the workload writes 1,000 times at an
// address setarch -R keeps: each write a sample of the writing function, in
// both files, the same attrs (the side-by-side harness holds those).
TEST(RecordTargets, ABreakpointSamplesEachWriteAsPerfs) {
  REQUIRE_PERF();
  utsname machine{};
  ASSERT_EQ(uname(&machine), 0);
  const std::vector<std::string> fixed = {"setarch", machine.machine, "-R", testing::self_path(), "--write-watched"};
  const RunResult where = testing::run(concat(fixed, {"0", "--print-address"}));
  ASSERT_TRUE(where.exited && where.exit_code == 0) << where.text();
  const std::string address = where.out.substr(0, where.out.find('\n'));
  ASSERT_EQ(address.rfind("0x", 0), 0u) << where.out;
  const std::string event = "mem:" + address + ":w";
  const std::string dir = testing::temp_dir("breakpoint");
  const RunResult r = testing::run_record(concat({"-e", event, "-o", dir + "/ours.data", "--"}, concat(fixed, {"1000"})));
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  const RunResult perf = testing::run_perf_record(
      concat({testing::perf_path(), "record", "-q", "-e", event, "-o", dir + "/perf.data", "--"}, concat(fixed, {"1000"})));
  ASSERT_TRUE(perf.exited && perf.exit_code == 0) << perf.text();
  for (const std::string& file : {dir + "/ours.data", dir + "/perf.data"}) {
    const std::map<std::string, std::uint64_t> samples = testing::perf_samples_per_event(file);
    ASSERT_EQ(samples.count(event), 1u) << file << ": " << ::testing::PrintToString(samples);
    // The 1,000 writes, and the kernel's, if any, clearing the page at exec.
    EXPECT_GE(samples.at(event), 1000u) << file;
    EXPECT_LE(samples.at(event), 1010u) << file;
    const auto shares = testing::perf_symbol_shares(file);
    ASSERT_EQ(shares.count(event), 1u) << file;
    ASSERT_FALSE(shares.at(event).empty()) << file;
    EXPECT_EQ(shares.at(event).front().symbol, "ringsim_test_write_watched") << file;
    EXPECT_GE(shares.at(event).front().percent, 98.0) << file;
  }
}

// A weak group {a,b}:W the kernel refuses (a pinned member: EINVAL) is
// opened as separate events, as perf's: both recorders exit 0 and neither
// file has the group; without W both refuse it.
TEST(RecordTargets, AWeakGroupTheKernelRefusesIsOpenedAloneAsPerfs) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("weak-group");
  for (const bool weak : {true, false}) {
    const std::string group = weak ? "{cpu-clock,page-faults:D}:W" : "{cpu-clock,page-faults:D}";
    const RunResult r = testing::run_record({"-q", "-e", group, "-o", dir + "/ours.data", "--", "true"});
    const RunResult perf = testing::run_perf_record(
        {testing::perf_path(), "record", "-q", "-e", group, "-o", dir + "/perf.data", "--", "true"});
    ASSERT_TRUE(r.exited && perf.exited) << r.text() << perf.text();
    if (!weak) {
      EXPECT_NE(perf.exit_code, 0) << perf.text();
      EXPECT_NE(r.exit_code, 0) << r.text();
      EXPECT_EQ(testing::lines_with(r.err, "error: ").size(), 1u) << r.text();
      continue;
    }
    ASSERT_EQ(perf.exit_code, 0) << perf.text();
    ASSERT_EQ(r.exit_code, 0) << r.text();
    for (const std::string& file : {dir + "/ours.data", dir + "/perf.data"}) {
      const RunResult groups = testing::run({testing::perf_path(), "evlist", "-g", "-i", file});
      EXPECT_EQ(groups.out, "cpu-clock\npage-faults:D\n") << file << "\n" << groups.text();
    }
  }
}

// --switch-events: PERF_RECORD_SWITCH records of the command, which perf
// script shows (--show-switch-events); its sleep switches it out.
TEST(RecordTargets, SwitchEventsAreRecordsPerfScriptShows) {
  REQUIRE_PERF();
  const std::string out = testing::temp_dir("switch-events") + "/ours.data";
  const RunResult r =
      testing::run_record({"-e", "cpu-clock", "--switch-events", "-o", out, "--", "/bin/sh", "-c", "sleep 0.01"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  const RunResult script = testing::run({testing::perf_path(), "script", "--show-switch-events", "-i", out});
  ASSERT_TRUE(script.exited && script.exit_code == 0) << script.text();
  EXPECT_GE(testing::lines_with(script.out, "PERF_RECORD_SWITCH OUT").size(), 1u) << script.out.substr(0, 2000);
  EXPECT_GE(testing::lines_with(script.out, "PERF_RECORD_SWITCH IN").size(), 1u) << script.out.substr(0, 2000);
}

TEST(RecordTargets, LostRecordsNameTheirEventAndAreCountedPerRing) {
  REQUIRE_PERF();
  // Every sample (8 KiB of stack) is larger than the one-page rings: the
  // kernel drops them and says so with the next record that fits.
  const std::string out = testing::temp_dir("lost") + "/ours.data";
  const RunResult r = testing::run_record(concat({"-e", "task-clock,page-faults", "-c", "1000000", "-m", "1",
                                                  "--call-graph", "dwarf,8192", "-N", "-o", out, "--"},
                                                 testing::shares(60, 2)));
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  model::PerfDataFile f;
  ASSERT_EQ(model::read_perf_data(out, f), "");
  std::set<std::uint64_t> ids(f.attrs[0].ids.begin(), f.attrs[0].ids.end());
  ids.insert(f.attrs[1].ids.begin(), f.attrs[1].ids.end());
  std::uint64_t lost_records = 0;
  ASSERT_EQ(f.for_each_record([&](const model::PerfRecord& rec) {
              if (rec.type != model::kTypeLost) return;
              lost_records++;
              // { header; u64 id; u64 lost; sample_id ... u64 identifier }
              EXPECT_TRUE(ids.count(model::load<std::uint64_t>(rec.bytes.data() + 8)));
              EXPECT_TRUE(ids.count(model::load<std::uint64_t>(rec.bytes.data() + rec.size - 8)));
            }),
            "");
  EXPECT_GT(lost_records, 0u);
  const testing::ModelEvents model = testing::model_events({out});
  std::string rings;
  for (const auto& [cpu, loss] : model.lost_per_cpu) {
    rings += (rings.empty() ? "" : ", ") + std::string("cpu ") + std::to_string(cpu) + " " +
             std::to_string(loss.second) + " in " + std::to_string(loss.first);
  }
  EXPECT_EQ(testing::lines_with(r.err, "ringsim-record: records lost per ring (read back): " + rings).size(), 1u)
      << rings << "\n" << r.err;
  const testing::PerfView v = testing::perf_view(out, false);
  std::uint64_t sum = 0;
  for (const auto& [cpu, loss] : model.lost_per_cpu) sum += loss.second;
  EXPECT_EQ(v.lost_sum, sum);
  EXPECT_EQ(v.lost_records, lost_records);
}

// Rounds of the workload a test starts apart from the recorder and kills
// at its end: about 70 s of CPU time per thread (2000 rounds are about
// 7 s), far more than the start, the recording and the machine's load
// take, so it still runs when the recording ends.
constexpr int kTargetRounds = 20'000;

// The workload started apart from the recorder, its threads all running;
// killed by the destructor. It holds the recording lock from before the
// workload starts (the recordings the test then starts take it again at
// once: it is counted within a process), so no wait for the lock comes
// between the start and the recording. (With 2000 rounds started before
// a lock wait of seconds, the workload could end before its recording.)
class RunningShares {
 public:
  explicit RunningShares(int threads) {
    const Error e = process_.start(testing::shares(kTargetRounds, threads));
    EXPECT_TRUE(e.ok()) << e.message;
    EXPECT_TRUE(testing::wait_until([&] { return workers().size() == static_cast<std::size_t>(threads - 1); }));
  }
  ~RunningShares() { process_.signal(SIGKILL); }
  pid_t pid() const { return process_.pid(); }
  bool running() const { return !process_.has_exited(); }
  // The threads it started ("shares-worker"; not a sanitizer's own).
  std::vector<pid_t> workers() const {
    std::vector<pid_t> out;
    const std::string task = "/proc/" + std::to_string(pid()) + "/task";
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(task, error)) {
      std::ifstream comm(entry.path() / "comm");
      std::string name;
      if (std::getline(comm, name) && name == "shares-worker") out.push_back(std::stoi(entry.path().filename()));
    }
    return out;
  }

 private:
  testing::RecordingLockScope lock_{testing::kRecordingLockWaitS};  // first: taken before, dropped after process_
  Process process_;
};

TEST(RecordTargets, DashPRecordsEveryThreadOfTheProcessAndTheCommandOnlySetsHowLong) {
  REQUIRE_PERF();
  RunningShares target(2);
  const std::string out = testing::temp_dir("pid") + "/ours.data";
  const RunResult r = testing::run_record({"-p", std::to_string(target.pid()), "-F", "1000", "-N", "-o", out, "--",
                                           "sleep", "0.5"});
  ASSERT_TRUE(target.running()) << "the workload ended before the recording did";
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  EXPECT_NE(r.err.find("loop: stopped"), std::string::npos) << "the command ended it";
  const std::vector<std::string> pids = script_field(out, "pid");
  ASSERT_GT(pids.size(), 100u);
  EXPECT_EQ(std::set<std::string>(pids.begin(), pids.end()), std::set<std::string>{std::to_string(target.pid())});
  const std::vector<std::string> tids = script_field(out, "tid");
  const std::set<std::string> seen(tids.begin(), tids.end());
  EXPECT_TRUE(seen.count(std::to_string(target.pid())) && seen.count(std::to_string(target.workers().at(0))))
      << "both threads: " << ::testing::PrintToString(seen);
  const auto shares = testing::perf_symbol_shares(out);
  ASSERT_TRUE(shares.count("cpu-clock"));
  EXPECT_GT(testing::share_of(shares.at("cpu-clock"), "f1"), 20) << "resolved through the synthesized mappings";
}

// perf report -D's ID_INDEX entries ("... id: N  idx: I  cpu: C  tid: T"):
// per entry, its cpu and tid.
std::vector<std::pair<std::string, std::string>> id_index_of(const std::string& file) {
  const RunResult r = testing::run({testing::perf_path(), "report", "-D", "-i", file});
  EXPECT_TRUE(r.exited && r.exit_code == 0) << r.err.substr(0, 2000);
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string dots, id_key, id, idx_key, idx, cpu_key, cpu, tid_key, tid;
    if (words >> dots >> id_key >> id >> idx_key >> idx >> cpu_key >> cpu >> tid_key >> tid && dots == "..." &&
        id_key == "id:" && cpu_key == "cpu:" && tid_key == "tid:") {
      out.emplace_back(cpu, tid);
    }
  }
  return out;
}

// --per-thread as perf's: one ring per thread (cpu -1 in the id index),
// no inherit. -p of a process of three threads: both files' id indexes are
// one entry per thread with cpu -1, each thread sampled; perf evlist shows
// no inherit on either.
TEST(RecordTargets, PerThreadIsOneRingPerThreadAsPerfs) {
  REQUIRE_PERF();
  RunningShares target(3);
  const std::string dir = testing::temp_dir("per-thread");
  const std::vector<std::string> args = {"--per-thread", "-p", std::to_string(target.pid()), "-e", "cpu-clock"};
  const RunResult ours = testing::run_record(concat(args, {"-N", "-o", dir + "/ours.data", "--", "sleep", "0.5"}));
  ASSERT_TRUE(ours.exited && ours.exit_code == 0) << ours.text();
  const RunResult perf = testing::run_perf_record(concat(concat({testing::perf_path(), "record", "-q", "-N"}, args),
                                                         {"-o", dir + "/perf.data", "--", "sleep", "0.5"}));
  ASSERT_TRUE(perf.exited && perf.exit_code == 0) << perf.text();
  ASSERT_TRUE(target.running()) << "the workload ended before the recordings did";
  // Every thread of the process (a sanitizer's own among them under TSan),
  // and the three that burn, which must be sampled.
  std::set<std::pair<std::string, std::string>> threads;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(target.pid()) + "/task")) {
    threads.emplace("-1", entry.path().filename().string());
  }
  std::set<std::pair<std::string, std::string>> burning;
  burning.emplace("-1", std::to_string(target.pid()));
  for (const pid_t w : target.workers()) burning.emplace("-1", std::to_string(w));
  ASSERT_EQ(burning.size(), 3u);
  for (const std::string& file : {dir + "/ours.data", dir + "/perf.data"}) {
    SCOPED_TRACE(file);
    const auto index = id_index_of(file);
    const std::set<std::pair<std::string, std::string>> entries(index.begin(), index.end());
    EXPECT_EQ(entries, threads) << "one ring per thread, cpu -1";
    EXPECT_EQ(index.size(), threads.size()) << "one event";
    const std::vector<std::string> tids = script_field(file, "tid");
    std::set<std::pair<std::string, std::string>> sampled;
    for (const std::string& t : tids) sampled.emplace("-1", t);
    for (const auto& b : burning) EXPECT_EQ(sampled.count(b), 1u) << b.second << ": a burning thread, sampled";
    for (const auto& t : sampled) EXPECT_EQ(threads.count(t), 1u) << t.second << ": no other task";
    const RunResult evlist = testing::run({testing::perf_path(), "evlist", "-v", "-i", file});
    EXPECT_EQ(evlist.out.find("inherit: 1"), std::string::npos) << evlist.out;
  }
}

// A command: its own thread alone, not its children (no inherit), in both
// files; without --per-thread ours records the child too (the control).
// With -a, --per-thread is ignored, as perf: one ring per CPU, a warning.
TEST(RecordTargets, PerThreadLeavesTheCommandsChildrenOutAsPerfAndYieldsToDashA) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("per-thread-command");
  // The shell forks the workload (a child) and waits: the child burns.
  const std::vector<std::string> command = concat({"/bin/sh", "-c", "\"$0\" \"$@\"; true"}, testing::shares(200));
  for (const bool per_thread : {true, false}) {
    SCOPED_TRACE(per_thread ? "--per-thread" : "without");
    std::vector<std::string> args = {"-e", "cpu-clock"};
    if (per_thread) args.push_back("--per-thread");
    const std::string ours_out = dir + (per_thread ? "/ours-pt.data" : "/ours.data");
    const RunResult ours = testing::run_record(concat(concat(args, {"-N", "-o", ours_out, "--"}), command));
    ASSERT_TRUE(ours.exited && ours.exit_code == 0) << ours.text();
    const std::vector<std::string> comms = script_field(ours_out, "comm");
    const bool child_sampled = std::find(comms.begin(), comms.end(), "shares") != comms.end();
    EXPECT_EQ(child_sampled, !per_thread);
    if (!per_thread) continue;
    const std::string perf_out = dir + "/perf-pt.data";
    const RunResult perf = testing::run_perf_record(
        concat(concat(concat({testing::perf_path(), "record", "-q", "-N"}, args), {"-o", perf_out, "--"}), command));
    ASSERT_TRUE(perf.exited && perf.exit_code == 0) << perf.text();
    const std::vector<std::string> perf_comms = script_field(perf_out, "comm");
    EXPECT_EQ(std::find(perf_comms.begin(), perf_comms.end(), "shares"), perf_comms.end());
    for (const std::string& file : {ours_out, perf_out}) {
      const auto index = id_index_of(file);
      ASSERT_EQ(index.size(), 1u) << file;
      EXPECT_EQ(index[0].first, "-1") << file;
    }
  }
  const std::string wide = dir + "/wide.data";
  const RunResult r = testing::run_record({"-a", "--per-thread", "--no-buildid-mmap", "-N", "-o", wide, "--", "true"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  EXPECT_EQ(testing::lines_with(r.err, "warning: --per-thread is ignored with -a/-C").size(), 1u) << r.err;
  const auto index = id_index_of(wide);
  ASSERT_EQ(index.size(), online_cpu_count()) << "one ring per CPU";
  for (const auto& [cpu, tid] : index) EXPECT_NE(cpu, "-1");
}

// -p of a process in another mount namespace, as a container's: its binary
// is the file its namespace sees at that path, not the host's. The host
// has a copy of /bin/true at DIR/prog; the process's namespace mounts the
// shares workload over it and runs it from there. The file's build-id for
// DIR/prog is the workload's, the cache holds the workload's bytes under
// it, and perf report resolves f1 through that cache (it would not
// through the host's file: /bin/true has no f1).
TEST(RecordTargets, AProcessInAnotherMountNamespaceIsReadThroughItsRoot) {
  REQUIRE_PERF();
  if (::geteuid() != 0) GTEST_SKIP() << "unshare --mount needs root";
  namespace fs = std::filesystem;
  const std::string dir = testing::temp_dir("mntns");
  const std::string prog = dir + "/prog";
  const std::string cache = dir + "/cache";
  fs::copy_file("/bin/true", prog);
  // The lock before the workload starts, and far more work than the
  // recording takes (RunningShares): it runs throughout the recording.
  const testing::RecordingLockScope lock(testing::kRecordingLockWaitS);
  const std::vector<std::string> workload = testing::shares(kTargetRounds, 2);
  ASSERT_EQ(workload.size(), 3u);
  BuildId host_id;
  BuildId workload_id;
  ASSERT_EQ(elf_file_build_id(prog, host_id), "");
  ASSERT_EQ(elf_file_build_id(workload[0], workload_id), "");
  ASSERT_NE(host_id, workload_id);
  Process target;
  const Error e = target.start({"unshare", "--mount", "--propagation", "private", "sh", "-c",
                                "mount --bind \"$1\" \"$2\" && exec \"$2\" \"$3\" \"$4\"", "sh", workload[0], prog,
                                workload[1], workload[2]});
  ASSERT_TRUE(e.ok()) << e.message;
  // Exec'd in its namespace once its worker thread runs (by its name: a
  // sanitizer's runtime has threads of its own).
  const std::string task = "/proc/" + std::to_string(target.pid()) + "/task";
  const bool running = testing::wait_until([&] {
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(task, error)) {
      std::ifstream comm(entry.path() / "comm");
      std::string name;
      if (std::getline(comm, name) && name == "shares-worker") return true;
    }
    return false;
  });
  ASSERT_TRUE(running) << "the workload did not start in its namespace";
  const RunResult r = testing::run_record({"-p", std::to_string(target.pid()), "-F", "1000", "--buildid-dir", cache,
                                           "-o", dir + "/ours.data", "--", "sleep", "0.5"});
  const bool still_running = !target.has_exited();
  target.signal(SIGKILL);
  target.wait();
  ASSERT_TRUE(still_running) << "the workload ended before the recording did";
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  const RunResult ids = testing::run({testing::perf_path(), "buildid-list", "-i", dir + "/ours.data"});
  EXPECT_NE(ids.out.find(core::to_hex(workload_id) + " " + prog), std::string::npos)
      << "the namespace's file's build-id for " << prog << ":\n" << ids.out;
  EXPECT_EQ(ids.out.find(core::to_hex(host_id)), std::string::npos) << "the host's file's build-id:\n" << ids.out;
  BuildId cached_id;
  EXPECT_EQ(elf_file_build_id(cache + prog + "/" + core::to_hex(workload_id) + "/elf", cached_id), "");
  EXPECT_EQ(cached_id, workload_id) << "the cache holds the namespace's file under its build-id";
  const auto shares = testing::perf_symbol_shares(dir + "/ours.data", cache);
  ASSERT_TRUE(shares.count("cpu-clock")) << r.text();
  EXPECT_GT(testing::share_of(shares.at("cpu-clock"), "f1"), 20) << "resolved from the namespace's binary";
}

TEST(RecordTargets, DashTRecordsThatThreadOnly) {
  REQUIRE_PERF();
  RunningShares target(2);
  ASSERT_EQ(target.workers().size(), 1u);
  const pid_t tid = target.workers()[0];
  const std::string out = testing::temp_dir("tid") + "/ours.data";
  const RunResult r =
      testing::run_record({"-t", std::to_string(tid), "-F", "1000", "-N", "-o", out, "--", "sleep", "1"});
  ASSERT_TRUE(target.running()) << "the workload ended before the recording did";
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  const std::vector<std::string> tids = script_field(out, "tid");
  ASSERT_GT(tids.size(), 50u);
  EXPECT_EQ(std::set<std::string>(tids.begin(), tids.end()), std::set<std::string>{std::to_string(tid)});
}

TEST(RecordTargets, DashCRecordsThoseCpusOnly) {
  REQUIRE_PERF();
  if (online_cpu_count() < 2) GTEST_SKIP() << "needs two online CPUs";
  const std::string out = testing::temp_dir("cpu") + "/ours.data";
  const RunResult r =
      testing::run_record(concat({"-C", "1", "-F", "1000", "-N", "-o", out, "--"}, testing::shares(100, 2)));
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  const std::vector<std::string> cpus = script_field(out, "cpu");
  ASSERT_GT(cpus.size(), 50u);
  EXPECT_EQ(std::set<std::string>(cpus.begin(), cpus.end()), std::set<std::string>{"[001]"});
  model::PerfDataFile f;
  ASSERT_EQ(model::read_perf_data(out, f), "");
  EXPECT_EQ(f.attrs[0].ids.size(), 1u) << "one ring: CPU 1's";
}

bool exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

int pid_max() {
  std::ifstream in("/proc/sys/kernel/pid_max");
  int value = 0;
  in >> value;
  return value;
}

// One error line containing `needle`, exit `status`, no file.
void expect_refused(const std::vector<std::string>& args, int status, const std::string& needle,
                    const testing::ChildSetup& setup = {}) {
  SCOPED_TRACE(::testing::PrintToString(args));
  const bool named = std::find(args.begin(), args.end(), "-o") != args.end();
  const std::string out = named ? "-" : testing::temp_dir("refused") + "/never.data";
  const RunResult r = testing::run_record(concat(named ? std::vector<std::string>{"-N"}
                                                       : std::vector<std::string>{"-N", "-o", out},
                                                 args),
                                          setup);
  EXPECT_TRUE(r.exited && r.exit_code == status) << r.text();
  const std::vector<std::string> errors = testing::lines_with(r.err, "ringsim-record: error:");
  ASSERT_EQ(errors.size(), 1u) << r.text();
  EXPECT_NE(errors[0].find(needle), std::string::npos) << errors[0];
  EXPECT_FALSE(exists(out)) << "a file was left behind";
}

TEST(RecordTargets, BadEventsTasksAndCpusAreOneLineErrorsWithNoFile) {
  const std::string no_such_task = std::to_string(pid_max());  // pids are below pid_max
  expect_refused({"-e", "cpu-clock,bogus", "--", "true"}, kExitUsage, "unknown event \"bogus\"");
  expect_refused({"-p", no_such_task}, kExitUsage, "-p " + no_such_task + ": no such process");
  expect_refused({"-t", no_such_task, "--", "true"}, kExitUsage, "-t " + no_such_task + ": no such thread");
  expect_refused({"-C", "4096", "--", "true"}, kExitUsage, "CPU 4096 is not online");
  expect_refused({"-C", "0-4096", "--", "true"}, kExitUsage, "is not online");
  expect_refused({"-o", "-", "--aio", "1", "--", "true"}, kExitUsage, "a stream is written in order");
  expect_refused({"-p", "1", "-a"}, kExitUsage, "exclude each other");
  if (!exists("/sys/bus/event_source/devices/cpu")) {
    expect_refused({"-e", "cpu-clock,instructions", "--", "true"}, kExitUnavailable, "no hardware PMU here?");
  }
}

// -u USER: every process of that user, as perf 6.1 (which fails here: a
// task it was opening ended, "Ignored open failure", then exit 255; and
// with no process of the user it crashes; D20). The workload runs as
// nobody (setpriv), beside the recording: its samples, of both threads,
// are the file's, and nothing of another user is. The workload's user is
// a uid of its own (54321, no passwd entry: -u takes a number): other tests
// run commands and the recorder as nobody, and under the sanitizers'
// slowness a nobody process that ended while the recorder opened its
// events made it walk /proc again until it gave up (kUidRescansMax).
TEST(RecordTargets, DashURecordsEveryProcessOfThatUser) {
  REQUIRE_PERF();
  if (::geteuid() != 0) GTEST_SKIP() << "setpriv --reuid needs root";
  testing::RecordingLockScope lock(testing::kRecordingLockWaitS);
  Process other;
  const Error e = other.start(concat({"setpriv", "--reuid=54321", "--regid=54321", "--clear-groups"},
                                     testing::shares(kTargetRounds, 2)));
  ASSERT_TRUE(e.ok()) << e.message;
  ASSERT_TRUE(testing::wait_until([&] {
    struct stat st {};
    return (stat(("/proc/" + std::to_string(other.pid())).c_str(), &st) == 0 && st.st_uid == 54321 &&
            std::distance(std::filesystem::directory_iterator("/proc/" + std::to_string(other.pid()) + "/task"),
                          std::filesystem::directory_iterator{}) >= 2) ||  // ThreadSanitizer adds a thread of its own
           other.has_exited();
  }));
  const std::string out = testing::temp_dir("uid") + "/ours.data";
  const RunResult r = testing::run_record({"-u", "54321", "-F", "1000", "-N", "-o", out, "--", "sleep", "0.5"});
  ASSERT_FALSE(other.has_exited()) << "the workload ended before the recording did: " << r.text();
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  const std::vector<std::string> pids = script_field(out, "pid");
  ASSERT_GT(pids.size(), 100u);
  for (const std::string& pid : std::set<std::string>(pids.begin(), pids.end())) {
    struct stat st {};
    // A process that ended since cannot be checked; the workload is there.
    if (stat(("/proc/" + pid).c_str(), &st) == 0) {
      EXPECT_EQ(st.st_uid, 54321u) << "pid " << pid;
    }
  }
  EXPECT_NE(std::find(pids.begin(), pids.end(), std::to_string(other.pid())), pids.end());
  const std::vector<std::string> tids = script_field(out, "tid");
  EXPECT_GE(std::set<std::string>(tids.begin(), tids.end()).size(), 2u) << "both threads of the workload";
  const auto shares = testing::perf_symbol_shares(out);
  ASSERT_TRUE(shares.count("cpu-clock"));
  EXPECT_GT(testing::share_of(shares.at("cpu-clock"), "f1"), 20) << "resolved through the synthesized mappings";
  other.signal(SIGKILL);
  expect_refused({"-u", "no-such-user-here", "--", "true"}, kExitUsage, "-u no-such-user-here: no such user");
  expect_refused({"-u", "0", "-p", "1", "--", "true"}, kExitUsage, "-u and -p exclude each other");
}

// A cgroup of its own under the cgroup2 mount (removed by the
// destructor, its processes killed first); "" name if none can be made.
class TestCgroup {
 public:
  TestCgroup() {
    std::ifstream mounts("/proc/self/mounts");
    std::string device, point, type, rest;
    // Bounded by the mount table's length.
    while (mounts >> device >> point >> type && std::getline(mounts, rest)) {
      if (type == "cgroup2") break;
      point.clear();
    }
    if (point.empty()) return;
    name_ = "ringsim-test-" + std::to_string(::getpid());
    path_ = point + "/" + name_;
    if (::mkdir(path_.c_str(), 0755) != 0) name_.clear();
  }
  ~TestCgroup() {
    for (Process& p : processes_) p.signal(SIGKILL);
    for (Process& p : processes_) p.wait(testing::kDeadlineNs);
    if (!name_.empty()) ::rmdir(path_.c_str());
  }
  const std::string& name() const { return name_; }
  // `argv` started inside the cgroup (it joins, then execs); its pid.
  pid_t run_inside(const std::vector<std::string>& argv) {
    processes_.emplace_back();
    const Error e = processes_.back().start(
        concat({"/bin/sh", "-c", "echo $$ > " + path_ + "/cgroup.procs && exec \"$0\" \"$@\""}, argv));
    EXPECT_TRUE(e.ok()) << e.message;
    return processes_.back().pid();
  }

 private:
  std::string name_, path_;
  std::deque<Process> processes_;  // not moved as it grows
};

// -G NAME with -a: only the cgroup's tasks are sampled (PERF_FLAG_PID_CGROUP),
// as in perf's file: the workload inside it, not the one beside it.
TEST(RecordTargets, DashGRecordsOnlyThatCgroupsTasksAsPerf) {
  REQUIRE_PERF();
  testing::RecordingLockScope lock(testing::kRecordingLockWaitS);
  TestCgroup cgroup;
  if (cgroup.name().empty()) GTEST_SKIP() << "no writable cgroup2 mount here (mkdir under it failed)";
  const pid_t inside = cgroup.run_inside(testing::shares(kTargetRounds, 1));
  RunningShares beside(1);
  ASSERT_TRUE(testing::wait_until([&] {
    std::ifstream in("/proc/" + std::to_string(inside) + "/cgroup");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ifstream comm("/proc/" + std::to_string(inside) + "/comm");
    std::string name;
    std::getline(comm, name);
    return text.find("::/" + cgroup.name()) != std::string::npos && name == "shares";
  })) << "the workload in the cgroup, after its exec";
  const std::string dir = testing::temp_dir("cgroup");
  for (const char* who : {"ours", "perf"}) {
    SCOPED_TRACE(who);
    const std::string out = dir + "/" + who + ".data";
    const std::vector<std::string> options = {"-a", "-e", "cpu-clock", "-G", cgroup.name(), "-F", "1000", "-o", out,
                                              "--", "sleep", "0.5"};
    const RunResult r = std::string(who) == "ours"
                            ? testing::run_record(concat({"-N"}, options))
                            : testing::run_perf_record(concat({testing::perf_path(), "record", "-q"}, options));
    ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
    const std::vector<std::string> pids = script_field(out, "pid");
    ASSERT_GT(pids.size(), 50u);
    EXPECT_EQ(std::set<std::string>(pids.begin(), pids.end()), std::set<std::string>{std::to_string(inside)})
        << "only the cgroup's workload, not " << beside.pid();
  }
  expect_refused({"-e", "cpu-clock", "-G", cgroup.name(), "--", "true"}, kExitUsage, "only available in system-wide");
  expect_refused({"-a", "-e", "cpu-clock", "-G", "no-such-cgroup-here", "--", "true"}, kExitUsage,
                 "no access to cgroup");
}

// --all-cgroups (perf's record_cgroup): every sample carries its task's
// cgroup id (PERF_SAMPLE_CGROUP) and every cgroup is named by a CGROUP
// record, so that perf report --sort cgroup puts the workload under its
// cgroup: in ours' file as in perf's, the cgroup's CGROUP record with the
// same id in both. Refused before 2026-11-27.
TEST(RecordTargets, AllCgroupsNamesEachSamplesCgroupAsPerf) {
  REQUIRE_PERF();
  testing::RecordingLockScope lock(testing::kRecordingLockWaitS);
  TestCgroup cgroup;
  if (cgroup.name().empty()) GTEST_SKIP() << "no writable cgroup2 mount here (mkdir under it failed)";
  const pid_t inside = cgroup.run_inside(testing::shares(kTargetRounds, 1));
  ASSERT_TRUE(testing::wait_until([&] {
    std::ifstream comm("/proc/" + std::to_string(inside) + "/comm");
    std::string name;
    std::getline(comm, name);
    return name == "shares";
  })) << "the workload in the cgroup, after its exec";
  const std::string dir = testing::temp_dir("all-cgroups");
  std::map<std::string, std::string> ids;  // recorder: the test cgroup's id in its CGROUP record
  for (const char* who : {"ours", "perf"}) {
    SCOPED_TRACE(who);
    const std::string out = dir + "/" + who + ".data";
    const std::vector<std::string> options = {"-a", "-e", "cpu-clock", "--all-cgroups", "-F", "1000", "-o", out,
                                              "--", "sleep", "0.5"};
    const RunResult r = std::string(who) == "ours"
                            ? testing::run_record(concat({"-N", "--no-buildid-mmap"}, options))
                            : testing::run_perf_record(concat({testing::perf_path(), "record", "-q"}, options));
    ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
    const RunResult dump = testing::run({testing::perf_path(), "report", "-D", "-i", out});
    ASSERT_TRUE(dump.exited && dump.exit_code == 0) << dump.text().substr(0, 2000);
    std::uint64_t synthesized = 0;  // CGROUP records with time 0 ("CPU TIME OFFSET ...")
    for (const std::string& line : testing::lines_with(dump.out, "PERF_RECORD_CGROUP cgroup: ")) {
      std::istringstream words(line.substr(line.find("cgroup: ") + 8));
      std::string id, path;
      if (words >> id >> path && path == "/" + cgroup.name()) ids[who] = id;
      std::istringstream head(line);
      std::string cpu, time;
      if (head >> cpu >> time && time == "0") synthesized++;
    }
    if (std::string(who) == "ours") {
      EXPECT_NE(r.err.find(" mappings, " + std::to_string(synthesized) + " cgroups"), std::string::npos)
          << "the summary counts the CGROUP records written: " << synthesized << "\n" << r.err;
    }
    EXPECT_FALSE(ids[who].empty()) << "no CGROUP record of /" << cgroup.name();
    const RunResult report = testing::run({testing::perf_path(), "report", "-i", out, "--stdio", "--sort",
                                           "cgroup,comm"});
    ASSERT_TRUE(report.exited && report.exit_code == 0) << report.text();
    bool workload_in_cgroup = false;
    for (const std::string& line : testing::lines_with(report.out, "/" + cgroup.name())) {
      workload_in_cgroup |= line.find("shares") != std::string::npos;
    }
    EXPECT_TRUE(workload_in_cgroup) << report.out.substr(0, 3000);
  }
  EXPECT_EQ(ids["ours"], ids["perf"]);
}

TEST(RecordTargets, AProcessWeMayNotTraceIsRefused) {
  // A process of another user (nobody), and the recorder as root without
  // capabilities: the kernel wants ptrace permission over the target.
  Process other;
  const Error e = other.start({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sleep", "30"});
  ASSERT_TRUE(e.ok()) << e.message;
  ASSERT_TRUE(testing::wait_until([&] {
    struct stat st {};
    return stat(("/proc/" + std::to_string(other.pid())).c_str(), &st) == 0 && st.st_uid == 65534;
  }));
  testing::ChildSetup setup;
  setup.drop_capabilities = true;
  expect_refused({"-p", std::to_string(other.pid()), "-e", "cpu-clock:u", "--", "true"}, kExitNoPermission,
                 "attaching to a task of another user", setup);
  other.signal(SIGKILL);
}

}  // namespace
}  // namespace ringsim::real
