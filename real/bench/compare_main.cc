// bazel run //real/bench:compare -- [--runs N] [--seconds S] [--out FILE]
//
// Loss and cost of ringsim-record against perf record, system-wide, while a
// separately started two-thread busy loop saturates both cores. For each
// point (two stress points and a light one), the same event configuration
// is recorded by
//   perf record (serial), --aio, --aio=4, --threads, -r 1 (SCHED_FIFO),
//   -z and -r 1 -z (zstd compression, level 1);
//   ringsim-record without staging (--staging off) serial, --aio 1, --aio 4;
//   ringsim-record staged (the default: a reading thread at SCHED_FIFO 1)
//   and staged with the reading thread at normal priority, and staged with
//   -z (compressed by the writer thread);
// and "none": the busy loop alone (the unrecorded baseline),
// `runs` times each, interleaved (run 1 of every recorder, then run 2, ...)
// so that a change in the machine's load hits every recorder alike. Each
// file is measured the same way, with real/file_stats.h (core's reader and
// loss meter, what the recorder's summary prints): samples, records lost (the sum of the
// PERF_RECORD_LOST records' counts), the lost fraction, the data-loss
// metric. The recorder's CPU time is its own (wait4's rusage of the
// recorder process and its threads, user + system; the `sleep` it runs
// costs nothing), not the workload's. The workload's slowdown: the busy
// loop's iterations per second while recorded, against the same loop
// unrecorded ("none") in the same series, both measured from 0.6 s after
// the recorder's start to 0.1 s before its command ends (inside every
// recorder's recording, whatever it does before and after). Medians are
// printed, with the ratio of each to the best perf column (the one that
// lost the fewest).
//
// Not a test: it measures, it does not judge. Runs in about
// 3 points x 14 columns x runs x (seconds + ~1.5 s). The files are
// measured whether compressed or not (file_stats expands COMPRESSED
// records); the MB column is the file's size on disk.
#include <pthread.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/cli/command_line.h"
#include "real/file_stats.h"
#include "real/process.h"

namespace {

constexpr const char* kAppName = "compare";

// --- The busy loop ----------------------------------------------------------

std::atomic<std::uint64_t> g_sink{0};

// The busy loop's iterations, per thread, in memory shared with the
// parent (mapped before the fork), a cache line each.
struct alignas(64) Counter {
  std::atomic<std::uint64_t> iterations{0};
};
constexpr int kBusyThreads = 2;
Counter* g_counters = nullptr;

void map_counters() {
  void* p = ::mmap(nullptr, sizeof(Counter) * kBusyThreads, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("compare: mmap of the busy loop's counters");
    std::exit(71);
  }
  g_counters = new (p) Counter[kBusyThreads];
}

std::uint64_t iterations_now() {
  std::uint64_t n = 0;
  for (int t = 0; t < kBusyThreads; t++) n += g_counters[t].iterations.load(std::memory_order_relaxed);
  return n;
}

double now_s() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

__attribute__((noinline)) std::uint64_t busy_leaf(std::uint64_t x) {
  for (int i = 0; i < 2000; i++) x = x * 6364136223846793005ull + 1442695040888963407ull;
  return x;
}
__attribute__((noinline)) std::uint64_t busy_middle(std::uint64_t x) { return busy_leaf(x) ^ busy_leaf(x + 1); }
__attribute__((noinline)) std::uint64_t busy_top(std::uint64_t x) { return busy_middle(x) + busy_middle(x * 3); }

// Runs in a forked child until it is killed: `threads` threads spinning.
[[noreturn]] int busy_loop(int threads) {
  // Dies with the benchmark (killed or interrupted), not left spinning.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() == 1) ::_exit(0);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; t++) {
    workers.emplace_back([t] {
      std::uint64_t x = static_cast<std::uint64_t>(t) + 1;
      for (std::uint64_t i = 0;; i++) {
        x = busy_top(x + i);
        g_counters[t].iterations.store(i + 1, std::memory_order_relaxed);
        if ((i & 0xfffff) == 0) g_sink.fetch_add(x, std::memory_order_relaxed);
      }
    });
  }
  for (std::thread& w : workers) w.join();
  ::_exit(0);
}

// --- Running a recorder -----------------------------------------------------

enum class Kind : std::uint8_t { perf, ringsim, none };
struct Recorder {
  std::string name;
  Kind kind = Kind::perf;
  std::vector<std::string> mode_args;  // e.g. {"--aio"} or {"--aio", "4"}
};

