// RapidCheck generator of simulation configurations: 1-8 CPUs, rings of
// 1-64 pages, every record-size mix, wakeup by events or watermark,
// normal and overwrite (write_backward) modes, faults, stops. Each
// component shrinks on its own (fewer CPUs, smaller rings, ...).
#pragma once

#include <rapidcheck.h>

#include "sim/config.h"

namespace ringsim::props {

inline rc::Gen<sim::RunConfig> gen_run_config(std::uint32_t records_max = 1500) {
  return rc::gen::exec([records_max] {
    sim::RunConfig c;
    c.seed = *rc::gen::inRange<std::uint64_t>(0, std::uint64_t{1} << 48);
    c.cpus = *rc::gen::inRange<std::uint32_t>(1, 9);
    c.ring_pages = 1u << *rc::gen::inRange(0, 7);
    c.mode = *rc::gen::element(core::RingMode::normal, core::RingMode::backward);
    c.size_mix = *rc::gen::element(sim::SizeMix::small, sim::SizeMix::mixed, sim::SizeMix::large, sim::SizeMix::huge);
    c.records_per_cpu = *rc::gen::inRange<std::uint32_t>(1, records_max);
    c.wakeup_events = *rc::gen::weightedOneOf<std::uint32_t>(
        {{1, rc::gen::just<std::uint32_t>(0)}, {1, rc::gen::inRange<std::uint32_t>(1, 65)}});
    c.wakeup_watermark_bytes = *rc::gen::weightedOneOf<std::uint64_t>(
        {{1, rc::gen::just<std::uint64_t>(0)},
         {1, rc::gen::map(rc::gen::inRange<std::uint64_t>(1, c.ring_bytes() / 8 + 1),
                          [](std::uint64_t v) { return 8 * v; })}});
    c.gap_ns_max = *rc::gen::inRange<std::uint64_t>(0, 50'000);
    c.burst_per_million = *rc::gen::inRange<std::uint32_t>(0, 100'000);
    c.burst_records_max = *rc::gen::inRange<std::uint32_t>(1, 257);
    c.poll_timeout_ns = *rc::gen::inRange<std::uint64_t>(1'000, 100'000'000);
    c.syscall_ns = *rc::gen::inRange<std::uint64_t>(0, 5'000);
    c.copy_ns_per_kib = *rc::gen::inRange<std::uint64_t>(0, 2'000);
    if (c.mode == core::RingMode::backward && *rc::gen::arbitrary<bool>()) {
      c.snapshot_interval_ns = *rc::gen::inRange<std::uint64_t>(1'000, 1'000'000);
    }
    if (*rc::gen::inRange(0, 8) == 0) c.stop_at_ns = *rc::gen::inRange<std::uint64_t>(1, 2'000'000);
    c.drain_chunks_max = *rc::gen::inRange<std::uint32_t>(1, 5);
    c.yield_per_million = *rc::gen::inRange<std::uint32_t>(0, 500'000);
    c.poll_eintr_per_million = *rc::gen::inRange<std::uint32_t>(0, 100'000);
    c.copy_interrupt_per_million = *rc::gen::inRange<std::uint32_t>(0, 300'000);
    c.switches_max = 2'000'000;
    // Output: memory, serial write() or AIO, over a disk with faults.
    c.output = *rc::gen::element(sim::Output::memory, sim::Output::serial, sim::Output::aio);
    c.cblocks = *rc::gen::inRange<std::uint32_t>(1, 5);
    c.disk_queue_depth = *rc::gen::inRange<std::uint32_t>(1, 17);
    c.disk_latency_ns_min = *rc::gen::inRange<std::uint64_t>(0, 50'000);
    c.disk_latency_ns_max = c.disk_latency_ns_min + *rc::gen::inRange<std::uint64_t>(0, 500'000);
    c.disk_ns_per_kib = *rc::gen::inRange<std::uint64_t>(0, 5'000);
    c.disk_stall_per_million = *rc::gen::inRange<std::uint32_t>(0, 20'000);
    c.disk_short_per_million = *rc::gen::inRange<std::uint32_t>(0, 300'000);
    c.disk_eagain_per_million = *rc::gen::inRange<std::uint32_t>(0, 300'000);
    c.disk_eagain_burst_per_million = *rc::gen::inRange<std::uint32_t>(0, 30'000);
    c.disk_eagain_burst_ns = *rc::gen::inRange<std::uint64_t>(0, 5'000'000);
    c.disk_eintr_per_million = *rc::gen::inRange<std::uint32_t>(0, 200'000);
    c.disk_suspend_eintr_per_million = *rc::gen::inRange<std::uint32_t>(0, 200'000);
    if (c.output != sim::Output::memory && *rc::gen::inRange(0, 4) == 0) {
      c.rotate_bytes = 4096 * *rc::gen::inRange<std::uint64_t>(1, 64);
    }
    if (*rc::gen::inRange(0, 3) == 0) {
      c.aux_pages = 1u << *rc::gen::inRange(0, 5);
      c.aux_overwrite = *rc::gen::inRange(0, 3) == 0;
      c.aux_watermark_bytes = *rc::gen::weightedOneOf<std::uint64_t>(
          {{1, rc::gen::just<std::uint64_t>(0)},
           {1, rc::gen::map(rc::gen::inRange<std::uint64_t>(1, c.aux_bytes() / 8 + 1),
                            [](std::uint64_t v) { return 8 * v; })}});
      c.aux_late = *rc::gen::arbitrary<bool>();
      c.aux_bursts = *rc::gen::inRange<std::uint32_t>(1, 300);
      c.aux_burst_bytes_max = 8 * *rc::gen::inRange<std::uint64_t>(1, c.aux_bytes() / 4 + 1);
      c.aux_gap_ns_max = *rc::gen::inRange<std::uint64_t>(0, 100'000);
      c.aux_transaction_ns = *rc::gen::inRange<std::uint64_t>(0, 100'000);
      c.aux_partial_per_million = *rc::gen::inRange<std::uint32_t>(0, 200'000);
      if (c.aux_overwrite && c.snapshot_interval_ns == 0 && *rc::gen::arbitrary<bool>()) {
        c.snapshot_interval_ns = *rc::gen::inRange<std::uint64_t>(1'000, 1'000'000);
      }
    }
    RC_ASSERT(sim::validate(c).empty());
    return c;
  });
}

}  // namespace ringsim::props
