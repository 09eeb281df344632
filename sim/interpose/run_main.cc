// ringsim-run: an unmodified consumer under the simulated kernel and disk.
//
//   ringsim-run [options] -- COMMAND [ARGS...]
//
// Runs COMMAND with libringsim_interpose.so preloaded (sim/interpose/
// preload.cc), once per seed, in a new PID and mount namespace (its pids,
// and so its records, are the same every run) with address-space
// randomization off; then judges its output file against the simulated
// kernel's log (sim/interpose/oracle.h) and prints a summary like the
// campaign's. A failure prints its seed, a one-line reproduction, and a
// replay file (the decision tape), shrunk.
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "sim/interpose/oracle.h"
#include "sim/interpose/run_log.h"

namespace ringsim::sim::interpose {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kUsage =
    "usage: ringsim-run [--seed N|random] [--runs N] [--output FILE] [--format perf|raw]\n"
    "                   [--timeout-s S] [--shrink-s S] [--failures-dir DIR] [--no-namespace] [--disk-full]\n"
    "                   [--interleave]\n"
    "                   [--replay FILE] [-v] -- COMMAND [ARGS...]\n";

struct Options {
  std::uint64_t seed = 1;
  std::uint64_t runs = 1;
  std::string output;
  OutputFormat format = OutputFormat::perf;
  double timeout_s = 120;
  double shrink_s = 30;
  std::string failures_dir = "ringsim-failures";
  bool namespaces = true;
  // A drawn ENOSPC fills the disk for good: every later write fails with it
  // (the disk that stays full; off by default, so that a seed's run is the
  // same with and without this option until its first ENOSPC).
  bool disk_full = false;
  // The target's control pages are trapped: the kernel may run between
  // its load of data_head and its store of data_tail (x86-64 only).
  bool interleave = false;
  bool verbose = false;
  std::string replay;
  std::vector<std::string> command;
};

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr, "ringsim-run: %s\n%s", what.c_str(), kUsage);
  std::exit(2);
}

std::uint64_t parse_u64(const std::string& name, const std::string& value, std::uint64_t min) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno != 0 || value[0] == '-' || v < min) {
    usage_error(name + " wants a whole number >= " + std::to_string(min) + ", not \"" + value + "\"");
  }
  return v;
}

double parse_seconds(const std::string& name, const std::string& value) {
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || !(v > 0) || v > 86400) usage_error(name + " wants seconds in (0, 86400]");
  return v;
}

// The file the command writes: -o FILE, -oFILE, --output FILE,
// --output=FILE (perf's spellings), else perf's default, perf.data.
std::string output_of(const std::vector<std::string>& cmd) {
  for (std::size_t i = 1; i < cmd.size(); i++) {
    const std::string& a = cmd[i];
    if (a == "--") break;
    if ((a == "-o" || a == "--output") && i + 1 < cmd.size()) return cmd[i + 1];
    if (a.rfind("--output=", 0) == 0) return a.substr(9);
    if (a.size() > 2 && a.rfind("-o", 0) == 0 && a[2] != '-') return a.substr(2);
  }
  return "perf.data";
}

