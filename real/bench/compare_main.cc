// bazel run //real/bench:compare -- [--runs N] [--seconds S] [--out FILE]
//
// Loss and cost of ringsim-record against perf record, system-wide, while a
// separately started two-thread busy loop saturates both cores. For each
// stress point, the same event configuration is recorded by
//   perf record (serial), perf record --aio, perf record --aio=4,
//   ringsim-record --aio 0 (serial), --aio 1, --aio 4,
// `runs` times each, interleaved (run 1 of every recorder, then run 2, ...)
// so that a change in the machine's load hits every recorder alike. Each
// file is measured the same way, with real/file_stats.h (core's reader and
// loss meter, what the recorder's summary prints): samples, records lost (the sum of the
// PERF_RECORD_LOST records' counts), the lost fraction, the data-loss
// metric. The recorder's CPU time is its own (wait4's rusage of the
// recorder process and its threads, user + system; the `sleep` it runs
// costs nothing), not the workload's. Medians are printed, with the ratio
// of each to perf record --aio.
//
// Not a test: it measures, it does not judge. Runs in about
// 2 points x 6 recorders x runs x (seconds + ~1 s).
#include <pthread.h>
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

__attribute__((noinline)) std::uint64_t busy_leaf(std::uint64_t x) {
  for (int i = 0; i < 2000; i++) x = x * 6364136223846793005ull + 1442695040888963407ull;
  return x;
}
__attribute__((noinline)) std::uint64_t busy_middle(std::uint64_t x) { return busy_leaf(x) ^ busy_leaf(x + 1); }
__attribute__((noinline)) std::uint64_t busy_top(std::uint64_t x) { return busy_middle(x) + busy_middle(x * 3); }

// Runs in a forked child until it is killed: `threads` threads spinning.
[[noreturn]] int busy_loop(int threads) {
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; t++) {
    workers.emplace_back([t] {
      std::uint64_t x = static_cast<std::uint64_t>(t) + 1;
      for (std::uint64_t i = 0;; i++) {
        x = busy_top(x + i);
        if ((i & 0xfffff) == 0) g_sink.fetch_add(x, std::memory_order_relaxed);
      }
    });
  }
  for (std::thread& w : workers) w.join();
  ::_exit(0);
}

// --- Running a recorder -----------------------------------------------------

struct Recorder {
  std::string name;
  bool perf = false;
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

std::uint64_t file_size(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0;
  return static_cast<std::uint64_t>(st.st_size);
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
  if (recorder.perf) {
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
                                         double duration_s) {
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
  const ringsim::real::Error started = recorder.start(argv, options);
  ringsim::real::WaitStatus status;
  if (started.ok()) {
    // A deadline far beyond any run: only a hang is cut short.
    status = recorder.wait(static_cast<std::uint64_t>((duration_s + kRunGraceS) * 1e9));
  } else {
    std::ofstream(log, std::ios::app) << started.message << "\n";
  }
  busy.signal(SIGKILL);
  busy.wait();
  return status;
}

Measure measure_once(const Point& point, const Recorder& recorder, const Settings& settings, const std::string& dir,
                     int run_index) {
  const std::string base = dir + "/" + point.name + "-" + recorder.name + "-" + std::to_string(run_index);
  const std::string output = base + ".data";
  const std::string log = base + ".log";
  const ringsim::real::WaitStatus status =
      run_under_load(recorder_argv(point, recorder, settings, output), log, settings.duration_s);
  Measure m;
  m.cpu_s = status.cpu_seconds();
  m.bytes = file_size(output);
  if (status.exit_code() != 0) m.problem = status.text() + ": " + last_line(log);
  const ringsim::real::FileStats stats = ringsim::real::read_back({output});
  if (m.problem.empty()) m.problem = stats.problem;
  if (stats.files == 1) {
    m.samples = stats.loss.records.samples;
    m.lost = stats.loss.records.lost_sum;
    m.lost_fraction = stats.loss.lost_fraction();
    m.metric = stats.loss.loss_metric();
  }
  m.ok = stats.files == 1 && m.problem.empty();
  std::remove(output.c_str());
  std::remove((output + ".old").c_str());  // perf's, should the name exist
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
  double samples = 0, lost = 0, lost_fraction = 0, metric = 0, cpu_s = 0, bytes = 0;
  int ok_runs = 0;
  std::string problem;
};

Row summarize(const std::vector<Measure>& runs) {
  Row r;
  std::vector<double> samples, lost, fraction, metric, cpu, bytes;
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
  }
  r.samples = median(samples);
  r.lost = median(lost);
  r.lost_fraction = median(fraction);
  r.metric = median(metric);
  r.cpu_s = median(cpu);
  r.bytes = median(bytes);
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
  app.add_option("--seconds", s.duration_s, "recording length (default 2)")->check(CLI::Range(0.1, 60.0));
  app.add_option("--out", s.out_path, "also write the table (and every run) to FILE");
  app.add_option("--perf", s.perf, "perf (default /usr/bin/perf)");
  app.add_option("--record", s.record, "ringsim-record (default: //real:record from the runfiles)");
  app.add_option("--point", s.only_point, "only this stress point: dwarf or fp");
  app.add_option("--realtime", s.realtime,
                 "give every recorder (perf and ours) SCHED_FIFO priority N (-r N); 0: the normal scheduler (default)")
      ->check(CLI::Range(0, 99));
  app.add_option("--recorders", s.only_recorders,
                 "only these recorders (perf, perf-aio, perf-aio4, ringsim-serial, ringsim-aio1, ringsim-aio4); "
                 "ratios need perf-aio")
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
      {"perf", true, {}},
      {"perf-aio", true, {"--aio"}},
      {"perf-aio4", true, {"--aio=4"}},
      {"ringsim-serial", false, {"--aio", "0"}},
      {"ringsim-aio1", false, {"--aio", "1"}},
      {"ringsim-aio4", false, {"--aio", "4"}},
  };
  std::vector<Recorder> recorders;
  for (Recorder r : all) {
    const auto& only = s.only_recorders;
    if (!only.empty() && std::find(only.begin(), only.end(), r.name) == only.end()) continue;
    if (s.realtime > 0) r.mode_args.insert(r.mode_args.end(), {"-r", std::to_string(s.realtime)});
    recorders.push_back(r);
  }
  return recorders;
}

