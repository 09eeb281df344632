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
#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
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

#include "real/file_stats.h"

namespace {

// --- The busy loop ----------------------------------------------------------

std::atomic<std::uint64_t> g_sink{0};

__attribute__((noinline)) std::uint64_t busy_leaf(std::uint64_t x) {
  for (int i = 0; i < 2000; i++) x = x * 6364136223846793005ull + 1442695040888963407ull;
  return x;
}
__attribute__((noinline)) std::uint64_t busy_middle(std::uint64_t x) { return busy_leaf(x) ^ busy_leaf(x + 1); }
__attribute__((noinline)) std::uint64_t busy_top(std::uint64_t x) { return busy_middle(x) + busy_middle(x * 3); }

// Runs in a forked child until it is killed: `threads` threads spinning.
[[noreturn]] void busy_loop(int threads) {
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
  int exit_status = 0;
};

std::uint64_t file_size(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0;
  return static_cast<std::uint64_t>(st.st_size);
}

// Runs argv with stdout and stderr into `log`; returns the wait status and
// the child's rusage.
int run(const std::vector<std::string>& argv, const std::string& log, rusage& usage) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  usage = rusage{};
  if (pid < 0) return -1;
  for (int i = 0; i < 1000; i++) {
    const pid_t got = ::wait4(pid, &status, 0, &usage);
    if (got == pid) break;
    if (got < 0 && errno != EINTR) return -1;
  }
  return status;
}

double seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; }