Options parse(int argc, char** argv) {
  Options o;
  bool seed_given = false;
  int i = 1;
  for (; i < argc; i++) {
    const std::string a = argv[i];
    if (a == "--") {
      i++;
      break;
    }
    const auto value = [&](const std::string& name) -> std::string {
      if (i + 1 >= argc) usage_error(name + " wants a value");
      return argv[++i];
    };
    if (a == "--seed") {
      const std::string v = value(a);
      if (v == "random") {
        o.seed = std::random_device{}() ^ (static_cast<std::uint64_t>(std::random_device{}()) << 20);
        o.seed %= 1'000'000'000'000ull;
        std::printf("seed: %llu (random)\n", static_cast<unsigned long long>(o.seed));
      } else {
        o.seed = parse_u64(a, v, 0);
      }
      seed_given = true;
    } else if (a == "--runs") {
      o.runs = parse_u64(a, value(a), 1);
    } else if (a == "--output") {
      o.output = value(a);
    } else if (a == "--format") {
      const std::string v = value(a);
      if (v != "perf" && v != "raw") usage_error("--format is perf or raw, not \"" + v + "\"");
      o.format = v == "perf" ? OutputFormat::perf : OutputFormat::raw;
    } else if (a == "--timeout-s") {
      o.timeout_s = parse_seconds(a, value(a));
    } else if (a == "--shrink-s") {
      const std::string v = value(a);
      o.shrink_s = v == "0" ? 0 : parse_seconds(a, v);
    } else if (a == "--failures-dir") {
      o.failures_dir = value(a);
    } else if (a == "--no-namespace") {
      o.namespaces = false;
    } else if (a == "--disk-full") {
      o.disk_full = true;
    } else if (a == "--interleave") {
      o.interleave = true;
    } else if (a == "--replay") {
      o.replay = value(a);
    } else if (a == "-v") {
      o.verbose = true;
    } else if (a == "-h" || a == "--help") {
      std::printf("%s", kUsage);
      std::exit(0);
    } else {
      usage_error("unknown option \"" + a + "\"");
    }
  }
  for (; i < argc; i++) o.command.push_back(argv[i]);
  if (!o.replay.empty()) {
    std::ifstream in(o.replay);
    if (!in) usage_error("cannot read the replay file " + o.replay);
    nlohmann::json j;
    try {
      in >> j;
      if (j.at("version").get<int>() != 1) usage_error("replay file " + o.replay + ": version not supported");
      if (o.command.empty()) o.command = j.at("command").get<std::vector<std::string>>();
      if (!seed_given) o.seed = j.at("seed").get<std::uint64_t>();
      if (o.output.empty()) o.output = j.at("output").get<std::string>();
      o.format = j.at("format").get<std::string>() == "raw" ? OutputFormat::raw : OutputFormat::perf;
      o.disk_full = o.disk_full || j.value("disk_full", false);
      o.interleave = o.interleave || j.value("interleave", false);
    } catch (const nlohmann::json::exception& e) {
      usage_error("replay file " + o.replay + ": " + e.what());
    }
  }
  if (o.command.empty()) usage_error("no command: ringsim-run [options] -- COMMAND [ARGS...]");
  if (o.output.empty()) o.output = output_of(o.command);
  o.output = fs::absolute(o.output).lexically_normal().string();
  return o;
}

std::string interpose_library() {
  if (const char* p = std::getenv("RINGSIM_INTERPOSE_LIB")) return p;
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return "";
  self[n] = '\0';
  return (fs::path(self).parent_path() / "libringsim_interpose.so").string();
}

struct RunResult {
  TargetEnd end;
  RunLog log;
  Verdict verdict;
  OracleStats stats;
  double wall_s = 0;
  std::string log_problem;
};

void write_all(int fd, const void* p, std::size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = ::write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) _exit(127);
    c += w;
    n -= static_cast<std::size_t>(w);
  }
}

// The sanitizer runtimes this binary runs with (a sanitized build): the
// interposer was built the same way and needs them loaded first.
std::string sanitizer_runtimes() {
  std::string out;
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, std::size_t, void* data) {
        const std::string name = info->dlpi_name == nullptr ? "" : info->dlpi_name;
        for (const char* runtime : {"/libasan.so", "/libubsan.so", "/libtsan.so"}) {
          if (name.find(runtime) != std::string::npos) {
            auto* list = static_cast<std::string*>(data);
            *list += (list->empty() ? "" : ":") + name;
          }
        }
        return 0;
      },
      &out);
  return out;
}