struct Point {
  std::string name;
  std::vector<std::string> args;  // the event configuration, without -o and the command
};

struct Measure {
  bool ok = false;
  std::string problem;
  std::uint64_t samples = 0;
  std::uint64_t lost = 0;
  double lost_fraction = 0;
  double metric = 0;
  double cpu_s = 0;
  std::uint64_t bytes = 0;
  double rate = 0;  // the busy loop's iterations per second while the recorder ran
};

// The command line.
struct Settings {
  int runs = 5;
  double duration_s = 2;
  std::string out_path;
  std::string perf = "/usr/bin/perf";
  std::string record;
  std::string only_point;
  int realtime = 0;
  std::vector<std::string> only_recorders;
};

// A recorder gets this much longer than its recording before it is killed
// (a hang, never a measure).
constexpr double kRunGraceS = 120;
// The window in which the workload's speed is measured, inside the
// recording (which starts within kRateFromS of the recorder's start).
constexpr double kRateFromS = 0.6;
constexpr double kRateBeforeEndS = 0.1;

void sleep_until(double t) {
  const double left = t - now_s();
  if (left > 0) ::usleep(static_cast<useconds_t>(left * 1e6));
}

// A file's size, or a directory's files' (perf record --threads).
std::uint64_t file_size(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_directory(path, error)) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return 0;
    return static_cast<std::uint64_t>(st.st_size);
  }
  std::uint64_t total = 0;
  for (const auto& entry : std::filesystem::directory_iterator(path, error)) {
    if (entry.is_regular_file(error)) total += entry.file_size(error);
  }
  return total;
}

std::string last_line(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  for (int i = 0; i < 10000 && std::getline(in, line); i++) last = line;
  return last;
}

std::vector<std::string> recorder_argv(const Point& point, const Recorder& recorder, const Settings& settings,
                                       const std::string& output) {
  std::vector<std::string> argv;
  if (recorder.kind == Kind::none) return {"/bin/sleep", std::to_string(settings.duration_s)};
  if (recorder.kind == Kind::perf) {
    argv = {settings.perf, "record", "-q"};
  } else {
    argv = {settings.record};
  }
  argv.insert(argv.end(), point.args.begin(), point.args.end());
  argv.insert(argv.end(), recorder.mode_args.begin(), recorder.mode_args.end());
  argv.insert(argv.end(), {"-o", output, "--", "sleep", std::to_string(settings.duration_s)});
  return argv;
}