Measure measure_once(const Point& point, const Recorder& recorder, const std::string& perf, const std::string& record,
                     const std::string& dir, int run_index, double duration_s) {
  Measure m;
  const std::string base = dir + "/" + point.name + "-" + recorder.name + "-" + std::to_string(run_index);
  const std::string output = base + ".data";
  const std::string log = base + ".log";
  std::vector<std::string> argv;
  if (recorder.perf) {
    argv = {perf, "record", "-q"};
  } else {
    argv = {record};
  }
  argv.insert(argv.end(), point.args.begin(), point.args.end());
  argv.insert(argv.end(), recorder.mode_args.begin(), recorder.mode_args.end());
  argv.insert(argv.end(), {"-o", output, "--", "sleep", std::to_string(duration_s)});

  // The workload, started separately, a moment before the recorder.
  const pid_t busy = ::fork();
  if (busy == 0) busy_loop(2);
  ::usleep(300'000);
  rusage usage{};
  const int status = run(argv, log, usage);
  ::kill(busy, SIGKILL);
  ::waitpid(busy, nullptr, 0);

  m.exit_status = status;
  m.cpu_s = seconds(usage.ru_utime) + seconds(usage.ru_stime);
  m.bytes = file_size(output);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream in(log);
    std::string line, last;
    for (int i = 0; i < 10000 && std::getline(in, line); i++) last = line;
    m.problem = "exit status " + std::to_string(status) + ": " + last;
  }
  const ringsim::real::FileStats stats = ringsim::real::read_back({output});
  if (stats.files != 1) {
    if (m.problem.empty()) m.problem = stats.problem;
    return m;
  }
  if (!stats.problem.empty() && m.problem.empty()) m.problem = stats.problem;
  m.samples = stats.loss.records.samples;
  m.lost = stats.loss.records.lost_sum;
  m.lost_fraction = stats.loss.lost_fraction();
  m.metric = stats.loss.loss_metric();
  m.ok = m.problem.empty();
  std::remove(output.c_str());
  std::remove((output + ".old").c_str());
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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Loss and CPU cost of ringsim-record against perf record (system-wide, both cores busy)",
               "compare"};
  int runs = 5;
  double duration_s = 2;
  std::string out_path;
  std::string perf = "/usr/bin/perf";
  std::string record;
  std::string only;
  app.add_option("--runs", runs, "runs per recorder and point (default 5); medians are reported")
      ->check(CLI::Range(1, 100));
  app.add_option("--seconds", duration_s, "recording length (default 2)")->check(CLI::Range(0.1, 60.0));
  app.add_option("--out", out_path, "also write the table (and every run) to FILE");
  app.add_option("--perf", perf, "perf (default /usr/bin/perf)");
  app.add_option("--record", record, "ringsim-record (default: //real:record from the runfiles)");
  app.add_option("--point", only, "only this stress point: dwarf or fp");
  int realtime = 0;
  app.add_option("--realtime", realtime,
                 "give every recorder (perf and ours) SCHED_FIFO priority N (-r N); 0: the normal scheduler (default)")
      ->check(CLI::Range(0, 99));
  std::vector<std::string> only_recorders;
  app.add_option("--recorders", only_recorders,
                 "only these recorders (perf, perf-aio, perf-aio4, ringsim-serial, ringsim-aio1, ringsim-aio4); "
                 "ratios need perf-aio")
      ->delimiter(',');
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    std::cerr << "compare: error: " << e.what() << " (see --help)\n";
    return 64;
  }
  if (record.empty()) {
    std::vector<std::string> candidates;
    if (const char* runfiles = std::getenv("RUNFILES_DIR")) candidates.push_back(std::string(runfiles) + "/ringsim/real/record");
    candidates.push_back(std::string(argv[0]) + ".runfiles/ringsim/real/record");
    candidates.push_back("real/record");
    for (const std::string& c : candidates) {
      if (::access(c.c_str(), X_OK) == 0) {
        record = std::filesystem::absolute(c).string();
        break;
      }
    }
  }
  if (record.empty() || ::access(record.c_str(), X_OK) != 0) {
    std::cerr << "compare: error: cannot find ringsim-record (give --record PATH)\n";
    return 64;
  }
  if (::access(perf.c_str(), X_OK) != 0) {
    std::cerr << "compare: error: " << perf << " not found: install linux-perf (scripts/setup.sh) or give --perf\n";
    return 69;
  }
  if (const char* dir = std::getenv("BUILD_WORKING_DIRECTORY"); dir != nullptr && *dir != '\0') {
    if (::chdir(dir) != 0) std::cerr << "compare: warning: chdir " << dir << ": " << std::strerror(errno) << "\n";
  }
  char dir_template[] = "/tmp/ringsim-compare-XXXXXX";
  const char* dir = ::mkdtemp(dir_template);
  if (dir == nullptr) {
    std::cerr << "compare: error: mkdtemp: " << std::strerror(errno) << "\n";
    return 73;
  }

  const std::vector<Point> all_points = {
      {"dwarf", {"-e", "cpu-clock", "-F", "20000", "-a", "--call-graph", "dwarf,2048", "-m", "8"}},
      {"fp", {"-e", "cpu-clock", "-F", "50000", "-a", "-g", "-m", "1"}},
  };
  const std::vector<Recorder> all_recorders = {
      {"perf", true, {}},
      {"perf-aio", true, {"--aio"}},
      {"perf-aio4", true, {"--aio=4"}},
      {"ringsim-serial", false, {"--aio", "0"}},
      {"ringsim-aio1", false, {"--aio", "1"}},
      {"ringsim-aio4", false, {"--aio", "4"}},
  };
  std::vector<Recorder> recorders;
  for (Recorder r : all_recorders) {
    if (only_recorders.empty() || std::find(only_recorders.begin(), only_recorders.end(), r.name) != only_recorders.end()) {
      if (realtime > 0) r.mode_args.insert(r.mode_args.end(), {"-r", std::to_string(realtime)});
      recorders.push_back(r);
    }
  }
  if (recorders.empty()) {
    std::cerr << "compare: error: --recorders: none of the names is a recorder\n";
    return 64;
  }
  std::vector<Point> points;
  for (const Point& p : all_points) {
    if (only.empty() || only == p.name) points.push_back(p);
  }
  if (points.empty()) {
    std::cerr << "compare: error: --point " << only << ": expected dwarf or fp\n";
    return 64;
  }

  std::ostringstream report;
  const std::string load_before = load_average();
  report << "# ringsim-record vs perf record: " << runs << " runs each, " << duration_s
         << " s system-wide with a two-thread busy loop on both cores"
         << (realtime > 0 ? ", every recorder with -r " + std::to_string(realtime) + " (SCHED_FIFO)" : "") << "\n";
  report << "# load average before: " << load_before << "\n";
  std::ostringstream details;
  std::vector<std::vector<std::vector<Measure>>> results(points.size(),
                                                          std::vector<std::vector<Measure>>(recorders.size()));
  for (int r = 0; r < runs; r++) {
    for (std::size_t p = 0; p < points.size(); p++) {
      for (std::size_t k = 0; k < recorders.size(); k++) {
        std::fprintf(stderr, "\rrun %d/%d  %-6s %-16s", r + 1, runs, points[p].name.c_str(), recorders[k].name.c_str());
        const Measure m = measure_once(points[p], recorders[k], perf, record, dir, r, duration_s);
        results[p][k].push_back(m);
        char line[512];
        std::snprintf(line, sizeof line, "%s %s run %d: samples %llu lost %llu lost%% %.2f metric%% %.2f cpu %.3f s bytes %llu%s%s\n",
                      points[p].name.c_str(), recorders[k].name.c_str(), r + 1,
                      static_cast<unsigned long long>(m.samples), static_cast<unsigned long long>(m.lost),
                      100 * m.lost_fraction, 100 * m.metric, m.cpu_s, static_cast<unsigned long long>(m.bytes),
                      m.problem.empty() ? "" : " PROBLEM: ", m.problem.c_str());
        details << line;
      }
    }
  }
  std::fprintf(stderr, "\r%60s\r", "");
  report << "# load average after: " << load_average() << "\n";
  for (std::size_t p = 0; p < points.size(); p++) {
    std::string args;
    for (const std::string& a : points[p].args) args += " " + a;
    report << "\n## " << points[p].name << ":" << args << " -- sleep " << duration_s << "\n";
    char header[512];
    std::snprintf(header, sizeof header, "%-15s %9s %9s %7s %8s %7s %8s | %7s %7s %7s %7s %s\n", "recorder", "samples",
                  "lost", "lost%", "metric%", "cpu_s", "MB", "samp/A", "lost/A", "cpu/A", "MB/A", "runs");
    report << header;
    Row reference;  // perf record --aio
    reference.samples = reference.lost = reference.cpu_s = reference.bytes = NAN;
    for (std::size_t k = 0; k < recorders.size(); k++) {
      if (recorders[k].name == "perf-aio") reference = summarize(results[p][k]);
    }
    for (std::size_t k = 0; k < recorders.size(); k++) {
      const Row row = summarize(results[p][k]);
      char line[512];
      std::snprintf(line, sizeof line, "%-15s %9.0f %9.0f %7.2f %8.2f %7.3f %8.2f | %7s %7s %7s %7s %d/%d%s%s\n",
                    recorders[k].name.c_str(), row.samples, row.lost, 100 * row.lost_fraction, 100 * row.metric,
                    row.cpu_s, row.bytes / 1e6, ratio(row.samples, reference.samples).c_str(),
                    ratio(row.lost, reference.lost).c_str(), ratio(row.cpu_s, reference.cpu_s).c_str(),
                    ratio(row.bytes, reference.bytes).c_str(), row.ok_runs, runs,
                    row.problem.empty() ? "" : "  problem: ", row.problem.c_str());
      report << line;
    }
  }
  report << "\n(medians; /A = ratio to perf record --aio; lost = sum of PERF_RECORD_LOST counts; metric = "
            "core::LossMeter over the file: lost time / the time its samples span)\n";
  std::cout << report.str();
  if (!out_path.empty()) {
    std::ofstream out(out_path);
    out << report.str() << "\n# every run\n" << details.str();
    if (!out) {
      std::cerr << "compare: error: cannot write " << out_path << "\n";
      return 74;
    }
    std::cout << "saved to " << out_path << "\n";
  }
  ::rmdir(dir);  // empty unless a run failed (its log is kept there)
  return 0;
}