// In the child: exec the target with the shim.
[[noreturn]] void exec_target(const Options& o, const std::string& library, const std::string& log_path,
                              std::uint64_t seed, const std::string& tape, const std::string& tape_mode) {
  ::personality(ADDR_NO_RANDOMIZE);
  const std::string runtimes = sanitizer_runtimes();
  ::setenv("LD_PRELOAD", (runtimes.empty() ? library : runtimes + ":" + library).c_str(), 1);
  if (!runtimes.empty()) {
    // The target's own leaks are not ours to report (perf's are many).
    ::setenv("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=1", 1);
  }
  ::setenv("RINGSIM_TARGET_PID", std::to_string(::getpid()).c_str(), 1);
  ::setenv("RINGSIM_SEED", std::to_string(seed).c_str(), 1);
  ::setenv("RINGSIM_LOG", log_path.c_str(), 1);
  ::setenv("RINGSIM_OUTPUT", o.output.c_str(), 1);
  for (const auto& [name, on] : {std::pair{"RINGSIM_DISK_FULL", o.disk_full}, std::pair{"RINGSIM_INTERLEAVE", o.interleave}}) {
    if (on) {
      ::setenv(name, "1", 1);
    } else {
      ::unsetenv(name);
    }
  }
  if (!tape.empty()) {
    ::setenv("RINGSIM_TAPE", tape.c_str(), 1);
    ::setenv("RINGSIM_TAPE_MODE", tape_mode.c_str(), 1);
  } else {
    ::unsetenv("RINGSIM_TAPE");
  }
  std::vector<char*> argv;
  for (const std::string& a : o.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  std::fprintf(stderr, "ringsim-run: %s: %s\n", o.command[0].c_str(), std::strerror(errno));
  _exit(127);
}

// Starts the target; the pid to kill on timeout (the namespace's init) and
// a pipe that delivers the target's raw wait status.
struct Started {
  pid_t kill_pid = -1;
  pid_t wait_pid = -1;
  int status_fd = -1;
};

Started start(const Options& o, const std::string& library, const std::string& log_path, std::uint64_t seed,
              const std::string& tape, const std::string& tape_mode) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) {
    std::perror("ringsim-run: pipe");
    std::exit(1);
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t middle = ::fork();
  if (middle < 0) {
    std::perror("ringsim-run: fork");
    std::exit(1);
  }
  if (middle == 0) {
    ::close(p[0]);
    if (o.namespaces && ::unshare(CLONE_NEWPID | CLONE_NEWNS) != 0) {
      std::fprintf(stderr, "ringsim-run: unshare(CLONE_NEWPID|CLONE_NEWNS): %s (run as root, or --no-namespace)\n",
                   std::strerror(errno));
      _exit(126);
    }
    const pid_t init = ::fork();
    if (init < 0) _exit(126);
    if (init == 0) {
      if (o.namespaces) {
        // The namespace's /proc, so the target reads its own tasks there.
        if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
            ::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
          std::fprintf(stderr, "ringsim-run: mounting /proc in the new namespace: %s\n", std::strerror(errno));
          _exit(126);
        }
      }
      const pid_t target = ::fork();
      if (target < 0) _exit(126);
      if (target == 0) exec_target(o, library, log_path, seed, tape, tape_mode);
      // The namespace's init: reap everything, report the target's status.
      int status = 0, target_status = 0;
      for (;;) {
        const pid_t w = ::waitpid(-1, &status, 0);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) break;
        if (w == target) target_status = status;
      }
      write_all(p[1], &target_status, sizeof target_status);
      _exit(0);
    }
    const pid_t host_init = init;
    write_all(p[1], &host_init, sizeof host_init);
    int status = 0;
    while (::waitpid(init, &status, 0) < 0 && errno == EINTR) {
    }
    _exit(0);
  }
  ::close(p[1]);
  Started s;
  s.wait_pid = middle;
  s.status_fd = p[0];
  pid_t init = -1;
  if (::read(p[0], &init, sizeof init) != sizeof init) init = middle;
  s.kill_pid = init;
  return s;
}

