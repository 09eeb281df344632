// bazel run //sim:compare -- [--seed N] [--runs N] [run options]
//
// The same seeds, workloads and disk model, written with serial write()
// and with AIO at 1, 2 and 4 control blocks, and staged (a reading and a
// writing fiber over a staging buffer of 16 sink buffers, core/staging.h)
// with serial write() and AIO 1, side by side: records the
// kernel dropped (and reported with LOST records), the fraction of samples
// lost, and the data-loss metric of the perf AIO series (lost time /
// elapsed time). Each seed's workload (records, sizes, gaps) is a function
// of the seed alone, so every mode sees exactly the same records; only the
// consumer's output path differs. Hard disk errors, stops and overwrite
// mode are off unless options ask for them: a run cut short measures
// nothing. Every run is also checked against every property.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <iostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/cli/usage.h"
#include "sim/commands.h"
#include "sim/params.h"
#include "sim/run.h"

namespace {

using namespace ringsim::sim;

struct Mode {
  const char* name;
  Output output;
  std::uint32_t cblocks;
  std::uint32_t staging_buffers = 0;  // staging_bytes in sink buffers; 0: not staged
};

struct Column {
  std::uint64_t runs = 0;
  std::uint64_t failed = 0;
  std::uint64_t samples = 0;
  std::uint64_t dropped = 0;
  std::uint64_t runs_with_loss = 0;
  std::uint64_t lost_time_ns = 0;
  std::uint64_t elapsed_ns = 0;
  std::uint64_t virtual_ns = 0;
  std::vector<double> lost_fractions;
  double wall_s = 0;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// The configuration every column starts from: the seed's, in normal mode,
// without stops or hard errors (a run cut short measures nothing), with the
// fixed options.
RunConfig base_config(std::uint64_t seed, const Overrides& overrides) {
  RunConfig base = random_config(seed);
  base.mode = ringsim::core::RingMode::normal;
  base.readers_per_cpu = 0;  // the columns differ in their writer, not in their readers
  base.scope = Scope::task;
  base.endless = 0;
  base.snapshot_interval_ns = 0;
  base.stop_at_ns = 0;
  base.disk_eio_per_million = 0;
  base.disk_capacity_bytes = 0;
  base.disk_open_fails = 0;
  overrides.apply(base);
  base.seed = seed;
  return base;
}

// Runs one column's configuration and adds it to the column. Returns false
// if a property failed (printed with its reproduction).
bool run_column(const RunConfig& config, const Mode& mode, Column& c) {
  const auto start = std::chrono::steady_clock::now();
  const RunResult r = run_simulation(config);
  c.wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  c.runs++;
  std::uint64_t dropped = 0;
  for (const auto& cpu : r.log.cpus) dropped += cpu.dropped();
  c.samples += r.samples_attempted;
  c.dropped += dropped;
  c.runs_with_loss += dropped > 0;
  c.lost_time_ns += r.loss.lost_time_ns;
  c.elapsed_ns += r.loss.last_time_ns - r.loss.first_time_ns;
  c.virtual_ns += r.virtual_ns;
  c.lost_fractions.push_back(r.samples_attempted ? static_cast<double>(dropped) / r.samples_attempted : 0.0);
  if (r.ok()) return true;
  c.failed++;
  std::cerr << "FAIL seed=" << config.seed << " (" << mode.name << ") property=" << r.first_property() << ": "
            << r.violations.front().detail << "\n  reproduce: " << reproduce_command(config) << "\n";
  return false;
}

std::string percent(double v) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(2) << 100 * v << "%";
  return s.str();
}

void print_table(const std::vector<Mode>& modes, const std::vector<Column>& columns) {
  const Column& serial = columns[0];
  std::cout << std::left << std::setw(34) << "" << std::right;
  for (const Mode& m : modes) std::cout << std::setw(17) << m.name;
  std::cout << "\n";
  auto row = [&](const char* label, auto value) {
    std::cout << std::left << std::setw(34) << label << std::right;
    for (const Column& c : columns) std::cout << std::setw(17) << value(c);
    std::cout << "\n";
  };
  auto fixed = [](double v, int digits, const char* unit) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(digits) << v << unit;
    return s.str();
  };
  row("runs (failed)", [](const Column& c) { return std::to_string(c.runs) + " (" + std::to_string(c.failed) + ")"; });
  row("samples generated", [](const Column& c) { return std::to_string(c.samples); });
  row("records lost (kernel drops)", [](const Column& c) { return std::to_string(c.dropped); });
  row("  vs serial", [&](const Column& c) {
    return fixed(serial.dropped ? static_cast<double>(c.dropped) / serial.dropped : 0.0, 3, "");
  });
  row("lost / generated", [&](const Column& c) { return percent(c.samples ? static_cast<double>(c.dropped) / c.samples : 0); });
  row("median per-run lost fraction", [&](const Column& c) { return percent(median(c.lost_fractions)); });
  row("runs that lost records", [](const Column& c) { return std::to_string(c.runs_with_loss); });
  row("data-loss metric (lost/elapsed)", [&](const Column& c) {
    return percent(c.elapsed_ns ? static_cast<double>(c.lost_time_ns) / c.elapsed_ns : 0);
  });
  row("virtual time simulated", [&](const Column& c) { return fixed(c.virtual_ns / 1e9, 3, " s"); });
  row("wall time", [&](const Column& c) { return fixed(c.wall_s, 2, " s"); });
}

