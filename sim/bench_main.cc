// bazel run //sim:bench -- [--reps N]
//
// A benchmark, not a test: how fast the simulator simulates. For a few fixed
// workloads it reports the median over repetitions of simulated records
// per second, simulated bytes per second and fiber switches per delivered
// record, and, measured in the same process, the bandwidth of memcpy over
// ring-sized buffers, with the ratio of simulated bytes/s to it.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <memory>
#include <vector>

#include "core/verify.h"
#include "sim/commands.h"
#include "sim/decisions.h"
#include "sim/run.h"

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Workload {
  const char* name;
  ringsim::sim::RunConfig config;
};

std::vector<Workload> workloads(std::uint32_t producer_batch) {
  using namespace ringsim::sim;
  RunConfig base;
  base.producer_batch = producer_batch;
  base.seed = 42;
  base.cpus = 4;
  base.ring_pages = 16;
  base.records_per_cpu = 20'000;
  base.gap_ns_max = 4'000;
  base.burst_per_million = 10'000;
  base.burst_records_max = 32;
  base.yield_per_million = 50'000;
  base.poll_eintr_per_million = 1'000;
  base.copy_interrupt_per_million = 10'000;
  base.copy_ns_per_kib = 100;
  std::vector<Workload> out;
  RunConfig small = base;
  small.size_mix = SizeMix::small;
  out.push_back({"normal, small records", small});
  RunConfig mixed = base;
  mixed.size_mix = SizeMix::mixed;
  out.push_back({"normal, mixed sizes", mixed});
  RunConfig backward = base;
  backward.mode = ringsim::core::RingMode::backward;
  backward.size_mix = SizeMix::small;
  backward.snapshot_interval_ns = 200'000;
  out.push_back({"overwrite, small records", backward});
  RunConfig aio = base;
  aio.size_mix = SizeMix::small;
  set_output(aio, Output::aio);
  aio.cblocks = 2;
  out.push_back({"normal, AIO writer x2", aio});
  RunConfig aux = base;
  aux.size_mix = SizeMix::small;
  aux.aux_pages = 16;
  aux.aux_bursts = 2'000;
  aux.aux_burst_bytes_max = 8'192;
  aux.aux_gap_ns_max = 20'000;
  out.push_back({"normal + AUX areas", aux});
  // The finest interleaving (a sleep before each record: every run before
  // replay format version 5), for comparison.
  RunConfig fine = small;
  fine.producer_batch = 1;
  out.push_back({"normal, small, batch 1", fine});
  return out;
}

// Bytes per second of memcpy from a ring-sized buffer, as the reader copies:
// the best over a few destination offsets from page-aligned buffers. Two
// heap vectors allocated one after the other can sit 8..24 bytes apart
// modulo 4096, where glibc's memcpy (rep movsb) runs about 17x slower on
// AMD EPYC machines (glibc 2.36): a baseline that low makes
// every "vs memcpy" ratio look 17x better than it is.
double memcpy_bandwidth(std::size_t buffer_bytes, int reps) {
  constexpr std::size_t kPage = 4096;
  constexpr std::size_t kOffsets[] = {0, 64, 512, 2048};
  const auto aligned = [&](std::size_t bytes) {
    return std::unique_ptr<std::byte, void (*)(void*)>(
        static_cast<std::byte*>(std::aligned_alloc(kPage, (bytes + 2 * kPage) / kPage * kPage)), std::free);
  };
  const auto source = aligned(buffer_bytes);
  const auto target = aligned(buffer_bytes + kPage);
  VERIFY(source != nullptr && target != nullptr);
  std::memset(source.get(), 1, buffer_bytes);
  std::memset(target.get(), 0, buffer_bytes + kPage);
  double best = 0;
  for (const std::size_t offset : kOffsets) {
    std::byte* const to = target.get() + offset;
    std::vector<double> rates;
    for (int r = 0; r < reps; r++) {
      const int copies = 2000;
      const auto start = Clock::now();
      for (int i = 0; i < copies; i++) {
        source.get()[static_cast<std::size_t>(i) % buffer_bytes] = std::byte(i);
        std::memcpy(to, source.get(), buffer_bytes);
        asm volatile("" : : "r"(to) : "memory");
      }
      const double s = std::chrono::duration<double>(Clock::now() - start).count();
      rates.push_back(static_cast<double>(buffer_bytes) * copies / s);
    }
    best = std::max(best, median(rates));
  }
  return best;
}