// The previous run's files: the output, the names perf record
// --switch-output renames it to (<output>.<YYYYmmddHHMMSScc>: its
// fetch_current_timestamp, from the virtual clock here), the numbered
// files ringsim-record --switch-output opens (<output>.1, .2, ...), and the
// names ringsim-record --timestamp-filename gives a file when the time
// stamp is taken (<output>.<16 digits>-N: every run starts at the same
// virtual time, so without this each run's names would collide with the
// last's), and the copies of the files it removed (<output>.removed.K).
void remove_previous_outputs(const std::string& output) {
  std::error_code ec;
  fs::remove(output, ec);
  const fs::path path(output);
  const std::string prefix = path.filename().string() + ".";
  const auto digits = [](const std::string& text) {
    return !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  };
  for (const fs::directory_entry& e : fs::directory_iterator(path.parent_path(), ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() <= prefix.size() || name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const std::size_t dash = rest.find('-');
    const bool numbered_or_stamped = rest.size() <= 16 && digits(rest);
    const bool stamped_again = dash == 16 && digits(rest.substr(0, 16)) && digits(rest.substr(17));
    // The copies of the files the target removed (<output>.removed.K).
    const bool kept = rest.rfind("removed.", 0) == 0 && digits(rest.substr(8));
    if (numbered_or_stamped || stamped_again || kept) fs::remove(e.path(), ec);
  }
}

RunResult run_once(const Options& o, const std::string& library, std::uint64_t seed, const std::string& tape = "",
                   const std::string& tape_mode = "") {
  RunResult r;
  const auto t0 = Clock::now();
  remove_previous_outputs(o.output);
  const std::string dir = fs::temp_directory_path() / ("ringsim-run-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string log_path = dir + "/kernel.log";
  fs::remove(log_path);
  const Started s = start(o, library, log_path, seed, tape, tape_mode);
  int status = 0;
  struct pollfd pfd{s.status_fd, POLLIN, 0};
  const auto deadline = t0 + std::chrono::duration<double>(o.timeout_s);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      r.end.timed_out = true;
      ::kill(s.kill_pid, SIGKILL);
      break;
    }
    const int n = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (n > 0) break;
  }
  if (!r.end.timed_out) {
    if (::read(s.status_fd, &status, sizeof status) != sizeof status) status = 0x7f00;  // init died: unknown
    r.end.exited = WIFEXITED(status);
    r.end.code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
    r.end.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  }
  ::close(s.status_fd);
  int ignored = 0;
  while (::waitpid(s.wait_pid, &ignored, 0) < 0 && errno == EINTR) {
  }
  r.log_problem = read_run_log(log_path, r.log);
  if (!r.log_problem.empty() && r.verdict.property.empty()) {
    r.verdict = r.end.timed_out ? Verdict{"liveness", "the target did not exit before the real-time limit"}
                : !r.end.exited ? Verdict{"crash", std::string("killed by signal ") + std::to_string(r.end.signal) +
                                                       " (" + strsignal(r.end.signal) + "), no kernel log"}
                                : Verdict{"no_log", r.log_problem};
  } else {
    r.verdict = judge(r.log, o.output, o.format, r.end, r.stats);
  }
  r.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_of(" \t\n'\"\\$`*?[]{}()<>|&;#~!") == std::string::npos) return s;
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string command_line(const std::vector<std::string>& cmd) {
  std::string out;
  for (const std::string& a : cmd) out += (out.empty() ? "" : " ") + shell_quote(a);
  return out;
}

void write_tape(const std::string& path, const std::vector<Decision>& tape) {
  std::ofstream out(path);
  for (const Decision& d : tape) out << d.bound << ' ' << d.value << '\n';
}

std::string write_replay(const Options& o, const std::string& path, std::uint64_t seed, const Verdict& v,
                         const std::vector<Decision>& tape) {
  nlohmann::json j;
  j["version"] = 1;
  j["seed"] = seed;
  j["command"] = o.command;
  j["output"] = o.output;
  j["format"] = o.format == OutputFormat::raw ? "raw" : "perf";
  if (o.disk_full) j["disk_full"] = true;
  if (o.interleave) j["interleave"] = true;
  j["property"] = v.property;
  j["detail"] = v.detail;
  nlohmann::json t = nlohmann::json::array();
  for (const Decision& d : tape) t.push_back({d.bound, d.value});
  j["tape"] = t;
  std::ofstream out(path);
  out << j.dump(1) << '\n';
  return out ? "" : "cannot write " + path;
}

