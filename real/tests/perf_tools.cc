#include "real/tests/perf_tools.h"

#include <cstdlib>
#include <cstring>
#include <cctype>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "model/perf_data_file.h"

namespace ringsim::real::testing {

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::string shares_path() {
  const char* root = std::getenv("TEST_SRCDIR");
  return std::string(root != nullptr ? root : ".") + "/ringsim/real/testing/shares";
}

std::vector<std::string> shares(int rounds, int threads) {
  return {shares_path(), std::to_string(rounds), std::to_string(threads)};
}

bool perf_record_aborted(const RunResult& r) {
  return !r.exited && WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT &&
         r.err.find("assertion failed at util/build-id.c") != std::string::npos;
}

RunResult retry_perf_record(const std::function<RunResult()>& once) {
  RunResult r = once();
  for (int run = 2; run <= kPerfRecordTries && perf_record_aborted(r); run++) {
    const unsigned wait_s = 1u << (run - 2);
    std::printf("perf record aborted (its own bug, not ours): recording again in %u s (run %d of at most %d)\n%s\n",
                wait_s, run, kPerfRecordTries, r.err.c_str());
    std::fflush(stdout);
    ::sleep(wait_s);
    r = once();
  }
  return r;
}

RunResult run_perf_record(const std::vector<std::string>& argv) {
  std::string out;
  for (std::size_t i = 0; i < argv.size() && argv[i] != "--"; i++) {
    if ((argv[i] == "-o" || argv[i] == "--output") && i + 1 < argv.size()) out = argv[i + 1];
    if (argv[i].rfind("--output=", 0) == 0) out = argv[i].substr(9);
  }
  bool first = true;
  return retry_perf_record([&] {
    if (!first && !out.empty() && out != "-") {
      std::error_code ignored;
      std::filesystem::remove(out, ignored);
    }
    first = false;
    return testing::run(argv);
  });
}

std::string perfparser_path() {
  const char* path = "/usr/lib/x86_64-linux-gnu/libexec/hotspot-perfparser";
  return access(path, X_OK) == 0 ? path : "";
}

std::map<std::string, std::uint64_t> perf_samples_per_event(const std::string& file, RunResult* run) {
  const RunResult r = testing::run({perf_path(), "script", "-i", file, "-F", "event"});
  std::map<std::string, std::uint64_t> out;
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    const std::size_t colon = line.rfind(':');
    if (colon == std::string::npos) continue;
    const std::size_t start = line.find_first_not_of(' ');
    out[line.substr(start, colon - start)]++;
  }
  if (run != nullptr) *run = r;
  return out;
}

UnwindDepth perf_unwind_depth(const std::string& file, const std::string& comm, int frames, RunResult* run) {
  const RunResult r = testing::run({perf_path(), "script", "-i", file, "--comms", comm});
  UnwindDepth out;
  std::istringstream lines(r.out);
  std::string line;
  bool in_sample = false;
  int user_frames = 0;
  const auto end_sample = [&] {
    if (in_sample) {
      out.samples++;
      if (user_frames >= frames) out.deep++;
    }
    in_sample = false;
    user_frames = 0;
  };
  while (std::getline(lines, line)) {
    if (line.empty()) {
      end_sample();
    } else if (line[0] != '\t') {
      end_sample();
      in_sample = true;  // "gzip 25818 [001] 11430.868881: 250000 cpu-clock:"
    } else if (in_sample) {
      // "\t    14645 handle_amd+0x25 (/usr/lib/...)"
      const std::size_t at = line.find_first_not_of(" \t");
      const bool kernel = at != std::string::npos && line.compare(at, 8, "ffffffff") == 0;
      if (at != std::string::npos && !kernel && line.find("(inlined)") == std::string::npos) user_frames++;
    }
  }
  end_sample();
  if (run != nullptr) *run = r;
  return out;
}

std::map<std::string, std::vector<SymbolShare>> perf_symbol_shares(const std::string& file,
                                                                   const std::string& buildid_dir, RunResult* run) {
  std::vector<std::string> argv{perf_path()};
  if (!buildid_dir.empty()) argv.insert(argv.end(), {"--buildid-dir", buildid_dir});
  argv.insert(argv.end(), {"report", "--stdio", "--no-children", "-g", "none", "--sort", "sym", "-i", file});
  const RunResult r = testing::run(argv);
  std::map<std::string, std::vector<SymbolShare>> out;
  std::string event;
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    // "# Samples: 3K of event 'cpu-clock'", then rows "    39.89%  [.] f1".
    const std::size_t of = line.find(" of event '");
    if (line.rfind("# Samples: ", 0) == 0 && of != std::string::npos) {
      event = line.substr(of + 11, line.rfind('\'') - of - 11);
      continue;
    }
    const std::size_t percent = line.find("%  [");
    if (event.empty() || line.empty() || line[0] == '#' || percent == std::string::npos) continue;
    std::string symbol = line.substr(percent + 7);
    while (!symbol.empty() && symbol.back() == ' ') symbol.pop_back();
    out[event].push_back(SymbolShare{symbol, std::strtod(line.c_str(), nullptr)});
  }
  if (run != nullptr) *run = r;
  return out;
}

double share_of(const std::vector<SymbolShare>& shares, const std::string& symbol) {
  for (const SymbolShare& s : shares) {
    if (s.symbol == symbol) return s.percent;
  }
  return 0;
}

ModelEvents model_events(const std::vector<std::string>& paths) {
  ModelEvents out;
  for (const std::string& path : paths) {
    model::PerfDataFile f;
    if (const std::string p = model::read_perf_data(path, f); !p.empty()) {
      out.problem = p;
      return out;
    }
    std::map<std::uint64_t, std::string> name_of;
    for (const model::EventDescFeature& e : f.features.events) {
      for (const std::uint64_t id : e.ids) name_of[id] = e.name;
    }
    out.problem = f.for_each_record([&](const model::PerfRecord& r) {
      if (r.type == model::kTypeSample && r.size >= 16) {
        const auto it = name_of.find(model::load<std::uint64_t>(r.bytes.data() + 8));
        out.samples[it == name_of.end() ? "?" : it->second]++;
      }
      std::uint32_t cpu = 0;
      if (r.type != model::kTypeLost || !f.cpu_of(r, cpu)) return;
      out.lost_per_cpu[cpu].first++;
      out.lost_per_cpu[cpu].second += model::load<std::uint64_t>(r.bytes.data() + model::kLostFieldOffset);
    });
    if (!out.problem.empty()) return out;
  }
  return out;
}

PerfparserView perfparser_view(const std::string& file) {
  PerfparserView v;
  v.run = testing::run({perfparser_path(), "--input", file, "--print-stats"});
  std::istringstream err(v.run.err);
  std::string line;
  while (std::getline(err, line)) {
    // How it buffers (after the VERSION it reads, or the first
    // FINISHED_ROUND) is not a problem either way.
    if (line.empty() || line.find("Switching to automatic buffering") != std::string::npos) continue;
    // Pointers it prints differ from run to run.
    for (std::size_t at = line.find("0x"); at != std::string::npos; at = line.find("0x", at + 3)) {
      std::size_t end = at + 2;
      while (end < line.size() && std::isxdigit(static_cast<unsigned char>(line[end]))) end++;
      line.replace(at, end - at, "0x?");
    }
    v.messages.push_back(line);
  }
  const std::size_t at = v.run.out.find("samples: ");
  if (at != std::string::npos) v.samples = std::strtoull(v.run.out.c_str() + at + 9, nullptr, 10);
  return v;
}

}  // namespace ringsim::real::testing