// The workload, started separately a moment before the recorder, then the
// recorder with stdout and stderr into `log`; the recorder's wait status
// and rusage.
ringsim::real::WaitStatus run_under_load(const std::vector<std::string>& argv, const std::string& log,
                                         double duration_s, double& rate) {
  using ringsim::real::Output;
  ringsim::real::Process busy;
  if (const ringsim::real::Error e = busy.start_function([] { return busy_loop(2); }); !e.ok()) {
    std::cerr << "compare: warning: the busy loop did not start: " << e.message << "\n";
  }
  ::usleep(300'000);
  ringsim::real::ProcessOptions options;
  options.out = Output::file(log);
  options.err = Output::file(log);
  ringsim::real::Process recorder;
  const double t0 = now_s();
  const ringsim::real::Error started = recorder.start(argv, options);
  ringsim::real::WaitStatus status;
  if (started.ok()) {
    // The workload's speed while recorded: from kRateFromS after the start
    // (every recorder has started recording by then) to kRateBeforeEndS
    // before its command ends, whatever each recorder does before and after.
    sleep_until(t0 + kRateFromS);
    const std::uint64_t first = iterations_now();
    const double t1 = now_s();
    sleep_until(t0 + duration_s - kRateBeforeEndS);
    rate = static_cast<double>(iterations_now() - first) / (now_s() - t1);
    // A deadline far beyond any run: only a hang is cut short.
    status = recorder.wait(static_cast<std::uint64_t>((duration_s + kRunGraceS) * 1e9));
  } else {
    std::ofstream(log, std::ios::app) << started.message << "\n";
  }
  busy.signal(SIGKILL);
  busy.wait();
  return status;
}

// `output` itself, or for a directory (perf record --threads) the single
// file perf inject makes of it.
std::string merge_directory(const Settings& settings, const std::string& output, const std::string& log,
                            std::string& problem) {
  if (!std::filesystem::is_directory(output)) return output;
  const std::string merged = output + ".inject";
  ringsim::real::ProcessOptions options;
  options.out = ringsim::real::Output::file(log + ".inject");
  options.err = ringsim::real::Output::file(log + ".inject");
  ringsim::real::Process inject;
  const ringsim::real::Error e = inject.start({settings.perf, "inject", "-i", output, "-o", merged}, options);
  if (!e.ok() || inject.wait(600'000'000'000).exit_code() != 0) {
    if (problem.empty()) problem = "perf inject -i " + output + " failed: " + last_line(log + ".inject");
  }
  std::remove((log + ".inject").c_str());
  // perf inject writes a directory too, its records in one "data" file.
  return std::filesystem::is_directory(merged) ? merged + "/data" : merged;
}

Measure measure_once(const Point& point, const Recorder& recorder, const Settings& settings, const std::string& dir,
                     int run_index) {
  const std::string base = dir + "/" + point.name + "-" + recorder.name + "-" + std::to_string(run_index);
  const std::string output = base + ".data";
  const std::string log = base + ".log";
  Measure m;
  const ringsim::real::WaitStatus status =
      run_under_load(recorder_argv(point, recorder, settings, output), log, settings.duration_s, m.rate);
  m.cpu_s = status.cpu_seconds();
  m.bytes = file_size(output);
  if (status.exit_code() != 0) m.problem = status.text() + ": " + last_line(log);
  if (recorder.kind == Kind::none) {
    m.ok = m.problem.empty();
    if (m.ok) std::remove(log.c_str());
    return m;
  }
  // perf --threads writes a directory; perf inject makes one file of it.
  const std::string single = merge_directory(settings, output, log, m.problem);
  const ringsim::real::FileStats stats = ringsim::real::read_back({single});
  if (m.problem.empty()) m.problem = stats.problem;
  if (stats.files == 1) {
    m.samples = stats.loss.records.samples;
    m.lost = stats.loss.records.lost_sum;
    m.lost_fraction = stats.loss.lost_fraction();
    m.metric = stats.loss.loss_metric();
  }
  m.ok = stats.files == 1 && m.problem.empty();
  std::filesystem::remove_all(output);
  std::filesystem::remove_all(output + ".inject");
  std::filesystem::remove_all(output + ".old");  // perf's, should the name exist
  if (m.ok) std::remove(log.c_str());
  return m;
}
double median(std::vector<double> values) {
  if (values.empty()) return NAN;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

struct Row {
  double samples = 0, lost = 0, lost_fraction = 0, metric = 0, cpu_s = 0, bytes = 0, rate = 0;
  int ok_runs = 0;
  std::string problem;
};

Row summarize(const std::vector<Measure>& runs) {
  Row r;
  std::vector<double> samples, lost, fraction, metric, cpu, bytes, rate;
  for (const Measure& m : runs) {
    if (!m.ok) {
      if (r.problem.empty()) r.problem = m.problem;
      continue;
    }
    r.ok_runs++;
    samples.push_back(static_cast<double>(m.samples));
    lost.push_back(static_cast<double>(m.lost));
    fraction.push_back(m.lost_fraction);
    metric.push_back(m.metric);
    cpu.push_back(m.cpu_s);
    bytes.push_back(static_cast<double>(m.bytes));
    rate.push_back(m.rate);
  }
  r.samples = median(samples);
  r.lost = median(lost);
  r.lost_fraction = median(fraction);
  r.metric = median(metric);
  r.cpu_s = median(cpu);
  r.bytes = median(bytes);
  r.rate = median(rate);
  return r;
}

std::string ratio(double value, double reference) {
  if (std::isnan(value) || std::isnan(reference) || reference == 0) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", value / reference);
  return text;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string line;
  std::getline(in, line);
  return line;
}

// Parses the command line into `s`. -1 to go on, else the exit status.
int parse_settings(int argc, char** argv, Settings& s) {
  CLI::App app{"Loss and CPU cost of ringsim-record against perf record (system-wide, both cores busy)", kAppName};
  app.add_option("--runs", s.runs, "runs per recorder and point (default 5); medians are reported")
      ->check(CLI::Range(1, 100));
  app.add_option("--seconds", s.duration_s, "recording length (default 2)")->check(CLI::Range(1.0, 60.0));
  app.add_option("--out", s.out_path, "also write the table (and every run) to FILE");
  app.add_option("--perf", s.perf, "perf (default /usr/bin/perf)");
  app.add_option("--record", s.record, "ringsim-record (default: //real:record from the runfiles)");
  app.add_option("--point", s.only_point, "only this point: dwarf, fp or light");
  app.add_option("--realtime", s.realtime,
                 "give every recorder (perf and ours) SCHED_FIFO priority N (-r N; perf-r1 keeps 1); 0: as each column says (default)")
      ->check(CLI::Range(0, 99));
  app.add_option("--recorders", s.only_recorders,
                 "only these recorders (perf, perf-aio, perf-aio4, perf-threads, perf-r1, perf-threads-r1, perf-z, "
                 "perf-r1-z, ringsim-serial, ringsim-aio1, ringsim-aio4, ringsim-staged, ringsim-staged-one, "
                 "ringsim-staged-own, ringsim-staged-normal, "
                 "ringsim-staged-cut, ringsim-staged-z); the "
                 "unrecorded baseline "
                 "(none) always runs")
      ->delimiter(',');
  return ringsim::core::parse_command_line(app, argc, argv);
}

// ringsim-record from the runfiles unless --record gave it; perf. -1 to go
// on, else the exit status.
int find_recorders(const char* argv0, Settings& s) {
  if (s.record.empty()) {
    std::vector<std::string> candidates;
    if (const char* runfiles = std::getenv("RUNFILES_DIR")) candidates.push_back(std::string(runfiles) + "/ringsim/real/record");
    candidates.push_back(std::string(argv0) + ".runfiles/ringsim/real/record");
    candidates.push_back("real/record");
    for (const std::string& c : candidates) {
      if (::access(c.c_str(), X_OK) == 0) {
        s.record = std::filesystem::absolute(c).string();
        break;
      }
    }
  }
  if (s.record.empty() || ::access(s.record.c_str(), X_OK) != 0) {
    return ringsim::core::usage_error(kAppName, "cannot find ringsim-record (give --record PATH)");
  }
  if (::access(s.perf.c_str(), X_OK) != 0) {
    std::cerr << kAppName << ": error: " << s.perf << " not found: install linux-perf (scripts/setup.sh) or give --perf\n";
    return 69;
  }
  return -1;
}

std::vector<Recorder> select_recorders(const Settings& s) {
  const std::vector<Recorder> all = {
      {"none", Kind::none, {}},
      {"perf", Kind::perf, {}},
      {"perf-aio", Kind::perf, {"--aio"}},
      {"perf-aio4", Kind::perf, {"--aio=4"}},
      {"perf-threads", Kind::perf, {"--threads"}},
      {"perf-r1", Kind::perf, {"-r", "1"}},
      {"perf-threads-r1", Kind::perf, {"--threads", "-r", "1"}},
      {"perf-z", Kind::perf, {"-z"}},
      {"perf-r1-z", Kind::perf, {"-r", "1", "-z"}},
      {"ringsim-serial", Kind::ringsim, {"--staging", "off", "--aio", "0"}},
      {"ringsim-aio1", Kind::ringsim, {"--staging", "off", "--aio", "1"}},
      {"ringsim-aio4", Kind::ringsim, {"--staging", "off", "--aio", "4"}},
      {"ringsim-staged", Kind::ringsim, {}},
      {"ringsim-staged-one", Kind::ringsim, {"--readers", "one"}},
      {"ringsim-staged-own", Kind::ringsim, {"--readers", "cpu-own"}},
      {"ringsim-staged-normal", Kind::ringsim, {"--reader-priority", "off"}},
      {"ringsim-staged-cut", Kind::ringsim, {"--cut-stacks", "pressure"}},
      {"ringsim-staged-z", Kind::ringsim, {"-z"}},
  };
  std::vector<Recorder> recorders;
  for (Recorder r : all) {
    const auto& only = s.only_recorders;
    if (!only.empty() && r.kind != Kind::none && std::find(only.begin(), only.end(), r.name) == only.end()) continue;
    const bool has_r = std::find(r.mode_args.begin(), r.mode_args.end(), "-r") != r.mode_args.end();
    if (s.realtime > 0 && r.kind != Kind::none && !has_r) {
      r.mode_args.insert(r.mode_args.end(), {"-r", std::to_string(s.realtime)});
    }
    recorders.push_back(r);
  }
  return recorders;
}

std::vector<Point> select_points(const Settings& s) {
  const std::vector<Point> all = {
      {"dwarf", {"-e", "cpu-clock", "-F", "20000", "-a", "--call-graph", "dwarf,2048", "-m", "8"}},
      {"fp", {"-e", "cpu-clock", "-F", "50000", "-a", "-g", "-m", "1"}},
      {"light", {"-e", "cpu-clock", "-F", "4000", "-a", "-g", "-m", "128"}},
  };
  std::vector<Point> points;
  for (const Point& p : all) {
    if (s.only_point.empty() || s.only_point == p.name) points.push_back(p);
  }
  return points;
}

std::string run_line(const Point& point, const Recorder& recorder, int run, const Measure& m) {
  char line[512];
  std::snprintf(line, sizeof line,
                "%s %s run %d: samples %llu lost %llu lost%% %.2f metric%% %.2f cpu %.3f s bytes %llu rate %.0f/s%s%s\n",
                point.name.c_str(), recorder.name.c_str(), run + 1, static_cast<unsigned long long>(m.samples),
                static_cast<unsigned long long>(m.lost), 100 * m.lost_fraction, 100 * m.metric, m.cpu_s,
                static_cast<unsigned long long>(m.bytes), m.rate, m.problem.empty() ? "" : " PROBLEM: ",
                m.problem.c_str());
  return line;
}

using Results = std::vector<std::vector<std::vector<Measure>>>;  // [point][recorder][run]

// Every run, interleaved: run 1 of every recorder at every point, then
// run 2, ... Each run's line goes to `details`.
Results run_all(const std::vector<Point>& points, const std::vector<Recorder>& recorders, const Settings& s,
                const std::string& dir, std::ostream& details) {
  Results results(points.size(), std::vector<std::vector<Measure>>(recorders.size()));
  for (int r = 0; r < s.runs; r++) {
    for (std::size_t p = 0; p < points.size(); p++) {
      for (std::size_t k = 0; k < recorders.size(); k++) {
        std::fprintf(stderr, "\rrun %d/%d  %-6s %-16s", r + 1, s.runs, points[p].name.c_str(),
                     recorders[k].name.c_str());
        const bool dwarf = std::find_if(points[p].args.begin(), points[p].args.end(), [](const std::string& a) {
                             return a.rfind("dwarf", 0) == 0;
                           }) != points[p].args.end();
        const bool cuts = std::find(recorders[k].mode_args.begin(), recorders[k].mode_args.end(), "--cut-stacks") !=
                          recorders[k].mode_args.end();
        Measure m;
        if (cuts && !dwarf) {
          m.problem = "n/a (stack dumps only with dwarf)";
        } else {
          m = measure_once(points[p], recorders[k], s, dir, r);
        }
        results[p][k].push_back(m);
        details << run_line(points[p], recorders[k], r, m);
      }
    }
  }
  std::fprintf(stderr, "\r%60s\r", "");
  return results;
}

// One point's table: medians, the workload's speed against the unrecorded
// loop, and ratios to the best perf column (the fewest records lost).
void report_point(std::ostream& report, const Point& point, const std::vector<Recorder>& recorders,
                  const std::vector<std::vector<Measure>>& results, const Settings& s) {
  std::string args;
  for (const std::string& a : point.args) args += " " + a;
  report << "\n## " << point.name << ":" << args << " -- sleep " << s.duration_s << "\n";
  std::vector<Row> rows;
  for (std::size_t k = 0; k < recorders.size(); k++) rows.push_back(summarize(results[k]));
  double unrecorded = NAN;
  std::size_t best = recorders.size();
  for (std::size_t k = 0; k < recorders.size(); k++) {
    if (recorders[k].kind == Kind::none) unrecorded = rows[k].rate;
    if (recorders[k].kind != Kind::perf || rows[k].ok_runs == 0) continue;
    if (best == recorders.size() || rows[k].lost < rows[best].lost) best = k;
  }
  Row reference;
  reference.lost = reference.cpu_s = reference.rate = NAN;
  if (best < recorders.size()) reference = rows[best];
  report << "best perf column (fewest lost): " << (best < recorders.size() ? recorders[best].name : "-") << "\n";
  char header[512];
  std::snprintf(header, sizeof header, "%-21s %8s %7s %6s %7s %6s %7s %6s | %6s %6s %6s %s\n", "recorder", "samples",
                "lost", "lost%", "metric%", "cpu_s", "MB", "work%", "lost/B", "cpu/B", "slow/B", "runs");
  report << header;
  for (std::size_t k = 0; k < recorders.size(); k++) {
    const Row& row = rows[k];
    // The workload's speed while recorded, in % of the unrecorded loop's;
    // its slowdown is 100 - that.
    const double work = 100 * row.rate / unrecorded;
    const double slow = 100 - work;
    const double reference_slow = 100 - 100 * reference.rate / unrecorded;
    char line[512];
    if (recorders[k].kind == Kind::none) {
      std::snprintf(line, sizeof line, "%-21s %8s %7s %6s %7s %6s %7s %6.1f | %6s %6s %6s %d/%d  (%.0f iterations/s)\n",
                    "none (unrecorded)", "-", "-", "-", "-", "-", "-", work, "-", "-", "-", row.ok_runs, s.runs,
                    row.rate);
    } else {
      std::snprintf(line, sizeof line, "%-21s %8.0f %7.0f %6.2f %7.2f %6.3f %7.2f %6.1f | %6s %6s %6s %d/%d%s%s\n",
                    recorders[k].name.c_str(), row.samples, row.lost, 100 * row.lost_fraction, 100 * row.metric,
                    row.cpu_s, row.bytes / 1e6, work, ratio(row.lost, reference.lost).c_str(),
                    ratio(row.cpu_s, reference.cpu_s).c_str(), ratio(slow, reference_slow).c_str(), row.ok_runs,
                    s.runs, row.problem.empty() ? "" : "  problem: ", row.problem.c_str());
    }
    report << line;
  }
}

// Runs everything and prints the report (and writes it to --out). The
// exit status.
int compare(const Settings& s, const std::vector<Point>& points, const std::vector<Recorder>& recorders,
            const std::string& dir) {
  std::ostringstream report;
  report << "# ringsim-record vs perf record: " << s.runs << " runs each, " << s.duration_s
         << " s system-wide with a two-thread busy loop on both cores"
         << (s.realtime > 0 ? ", every recorder with -r " + std::to_string(s.realtime) + " (SCHED_FIFO)" : "") << "\n";
  report << "# load average before: " << load_average() << "\n";
  std::ostringstream details;
  const Results results = run_all(points, recorders, s, dir, details);
  report << "# load average after: " << load_average() << "\n";
  for (std::size_t p = 0; p < points.size(); p++) report_point(report, points[p], recorders, results[p], s);
  report << "\n(medians; work% = the busy loop's iterations per second while recorded, in % of the unrecorded "
            "loop's (its slowdown: 100 - work%); /B = ratio to the best perf column (slow/B: of the slowdowns); lost = "
            "sum of PERF_RECORD_LOST counts; metric = core::LossMeter over the file: lost time / the time its "
            "samples span)\n";
  std::cout << report.str();
  if (s.out_path.empty()) return 0;
  std::ofstream out(s.out_path);
  out << report.str() << "\n# every run\n" << details.str();
  if (!out) {
    std::cerr << kAppName << ": error: cannot write " << s.out_path << "\n";
    return 74;
  }
  std::cout << "saved to " << s.out_path << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  map_counters();
  Settings s;
  if (const int status = parse_settings(argc, argv, s); status >= 0) return status;
  if (const int status = find_recorders(argv[0], s); status >= 0) return status;
  const std::vector<Recorder> recorders = select_recorders(s);
  if (recorders.empty()) return ringsim::core::usage_error(kAppName, "--recorders: none of the names is a recorder");
  const std::vector<Point> points = select_points(s);
  if (points.empty()) return ringsim::core::usage_error(kAppName, "--point " + s.only_point + ": expected dwarf, fp or light");
  if (const char* dir = std::getenv("BUILD_WORKING_DIRECTORY"); dir != nullptr && *dir != '\0') {
    if (::chdir(dir) != 0) std::cerr << kAppName << ": warning: chdir " << dir << ": " << std::strerror(errno) << "\n";
  }
  char dir_template[] = "/tmp/ringsim-compare-XXXXXX";
  const char* dir = ::mkdtemp(dir_template);
  if (dir == nullptr) {
    std::cerr << kAppName << ": error: mkdtemp: " << std::strerror(errno) << "\n";
    return 73;
  }
  const int status = compare(s, points, recorders, dir);
  ::rmdir(dir);  // empty unless a run failed (its log is kept there)
  return status;
}
