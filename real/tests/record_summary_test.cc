// Every figure of the recorder's summary against an independent count:
//
//   command ...          the command the test ran (its exit status, its signal)
//   wrote N file(s) ...  stat() of the files on disk; the model's reader for
//                        the data sections
//   samples written,     the model's reader (model/perf_data_file.h), which
//   records lost         shares no code with the recorder's core
//                        (record_perf_test checks them against perf script)
//   data-loss metric,    model::loss_stats over the same files, printed as
//   lost fraction        the recorder prints it
//   recorder drops       none on a healthy run (what the model reads is
//                        everything written); the output error's cut on a
//                        full disk
//   writer: ...          bytes completed = the data sections (model); files
//                        = the files on disk; chunks = the loop's chunks;
//                        serial mode has no AIO counts; AIO's in-flight
//                        maximum within its control blocks
//   loop: ...            its status; timeouts and interruptions within the
//                        rounds; wrapped chunks within the chunks
//   rotation: ...        new files = files on disk - 1; side-band records
//                        kept = the kernel's COMM/MMAP/MMAP2/FORK records in the
//                        files (model)
//   synthesized: ...     the records with time 0 in the files (model): COMM
//                        per thread, their pids per file, MMAP2 per mapping
//   cpu time: ...        within wait4's rusage of the recorder (its parent's
//                        view); the recording within the test's wall clock
//
// Counters with no independent source on a healthy machine (short writes,
// EINTR and EAGAIN retries) are checked for consistency: zero on a local
// disk, zero in serial mode for the AIO-only ones.
#include <linux/perf_event.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "model/perf_data_file.h"
#include "real/recorder.h"
#include "real/testing/record_testing.h"
#include "real/tests/perf_tools.h"
#include "real/tests/model_view.h"

