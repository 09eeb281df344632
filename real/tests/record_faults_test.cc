// Faults on the real recorder beyond the other tests (docs/reliability.md):
//   - SIGINT or SIGTERM at random moments of startup, recording and
//     shutdown: 50 tries, each ends with a valid file or no file;
//   - SIGKILL at random moments: 50 tries, each ends with no file, an
//     unfinished file (header data size 0: killed before the first header
//     checkpoint, refused by perf as it refuses its own files after
//     kill -9) or a file perf report reads whole;
//   - the file system full at a header checkpoint (an LD_PRELOAD shim,
//     real/testing/pwrite_faults.cc, fails the Nth header rewrite and every
//     synchronous write after it with ENOSPC): one error line, exit 74, and
//     the file valid up to its last good header;
//   - the output's directory removed while recording: one error line, exit
//     74, no directory created again.
// A valid file: the model's reader (model/perf_data_file.h) reads every
// record, perf script and perf report read it without complaint and see
// the samples and LOST records the model sees, and a recorder that exited
// normally reported those samples.
//
// The random moments and choices come from a PRNG seeded with
// RINGSIM_FAULT_SEED (default kDefaultSeed), printed with every try's
// description on failure. Delays are spread over the length of one
// unsignalled run (measured first); nothing is judged by time.
#include <sys/stat.h>
#include <sys/wait.h>

#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "model/records.h"
#include "real/recorder.h"
#include "real/tests/model_view.h"
#include "real/testing/record_testing.h"

