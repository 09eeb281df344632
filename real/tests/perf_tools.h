// What perf's tools (and hotspot's parser) say about a recording, for the
// tests that compare ringsim-record's files with perf record's: sample
// counts per event (perf script), symbol shares per event (perf report),
// the header (perf report --header-only), build-ids (perf buildid-list),
// hotspot-perfparser's statistics and messages; and the deterministic
// workload (//real/testing:shares) they record.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "real/testing/record_testing.h"
#include "real/testing/recording_lock.h"

// In a TEST body: skip, with one line saying why, when perf is absent.
#define REQUIRE_PERF()                                                                               \
  do {                                                                                               \
    if (::ringsim::real::testing::perf_path().empty()) {                                             \
      GTEST_SKIP() << "/usr/bin/perf not found: install linux-perf (scripts/setup.sh installs it)"; \
    }                                                                                                \
  } while (0)

namespace ringsim::real::testing {

// a, then b.
std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b);

// The workload: f1..f4 take 40/30/20/10% of its CPU time.
std::string shares_path();
std::vector<std::string> shares(int rounds, int threads = 1);

// perf record, with perf 6.1's own abort retried. perf 6.1 sometimes dies
// at the end of a recording, in its build-id pass ("assertion failed at
// util/build-id.c:1010", then "stack smashing detected", SIGABRT; seen in
// CI, once twice in a row under tsan): that is the reference recorder
// failing, not ours. It happens while any other recording asks for MMAP2
// build-ids (docs/fidelity.md row 20: ringsim-record does by default, and
// Bazel runs our recorder tests beside this one). Only that abort is
// retried, at most kPerfRecordTries runs in all, after waiting 1, 2, 4, 8 s
// (such a recording beside may last seconds: back-to-back retries all met
// one of 3 s in CI, 2026-11-27), each retry printed with perf's stderr;
// any other failure (or a last abort) is returned as it is.
inline constexpr int kPerfRecordTries = 5;
// r is that abort: SIGABRT with perf's build-id assertion on stderr.
bool perf_record_aborted(const RunResult& r);
// `once` (one perf record, from start to end: a start/finish pair too)
// run again while it returns that abort.
RunResult retry_perf_record(const std::function<RunResult()>& once);
// testing::run(argv) (argv: perf ... record ... [-- command]), retried; the
// aborted run's output (-o FILE) removed before the next.
RunResult run_perf_record(const std::vector<std::string>& argv);

// hotspot-perfparser ("" when hotspot is not installed).
std::string perfparser_path();

// perf script -F event: samples per event name.
std::map<std::string, std::uint64_t> perf_samples_per_event(const std::string& file, RunResult* run = nullptr);

// perf report --stdio --no-children -g none --sort sym: per event (as
// "# Samples: N of event 'E'" names it), each symbol's share in percent, in
// report order. buildid_dir: perf --buildid-dir (none when "").
struct SymbolShare {
  std::string symbol;
  double percent = 0;
};
std::map<std::string, std::vector<SymbolShare>> perf_symbol_shares(const std::string& file,
                                                                   const std::string& buildid_dir = "",
                                                                   RunResult* run = nullptr);
// The share of `symbol` in `shares` (0 if absent).
double share_of(const std::vector<SymbolShare>& shares, const std::string& symbol);

// How deep perf unwinds the call chains of `comm`'s samples in `file`
// (perf script's default output, a sample's frames on the lines after it,
// one per line): the samples, and those with at least `frames` user-space
// frames (an address below the kernel's, 0xffff..., not an "(inlined)"
// line: those repeat their frame's address). perf script's run in *run.
struct UnwindDepth {
  std::uint64_t samples = 0;
  std::uint64_t deep = 0;  // with >= frames user frames
};
UnwindDepth perf_unwind_depth(const std::string& file, const std::string& comm, int frames,
                              RunResult* run = nullptr);

// The model's count of samples per event (by the sample's identifier and
// the EVENT_DESC names), over `paths`; LOST records per CPU (count, sum).
struct ModelEvents {
  std::map<std::string, std::uint64_t> samples;
  std::map<std::uint32_t, std::pair<std::uint64_t, std::uint64_t>> lost_per_cpu;
  std::string problem;
};
ModelEvents model_events(const std::vector<std::string>& paths);

// hotspot-perfparser --print-stats: its sample count and its messages
// (stderr lines, hex pointers replaced by "0x?", the buffering notes left out).
struct PerfparserView {
  RunResult run;
  std::uint64_t samples = 0;
  std::vector<std::string> messages;
};
PerfparserView perfparser_view(const std::string& file);

}  // namespace ringsim::real::testing