std::vector<Point> select_points(const Settings& s) {
  const std::vector<Point> all = {
      {"dwarf", {"-e", "cpu-clock", "-F", "20000", "-a", "--call-graph", "dwarf,2048", "-m", "8"}},
      {"fp", {"-e", "cpu-clock", "-F", "50000", "-a", "-g", "-m", "1"}},
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
                "%s %s run %d: samples %llu lost %llu lost%% %.2f metric%% %.2f cpu %.3f s bytes %llu%s%s\n",
                point.name.c_str(), recorder.name.c_str(), run + 1, static_cast<unsigned long long>(m.samples),
                static_cast<unsigned long long>(m.lost), 100 * m.lost_fraction, 100 * m.metric, m.cpu_s,
                static_cast<unsigned long long>(m.bytes), m.problem.empty() ? "" : " PROBLEM: ", m.problem.c_str());
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
        const Measure m = measure_once(points[p], recorders[k], s, dir, r);
        results[p][k].push_back(m);
        details << run_line(points[p], recorders[k], r, m);
      }
    }
  }
  std::fprintf(stderr, "\r%60s\r", "");
  return results;
}

// One point's table: medians and their ratios to perf record --aio.
void report_point(std::ostream& report, const Point& point, const std::vector<Recorder>& recorders,
                  const std::vector<std::vector<Measure>>& results, const Settings& s) {
  std::string args;
  for (const std::string& a : point.args) args += " " + a;
  report << "\n## " << point.name << ":" << args << " -- sleep " << s.duration_s << "\n";
  char header[512];
  std::snprintf(header, sizeof header, "%-15s %9s %9s %7s %8s %7s %8s | %7s %7s %7s %7s %s\n", "recorder", "samples",
                "lost", "lost%", "metric%", "cpu_s", "MB", "samp/A", "lost/A", "cpu/A", "MB/A", "runs");
  report << header;
  Row reference;  // perf record --aio
  reference.samples = reference.lost = reference.cpu_s = reference.bytes = NAN;
  for (std::size_t k = 0; k < recorders.size(); k++) {
    if (recorders[k].name == "perf-aio") reference = summarize(results[k]);
  }
  for (std::size_t k = 0; k < recorders.size(); k++) {
    const Row row = summarize(results[k]);
    char line[512];
    std::snprintf(line, sizeof line, "%-15s %9.0f %9.0f %7.2f %8.2f %7.3f %8.2f | %7s %7s %7s %7s %d/%d%s%s\n",
                  recorders[k].name.c_str(), row.samples, row.lost, 100 * row.lost_fraction, 100 * row.metric,
                  row.cpu_s, row.bytes / 1e6, ratio(row.samples, reference.samples).c_str(),
                  ratio(row.lost, reference.lost).c_str(), ratio(row.cpu_s, reference.cpu_s).c_str(),
                  ratio(row.bytes, reference.bytes).c_str(), row.ok_runs, s.runs,
                  row.problem.empty() ? "" : "  problem: ", row.problem.c_str());
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
  report << "\n(medians; /A = ratio to perf record --aio; lost = sum of PERF_RECORD_LOST counts; metric = "
            "core::LossMeter over the file: lost time / the time its samples span)\n";
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
  Settings s;
  if (const int status = parse_settings(argc, argv, s); status >= 0) return status;
  if (const int status = find_recorders(argv[0], s); status >= 0) return status;
  const std::vector<Recorder> recorders = select_recorders(s);
  if (recorders.empty()) return ringsim::core::usage_error(kAppName, "--recorders: none of the names is a recorder");
  const std::vector<Point> points = select_points(s);
  if (points.empty()) return ringsim::core::usage_error(kAppName, "--point " + s.only_point + ": expected dwarf or fp");
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
