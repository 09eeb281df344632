#include "model/counters.h"

#include <cstdint>
#include <string>

namespace ringsim::model {
namespace {

// What the logged steps of one ring say the kernel wrote and dropped.
struct StepCounts {
  std::uint64_t full = 0;
  std::uint64_t paused = 0;
  std::uint64_t too_big = 0;
  std::uint64_t lost_reported = 0;  // the LOST counts of the written begins
  std::uint64_t records = 0;        // each written begin: its record, and its LOST record if it carried one
  std::uint64_t bytes = 0;

  std::uint64_t dropped() const { return full + paused + too_big; }
};

StepCounts count_steps(const std::vector<RingOp>& ops) {
  StepCounts c;
  for (const RingOp& op : ops) {
    if (op.kind != RingOp::Kind::begin) continue;
    switch (op.result) {
      case RingOp::written:
        c.records += op.lost > 0 ? 2 : 1;
        c.bytes += op.size + (op.lost > 0 ? op.lost_size : 0);
        c.lost_reported += op.lost;
        break;
      case RingOp::full: c.full++; break;
      case RingOp::paused: c.paused++; break;
      case RingOp::too_big: c.too_big++; break;
      default: break;  // an unknown result: kernel_rules reports it
    }
  }
  return c;
}

void compare(std::vector<Violation>& out, std::size_t cpu, const char* counter, std::uint64_t kernel,
             std::uint64_t steps) {
  if (kernel == steps) return;
  out.push_back(Violation{kCountersAgree, "cpu " + std::to_string(cpu) + ": kernel " + counter + " is " +
                                              std::to_string(kernel) + ", its logged steps give " +
                                              std::to_string(steps)});
}

}  // namespace

std::vector<Violation> check_kernel_counters(const KernelLog& log) {
  std::vector<Violation> out;
  for (std::size_t cpu = 0; cpu < log.cpus.size(); cpu++) {
    const CpuLog& c = log.cpus[cpu];
    const StepCounts s = count_steps(c.ops);
    compare(out, cpu, "dropped_full", c.dropped_full, s.full);
    compare(out, cpu, "dropped_paused", c.dropped_paused, s.paused);
    compare(out, cpu, "dropped_too_big", c.dropped_too_big, s.too_big);
    compare(out, cpu, "lost_reported", c.lost_reported, s.lost_reported);
    // The drops no LOST record carried: all the steps dropped, less what
    // the written ones reported (pending at the end, or let go when the
    // ring's events exited).
    compare(out, cpu, "dropped_unreported", c.dropped_unreported,
            s.dropped() >= s.lost_reported ? s.dropped() - s.lost_reported : 0);
    compare(out, cpu, "records written", c.written.size(), s.records);
    compare(out, cpu, "bytes written", c.bytes.size(), s.bytes);
  }
  return out;
}

}  // namespace ringsim::model