std::vector<Decision> read_replay_tape(const std::string& path) {
  std::ifstream in(path);
  nlohmann::json j;
  in >> j;
  std::vector<Decision> tape;
  for (const auto& d : j.at("tape")) tape.push_back({d.at(0).get<std::uint64_t>(), d.at(1).get<std::uint64_t>()});
  return tape;
}

// Shrinking: shorter tapes (decisions past the end replay as 0, the plain
// choice), then blocks set to 0; a candidate is kept if it still fails the
// same property. Every candidate is a full run of the target.
std::vector<Decision> shrink(const Options& o, const std::string& library, std::uint64_t seed,
                             const std::string& property, std::vector<Decision> tape, std::uint64_t& attempts) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(o.shrink_s);
  const std::string tape_path = fs::temp_directory_path() / ("ringsim-run-shrink-" + std::to_string(::getpid()));
  const auto fails = [&](const std::vector<Decision>& candidate, std::vector<Decision>& taken) {
    attempts++;
    write_tape(tape_path, candidate);
    const RunResult r = run_once(o, library, seed, tape_path, "lenient");
    taken = r.log.tape;
    return r.verdict.property == property;
  };
  std::vector<Decision> taken;
  for (std::size_t cut = tape.size() / 2; cut > 0 && Clock::now() < deadline; cut /= 2) {
    std::vector<Decision> candidate(tape.begin(), tape.begin() + static_cast<std::ptrdiff_t>(tape.size() - cut));
    if (fails(candidate, taken) && taken.size() <= tape.size()) tape = taken;
  }
  for (std::size_t block = std::max<std::size_t>(tape.size() / 4, 1); block > 0 && Clock::now() < deadline;
       block /= 2) {
    for (std::size_t at = 0; at < tape.size() && Clock::now() < deadline; at += block) {
      std::vector<Decision> candidate = tape;
      bool changed = false;
      for (std::size_t k = at; k < std::min(at + block, candidate.size()); k++) {
        changed |= candidate[k].value != 0;
        candidate[k].value = 0;
      }
      if (changed && fails(candidate, taken) && taken.size() <= tape.size()) tape = taken;
    }
  }
  fs::remove(tape_path);
  return tape;
}

// The sums over a campaign's runs, for its summary.
struct Totals {
  OracleStats total;
  std::uint64_t steps = 0, virtual_ns = 0, writes = 0, short_writes = 0, eintr = 0, eagain = 0, hard = 0, aio = 0,
                sigints = 0, sigusr2 = 0, exits_nonzero = 0, control_traps = 0, interleaved_steps = 0, removed = 0;
  std::uint64_t aux_areas = 0, aux_transactions = 0, aux_truncated = 0, aux_full = 0;

  void add(const RunResult& r) {
    total.kernel_records += r.stats.kernel_records;
    total.found += r.stats.found;
    total.dropped += r.stats.dropped;
    total.lost_reported += r.stats.lost_reported;
    total.unreported += r.stats.unreported;
    total.synthesized += r.stats.synthesized;
    total.files += r.stats.files;
    total.overwritten += r.stats.overwritten;
    total.carried += r.stats.carried;
    total.aux_written += r.stats.aux_written;
    total.aux_found += r.stats.aux_found;
    for (const LoggedRing& ring : r.log.rings) {
      aux_areas += ring.aux.size_bytes > 0 ? 1 : 0;
      aux_transactions += ring.aux.transactions;
      aux_truncated += ring.aux.truncated;
      aux_full += ring.aux.full_disables;
    }
    sigusr2 += r.log.sigusr2;
    removed += r.log.removed.size();
    control_traps += r.log.control_traps;
    interleaved_steps += r.log.interleaved_steps;
    steps += r.log.steps;
    virtual_ns += r.log.virtual_ns;
    writes += r.log.disk.writes + r.log.disk.aio_submitted;
    short_writes += r.log.disk.short_writes + r.log.disk.aio_short;
    eintr += r.log.disk.eintr;
    eagain += r.log.disk.eagain;
    hard += r.log.disk.hard_errors();
    aio += r.log.disk.aio_submitted;
    sigints += r.log.sigint ? 1 : 0;
    exits_nonzero += (r.end.exited && r.end.code != 0) ? 1 : 0;
  }