// Returns false if the file cannot be written.
bool write_json(const std::string& path, const std::vector<Mode>& modes, const std::vector<Column>& columns) {
  nlohmann::json j = nlohmann::json::array();
  for (std::size_t m = 0; m < modes.size(); m++) {
    const Column& c = columns[m];
    j.push_back({{"mode", modes[m].name},
                 {"runs", c.runs},
                 {"failed", c.failed},
                 {"samples", c.samples},
                 {"records_lost", c.dropped},
                 {"runs_with_loss", c.runs_with_loss},
                 {"data_loss_metric", c.elapsed_ns ? static_cast<double>(c.lost_time_ns) / c.elapsed_ns : 0.0},
                 {"median_lost_fraction", median(c.lost_fractions)}});
  }
  std::ofstream out(path);
  out << j.dump(2) << "\n";
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  CompareOptions options;
  if (const int rc = parse_compare_command_line(argc, argv, options); rc >= 0) return rc;
  const auto& [first_seed, runs, json_path, overrides] = options;

  const std::vector<Mode> modes = {{"serial write()", Output::serial, 1},
                                   {"AIO, 1 cblock", Output::aio, 1},
                                   {"AIO, 2 cblocks", Output::aio, 2},
                                   {"AIO, 4 cblocks", Output::aio, 4},
                                   {"staged, serial", Output::serial, 1, 16},
                                   {"staged, AIO 1", Output::aio, 1, 16}};
  std::vector<Column> columns(modes.size());
  int exit_code = kExitOk;
  for (std::uint64_t i = 0; i < runs; i++) {
    const RunConfig base = base_config(first_seed + i, overrides);
    for (std::size_t m = 0; m < modes.size(); m++) {
      RunConfig config = base;
      set_output(config, modes[m].output);
      config.cblocks = modes[m].cblocks;
      config.staging_bytes = (modes[m].staging_buffers * config.chunk_bytes_max() + 1023) / 1024 * 1024;
      if (const std::string e = validate(config); !e.empty()) {
        return ringsim::core::usage_error("compare", "seed " + std::to_string(config.seed) + ": " + e);
      }
      if (!run_column(config, modes[m], columns[m])) exit_code = kExitCorrectness;
    }
  }
  std::cout << "ringsim compare: seeds " << first_seed << ".." << first_seed + runs - 1
            << ", the same workloads and disk model in every column"
            << (overrides.empty() ? "" : ", fixed: " + overrides.as_args()) << "\n\n";
  print_table(modes, columns);
  if (!json_path.empty() && !write_json(json_path, modes, columns)) {
    std::cerr << "compare: cannot write " << json_path << "\n";
    return kExitIo;
  }
  return exit_code;
}
