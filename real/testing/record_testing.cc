#include "real/testing/record_testing.h"

#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>
#include <set>
#include <thread>

#include "real/testing/recording_lock.h"

namespace ringsim::real::testing {
namespace {

std::string g_record_path;
std::atomic<std::uint64_t> g_burn_sink{0};
std::atomic<int> g_temp_counter{0};

std::uint64_t thread_cpu_ns() {
  timespec used{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &used);
  return static_cast<std::uint64_t>(used.tv_sec) * kSecond + static_cast<std::uint64_t>(used.tv_nsec);
}

void sleep_ms(int ms) {
  const timespec pause{ms / 1000, (ms % 1000) * 1'000'000L};
  nanosleep(&pause, nullptr);
}

}  // namespace

}  // namespace ringsim::real::testing

// Named so that perf report shows it: the tests look for it.
extern "C" __attribute__((noinline)) std::uint64_t ringsim_test_burn(std::uint64_t cpu_ns) {
  const std::uint64_t start = ringsim::real::testing::thread_cpu_ns();
  std::uint64_t x = 1;
  for (std::uint64_t round = 0; round < (std::uint64_t{1} << 40); round++) {
    for (int k = 0; k < 20000; k++) x = x * 6364136223846793005ull + 1442695040888963407ull;
    if (ringsim::real::testing::thread_cpu_ns() - start >= cpu_ns) break;
  }
  ringsim::real::testing::g_burn_sink.fetch_add(x, std::memory_order_relaxed);
  return x;
}

// Watched by the breakpoint tests (-e mem:ADDR:w): written N times.
volatile std::uint64_t ringsim_test_watched = 0;

extern "C" __attribute__((noinline)) void ringsim_test_write_watched(long times) {
  for (long i = 0; i < times; i++) ringsim_test_watched = ringsim_test_watched + 1;
}

namespace ringsim::real::testing {

bool run_workload_if_asked(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "--write-watched") == 0) {
    const long times = std::strtol(argv[2], nullptr, 10);
    if (times < 0 || times > 1'000'000) std::exit(2);
    if (argc >= 4 && std::strcmp(argv[3], "--print-address") == 0) {
      std::printf("%p\n", static_cast<const volatile void*>(&ringsim_test_watched));
      std::fflush(stdout);
    }
    ringsim_test_write_watched(times);
    return true;
  }
  if (argc < 3 || std::strcmp(argv[1], "--burn-ms") != 0) return false;
  const long ms = std::strtol(argv[2], nullptr, 10);
  long threads = 1;
  if (argc >= 5 && std::strcmp(argv[3], "--threads") == 0) threads = std::strtol(argv[4], nullptr, 10);
  if (ms <= 0 || threads <= 0 || threads > 64) std::exit(2);
  const std::uint64_t cpu_ns = static_cast<std::uint64_t>(ms) * kMs;
  std::vector<std::thread> workers;
  for (long t = 1; t < threads; t++) workers.emplace_back([cpu_ns] { ringsim_test_burn(cpu_ns); });
  ringsim_test_burn(cpu_ns);
  for (std::thread& w : workers) w.join();
  return true;
}

void set_record_path(const std::string& path) {
  char resolved[PATH_MAX];
  g_record_path = realpath(path.c_str(), resolved) != nullptr ? std::string(resolved) : path;
}

const std::string& record_path() { return g_record_path; }

std::string self_path() {
  char buffer[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (n <= 0) return "";
  return std::string(buffer, static_cast<std::size_t>(n));
}

std::string RunResult::text() const {
  std::ostringstream s;
  s << "status " << status << (exited ? " exit " + std::to_string(exit_code) : std::string(" (not exited)"))
    << (timed_out ? " TIMED OUT" : "") << "\n--- stderr:\n"
    << err.substr(0, 4000) << "\n--- stdout (first 2000 bytes):\n"
    << out.substr(0, 2000);
  return s.str();
}

namespace {

// Runs in the forked child before exec: async-signal-safe calls only.
int prepare_child(const ChildSetup& setup) {
  if (setup.memlock_limit_bytes >= 0) {
    const rlimit limit{static_cast<rlim_t>(setup.memlock_limit_bytes), static_cast<rlim_t>(setup.memlock_limit_bytes)};
    if (setrlimit(RLIMIT_MEMLOCK, &limit) != 0) return 121;
  }
  if (setup.drop_capabilities) {
    // Root without capabilities, and exec must not give them back.
    if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                                     SECBIT_NO_SETUID_FIXUP_LOCKED) != 0) {
      return 122;
    }
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2] = {};
    if (syscall(SYS_capset, &header, data) != 0) return 123;
  }
  return 0;
}

}  // namespace