  void print() const {
    std::printf("  kernel: %llu steps, %.3f virtual s, %llu records written, %llu dropped (%llu reported by LOST, "
                "%llu never reported)\n",
                static_cast<unsigned long long>(steps), static_cast<double>(virtual_ns) / 1e9,
                static_cast<unsigned long long>(total.kernel_records), static_cast<unsigned long long>(total.dropped),
                static_cast<unsigned long long>(total.lost_reported), static_cast<unsigned long long>(total.unreported));
    std::printf("  file: %llu of the kernel's records found in %llu files, %llu records the target synthesized "
                "(ignored)",
                static_cast<unsigned long long>(total.found), static_cast<unsigned long long>(total.files),
                static_cast<unsigned long long>(total.synthesized));
    if (total.overwritten > 0) {
      std::printf(", %llu overwritten before a read (paused read-only rings: no LOST, as Linux)",
                  static_cast<unsigned long long>(total.overwritten));
    }
    if (total.carried > 0) {
      std::printf(", %llu side-band copies carried into numbered files", static_cast<unsigned long long>(total.carried));
    }
    if (removed > 0) {
      std::printf(", %llu files the target removed (judged from the copies kept at their unlink)",
                  static_cast<unsigned long long>(removed));
    }
    std::printf("\n");
    if (aux_areas > 0) {
      std::printf("  aux: %llu areas, %llu transactions (%llu cut short: TRUNCATED, %llu found the area full), %llu "
                  "bytes written by the AUX PMU, %llu in the files' AUXTRACE records\n",
                  static_cast<unsigned long long>(aux_areas), static_cast<unsigned long long>(aux_transactions),
                  static_cast<unsigned long long>(aux_truncated), static_cast<unsigned long long>(aux_full),
                  static_cast<unsigned long long>(total.aux_written), static_cast<unsigned long long>(total.aux_found));
    }
    std::printf("  disk: %llu writes (%llu AIO), %llu short, %llu EINTR, %llu EAGAIN, %llu hard errors; "
                "%llu runs ended by SIGINT, %llu SIGUSR2 delivered, %llu exited non-zero\n",
                static_cast<unsigned long long>(writes), static_cast<unsigned long long>(aio),
                static_cast<unsigned long long>(short_writes), static_cast<unsigned long long>(eintr),
                static_cast<unsigned long long>(eagain), static_cast<unsigned long long>(hard),
                static_cast<unsigned long long>(sigints), static_cast<unsigned long long>(sigusr2),
                static_cast<unsigned long long>(exits_nonzero));
    if (control_traps > 0) {
      std::printf("  interleave: %llu accesses to control pages trapped, %llu kernel steps inside them\n",
                  static_cast<unsigned long long>(control_traps), static_cast<unsigned long long>(interleaved_steps));
    }
  }
};

