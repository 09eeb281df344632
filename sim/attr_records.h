// Records built from the perf_event_attr a consumer passed to
// perf_event_open, laid out as kernel/events/core.c lays them out
// (perf_prepare_sample / perf_output_sample for samples,
// perf_event_comm_output, perf_event_task_output, perf_event_mmap_output
// for side-band, each followed by the sample_id trailer of
// perf_event__output_id_sample when attr.sample_id_all is set). The
// simulated kernel behind the system-call surface (sim/interpose/) writes
// them, so any consumer parses them as it parses Linux's.
//
// Sample fields supported: IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID,
// CPU, PERIOD, CALLCHAIN (a user context marker and the IP), RAW (a
// tracepoint's record of SampleFields::raw_size bytes, zeros; other events
// the empty one, 4 bytes of size and 4 of zero, as perf_output_sample),
// REGS_USER and REGS_INTR (abi 0: no registers, as for a kernel thread),
// STACK_USER (the dump of attr.sample_stack_user bytes, zeros, SampleFields::
// stack_user), WEIGHT, DATA_SRC, TRANSACTION, PHYS_ADDR, DATA_PAGE_SIZE,
// CODE_PAGE_SIZE. unsupported_sample_type() names the others (READ,
// BRANCH_STACK, AUX): an open asking for them is refused by the simulated
// kernel, never answered with records of another shape.
#pragma once

#include <linux/perf_event.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/sample.h"

namespace ringsim::sim {

// The bits of sample_type the simulated kernel cannot write, named ("" if
// none).
std::string unsupported_sample_type(std::uint64_t sample_type);

// What one sample says.
struct SampleFields {
  std::uint64_t ip = 0;
  std::uint64_t addr = 0;
  std::uint64_t period = 1;
  std::uint64_t time_ns = 0;
  // RAW: the tracepoint's raw record size (0: not a tracepoint, the empty
  // raw part).
  std::uint32_t raw_size = 0;
  // STACK_USER: the dump's size (attr.sample_stack_user; 0: none dumped, no
  // dyn_size follows).
  std::uint32_t stack_user = 0;
  // READ: the counters' values in the writer's read_format (perf_output_
  // read_one or _group: what read(2) of it gives at the sample).
  std::span<const std::uint64_t> read;
};

// The identity (pid, tid, cpu, id) of the writing event with
// RecordLayout::attr, its sample_type and sample_id_all.
EventIdentity attr_identity(const perf_event_attr& attr, std::uint64_t id, std::uint32_t pid, std::uint32_t tid,
                            std::uint32_t cpu);

// Appends a PERF_RECORD_SAMPLE to `out` (cleared first).
void build_attr_sample(std::vector<std::byte>& out, const EventIdentity& e, std::uint16_t misc,
                       const SampleFields& fields);

// Side-band records, `e` naming the task the record is about (its pid and
// tid; the trailer's time is time_ns).
void build_attr_comm(std::vector<std::byte>& out, const EventIdentity& e, std::string_view comm, bool exec,
                     std::uint64_t time_ns);
// PERF_RECORD_FORK or PERF_RECORD_EXIT about the task `pid`/`tid` and its
// parent `ppid`/`ptid`; the trailer is `e`'s, the task that writes it
// (FORK: the parent, in fork; EXIT: the task itself).
void build_attr_task(std::vector<std::byte>& out, std::uint32_t type, const EventIdentity& e, std::uint32_t pid,
                     std::uint32_t tid, std::uint32_t ppid, std::uint32_t ptid, std::uint64_t time_ns);
struct MmapFields {
  std::uint64_t addr = 0;
  std::uint64_t len = 0;
  std::uint64_t pgoff = 0;
  std::uint32_t maj = 0;
  std::uint32_t min = 0;
  std::uint64_t ino = 0;
  std::uint64_t generation = 0;
  // perf_event_mmap_output: the build-id body (size, then the id in place
  // of the device, inode and generation) for an event with attr.build_id
  // when the file has one; `misc_build_id` the misc bit (which the kernel
  // leaves set for the events after one that wrote the body).
  bool use_build_id = false;
  bool misc_build_id = false;
  std::uint8_t build_id_size = 0;
  std::array<std::uint8_t, 20> build_id{};
  std::uint32_t prot = 0;
  std::uint32_t flags = 0;
  std::string_view filename;
};
// PERF_RECORD_MMAP2 (mmap2 set) or PERF_RECORD_MMAP.
void build_attr_mmap(std::vector<std::byte>& out, bool mmap2, const EventIdentity& e, const MmapFields& m,
                     std::uint64_t time_ns);
// PERF_RECORD_AUX {aux_offset, aux_size, flags} (perf_event_aux_event),
// misc 0, with the trailer of `e` (the task the PMU ran for).
void build_attr_aux(std::vector<std::byte>& out, const EventIdentity& e, std::uint64_t offset, std::uint64_t size,
                    std::uint64_t flags, std::uint64_t time_ns);

}  // namespace ringsim::sim