// Nanoseconds per DecisionSource::draw in random mode (the bench's and the
// campaign's), over bounds like the simulation's (per-million fault odds,
// gaps, record sizes, coin flips): the cost every decision of a run pays.
double ns_per_draw(int reps) {
  constexpr std::uint64_t kBounds[] = {1'000'000, 4'001, 33, 2};
  constexpr int kDraws = 2'000'000;
  std::vector<double> ns;
  for (int r = 0; r < reps; r++) {
    ringsim::sim::DecisionSource d(42 + static_cast<std::uint64_t>(r), false);
    std::uint64_t sum = 0;
    const auto start = Clock::now();
    for (int i = 0; i < kDraws; i++) sum += d.draw(kBounds[i % 4]);
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    asm volatile("" : : "r"(sum) : "memory");
    ns.push_back(s * 1e9 / kDraws);
  }
  return median(ns);
}

// Issue 20 asks for 5% of memcpy's bandwidth: what that leaves a record of
// this workload's mean size, and what its draws alone take of it.
struct Budget {
  const char* name;
  double bytes_per_record;
  double draws_per_record;
  double ns_per_record;  // measured: wall time per record written
};

void print_budgets(const std::vector<Budget>& budgets, double memcpy_bps, double draw_ns) {
  std::cout << "\nPer record, against issue 20's goal of 5% of memcpy (" << std::setprecision(2) << memcpy_bps * 0.05 / 1e9
            << " GB/s); one draw (DecisionSource::draw, random mode) takes " << draw_ns << " ns (measured in this run):\n";
  std::cout << std::left << std::setw(28) << "workload" << std::right << std::setw(12) << "bytes/rec" << std::setw(12)
            << "draws/rec" << std::setw(14) << "ns/rec now" << std::setw(16) << "ns/rec at 5%" << std::setw(18)
            << "draws ns/rec" << "\n";
  for (const Budget& b : budgets) {
    const double allowed = b.bytes_per_record / (memcpy_bps * 0.05) * 1e9;
    std::cout << std::left << std::setw(28) << b.name << std::right << std::setprecision(1) << std::setw(12)
              << b.bytes_per_record << std::setprecision(2) << std::setw(12) << b.draws_per_record << std::setprecision(1)
              << std::setw(14) << b.ns_per_record << std::setw(16) << allowed << std::setw(18)
              << b.draws_per_record * draw_ns << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ringsim::sim;
  BenchOptions options;
  if (const int rc = parse_bench_command_line(argc, argv, options); rc >= 0) return rc;
  const auto [reps, producer_batch] = options;

  const double memcpy_bps = memcpy_bandwidth(16 * 4096, reps);
  const double draw_ns = ns_per_draw(reps);
  std::cout << std::fixed;
  std::cout << "memcpy bandwidth (64 KiB page-aligned buffers, the best of 4 offsets' medians of " << reps << "): " << std::setprecision(2)
            << memcpy_bps / 1e9 << " GB/s\n\n";
  std::cout << std::left << std::setw(28) << "workload" << std::right << std::setw(14) << "records/s" << std::setw(12)
            << "MB/s" << std::setw(14) << "switches/rec" << std::setw(12) << "picks/rec" << std::setw(14) << "vs memcpy" << std::setw(12)
            << "wall ms" << "\n";
  std::vector<Budget> budgets;
  for (const Workload& w : workloads(producer_batch)) {
    std::vector<double> records_per_s, bytes_per_s, wall_ms;
    double switches_per_record = 0, picks_per_record = 0, bytes_per_record = 0, draws_per_record = 0;
    for (int r = 0; r < reps; r++) {
      const auto start = Clock::now();
      const RunResult result = run_simulation(w.config);
      const double s = std::chrono::duration<double>(Clock::now() - start).count();
      if (!result.ok()) {
        std::cerr << "bench: workload '" << w.name << "' violated " << result.first_property() << ": "
                  << result.violations.front().detail << "\n";
        return kExitCorrectness;
      }
      records_per_s.push_back(static_cast<double>(result.oracle.records_written) / s);
      bytes_per_s.push_back(static_cast<double>(result.bytes_written) / s);
      wall_ms.push_back(s * 1000);
      const double delivered = static_cast<double>(std::max<std::uint64_t>(1, result.oracle.records_delivered));
      switches_per_record = static_cast<double>(result.context_switches) / delivered;
      picks_per_record = static_cast<double>(result.switches) / delivered;
      const double written = static_cast<double>(std::max<std::uint64_t>(1, result.oracle.records_written));
      bytes_per_record = static_cast<double>(result.bytes_written) / written;
      draws_per_record = static_cast<double>(result.decisions) / written;
    }
    budgets.push_back({w.name, bytes_per_record, draws_per_record, 1e9 / median(records_per_s)});
    const double bps = median(bytes_per_s);
    std::cout << std::left << std::setw(28) << w.name << std::right << std::setprecision(0) << std::setw(14)
              << median(records_per_s) << std::setprecision(1) << std::setw(12) << bps / 1e6 << std::setprecision(2)
              << std::setw(14) << switches_per_record << std::setw(12) << picks_per_record << std::setprecision(4) << std::setw(14) << bps / memcpy_bps
              << std::setprecision(1) << std::setw(12) << median(wall_ms) << "\n";
  }
  std::cout << "\nrecords/s and MB/s: records (bytes) the simulated kernel wrote, per wall second; switches/rec:\n"
               "switches between fibers per record delivered; picks/rec: the scheduler's picks of the next fiber\n"
               "(the switch budget's unit, Boost.Fiber's dispatcher included: sim/scheduler.h) per record delivered\n"
               "(both the same every repetition: the run is deterministic);\n"
               "vs memcpy: simulated bytes/s divided by memcpy bandwidth measured above.\n";
  print_budgets(budgets, memcpy_bps, draw_ns);
  std::cout << "\nbytes/rec and draws/rec: the kernel's bytes and the run's decisions per record written (the same\n"
               "every repetition); ns/rec now: 1/records/s above; ns/rec at 5%: the time a record of that size may take\n"
               "for the workload to run at 5% of memcpy; draws ns/rec: its draws alone at the cost measured above.\n";
  return kExitOk;
}