int main_impl(int argc, char** argv) {
  // Under `bazel run`, relative paths are the user's.
  if (const char* dir = std::getenv("BUILD_WORKING_DIRECTORY"); dir != nullptr && ::chdir(dir) != 0) {
    std::fprintf(stderr, "ringsim-run: cannot enter %s: %s\n", dir, std::strerror(errno));
    return 2;
  }
  const Options o = parse(argc, argv);
  const std::string library = interpose_library();
  if (library.empty() || ::access(library.c_str(), R_OK) != 0) {
    std::fprintf(stderr, "ringsim-run: the interposer %s is missing (build //sim/interpose:ringsim-run)\n",
                 library.c_str());
    return 2;
  }
  const auto t0 = Clock::now();
  std::map<std::string, std::uint64_t> failures;
  Totals totals;
  std::uint64_t failed = 0;
  std::string replay_tape;
  if (!o.replay.empty()) {
    replay_tape = fs::temp_directory_path() / ("ringsim-run-replay-" + std::to_string(::getpid()));
    write_tape(replay_tape, read_replay_tape(o.replay));
  }
  for (std::uint64_t k = 0; k < o.runs; k++) {
    const std::uint64_t seed = o.seed + k;
    const RunResult r = run_once(o, library, seed, replay_tape, replay_tape.empty() ? "" : "strict");
    totals.add(r);
    if (o.verbose || o.runs == 1) {
      std::printf("seed %llu: %s, %llu kernel records, %llu in %llu file(s), %llu dropped by the kernel, %.2f s%s%s\n",
                  static_cast<unsigned long long>(seed),
                  r.end.timed_out ? "timed out"
                  : r.end.exited  ? ("exit " + std::to_string(r.end.code)).c_str()
                                  : ("signal " + std::to_string(r.end.signal)).c_str(),
                  static_cast<unsigned long long>(r.stats.kernel_records),
                  static_cast<unsigned long long>(r.stats.found), static_cast<unsigned long long>(r.stats.files),
                  static_cast<unsigned long long>(r.stats.dropped),
                  r.wall_s, r.verdict.property.empty() ? "" : ", FAIL ", r.verdict.property.c_str());
    }
    if (r.verdict.property.empty()) continue;
    failed++;
    failures[r.verdict.property]++;
    std::printf("FAIL seed=%llu property=%s: %s\n", static_cast<unsigned long long>(seed), r.verdict.property.c_str(),
                r.verdict.detail.c_str());
    std::printf("  reproduce: ringsim-run --seed %llu --output %s%s%s%s -- %s\n", static_cast<unsigned long long>(seed),
                shell_quote(o.output).c_str(), o.format == OutputFormat::raw ? " --format raw" : "",
                o.disk_full ? " --disk-full" : "", o.interleave ? " --interleave" : "", command_line(o.command).c_str());
    if (r.verdict.property == "refused" || !o.replay.empty()) continue;
    fs::create_directories(o.failures_dir);
    const std::string base = fs::absolute(o.failures_dir) / ("seed-" + std::to_string(seed));
    if (write_replay(o, base + ".replay.json", seed, r.verdict, r.log.tape).empty()) {
      std::printf("  replay: ringsim-run --replay %s\n", (base + ".replay.json").c_str());
    }
    if (o.shrink_s > 0) {
      std::uint64_t attempts = 0;
      const std::vector<Decision> small = shrink(o, library, seed, r.verdict.property, r.log.tape, attempts);
      if (write_replay(o, base + ".shrunk.replay.json", seed, r.verdict, small).empty()) {
        std::printf("  shrunk: ringsim-run --replay %s  (from %zu to %zu decisions, %llu runs)\n",
                    (base + ".shrunk.replay.json").c_str(), r.log.tape.size(), small.size(),
                    static_cast<unsigned long long>(attempts));
      }
    }
  }
  if (!replay_tape.empty()) fs::remove(replay_tape);
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf("\n%llu runs from seed %llu of: %s\n", static_cast<unsigned long long>(o.runs),
              static_cast<unsigned long long>(o.seed), command_line(o.command).c_str());
  totals.print();
  std::printf("  failures:");
  if (failures.empty()) std::printf(" none");
  for (const auto& [property, n] : failures) std::printf(" %s=%llu", property.c_str(), static_cast<unsigned long long>(n));
  std::printf("\n%llu runs, %llu failed, %.1f s wall\n", static_cast<unsigned long long>(o.runs),
              static_cast<unsigned long long>(failed), wall);
  return failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace ringsim::sim::interpose

int main(int argc, char** argv) { return ringsim::sim::interpose::main_impl(argc, argv); }
