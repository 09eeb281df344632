// The recorder's errors, run as a user would run it: each one is a single
// line "ringsim-record: error: ..." naming the cause and what to do, with a
// non-zero exit status (recorder.h), and leaves either no file or a file
// perf reads.
//
// Permission cases run the recorder as root without capabilities
// (SECBIT_NOROOT: exec does not give them back), so that
// perf_event_paranoid, the locked-memory limit and file permissions apply.
#include <linux/perf_event.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "real/recorder.h"
#include "real/tests/perf_tools.h"
#include "real/testing/record_testing.h"

namespace ringsim::real {
namespace {

using testing::ChildSetup;
using testing::RunResult;

int read_proc_int(const char* path) {
  std::ifstream in(path);
  int value = 0;
  in >> value;
  return value;
}

bool exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

// Exactly one error line, which contains every `needle`.
void expect_one_error_line(const RunResult& r, const std::vector<std::string>& needles) {
  const std::vector<std::string> errors = testing::lines_with(r.err, "ringsim-record: error:");
  ASSERT_EQ(errors.size(), 1u) << r.text();
  for (const std::string& n : needles) EXPECT_NE(errors[0].find(n), std::string::npos) << "no \"" << n << "\" in: " << errors[0];
}

std::vector<std::string> burn(int ms) { return {testing::self_path(), "--burn-ms", std::to_string(ms)}; }

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(RecordUsage, HelpListsTheOptions) {
  const RunResult r = testing::run_record({"--help"});
  EXPECT_TRUE(r.exited && r.exit_code == 0) << r.text();
  for (const char* option : {"--output", "--all-cpus", "--event", "--freq", "--count", "--call-graph", "--mmap-pages",
                             "--aio", "--overwrite", "--switch-output", "--staging", "--reader-priority",
                             "--cut-stacks"}) {
    EXPECT_NE(r.out.find(option), std::string::npos) << option;
  }
}

TEST(RecordUsage, BadOptionsAndValuesAreOneLineErrors) {
  const std::string dir = testing::temp_dir("usage");
  const std::string out = dir + "/never.data";
  struct Case {
    std::vector<std::string> args;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {{"--bogus", "--", "true"}, "--bogus"},
      {{"-e", "no-such-event", "--", "true"}, "unknown event"},
      {{"-e", "cpu-clock:z", "--", "true"}, "modifier"},
      {{"-m", "3", "--", "true"}, "power of two"},
      {{"-m", "0", "--", "true"}, "--mmap-pages"},
      {{"-m", "4194304", "--", "true"}, "--mmap-pages"},
      {{"--aio", "5", "--", "true"}, "--aio"},
      {{"-F", "0", "--", "true"}, "--freq"},
      {{"-F", "100000000", "--strict-freq", "--", "true"}, "perf_event_max_sample_rate"},
      {{"-c", "0", "--", "true"}, "--count"},
      {{"-F", "100", "-c", "100", "--", "true"}, "excludes"},
      {{"--call-graph", "dwarf,13", "--", "true"}, "multiple of 8"},
      {{"--call-graph", "dwarf,70000", "--", "true"}, "65528"},
      {{"--call-graph", "lbr", "--", "true"}, "lbr"},
      {{"-G", "/", "--", "true"}, "-G/--cgroup: cgroup monitoring only available in system-wide mode"},
      {{"-u", "no-such-user-here", "--", "true"}, "-u no-such-user-here: no such user"},
      {{"--control", "fd:x", "--", "true"}, "--control fd:x"},
      {{"--user-regs=ds", "--", "true"}, "unknown register \"ds\""},
      {{"-j", "nope", "--", "true"}, "unknown branch filter \"nope\""},
      {{"-D", "5000000", "--", "true"}, "-D/--delay 5000000"},
      {{"-k", "monotonic_coarse", "--", "true"}, "-k monotonic_coarse: unknown clock"},
      {{"-k", "2", "--", "true"}, "-k 2: not a clock the kernel stamps samples with"},
      {{"-F", "fast", "--", "true"}, "-F/--freq fast"},
      {{"-m", "12K", "--", "true"}, "3 pages is not a power of two"},
      {{"--switch-output", "1K", "-a"}, "--switch-output"},
      {{"--switch-output", "12Q", "-a"}, "--switch-output=12Q: expected signal, a size"},
      {{"--switch-output=banana", "-a"}, "--switch-output=banana: expected signal, a size"},
      {{"--switch-output=5ms", "-a"}, "a time in 10ms..30d"},
      {{"--switch-output=signal", "--switch-max-files=-1", "-a"}, "--switch-max-files=-1: expected a number"},
      {{"--switch-output=signal", "--switch-max-files=0", "-a"}, "--switch-max-files=0"},
      {{"--switch-max-files=3", "-a"}, "needs --switch-output or --overwrite"},
      {{"--overwrite", "-z", "-a"}, "--overwrite with -z"},
      {{"--header-interval-ms", "99999999", "-a"}, "--header-interval-ms"},
      {{}, "nothing to record"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args{"-o", out};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const RunResult r = testing::run_record(args);
    SCOPED_TRACE(::testing::PrintToString(c.args));
    EXPECT_TRUE(r.exited && r.exit_code == kExitUsage) << r.text();
    expect_one_error_line(r, {c.needle, "(see --help)"});
    EXPECT_FALSE(exists(out)) << "a usage error created the output file";
  }
}

// A staging buffer that cannot hold two rings is known only once the rings
// are mapped: one line naming both sizes, exit 64, and no output file.
TEST(RecordErrors, StagingSmallerThanTwoRings) {
  const std::string out = testing::temp_dir("staging-small") + "/x.data";
  const RunResult r = testing::run_record({"-e", "task-clock:u", "-m", "8", "--staging", "40K", "-o", out, "--", "true"});
  EXPECT_TRUE(r.exited && r.exit_code == 64) << r.text();
  expect_one_error_line(r, {"--staging 40960", "less than twice", "-m 8", "32768 bytes"});
  EXPECT_FALSE(exists(out));
}

TEST(RecordErrors, UnsupportedEventNamesItAndCreatesNoFile) {
  // A hardware event: this machine has no PMU. Where one exists, the
  // kernel opens it and there is nothing to check here.
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = PERF_COUNT_HW_CPU_CYCLES;
  attr.disabled = 1;
  const long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  if (fd >= 0) {
    close(static_cast<int>(fd));
    GTEST_SKIP() << "this machine has a PMU: cycles is supported here";
  }
  const std::string out = testing::temp_dir("unsupported") + "/never.data";
  const RunResult r = testing::run_record(concat({"-e", "instructions", "-o", out, "--"}, burn(10)));
  EXPECT_TRUE(r.exited && r.exit_code == kExitUnavailable) << r.text();
  expect_one_error_line(r, {"-e instructions", "not supported", "software event"});
  EXPECT_FALSE(exists(out));
  // cycles falls back to cpu-clock, as perf's evsel__fallback: one
  // warning line, and the file's event is cpu-clock.
  const std::string fell_back = testing::temp_dir("cycles") + "/x.data";
  const RunResult c = testing::run_record(concat({"-e", "cycles:u", "-o", fell_back, "--"}, burn(50)));
  EXPECT_TRUE(c.exited && c.exit_code == 0) << c.text();
  EXPECT_EQ(testing::lines_with(c.err, "warning: -e cycles:u: no hardware PMU here").size(), 1u) << c.err;
  EXPECT_TRUE(testing::lines_with(c.err, "error:").empty()) << c.err;
  if (testing::perf_path().empty()) GTEST_SKIP() << "/usr/bin/perf not found (scripts/setup.sh installs linux-perf)";
  // Named as perf names the fallen-back event (evsel__add_modifiers from
  // its attr): cpu-clock:uH, in perf's file as in ours (ours said
  // cpu-clock:u until 2026-12-01).
  const RunResult evlist = testing::run({testing::perf_path(), "evlist", "-v", "-i", fell_back});
  EXPECT_EQ(evlist.out.rfind("cpu-clock:uH: type: 1, size:", 0), 0u) << evlist.out;
  EXPECT_NE(evlist.out.find("exclude_kernel: 1"), std::string::npos) << evlist.out;
  const std::string perfs = testing::temp_dir("cycles-perf") + "/perf.data";
  const RunResult p = testing::run_perf_record({testing::perf_path(), "record", "-q", "-e", "cycles:u", "-o", perfs, "--", "true"});
  ASSERT_TRUE(p.exited && p.exit_code == 0) << p.text();
  const RunResult perf_evlist = testing::run({testing::perf_path(), "evlist", "-i", perfs});
  EXPECT_EQ(perf_evlist.out.substr(0, perf_evlist.out.find('\n')), "cpu-clock:uH") << perf_evlist.out;
}

TEST(RecordErrors, MissingDirectoryIsNamed) {
  const std::string out = testing::temp_dir("missing") + "/no/such/dir/x.data";
  const RunResult r = testing::run_record(concat({"-o", out, "--"}, burn(10)));
  EXPECT_TRUE(r.exited && r.exit_code == kExitCantCreate) << r.text();
  expect_one_error_line(r, {"ENOENT", "does not exist", "/no/such/dir", "-o"});
  EXPECT_FALSE(exists(out));
}

TEST(RecordErrors, OutputThatIsADirectory) {
  const std::string dir = testing::temp_dir("isdir");
  const RunResult r = testing::run_record(concat({"-o", dir, "--"}, burn(10)));
  EXPECT_TRUE(r.exited && r.exit_code == kExitCantCreate) << r.text();
  expect_one_error_line(r, {"EISDIR", "-o"});
}

TEST(RecordErrors, ReadOnlyFileSystem) {
  const std::string dir = testing::temp_dir("readonly");
  testing::Tmpfs ro(dir, "size=64k", /*read_only=*/true);
  if (!ro.mounted()) GTEST_SKIP() << "needs root to mount a tmpfs: " << ro.error();
  const RunResult r = testing::run_record(concat({"-o", dir + "/x.data", "--"}, burn(10)));
  EXPECT_TRUE(r.exited && r.exit_code == kExitCantCreate) << r.text();
  expect_one_error_line(r, {"EROFS", "read-only", "-o"});
}

TEST(RecordErrors, CommandThatCannotRunLeavesAValidFile) {
  const std::string out = testing::temp_dir("noexec") + "/x.data";
  const RunResult r = testing::run_record({"-o", out, "--", "/no/such/command"});
  EXPECT_TRUE(r.exited && r.exit_code == kExitCommandFailed) << r.text();
  expect_one_error_line(r, {"/no/such/command", "ENOENT", "PATH"});
  ASSERT_TRUE(exists(out));
  if (testing::perf_path().empty()) GTEST_SKIP() << "/usr/bin/perf not found (scripts/setup.sh installs linux-perf)";
  const testing::PerfView v = testing::perf_view(out, false);
  EXPECT_TRUE(v.script.exited && v.script.exit_code == 0) << v.script.text();
  EXPECT_EQ(v.samples, 0u);
  EXPECT_TRUE(v.complaints.empty()) << v.script.text();
}

// --- Without capabilities ------------------------------------------------------

ChildSetup unprivileged() {
  ChildSetup setup;
  setup.drop_capabilities = true;
  return setup;
}

TEST(RecordPermissions, UserSpaceOnlyWorksWithoutCapabilities) {
  // The control for the cases below: the recorder runs unprivileged, and
  // what fails there fails for the reason named.
  const std::string out = testing::temp_dir("user-only") + "/x.data";
  const RunResult r = testing::run_record(concat({"-e", "task-clock:u", "-F", "1000", "-o", out, "--"}, burn(50)),
                                          unprivileged());
  EXPECT_TRUE(r.exited && r.exit_code == 0) << r.text();
  std::uint64_t samples = 0;
  EXPECT_TRUE(testing::summary_value(r.err, "samples written", samples)) << r.text();
  EXPECT_GT(samples, 0u) << r.text();
}

// The reading thread's priority: as root, SCHED_FIFO 1 by default and what
// --reader-priority asks; without the capability, auto says on one line
// why it runs at normal priority, and an explicit request is refused
// before anything is recorded.
TEST(RecordPermissions, ReaderPriority) {
  const std::string out = testing::temp_dir("reader-priority") + "/x.data";
  RunResult r = testing::run_record(concat({"-e", "task-clock:u", "-F", "1000", "-o", out, "--"}, burn(30)));
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  EXPECT_EQ(testing::lines_with(r.err, "reader thread: SCHED_FIFO 1").size(), 1u) << r.err;
  r = testing::run_record(
      concat({"-e", "task-clock:u", "-F", "1000", "--reader-priority", "nice:-5", "-o", out, "--"}, burn(30)));
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  EXPECT_EQ(testing::lines_with(r.err, "reader thread: nice -5").size(), 1u) << r.err;
  r = testing::run_record(concat({"-e", "task-clock:u", "-F", "1000", "-o", out, "--"}, burn(30)), unprivileged());
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  const std::vector<std::string> fallback = testing::lines_with(r.err, "reader thread: normal (not higher: ");
  ASSERT_EQ(fallback.size(), 1u) << r.err;
  EXPECT_NE(fallback[0].find("SCHED_FIFO 1"), std::string::npos) << fallback[0];
  EXPECT_NE(fallback[0].find("nice -20"), std::string::npos) << fallback[0];
  std::remove(out.c_str());
  r = testing::run_record(concat({"-e", "task-clock:u", "--reader-priority", "fifo", "-o", out, "--"}, burn(10)),
                          unprivileged());
  EXPECT_TRUE(r.exited && r.exit_code == kExitNoPermission) << r.text();
  expect_one_error_line(r, {"--reader-priority", "SCHED_FIFO 1", "CAP_SYS_NICE"});
  EXPECT_FALSE(exists(out));
}

TEST(RecordPermissions, SystemWideWithoutPermissionNamesParanoid) {
  const int paranoid = read_proc_int("/proc/sys/kernel/perf_event_paranoid");
  if (paranoid < 1) GTEST_SKIP() << "perf_event_paranoid is " << paranoid << ": system-wide is allowed unprivileged";
  const std::string out = testing::temp_dir("paranoid") + "/x.data";
  const RunResult r = testing::run_record({"-a", "-o", out, "--", "true"}, unprivileged());
  EXPECT_TRUE(r.exited && r.exit_code == kExitNoPermission) << r.text();
  expect_one_error_line(r, {"EACCES", "perf_event_paranoid", "CAP_PERFMON"});
  EXPECT_FALSE(exists(out));
}

// As perf's evsel__fallback: kernel samples perf_event_paranoid refuses
// become user space only, the event named NAME:u, with one warning line;
// perf, unprivileged alike, names its event the same.
TEST(RecordPermissions, KernelSamplesOfACommandFallBackToUserSpaceAsPerf) {
  const int paranoid = read_proc_int("/proc/sys/kernel/perf_event_paranoid");
  if (paranoid < 2) GTEST_SKIP() << "perf_event_paranoid is " << paranoid << ": kernel samples are allowed unprivileged";
  const std::string dir = testing::temp_dir("paranoid-cmd");
  const RunResult r = testing::run_record(concat({"-e", "cpu-clock,page-faults:k", "-o", dir + "/ours.data", "--"},
                                                 burn(50)),
                                          unprivileged());
  if (r.exited && r.exit_code == kExitNoPermission) {
    EXPECT_NE(r.err.find("page-faults:k"), std::string::npos) << "a kernel-only event cannot fall back\n" << r.err;
  } else {
    ADD_FAILURE() << "page-faults:k asks for the kernel only: nothing to fall back to\n" << r.text();
  }
  const RunResult ok =
      testing::run_record(concat({"-e", "cpu-clock", "-o", dir + "/ours.data", "--"}, burn(50)), unprivileged());
  EXPECT_TRUE(ok.exited && ok.exit_code == 0) << ok.text();
  EXPECT_EQ(testing::lines_with(ok.err, "perf_event_paranoid=" + std::to_string(paranoid)).size(), 1u) << ok.err;
  EXPECT_TRUE(testing::lines_with(ok.err, "error:").empty()) << ok.err;
  std::uint64_t samples = 0;
  EXPECT_TRUE(testing::summary_value(ok.err, "samples written", samples)) << ok.text();
  EXPECT_GT(samples, 0u);
  if (testing::perf_path().empty()) GTEST_SKIP() << "/usr/bin/perf not found (scripts/setup.sh installs linux-perf)";
  const RunResult perf = testing::run(
      concat({testing::perf_path(), "record", "-q", "-e", "cpu-clock", "-o", dir + "/perf.data", "--"}, burn(50)),
      unprivileged());
  for (const std::string& file : {dir + "/ours.data", dir + "/perf.data"}) {
    const RunResult evlist = testing::run({testing::perf_path(), "evlist", "-i", file});
    EXPECT_EQ(testing::lines_with(evlist.out, "cpu-clock:u").size(), 1u) << file << "\n" << evlist.text();
  }
}

TEST(RecordPermissions, RingOverTheLockedMemoryLimit) {
  const int paranoid = read_proc_int("/proc/sys/kernel/perf_event_paranoid");
  if (paranoid < 0) GTEST_SKIP() << "perf_event_paranoid is " << paranoid << ": the locked-memory limit is not enforced";
  ChildSetup setup = unprivileged();
  setup.memlock_limit_bytes = 0;
  const std::string out = testing::temp_dir("memlock") + "/x.data";
  // 1024 data pages per ring (4 MiB) is more than perf_event_mlock_kb
  // (516 KiB per CPU) allows on any small machine.
  const RunResult r = testing::run_record(concat({"-e", "task-clock:u", "-m", "1024", "-o", out, "--"}, burn(10)), setup);
  EXPECT_TRUE(r.exited && r.exit_code == kExitNoPermission) << r.text();
  expect_one_error_line(r, {"EPERM", "RLIMIT_MEMLOCK", "perf_event_mlock_kb", "smaller -m"});
  EXPECT_FALSE(exists(out));
}

TEST(RecordPermissions, RealtimeWithoutPermission) {
  ChildSetup setup = unprivileged();
  const std::string out = testing::temp_dir("realtime") + "/x.data";
  const RunResult r = testing::run_record(concat({"-e", "task-clock:u", "-r", "1", "-o", out, "--"}, burn(10)), setup);
  if (r.exited && r.exit_code == 0) GTEST_SKIP() << "RLIMIT_RTPRIO allows SCHED_FIFO unprivileged here";
  EXPECT_TRUE(r.exited && r.exit_code == kExitNoPermission) << r.text();
  expect_one_error_line(r, {"--realtime 1", "EPERM", "CAP_SYS_NICE"});
  EXPECT_FALSE(exists(out));
}

TEST(RecordPermissions, UnwritableDirectory) {
  const std::string dir = testing::temp_dir("unwritable");
  ASSERT_EQ(chmod(dir.c_str(), 0555), 0);
  const std::string out = dir + "/x.data";
  const RunResult r = testing::run_record(concat({"-e", "task-clock:u", "-o", out, "--"}, burn(10)), unprivileged());
  chmod(dir.c_str(), 0755);
  EXPECT_TRUE(r.exited && r.exit_code == kExitCantCreate) << r.text();
  expect_one_error_line(r, {"EACCES", "no permission", dir, "-o"});
  EXPECT_FALSE(exists(out));
}

}  // namespace
}  // namespace ringsim::real