namespace {

std::mutex g_recordings_mutex;
std::set<pid_t> g_recordings;  // started recorders that hold a count of the recording lock

// The recorder, or perf record, also behind a wrapper (`env LD_PRELOAD=...
// recorder`): side-band events (recording_lock.h).
bool is_recording(const std::vector<std::string>& argv) {
  bool perf = false;
  for (const std::string& a : argv) {
    if (a == "--help" || a == "-h") return false;  // prints and exits: no events
  }
  for (const std::string& a : argv) {
    if (a == record_path()) return true;
    if (a == perf_path()) perf = true;
    if (perf && a == "record") return true;
  }
  return false;
}

}  // namespace

Error start(Process& process, const std::vector<std::string>& argv, const ChildSetup& setup) {
  ProcessOptions options;
  options.out = Output::captured();
  options.err = Output::captured();
  options.prepare = [setup] { return prepare_child(setup); };
  const bool recording = is_recording(argv) && acquire_recording_lock(kRecordingLockWaitS);
  Error started = process.start(argv, options);
  if (recording && process.started()) {
    std::lock_guard<std::mutex> guard(g_recordings_mutex);
    g_recordings.insert(process.pid());
  } else if (recording) {
    release_recording_lock();
  }
  return started;
}

RunResult finish(Process& process, std::uint64_t deadline_ns) {
  const pid_t pid = process.pid();
  const WaitStatus w = process.wait(deadline_ns);
  bool recording = false;
  {
    std::lock_guard<std::mutex> guard(g_recordings_mutex);
    recording = g_recordings.erase(pid) > 0;
  }
  if (recording) release_recording_lock();
  RunResult r;
  r.status = w.status;
  r.exited = w.exited();
  r.exit_code = w.exit_code();
  r.timed_out = w.timed_out;
  r.usage = w.usage;
  r.out = process.captured_out();
  r.err = process.captured_err();
  if (!w.reaped) r.err += "\n(" + w.text() + ")";
  return r;
}

RunResult run(const std::vector<std::string>& argv, const ChildSetup& setup) {
  Process p;
  const Error started = start(p, argv, setup);
  RunResult r;
  if (p.started()) r = finish(p);
  if (!started.ok()) r.err = started.message + "\n" + r.err;
  return r;
}

RunResult run_record(const std::vector<std::string>& args, const ChildSetup& setup) {
  std::vector<std::string> argv{record_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, setup);
}

bool summary_value(const std::string& err, const std::string& key, std::uint64_t& value) {
  const std::string needle = "ringsim-record: " + key + ": ";
  const std::size_t at = err.find(needle);
  if (at == std::string::npos) return false;
  value = std::strtoull(err.c_str() + at + needle.size(), nullptr, 10);
  return true;
}

std::vector<std::string> lines_with(const std::string& text, const std::string& needle) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find(needle) != std::string::npos) out.push_back(line);
  }
  return out;
}

std::string perf_path() {
  const char* path = "/usr/bin/perf";
  return access(path, X_OK) == 0 ? path : "";
}

