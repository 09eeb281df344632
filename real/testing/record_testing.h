// Helpers for the recorder's tests: running a program (real/process.h)
// with its output captured and a deadline, running the recorder and perf, a CPU-burning
// workload built into the test binary, dropping capabilities, mounting a
// small tmpfs.
//
// Deadlines only turn a hang into a failure with diagnostics; no test
// decides anything from how long something took.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "real/clock.h"
#include "real/process.h"

namespace ringsim::real::testing {

inline constexpr std::uint64_t kMs = 1'000'000;
inline constexpr std::uint64_t kSecond = 1'000'000'000;
inline constexpr std::uint64_t kDeadlineNs = 120 * kSecond;

using real::monotonic_ns;

// Whoever runs the test binary with these arguments gets a workload
// instead of the tests: "--burn-ms N [--threads T]" burns N ms of CPU time
// per thread in ringsim_test_burn() and exits 0; "--write-watched N
// [--print-address]" writes a global N times in ringsim_test_write_watched()
// (first printing its address), for breakpoints (-e mem:ADDR:w).
// Call first thing in main(); returns false when argv is not a workload.
bool run_workload_if_asked(int argc, char** argv);

// The recorder binary (absolute) and this test binary.
void set_record_path(const std::string& path);
const std::string& record_path();
std::string self_path();

struct RunResult {
  int status = -1;       // wait status
  bool exited = false;   // normally, with exit_code
  int exit_code = -1;
  bool timed_out = false;
  std::string out;       // stdout
  std::string err;       // stderr
  rusage usage{};        // wait4's: the child's, with its reaped children's
  std::string text() const;  // for failure messages
};

// How a child is prepared before exec.
struct ChildSetup {
  bool drop_capabilities = false;        // no capabilities, and none regained at exec (SECBIT_NOROOT)
  long memlock_limit_bytes = -1;         // RLIMIT_MEMLOCK, if >= 0
};

// Starts argv (real/process.h) with stdout and stderr captured and `setup`
// applied in the child before exec. A recording (the recorder, or `perf
// record`) holds the machine's recording lock (recording_lock.h) from
// start() to finish(), waiting for it at most kRecordingLockWaitS.
inline constexpr int kRecordingLockWaitS = 240;
Error start(Process& process, const std::vector<std::string>& argv, const ChildSetup& setup = {});
// Waits for it (SIGKILL at the deadline) and collects what it wrote.
RunResult finish(Process& process, std::uint64_t deadline_ns = kDeadlineNs);
// start() and finish(); a failed start is in err.
RunResult run(const std::vector<std::string>& argv, const ChildSetup& setup = {});

// The recorder with `args`.
RunResult run_record(const std::vector<std::string>& args, const ChildSetup& setup = {});

// A value from the recorder's summary ("ringsim-record: samples written: N").
// false if the line is missing.
bool summary_value(const std::string& err, const std::string& key, std::uint64_t& value);
// The lines of `text` that contain `needle`.
std::vector<std::string> lines_with(const std::string& text, const std::string& needle);

// perf. Skips (GTEST_SKIP in the caller) when absent: perf_path() == "".
std::string perf_path();

struct PerfView {
  RunResult script;        // perf script -F time,cpu,event --show-lost-events (time,event: no CPU in the samples)
  RunResult report;        // perf report --stdio
  std::uint64_t samples = 0;       // sample lines of perf script
  std::uint64_t lost_records = 0;  // PERF_RECORD_LOST lines
  std::uint64_t lost_sum = 0;      // their "lost N"
  std::vector<std::string> complaints;  // lines of perf's stderr that mean trouble
};
// What perf sees in `file`. report: also run perf report --stdio.
PerfView perf_view(const std::string& file, bool report);

// A fresh directory under TEST_TMPDIR.
std::string temp_dir(const std::string& name);

// tmpfs on `dir` (created) with `options`; unmounted by the destructor.
class Tmpfs {
 public:
  Tmpfs(const std::string& dir, const std::string& options, bool read_only = false);
  ~Tmpfs();
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }

 private:
  std::string dir_;
  bool mounted_ = false;
  std::string error_;
};

// The header's data size field of a perf.data file (0 if unreadable).
std::uint64_t header_data_size(const std::string& path);
std::uint64_t file_size(const std::string& path);

// The CPU time (user + system, in ms) of the children of `pid` that are
// still there (/proc/PID/task/*/children): how far a recorder's command
// has got, whatever the machine's load. 0 if none can be read.
std::uint64_t children_cpu_ms(pid_t pid);

// Polls `condition` every 5 ms until it holds or deadline_ns passes.
bool wait_until(const std::function<bool()>& condition, std::uint64_t deadline_ns = kDeadlineNs);

}  // namespace ringsim::real::testing