namespace ringsim::real {
namespace {

using testing::RunResult;

// Tries per signal loop: RINGSIM_FAULT_TRIES, 50 by default (CI's TSan
// stage runs the first 20 of the same seed: the tries are drawn in order).
constexpr std::uint64_t kDefaultTries = 50;
constexpr int kFullDiskTries = 12;
constexpr std::uint64_t kDefaultSeed = 12;

#define REQUIRE_PERF()                                                                               \
  do {                                                                                               \
    if (testing::perf_path().empty()) {                                                              \
      GTEST_SKIP() << "/usr/bin/perf not found: install linux-perf (scripts/setup.sh installs it)"; \
    }                                                                                                \
  } while (0)

// A decimal variable of the environment, or `otherwise` if it is unset;
// anything else but digits fails the test, naming it.
std::uint64_t env_number(const char* name, std::uint64_t otherwise) {
  const char* text = std::getenv(name);
  if (text == nullptr) return otherwise;
  std::uint64_t value = 0;
  const char* end = text + std::strlen(text);
  const auto [at, error] = std::from_chars(text, end, value);
  if (error != std::errc() || at != end) {
    ADD_FAILURE() << name << "=" << text << " is not a decimal number";
    return otherwise;
  }
  return value;
}

std::uint64_t fault_seed() { return env_number("RINGSIM_FAULT_SEED", kDefaultSeed); }

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<std::string> burn(int ms, int threads = 1) {
  return {testing::self_path(), "--burn-ms", std::to_string(ms), "--threads", std::to_string(threads)};
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// --- Judging a file ------------------------------------------------------------

enum class FileState { none, unfinished, valid };

struct Verdict {
  FileState state = FileState::none;
  std::uint64_t samples = 0;  // the model's count
  // Samples in whole records past the end the header gives (an unfinished
  // file: past the attributes): written, but no reader sees them.
  std::uint64_t samples_past_header = 0;
  std::string problem;  // "" or why the file is corrupt
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The samples in whole records after the data section the header gives
// (the model's walker, stopping at a torn record).
std::uint64_t samples_past_header(const std::string& path) {
  const std::string bytes = read_file(path);
  if (bytes.size() < 56) return 0;
  const auto data_offset = model::load<std::uint64_t>(reinterpret_cast<const std::byte*>(bytes.data()) + 40);
  const auto data_size = model::load<std::uint64_t>(reinterpret_cast<const std::byte*>(bytes.data()) + 48);
  if (data_offset > bytes.size() || data_size > bytes.size() - data_offset) return 0;
  const std::uint64_t end = data_offset + data_size;
  std::uint64_t samples = 0;
  model::walk_records(std::span<const std::byte>(reinterpret_cast<const std::byte*>(bytes.data()) + end,
                                                 bytes.size() - end),
                      [&](const model::PerfRecord& r) { samples += r.type == model::kTypeSample; });
  return samples;
}

void judge_with_perf(const std::string& out, const testing::ModelView& model, Verdict& v) {
  const bool report = model.loss.samples > 0;  // perf report refuses a file without samples
  const testing::PerfView perf = testing::perf_view(out, report);
  if (!perf.script.exited || perf.script.exit_code != 0) {
    v.problem = "perf script: " + perf.script.text();
  } else if (!perf.complaints.empty()) {
    v.problem = "perf complains: " + perf.complaints.front();
  } else if (perf.samples != model.loss.samples || perf.lost_sum != model.loss.lost_sum) {
    v.problem = "perf sees " + std::to_string(perf.samples) + " samples and " + std::to_string(perf.lost_sum) +
                " lost, the model " + std::to_string(model.loss.samples) + " and " +
                std::to_string(model.loss.lost_sum);
  } else if (report && (!perf.report.exited || perf.report.exit_code != 0 || perf.report.out.empty())) {
    v.problem = "perf report: " + perf.report.text();
  }
}

// The output after a try. `unfinished_ok`: a file whose header says no
// data (the state perf's own files are in after kill -9) is allowed.
Verdict judge(const std::string& out, bool unfinished_ok) {
  Verdict v;
  if (!exists(out)) return v;
  v.samples_past_header = samples_past_header(out);
  if (testing::header_data_size(out) == 0) {
    v.state = FileState::unfinished;
    if (!unfinished_ok) v.problem = "an unfinished file (header data size 0)";
    return v;
  }
  const testing::ModelView model = testing::model_view({out});
  if (model.files != 1 || !model.problem.empty()) {
    v.problem = "the model's reader: " + model.problem;
    return v;
  }
  v.state = FileState::valid;
  v.samples = model.loss.samples;
  judge_with_perf(out, model, v);
  return v;
}

struct Tally {
  int tries = 0;
  int no_file = 0;
  int unfinished = 0;
  int valid = 0;
  int valid_with_samples = 0;
  int corrupt = 0;
  std::uint64_t samples_past_header = 0;
  std::uint64_t samples_in_unfinished = 0;

  void add(const Verdict& v) {
    tries++;
    samples_past_header += v.samples_past_header;
    if (v.state == FileState::unfinished) samples_in_unfinished += v.samples_past_header;
    if (!v.problem.empty()) corrupt++;
    if (v.state == FileState::none) no_file++;
    if (v.state == FileState::unfinished) unfinished++;
    if (v.state == FileState::valid && v.problem.empty()) {
      valid++;
      if (v.samples > 0) valid_with_samples++;
    }
  }
  void print(const char* what, std::uint64_t seed) const {
    std::printf(
        "%s: %d tries (seed %llu): %d no file, %d unfinished, %d valid (%d with samples), %d corrupt; %llu samples "
        "written past the headers\n",
        what, tries, static_cast<unsigned long long>(seed), no_file, unfinished, valid, valid_with_samples, corrupt,
        static_cast<unsigned long long>(samples_past_header));
  }
};

std::uint64_t samples_reported(const RunResult& r) {
  std::uint64_t samples = 0;
  return testing::summary_value(r.err, "samples written", samples) ? samples : UINT64_MAX;
}

// --- Signals at random moments --------------------------------------------------

// The recorder's arguments for try i: a command, or the whole system (its
// startup reads every process in /proc); the header every 100 or 10 ms.
std::vector<std::string> try_args(int i, const std::string& out) {
  std::vector<std::string> args = {testing::record_path(), "-F", "2000", "-o", out};
  if (i % 2 == 1) args.push_back("-a");
  if (i % 4 >= 2) args = concat(args, {"--header-interval-ms", "10"});
  return concat(concat(args, {"--"}), burn(40));
}

// How long one unsignalled run of each kind takes: the span the random
// moments are drawn from. Timed as run_try times its delay: from when
// testing::start returns (the recorder started, the recording lock held)
// to its end, not the wait for the lock before it (seconds, behind
// another test's recording), which stretched the span so that most
// signals came after the run had ended.
std::uint64_t run_span_ns() {
  std::uint64_t longest = 0;
  for (int i = 0; i < 2; i++) {
    const std::string out = testing::temp_dir("calibrate") + "/perf.data";
    Process p;
    const Error started = testing::start(p, try_args(i, out));
    const std::uint64_t start = testing::monotonic_ns();
    EXPECT_TRUE(started.ok()) << started.message;
    if (!p.started()) continue;
    const RunResult r = testing::finish(p);
    EXPECT_TRUE(r.exited && r.exit_code == 0) << r.text();
    longest = std::max(longest, testing::monotonic_ns() - start);
  }
  return std::max<std::uint64_t>(longest + longest / 4, testing::kMs);  // (a start that failed failed the test)
}

struct Try {
  int index = 0;
  int signal = 0;
  const char* when = "";
  std::uint64_t delay_ns = 0;
  std::string out;
};

// A moment right after exec (the first 4 ms: loading, options, signal
// handlers), in the startup (the first eighth of a run), anywhere, or
// around the end (shutdown: the last quarter of a run, and after).
void draw_moment(std::mt19937_64& random, std::uint64_t span_ns, Try& t) {
  constexpr std::uint64_t kExecNs = 4'000'000;
  switch (random() % 4) {
    case 0:
      t.when = "exec";
      t.delay_ns = random() % kExecNs;
      break;
    case 1:
      t.when = "startup";
      t.delay_ns = random() % (span_ns / 8);
      break;
    case 2:
      t.when = "anywhere";
      t.delay_ns = random() % span_ns;
      break;
    default:
      t.when = "shutdown";
      t.delay_ns = span_ns * 3 / 4 + random() % (span_ns / 2);
      break;
  }
}

// Starts the recorder, sends the signal after the delay, returns its end.
RunResult run_try(const Try& t) {
  Process p;
  const Error started = testing::start(p, try_args(t.index, t.out));
  EXPECT_TRUE(started.ok()) << started.message;
  std::this_thread::sleep_for(std::chrono::nanoseconds(t.delay_ns));
  p.signal(t.signal);
  return testing::finish(p);
}

std::string describe(const Try& t, std::uint64_t seed) {
  return "try " + std::to_string(t.index) + " (RINGSIM_FAULT_SEED=" + std::to_string(seed) + "): " +
         strsignal(t.signal) + " after " + std::to_string(t.delay_ns / 1000) + " us (" + t.when + "), " +
         (t.index % 2 == 1 ? "-a" : "a command") + (t.index % 4 >= 2 ? ", --header-interval-ms 10" : "");
}

// RINGSIM_FAULT_TRIES tries, each with `signal` or (0) SIGINT or SIGTERM at random.
Tally signal_loop(int signal, bool unfinished_ok) {
  const std::uint64_t seed = fault_seed();
  std::mt19937_64 random(seed + static_cast<std::uint64_t>(signal));
  const std::uint64_t span_ns = run_span_ns();
  Tally tally;
  const std::uint64_t tries = env_number("RINGSIM_FAULT_TRIES", kDefaultTries);
  EXPECT_GT(tries, 0u) << "RINGSIM_FAULT_TRIES=0 tries nothing";
  EXPECT_LE(tries, 10'000u) << "RINGSIM_FAULT_TRIES above 10000 (each try is a recording)";
  if (tries > 10'000 || ::testing::Test::HasFailure()) return {};
  for (std::uint64_t i = 0; i < tries; i++) {
    Try t;
    t.index = static_cast<int>(i);
    t.signal = signal != 0 ? signal : (random() % 2 == 0 ? SIGINT : SIGTERM);
    draw_moment(random, span_ns, t);
    t.out = testing::temp_dir("signal") + "/perf.data";
    SCOPED_TRACE(describe(t, seed));
    const RunResult r = run_try(t);
    // Ended by the signal: before the handlers were installed (no
    // summary), or, as perf record, re-raised once the file was finished
    // (the summary printed); every try runs a command, and one still
    // running was stopped by SIGTERM, whose signal the recorder then ends
    // by (perf record too).
    const bool killed = !r.exited && WIFSIGNALED(r.status) &&
                        (WTERMSIG(r.status) == t.signal || WTERMSIG(r.status) == SIGTERM);
    EXPECT_TRUE((r.exited && r.exit_code == 0) || killed) << r.text();
    const bool finished = samples_reported(r) != UINT64_MAX;
    const Verdict v = judge(t.out, unfinished_ok);
    EXPECT_EQ(v.problem, "") << r.text();
    if (finished) {
      EXPECT_EQ(v.state, FileState::valid) << r.text();
      EXPECT_EQ(samples_reported(r), v.samples) << r.text();
    }
    tally.add(v);
  }
  return tally;
}

TEST(RecordFaults, StopSignalsAtRandomMomentsLeaveAValidFileOrNone) {
  REQUIRE_PERF();
  const Tally tally = signal_loop(0, /*unfinished_ok=*/false);
  tally.print("SIGINT/SIGTERM", fault_seed());
  EXPECT_EQ(tally.corrupt, 0);
  EXPECT_EQ(tally.unfinished, 0);
}

TEST(RecordFaults, SigkillAtRandomMomentsLeavesNoCorruptFile) {
  REQUIRE_PERF();
  const Tally tally = signal_loop(SIGKILL, /*unfinished_ok=*/true);
  tally.print("SIGKILL", fault_seed());
  EXPECT_EQ(tally.corrupt, 0);
  // Killed before its first header checkpoint, a file holds no sample yet:
  // the events start with that checkpoint.
  EXPECT_EQ(tally.samples_in_unfinished, 0u);
}

// --- The file system full at a header checkpoint ----------------------------------

std::string shim_path() {
  const char* root = std::getenv("TEST_SRCDIR");
  return std::string(root != nullptr ? root : ".") + "/ringsim/real/testing/libpwrite_faults.so";
}

// The recorder under the shim: the full_at-th header write and every
// synchronous write after it fail with ENOSPC.
std::vector<std::string> full_disk_args(int full_at, const char* aio, const std::string& out) {
  const char* asan = std::getenv("ASAN_OPTIONS");
  return concat({"/usr/bin/env", "LD_PRELOAD=" + shim_path(), "RINGSIM_FULL_AT_HEADER=" + std::to_string(full_at),
                 // The shim comes before the sanitizers' runtimes.
                 std::string("ASAN_OPTIONS=") + (asan != nullptr ? asan : "") + ":verify_asan_link_order=0",
                 testing::record_path(), "-a", "-F", "4000", "-g", "--header-interval-ms", "10", "--aio", aio, "-o",
                 out, "--"},
                burn(300, 2));
}

TEST(RecordFaults, FullDiskAtAHeaderCheckpointKeepsTheFileValidUpToItsLastHeader) {
  REQUIRE_PERF();
  ASSERT_TRUE(exists(shim_path())) << shim_path();
  const std::uint64_t seed = fault_seed();
  std::mt19937_64 random(seed);
  Tally tally;
  int failed_at_checkpoint = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> reported_vs_readable;
  for (int i = 0; i < kFullDiskTries; i++) {
    const char* aio = i % 3 == 0 ? "0" : (i % 3 == 1 ? "1" : "4");
    const int full_at = 1 + static_cast<int>(random() % 6);
    SCOPED_TRACE("try " + std::to_string(i) + " (RINGSIM_FAULT_SEED=" + std::to_string(seed) + "): header write " +
                 std::to_string(full_at) + " fails, --aio " + aio);
    const std::string out = testing::temp_dir("full-header") + "/perf.data";
    const RunResult r = testing::run(full_disk_args(full_at, aio, out));
    ASSERT_TRUE(r.exited && (r.exit_code == 0 || r.exit_code == kExitIoError)) << r.text();
    // An error once the disk is full, one line naming ENOSPC; 0 only if the
    // recording ended before that header write.
    const std::vector<std::string> errors = testing::lines_with(r.err, "ringsim-record: error:");
    if (r.exit_code == kExitIoError) {
      failed_at_checkpoint++;
      ASSERT_EQ(errors.size(), 1u) << r.text();
      EXPECT_NE(errors[0].find("ENOSPC"), std::string::npos) << errors[0];
    } else {
      EXPECT_TRUE(errors.empty()) << r.text();
    }
    // The file: its last good header covers whole records perf reads; if
    // the very first header write failed, no header covers anything.
    const Verdict v = judge(out, /*unfinished_ok=*/r.exit_code == kExitIoError);
    EXPECT_EQ(v.problem, "") << r.text();
    // What the summary says was written is what a reader gets: when the
    // final header fix-up fails, what the last checkpoint covers is still
    // there (the writer counts only what lies past it as lost).
    if (r.exit_code == kExitIoError && v.state == FileState::valid) {
      reported_vs_readable.emplace_back(samples_reported(r), v.samples);
      EXPECT_EQ(samples_reported(r), v.samples) << r.text();
    }
    EXPECT_LE(testing::header_data_size(out), testing::file_size(out));
    tally.add(v);
  }
  tally.print("full disk at a header checkpoint", seed);
  std::printf("full disk at a header checkpoint: %d of %d recordings stopped with ENOSPC (exit 74)\n",
              failed_at_checkpoint, kFullDiskTries);
  for (const auto& [reported, readable] : reported_vs_readable) {
    std::printf("  samples written according to the summary %llu, readable by perf and the model %llu\n",
                static_cast<unsigned long long>(reported), static_cast<unsigned long long>(readable));
  }
  EXPECT_EQ(tally.corrupt, 0);
  EXPECT_GT(failed_at_checkpoint, 0);
}

// --- The output's directory removed while recording ----------------------------------

TEST(RecordFaults, OutputDirectoryRemovedWhileRecordingIsAnError) {
  for (const std::vector<std::string>& mode :
       {std::vector<std::string>{"--aio", "0"}, {"--aio", "4"}, {"--switch-output", "64K"}}) {
    SCOPED_TRACE(mode[0] + " " + mode[1]);
    const std::string dir = testing::temp_dir("removed") + "/out";
    std::filesystem::create_directories(dir);
    const std::string out = dir + "/perf.data";
    Process p;
    ASSERT_TRUE(testing::start(p, concat(concat({testing::record_path(), "-a", "-F", "2000", "-g", "-o", out}, mode),
                                         concat({"--"}, burn(600, 2))))
                    .ok());
    ASSERT_TRUE(testing::wait_until([&] { return testing::header_data_size(out) > 0; }));
    std::filesystem::remove_all(dir);
    const RunResult r = testing::finish(p);
    ASSERT_TRUE(r.exited && r.exit_code == kExitIoError) << r.text();
    const std::vector<std::string> errors = testing::lines_with(r.err, "ringsim-record: error:");
    ASSERT_EQ(errors.size(), 1u) << r.text();
    EXPECT_NE(errors[0].find("removed while recording"), std::string::npos) << errors[0];
    EXPECT_FALSE(exists(dir)) << "the recorder created the removed directory again";
    EXPECT_EQ(r.err.find("VERIFY"), std::string::npos) << r.text();
    EXPECT_EQ(r.err.find("Sanitizer"), std::string::npos) << r.text();
  }
}

}  // namespace
}  // namespace ringsim::real