PerfView perf_view(const std::string& file, bool report) {
  PerfView v;
  v.script = run({perf_path(), "script", "-i", file, "-F", "time,cpu,event", "--show-lost-events"});
  if (v.script.exit_code != 0 && v.script.err.find("Cannot print 'cpu' field") != std::string::npos) {
    // A file whose samples carry no CPU (ours with --overwrite and one
    // event, as perf's): the same without it.
    v.script = run({perf_path(), "script", "-i", file, "-F", "time,event", "--show-lost-events"});
  }
  std::istringstream lines(v.script.out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    const std::size_t lost = line.find("PERF_RECORD_LOST lost ");
    if (lost != std::string::npos) {
      v.lost_records++;
      v.lost_sum += std::strtoull(line.c_str() + lost + std::strlen("PERF_RECORD_LOST lost "), nullptr, 10);
    } else {
      v.samples++;
    }
  }
  std::string errors = v.script.err;
  if (report) {
    v.report = run({perf_path(), "report", "--stdio", "-i", file});
    errors += v.report.err;
  }
  // What perf prints when a file has PERF_RECORD_LOST records (its own
  // files too) is expected; anything that says a record or the file is
  // bad is not.
  const char* troubles[] = {"bad", "nvalid", "rror", "ailed", "nknown", "nexpected", "out of order",
                            "data size", "nprocessed", "orrupt", "runcated", "Can't", "cannot"};
  std::istringstream err_lines(errors);
  while (std::getline(err_lines, line)) {
    for (const char* t : troubles) {
      if (line.find(t) != std::string::npos) {
        v.complaints.push_back(line);
        break;
      }
    }
  }
  return v;
}

std::string temp_dir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string root = base != nullptr ? base : "/tmp";
  const std::string dir = root + "/" + name + "-" + std::to_string(getpid()) + "-" + std::to_string(g_temp_counter++);
  std::filesystem::create_directories(dir);
  return dir;
}

Tmpfs::Tmpfs(const std::string& dir, const std::string& options, bool read_only) : dir_(dir) {
  std::filesystem::create_directories(dir_);
  if (mount("tmpfs", dir_.c_str(), "tmpfs", read_only ? MS_RDONLY : 0, options.c_str()) != 0) {
    error_ = std::string("mount -t tmpfs -o ") + options + " " + dir_ + ": " + std::strerror(errno);
    return;
  }
  mounted_ = true;
}

Tmpfs::~Tmpfs() {
  if (mounted_) umount2(dir_.c_str(), MNT_DETACH);
}

std::uint64_t header_data_size(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char header[104] = {};
  if (!in.read(header, sizeof header)) return 0;
  std::uint64_t size = 0;
  std::memcpy(&size, header + 48, sizeof size);
  return size;
}

std::uint64_t file_size(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return 0;
  return static_cast<std::uint64_t>(st.st_size);
}

std::uint64_t children_cpu_ms(pid_t pid) {
  std::uint64_t ticks = 0;
  std::error_code ec;
  const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
  for (std::filesystem::directory_iterator it(tasks, ec), end; !ec && it != end; it.increment(ec)) {
    std::ifstream children(it->path() / "children");
    for (long child = 0; children >> child;) {
      std::ifstream stat_file("/proc/" + std::to_string(child) + "/stat");
      std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
      // Fields after the command's closing parenthesis: state is field 3,
      // utime and stime fields 14 and 15.
      const std::size_t close = stat.rfind(')');
      if (close == std::string::npos) continue;
      std::istringstream fields(stat.substr(close + 1));
      std::string field;
      std::uint64_t utime = 0;
      std::uint64_t stime = 0;
      for (int n = 3; n <= 13 && fields >> field; n++) {
      }
      if (fields >> utime >> stime) ticks += utime + stime;
    }
  }
  const long hz = sysconf(_SC_CLK_TCK);
  return hz > 0 ? ticks * 1000 / static_cast<std::uint64_t>(hz) : 0;
}

bool wait_until(const std::function<bool()>& condition, std::uint64_t deadline_ns) {
  const std::uint64_t until = monotonic_ns() + deadline_ns;
  for (std::uint64_t i = 0; i < (std::uint64_t{1} << 32); i++) {
    if (condition()) return true;
    if (monotonic_ns() >= until) return condition();
    sleep_ms(5);
  }
  return condition();
}

}  // namespace ringsim::real::testing