namespace ringsim::real {
namespace {

using testing::concat;
using testing::RunResult;

std::vector<std::string> burn(int ms, int threads = 1) {
  return {testing::self_path(), "--burn-ms", std::to_string(ms), "--threads", std::to_string(threads)};
}

// The one summary line that starts with "ringsim-record: <start>" (without
// that prefix), or "" (a failure) when there is not exactly one.
std::string line_of(const std::string& err, const std::string& start) {
  const std::string prefix = "ringsim-record: " + start;
  const std::vector<std::string> lines = testing::lines_with(err, prefix);
  EXPECT_EQ(lines.size(), 1u) << "lines with \"" << prefix << "\" in:\n" << err;
  if (lines.size() != 1 || lines[0].rfind(prefix, 0) != 0) return "";
  return lines[0].substr(prefix.size());
}

// The number after " <name> " in `line` (a failure if absent).
std::uint64_t number_after(const std::string& line, const std::string& name) {
  const std::string needle = " " + name + " ";
  const std::size_t at = (" " + line).find(needle);
  EXPECT_NE(at, std::string::npos) << "no \"" << name << "\" in: " << line;
  if (at == std::string::npos) return 0;
  return std::strtoull(line.c_str() + at + needle.size() - 1, nullptr, 10);
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", 100 * fraction);
  return text;
}

double seconds_of(const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; }

// The files of a recording as they are on disk: PATH, PATH.1, ...
std::vector<std::string> files_on_disk(const std::string& path) {
  std::vector<std::string> paths;
  for (int index = 0; index < 10000; index++) {
    const std::string p = index == 0 ? path : path + "." + std::to_string(index);
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) break;
    paths.push_back(p);
  }
  return paths;
}

// "wrote N file(s): PATHS, B bytes (data sections D bytes)" against stat()
// and the model.
void expect_files(const std::string& err, const std::vector<std::string>& paths, const testing::ModelView& model) {
  const std::string line = line_of(err, "wrote ");
  std::string list;
  std::uint64_t file_bytes = 0;
  for (const std::string& p : paths) {
    list += (list.empty() ? "" : ", ") + p;
    file_bytes += testing::file_size(p);
  }
  EXPECT_EQ(line, std::to_string(paths.size()) + " file(s): " + list + ", " + std::to_string(file_bytes) +
                      " bytes (data sections " + std::to_string(model.data_bytes) + " bytes)");
  EXPECT_EQ(model.files, paths.size()) << model.problem;
  EXPECT_EQ(model.file_bytes, file_bytes);
}

// samples written, records lost, the data-loss metric and lost fraction
// against the model's reading of the files.
void expect_counts_and_metric(const std::string& err, const testing::ModelView& model) {
  EXPECT_TRUE(model.problem.empty()) << model.problem;
  const model::LossStats& m = model.loss;
  EXPECT_EQ(line_of(err, "samples written: "), std::to_string(m.samples));
  EXPECT_EQ(line_of(err, "records lost: "), std::to_string(m.lost_sum) + " (sum of " + std::to_string(m.lost_records) +
                                              " PERF_RECORD_LOST records)");
  EXPECT_EQ(line_of(err, "data-loss metric: "),
            percent(m.loss_metric()) + "% (lost time / elapsed, read back from the file" +
                (model.files > 1 ? "s" : "") + "); lost fraction " + percent(m.lost_fraction()) +
                "% (read back: " + std::to_string(m.samples) + " samples, " + std::to_string(m.lost_sum) + " lost)")
      << "the model's metric: lost " << m.lost_time_ns << " ns of " << m.last_time_ns - m.first_time_ns << " ns";
  EXPECT_TRUE(testing::lines_with(err, "warning: reading the output back").empty()) << err;
}

struct WriterLine {
  std::uint64_t chunks = 0;
  std::uint64_t bytes_completed = 0;
  std::uint64_t in_flight_max = 0;
  std::uint64_t files = 0;
  std::uint64_t header_checkpoints = 0;
};

// The writer's figures on a healthy local disk, in `aio` mode (0: serial)
// with `rings` rings.
WriterLine expect_writer(const std::string& err, std::uint32_t aio, std::uint64_t rings,
                         const testing::ModelView& model, std::uint64_t files) {
  const std::string line = line_of(err, "writer: ");
  WriterLine w;
  w.chunks = number_after(line, "chunks");
  w.bytes_completed = number_after(line, "bytes completed");
  w.in_flight_max = number_after(line, "in flight max");
  w.files = number_after(line, "files");
  w.header_checkpoints = number_after(line, "header checkpoints");
  EXPECT_EQ(w.bytes_completed, model.data_bytes) << line;
  EXPECT_EQ(w.files, files) << line;
  EXPECT_EQ(number_after(line, "short writes restarted"), 0u) << line;
  EXPECT_EQ(number_after(line, "EINTR retries"), 0u) << line;
  if (aio == 0) {
    EXPECT_EQ(line.rfind("serial, ", 0), 0u) << line;
    for (const char* only_aio : {"EAGAIN retries", "EAGAIN sync fallbacks", "suspends interrupted",
                                 "waits for a control block", "in flight max"}) {
      EXPECT_EQ(number_after(line, only_aio), 0u) << only_aio << " in serial mode: " << line;
    }
  } else {
    EXPECT_EQ(line.rfind("aio (" + std::to_string(aio) + " control block(s) ", 0), 0u) << line;
    EXPECT_GE(w.in_flight_max, 1u) << line;
    EXPECT_LE(w.in_flight_max, aio * rings) << line;
  }
  return w;
}

// The loop's figures; its chunks are the writer's. A command's end stops
// the loop ("stopped") unless its rings all hung up first ("done").
void expect_loop(const std::string& err, bool command_only, const WriterLine& writer) {
  const std::string line = line_of(err, "loop: ");
  const bool stopped = line.rfind("stopped, ", 0) == 0;
  const bool done = line.rfind("done, ", 0) == 0;
  EXPECT_TRUE(stopped || (command_only && done)) << line;
  const std::uint64_t rounds = number_after(line, "rounds");
  EXPECT_GE(rounds, 1u) << line;
  EXPECT_LE(number_after(line, "poll timeouts") + number_after(line, "interrupted"), rounds) << line;
  const std::uint64_t chunks = number_after(line, "chunks");
  const std::size_t staged_at = err.find("ringsim-record: staging: ");
  if (staged_at == std::string::npos) {
    EXPECT_EQ(chunks, writer.chunks) << "every chunk the loop read was written: " << line;
  } else {
    // Staged: the loop's chunks went into the staging buffer, which the
    // writer wrote in batches (its chunks).
    const std::string staging = err.substr(staged_at, err.find('\n', staged_at) - staged_at);
    EXPECT_EQ(chunks, number_after(staging, "bytes,")) << "every chunk the loop read was staged: " << staging;
    EXPECT_EQ(writer.chunks, number_after(staging, "in")) << "the writer's writes are the staging's: " << staging;
    EXPECT_LE(writer.chunks, chunks) << staging;
  }
  EXPECT_LE(number_after(line, "(wrapped"), chunks) << line;
  EXPECT_EQ(number_after(line, "snapshots"), 0u) << "normal rings: " << line;
}

// What the files hold that the recorder synthesized (time 0) or the kernel
// wrote about tasks (COMM, MMAP, MMAP2 with a time).
struct SideBand {
  std::uint64_t comms = 0;      // synthesized COMM: one per thread
  std::uint64_t processes = 0;  // their distinct pids, per file
  std::uint64_t mmap2s = 0;     // synthesized MMAP2: one per mapping
  std::set<std::string> kernel_records;  // the kernel's, byte for byte (copies count once)
};

SideBand side_band_of(const std::vector<std::string>& paths) {
  SideBand s;
  for (const std::string& path : paths) {
    model::PerfDataFile file;
    const std::string problem = model::read_perf_data(path, file);
    EXPECT_TRUE(problem.empty()) << path << ": " << problem;
    std::set<std::uint32_t> pids;
    file.for_each_record([&](const model::PerfRecord& r) {
      if (r.type != PERF_RECORD_COMM && r.type != PERF_RECORD_MMAP && r.type != PERF_RECORD_MMAP2 &&
          r.type != PERF_RECORD_FORK) {
        return;
      }
      std::uint64_t time = 0;
      if (!file.time_of(r, time)) return;
      if (time != 0) {
        s.kernel_records.insert(std::string(reinterpret_cast<const char*>(r.bytes.data()), r.bytes.size()));
      } else if (r.type == PERF_RECORD_COMM) {
        s.comms++;
        pids.insert(model::load<std::uint32_t>(r.bytes.data() + 8));
      } else if (r.type == PERF_RECORD_MMAP2) {
        s.mmap2s++;
      }
    });
    s.processes += pids.size();
  }
  return s;
}

void expect_synthesized(const std::string& err, const SideBand& side_band) {
  EXPECT_EQ(line_of(err, "synthesized: "), std::to_string(side_band.processes) + " processes, " +
                                             std::to_string(side_band.comms) + " threads, " +
                                             std::to_string(side_band.mmap2s) + " mappings");
}

// The recorder's own CPU time, read before its read-back, within what its
// parent's wait4 saw of it; the recording within the run's wall time.
void expect_cpu_time(const std::string& err, const RunResult& r, double wall_s) {
  const std::string line = line_of(err, "cpu time: ");
  double user = 0, system = 0, recording = 0;
  ASSERT_EQ(std::sscanf(line.c_str(), "%lf s user, %lf s system, in %lf s of recording", &user, &system, &recording),
            3)
      << line;
  // The summary rounds to milliseconds.
  EXPECT_LE(user, seconds_of(r.usage.ru_utime) + 0.0005) << line;
  EXPECT_LE(system, seconds_of(r.usage.ru_stime) + 0.0005) << line;
  EXPECT_LE(recording, wall_s + 0.0005) << line;
}

// Runs the recorder; the wall time of the run in wall_s.
RunResult record(const std::vector<std::string>& args, double& wall_s) {
  const std::uint64_t start_ns = testing::monotonic_ns();
  RunResult r = testing::run_record(args);
  wall_s = static_cast<double>(testing::monotonic_ns() - start_ns) / 1e9;
  return r;
}

TEST(RecordSummary, EveryFigureOfACommandRecording) {
  const std::string out = testing::temp_dir("summary-command") + "/perf.data";
  const std::vector<std::string> command = burn(300);
  double wall_s = 0;
  const RunResult r = record(concat({"-F", "1000", "-o", out, "--"}, command), wall_s);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  std::string command_text;
  for (const std::string& a : command) command_text += (command_text.empty() ? "" : " ") + a;
  EXPECT_EQ(line_of(r.err, "command exited with status 0: "), command_text);
  const std::vector<std::string> paths = files_on_disk(out);
  ASSERT_EQ(paths.size(), 1u);
  const testing::ModelView model = testing::model_view(paths);
  EXPECT_GT(model.loss.samples, 50u) << "300 ms of CPU at 1 kHz";
  expect_files(r.err, paths, model);
  expect_counts_and_metric(r.err, model);
  EXPECT_EQ(line_of(r.err, "recorder drops: "), "none");
  const WriterLine writer = expect_writer(r.err, 0, 0, model, 1);
  EXPECT_GE(writer.header_checkpoints, 1u) << "the header is rewritten once data is there";
  expect_loop(r.err, true, writer);
  expect_synthesized(r.err, side_band_of(paths));
  expect_cpu_time(r.err, r, wall_s);
}

// Under load, with rings overflowing (LOST records, a non-zero metric), in
// every write mode, staged (the default) and not; system-wide, so /proc is
// synthesized.
TEST(RecordSummary, EveryFigureOfASystemWideRecordingUnderLoadInEveryWriteMode) {
  std::vector<int> cpus;
  ASSERT_TRUE(online_cpus(cpus).ok());
  for (const auto& [aio, staged] : std::vector<std::pair<std::uint32_t, bool>>{
           {0u, true}, {1u, true}, {4u, true}, {0u, false}, {1u, false}}) {
    SCOPED_TRACE("--aio " + std::to_string(aio) + (staged ? "" : " --staging off"));
    const std::string out = testing::temp_dir("summary-load") + "/perf.data";
    double wall_s = 0;
    std::vector<std::string> args = {"-a", "-F", "20000", "-g", "-m", "1", "--aio", std::to_string(aio)};
    if (!staged) args.insert(args.end(), {"--staging", "off"});
    args.insert(args.end(), {"-o", out, "--"});
    const RunResult r = record(concat(args, burn(300, 2)), wall_s);
    EXPECT_EQ(r.err.find("ringsim-record: staging: ") != std::string::npos, staged) << r.err;
    ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
    const std::vector<std::string> paths = files_on_disk(out);
    ASSERT_EQ(paths.size(), 1u);
    const testing::ModelView model = testing::model_view(paths);
    std::printf("--aio %u: %s\n", aio, line_of(r.err, "data-loss metric: ").c_str());
    expect_files(r.err, paths, model);
    expect_counts_and_metric(r.err, model);
    EXPECT_EQ(line_of(r.err, "recorder drops: "), "none");
    const WriterLine writer = expect_writer(r.err, aio, cpus.size(), model, 1);
    expect_loop(r.err, false, writer);
    const SideBand side_band = side_band_of(paths);
    EXPECT_GT(side_band.processes, 1u) << "every process in /proc";
    expect_synthesized(r.err, side_band);
    expect_cpu_time(r.err, r, wall_s);
  }
}

TEST(RecordSummary, RotationCountsItsFilesAndTheSideBandItKept) {
  const std::string out = testing::temp_dir("summary-switch") + "/perf.data";
  double wall_s = 0;
  // Reads every 100 ms: at the default 10 s a ring that never reaches its
  // watermark in 400 ms is read once at the end, and its 400 KB made only
  // two files (2 of 5 runs), as perf's would.
  const RunResult r = record(concat({"-e", "task-clock", "-c", "100000", "--switch-output", "64K",
                                     "--header-interval-ms", "100", "-o", out, "--"},
                                    burn(400, 2)),
                             wall_s);
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  const std::vector<std::string> paths = files_on_disk(out);
  ASSERT_GE(paths.size(), 3u) << r.text();
  const testing::ModelView model = testing::model_view(paths);
  expect_files(r.err, paths, model);
  expect_counts_and_metric(r.err, model);
  EXPECT_EQ(line_of(r.err, "recorder drops: "), "none");
  const WriterLine writer = expect_writer(r.err, 0, 0, model, paths.size());
  expect_loop(r.err, true, writer);
  const SideBand side_band = side_band_of(paths);
  EXPECT_GT(side_band.processes, 0u) << "later files name the command from /proc";
  expect_synthesized(r.err, side_band);
  EXPECT_EQ(line_of(r.err, "rotation: "), std::to_string(paths.size() - 1) + " new file(s), " +
                                            std::to_string(side_band.kernel_records.size()) +
                                            " side-band records kept for them (0 over the 16 MiB bound)");
  expect_cpu_time(r.err, r, wall_s);
}

TEST(RecordSummary, TheCommandsExitStatusAndSignal) {
  const std::string dir = testing::temp_dir("summary-status");
  RunResult r = testing::run_record({"-o", dir + "/a.data", "--", "sh", "-c", "exit 3"});
  ASSERT_TRUE(r.exited && r.exit_code == 3) << r.text();  // the command's status, as perf record
  EXPECT_EQ(line_of(r.err, "command exited with status 3: "), "sh -c exit 3");
  r = testing::run_record({"-o", dir + "/b.data", "--", "sh", "-c", "kill -9 $$"});
  // Ended by the command's signal, as perf record (a shell sees 137).
  ASSERT_TRUE(!r.exited && WIFSIGNALED(r.status) && WTERMSIG(r.status) == 9) << r.text();
  EXPECT_EQ(line_of(r.err, "command ended by signal 9: "), "sh -c kill -9 $$");
  // Both files are whole: the summary and the file come first.
  EXPECT_EQ(testing::model_view({dir + "/a.data"}).problem, "");
  EXPECT_EQ(testing::model_view({dir + "/b.data"}).problem, "");
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// As perf record: an earlier recording of the same name is kept as
// NAME.old (never truncated), and a new file is mode 0600.
TEST(RecordSummary, AnEarlierFileIsKeptAsOldAndTheNewOneIsPrivate) {
  const std::string out = testing::temp_dir("summary-old") + "/perf.data";
  RunResult r = testing::run_record({"-o", out, "--", "true"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  const std::string first = read_all(out);
  ASSERT_FALSE(first.empty());
  struct stat st {};
  ASSERT_EQ(stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  r = testing::run_record({"-o", out, "--", "true"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  EXPECT_EQ(read_all(out + ".old"), first);
  EXPECT_EQ(testing::model_view({out + ".old"}).problem, "");
  EXPECT_EQ(testing::model_view({out}).problem, "");
  EXPECT_EQ(line_of(r.err, "kept 1 earlier file(s) of the same name as NAME.old"), "");
}

TEST(RecordSummary, NoHeaderCheckpointsWithoutAnInterval) {
  const std::string out = testing::temp_dir("summary-interval") + "/perf.data";
  const RunResult r = testing::run_record(concat({"--header-interval-ms", "0", "-o", out, "--"}, burn(100)));
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  const testing::ModelView model = testing::model_view({out});
  const WriterLine writer = expect_writer(r.err, 0, 0, model, 1);
  EXPECT_EQ(writer.header_checkpoints, 0u);
}

// Without a wakeup from the rings, the reading thread reads them once per
// header interval (the checkpoints need what they hold written), and no
// more often: each read wakes the recorder, and in a -a profile that was
// its own samples (docs/recorder.md, "Self-sampling": at every 100 ms, 5x
// perf's own). A low rate (-F 50 on a sleeping command) never fills a
// ring's watermark, so every round but the last is a poll timeout.
TEST(RecordSummary, TheRingsAreReadOncePerHeaderInterval) {
  for (const auto& [interval_ms, rounds_min, rounds_max] :
       {std::tuple{"", 1, 4}, std::tuple{"1000", 1, 4}, std::tuple{"0", 1, 4}, std::tuple{"50", 8, 60}}) {
    const std::string out = testing::temp_dir("summary-reads") + "/perf.data";
    std::vector<std::string> args{"-a", "-F", "50", "-o", out};
    if (*interval_ms != '\0') args = concat(args, {"--header-interval-ms", interval_ms});
    const RunResult r = testing::run_record(concat(args, {"--", "sleep", "2"}));
    ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
    const std::string loop = line_of(r.err, "loop: ");
    // One reading thread per CPU: the loop line sums their rounds.
    const std::vector<std::string> readers = testing::lines_with(r.err, "reading threads: ");
    const std::uint64_t threads = readers.empty() ? 1 : number_after(readers[0], "reading threads:");
    ASSERT_GE(threads, 1u) << r.err;
    // Two seconds: a read per 10 s (the default, and without checkpoints:
    // none but the end's), per second, or per 50 ms, within what a loaded
    // machine adds or delays; by each thread.
    EXPECT_GE(number_after(loop, "rounds"), threads * static_cast<std::uint64_t>(rounds_min))
        << interval_ms << ": " << loop;
    EXPECT_LE(number_after(loop, "rounds"), threads * static_cast<std::uint64_t>(rounds_max))
        << interval_ms << ": " << loop;
  }
}

// A full disk: the files hold the valid prefix, the summary says what is
// in it, and the drops line names the output error's cut.
TEST(RecordSummary, AFullDiskIsTheOutputErrorsDrop) {
  const std::string dir = testing::temp_dir("summary-full");
  // 1 MiB: -a synthesizes records for every process first (how many
  // bytes depends on the machine's processes: 256 KiB was once all
  // taken by them under asan), and samples must follow before it fills
  // (the writer writes at 512 KiB staged, or once per header interval).
  testing::Tmpfs tmpfs(dir, "size=1m");
  if (!tmpfs.mounted()) GTEST_SKIP() << "needs root to mount a tmpfs: " << tmpfs.error();
  const std::string out = dir + "/perf.data";
  const RunResult r = testing::run_record(concat({"-a", "-F", "10000", "-g", "-o", out, "--"}, burn(3000, 2)));
  ASSERT_TRUE(r.exited && r.exit_code == kExitIoError) << r.text();
  const std::vector<std::string> paths = files_on_disk(out);
  ASSERT_EQ(paths.size(), 1u);
  const testing::ModelView model = testing::model_view(paths);
  EXPECT_GT(model.loss.samples, 0u);
  expect_files(r.err, paths, model);
  expect_counts_and_metric(r.err, model);
  // "[...; ]output error R records (S samples), B bytes in 1 files"
  const std::string drops = line_of(r.err, "recorder drops: ");
  const std::size_t at = drops.find("output error ");
  ASSERT_NE(at, std::string::npos) << drops;
  EXPECT_TRUE(at == 0 || drops.compare(at - 2, 2, "; ") == 0) << drops;
  unsigned long long records = 0, samples = 0, bytes = 0, files = 0;
  int end = 0;
  ASSERT_EQ(std::sscanf(drops.c_str() + at, "output error %llu records (%llu samples), %llu bytes in %llu files%n",
                        &records, &samples, &bytes, &files, &end),
            4)
      << drops;
  EXPECT_EQ(at + static_cast<std::size_t>(end), drops.size()) << drops;
  EXPECT_EQ(files, 1u) << drops;
  EXPECT_GE(records, samples) << drops;
  EXPECT_GT(samples, 0u) << "the load went on after the disk filled: " << drops;
}

// perf report -D: the COMM and MMAP2 records with time 0 (synthesized) in
// a system-wide file (each line "CPU TIME OFFSET [SIZE]: TYPE..."). The
// model cannot tell perf's synthesized records' attr (their IDENTIFIER is
// 0 among several events), perf's dump can.
struct Synthesized {
  std::uint64_t comms = 0;
  std::uint64_t mmap2s = 0;
  std::uint64_t command_comms = 0;  // "perf-exec": the forked command's, held before its exec
  std::uint64_t namespaces = 0;
};
Synthesized synthesized_in_dump(const std::string& file) {
  const RunResult r = testing::run({testing::perf_path(), "report", "-D", "-i", file});
  EXPECT_TRUE(r.exited && r.exit_code == 0) << r.err.substr(0, 2000);
  Synthesized out;
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    // "[CPU] TIME OFFSET [SIZE]: TYPE ...": the CPU only where samples carry it.
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string word; w.size() < 5 && words >> word;) w.push_back(word);
    const std::size_t at = w.size() >= 4 && w[1].rfind("0x", 0) == 0 ? 1 : 2;  // the offset's column
    if (w.size() < at + 3 || w[at - 1] != "0") continue;
    const std::string& type = w[at + 2];
    // The COMM of the forked command ("perf-exec"), written whatever
    // --synth says (perf's __cmd_record: so that samples before the exec
    // are named), counted apart.
    if (type.rfind("PERF_RECORD_COMM", 0) == 0) {
      (line.find("PERF_RECORD_COMM: perf-exec:") == std::string::npos ? out.comms : out.command_comms)++;
    }
    if (type.rfind("PERF_RECORD_MMAP2", 0) == 0) out.mmap2s++;
    if (type.rfind("PERF_RECORD_NAMESPACES", 0) == 0) out.namespaces++;
  }
  return out;
}

// --synth as perf's: which records of the tasks already running the
// recorder synthesizes from /proc (system-wide: every process). no: none;
// task: COMM only; mmap and all: COMM and MMAP2; cgroup adds nothing. perf
// record's file with the same option has the same kinds (its own counts:
// the tasks of its moment); the summary's line counts ours'.
TEST(RecordSummary, SynthAsksForTheKindsPerfSynthesizes) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("summary-synth");
  struct Want {
    std::string value;
    bool comms;
    bool mmaps;
  };
  for (const Want& want : std::vector<Want>{{"no", false, false},
                                            {"task", true, false},
                                            {"TASK,cgroup", true, false},
                                            {"mmap", true, true},
                                            {"task,none", false, false},
                                            {"all", true, true}}) {
    SCOPED_TRACE("--synth=" + want.value);
    const std::vector<std::string> args = {"-a", "-e", "cpu-clock", "--synth=" + want.value};
    const std::string ours_out = dir + "/ours.data";
    const std::string perf_out = dir + "/perf.data";
    const RunResult ours =
        testing::run_record(concat(args, {"--no-buildid-mmap", "-o", ours_out, "--", "sleep", "0.05"}));
    ASSERT_TRUE(ours.exited && ours.exit_code == 0) << ours.text();
    const RunResult perf = testing::run_perf_record(
        concat(concat({testing::perf_path(), "record", "-q"}, args), {"-o", perf_out, "--", "sleep", "0.05"}));
    ASSERT_TRUE(perf.exited && perf.exit_code == 0) << perf.text();
    const Synthesized o = synthesized_in_dump(ours_out);
    const Synthesized p = synthesized_in_dump(perf_out);
    EXPECT_EQ(o.comms > 0, want.comms) << o.comms;
    EXPECT_EQ(p.comms > 0, want.comms) << p.comms;
    EXPECT_EQ(o.mmap2s > 0, want.mmaps) << o.mmap2s;
    EXPECT_EQ(p.mmap2s > 0, want.mmaps) << p.mmap2s;
    // The held command is named "perf-exec" whatever --synth says, and
    // once more by -a's walk of /proc when tasks are synthesized: in
    // perf's file as in ours.
    EXPECT_EQ(o.command_comms, want.comms ? 2u : 1u);
    EXPECT_EQ(p.command_comms, want.comms ? 2u : 1u);
    const SideBand model = side_band_of({ours_out});
    EXPECT_EQ(model.comms, o.comms + o.command_comms) << "the model and perf's dump count ours alike";
    EXPECT_EQ(model.mmap2s, o.mmap2s);
    expect_synthesized(ours.err, model);
  }
  for (const std::string bad : {"bogus", "task,", ""}) {
    SCOPED_TRACE("--synth=" + bad);
    const RunResult r = testing::run_record({"--synth=" + bad, "-o", dir + "/bad.data", "--", "true"});
    EXPECT_TRUE(r.exited && r.exit_code == 64) << r.text();
    EXPECT_EQ(testing::lines_with(r.err, "error:").size(), 1u) << r.err;
  }
}

// The MMAP2 records of process `pid` in `file`: how many, how many carry
// PERF_RECORD_MISC_PROC_MAP_PARSE_TIMEOUT, and the start of the last of
// those (the model's walk).
struct Mmap2s {
  std::uint64_t all = 0;
  std::uint64_t cut = 0;
  std::uint64_t cut_start = 0;
};
Mmap2s mmap2s_of(const std::string& file, pid_t pid) {
  model::PerfDataFile parsed;
  EXPECT_EQ(model::read_perf_data(file, parsed), "") << file;
  Mmap2s out;
  parsed.for_each_record([&](const model::PerfRecord& r) {
    std::uint32_t record_pid = 0;
    if (r.type != PERF_RECORD_MMAP2 || r.bytes.size() < 24) return;
    std::memcpy(&record_pid, r.bytes.data() + 8, sizeof record_pid);
    if (record_pid != static_cast<std::uint32_t>(pid)) return;
    out.all++;
    if ((r.misc & PERF_RECORD_MISC_PROC_MAP_PARSE_TIMEOUT) == 0) return;
    out.cut++;
    std::memcpy(&out.cut_start, r.bytes.data() + 16, sizeof out.cut_start);
  });
  return out;
}

// --proc-map-timeout as perf's: a task's maps read for longer than it are
// cut after the line that ran over, that mapping marked
// PROC_MAP_PARSE_TIMEOUT. With 0 ms every task's first line runs over (perf
// tests elapsed > timeout): one marked MMAP2 for the attached process in
// perf's file and in ours; with the default (500 ms) none marked and the
// same mappings in both. Ours says so in one warning line and in the
// summary; 4294967296 ms is more than perf's unsigned int and refused.
TEST(RecordSummary, ProcMapTimeoutCutsTheMapsAsPerfs) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("summary-map-timeout");
  Process target;
  ASSERT_TRUE(target.start({"sleep", "30"}).ok());
  // Exec'd: its maps are sleep's (not this test's copy).
  ASSERT_TRUE(testing::wait_until([&] {
    std::ifstream comm("/proc/" + std::to_string(target.pid()) + "/comm");
    std::string name;
    return std::getline(comm, name) && name == "sleep";
  }));
  for (const std::string timeout : {"0", "500"}) {
    SCOPED_TRACE("--proc-map-timeout " + timeout);
    const std::vector<std::string> args = {"-p", std::to_string(target.pid()), "-e", "cpu-clock",
                                           "--proc-map-timeout", timeout};
    const std::string ours_out = dir + "/ours.data";
    const std::string perf_out = dir + "/perf.data";
    const RunResult ours = testing::run_record(concat(args, {"-o", ours_out, "--", "sleep", "0.05"}));
    ASSERT_TRUE(ours.exited && ours.exit_code == 0) << ours.text();
    const RunResult perf = testing::run_perf_record(
        concat(concat({testing::perf_path(), "record", "-q"}, args), {"-o", perf_out, "--", "sleep", "0.05"}));
    ASSERT_TRUE(perf.exited && perf.exit_code == 0) << perf.text();
    const Mmap2s o = mmap2s_of(ours_out, target.pid());
    const Mmap2s p = mmap2s_of(perf_out, target.pid());
    if (timeout == "0") {
      EXPECT_EQ(p.all, 1u);
      EXPECT_EQ(p.cut, 1u);
      EXPECT_EQ(o.all, 1u);
      EXPECT_EQ(o.cut, 1u);
      EXPECT_EQ(o.cut_start, p.cut_start) << "the same mapping: the first line, whatever its kind";
      // perf report counts the cut maps (nr_proc_map_timeout) in ours' file.
      const RunResult report = testing::run({testing::perf_path(), "report", "--stdio", "-i", ours_out});
      EXPECT_NE((report.out + report.err).find("1 map information files for pre-existing threads"), std::string::npos)
          << report.text();
      EXPECT_EQ(testing::lines_with(ours.err, "warning: the mappings of 1 running task(s) (pid " +
                                                  std::to_string(target.pid()) + ") took over 0 ms")
                    .size(),
                1u)
          << ours.err;
      EXPECT_NE(line_of(ours.err, "synthesized: ").find(", 1 cut by --proc-map-timeout"), std::string::npos)
          << ours.err;
    } else {
      EXPECT_GE(p.all, 2u);
      EXPECT_EQ(p.cut, 0u);
      EXPECT_EQ(o.all, p.all);
      EXPECT_EQ(o.cut, 0u);
      EXPECT_EQ(ours.err.find("--proc-map-timeout"), std::string::npos) << ours.err;
    }
  }
  target.signal(SIGKILL);
  target.wait();
  const RunResult bad = testing::run_record({"--proc-map-timeout", "4294967296", "-o", dir + "/bad.data", "--", "true"});
  EXPECT_TRUE(bad.exited && bad.exit_code == 64) << bad.text();
  EXPECT_EQ(testing::lines_with(bad.err, "error:").size(), 1u) << bad.err;
}

// A command perf forks is named "perf-exec" until its exec, and perf
// writes that COMM (with --namespaces its NAMESPACES too) before letting
// it go, whatever --synth says (__cmd_record), so that its samples before
// the exec are named. Ours the same: the command's pid's time-0 COMM is
// "perf-exec" in both files, followed by the kernel's exec COMM of the
// same pid (before 2026-11-27 ours had no such COMM, and --synth=no
// --namespaces no NAMESPACES).
TEST(RecordSummary, TheHeldCommandIsNamedAsPerfsWhateverSynthSays) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("summary-held-comm");
  for (const std::string synth : {"all", "no"}) {
    SCOPED_TRACE("--synth=" + synth);
    const std::vector<std::string> args = {"-e", "page-faults", "--namespaces", "--synth=" + synth};
    const std::string ours_out = dir + "/ours.data";
    const std::string perf_out = dir + "/perf.data";
    const RunResult ours = testing::run_record(concat(args, {"-o", ours_out, "--", "true"}));
    ASSERT_TRUE(ours.exited && ours.exit_code == 0) << ours.text();
    const RunResult perf = testing::run_perf_record(
        concat(concat({testing::perf_path(), "record", "-q"}, args), {"-o", perf_out, "--", "true"}));
    ASSERT_TRUE(perf.exited && perf.exit_code == 0) << perf.text();
    for (const std::string& file : {ours_out, perf_out}) {
      SCOPED_TRACE(file);
      const Synthesized got = synthesized_in_dump(file);
      EXPECT_EQ(got.command_comms, 1u);
      EXPECT_EQ(got.namespaces, 1u);
      // The held command's pid is the pid of the exec's COMM.
      const RunResult script = testing::run({testing::perf_path(), "script", "-i", file, "--show-task-events",
                                             "-F", "pid,comm,event"});
      ASSERT_TRUE(script.exited && script.exit_code == 0) << script.text();
      const std::vector<std::string> held = testing::lines_with(script.out, "PERF_RECORD_COMM: perf-exec:");
      const std::vector<std::string> exec = testing::lines_with(script.out, "PERF_RECORD_COMM exec: true:");
      ASSERT_EQ(held.size(), 1u) << script.out;
      ASSERT_EQ(exec.size(), 1u) << script.out;
      const std::string pid = held[0].substr(held[0].rfind(':') + 1);
      EXPECT_NE(exec[0].find(":" + pid), std::string::npos) << held[0] << " / " << exec[0];
    }
    EXPECT_NE(line_of(ours.err, "synthesized: ").find(synth == "no" ? "1 processes, 1 threads, 0 mappings"
                                                                     : "1 processes, 1 threads"),
              std::string::npos)
        << ours.err;
  }
}

}  // namespace
}  // namespace ringsim::real
