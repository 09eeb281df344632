// The sizes and layouts of the records an event's attributes give
// (kernel/events/core.c: perf_prepare_sample, perf_output_sample,
// __perf_event_header_size, perf_event__id_header_size and the side-band
// outputs), as the simulated side builds them and the reader decodes them.
#pragma once

#include <linux/perf_event.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "sim/sample.h"
#include "tests/conformance/scenario.h"

namespace ringsim::conformance {

// A syscall tracepoint without arguments carries 20 bytes of raw data
// (struct syscall_trace_enter: the trace entry and the syscall number,
// padded so that u32 size + data is a multiple of 8).
inline constexpr std::uint32_t kSyscallRawBytes = 20;

// A syscall tracepoint (syscalls:sys_enter_<name>), not a software event.
bool tracepoint(Source source);

// The perf_event_attr of an event (disabled; user space only), its
// tracepoint's id (tracefs) for a tracepoint source: what both kernels are
// given.
perf_event_attr attr_of(const EventSpec& spec, std::uint64_t tracepoint_id);

// The sample_id trailer with sample_id_all (perf_event__id_header_size).
std::uint32_t id_header_bytes(const EventSpec& spec);
// The trailer as the simulated ring builds it for the LOST records it
// writes (sim/sample.h's layouts a, b and none). The suite's events use one
// of these three.
sim::RecordLayout trailer_layout(const EventSpec& spec);
// PERF_RECORD_SAMPLE of this event.
std::uint32_t sample_bytes(const EventSpec& spec);
// Its PERF_SAMPLE_READ part in u64s (0 without): perf_output_read_one's
// value, then time_enabled, time_running, id, lost as read_format asks (no
// PERF_FORMAT_GROUP: the vocabulary has no groups).
std::uint32_t read_words(const EventSpec& spec);
// Its PERF_SAMPLE_STACK_USER part (0 without): a dynamic part of the sample
// (data->dyn_size).
std::uint32_t user_stack_bytes(const EventSpec& spec);
// A side-band record of this event: COMM (`name` the new name), FORK,
// EXIT, MMAP2 (`name` the file's path), LOST.
std::uint32_t sideband_bytes(std::uint32_t type, const EventSpec& spec, std::string_view name = {});

// Where the reader finds things in a record of this event.
bool has_identifier(const EventSpec& spec);  // PERF_SAMPLE_IDENTIFIER: the id first in samples, last in trailers
std::optional<std::uint32_t> time_offset(std::uint32_t type, std::uint32_t size, const EventSpec& spec);

// The fields of a record after its header that the log shows, raw (the
// runner normalises them): side-band bodies (perf_event_comm_output,
// perf_event_task_output, perf_event_mmap_output), a sample's TID and CPU,
// the sample_id trailer's TID and CPU (perf_event__output_id_sample).
struct RecordBody {
  // COMM, MMAP2: pid, tid; FORK, EXIT: pid, ppid, tid, ptid.
  std::array<std::uint32_t, 4> pids{};
  std::uint32_t npids = 0;
  std::uint64_t time = 0;  // FORK, EXIT
  // MMAP2: maj, min, ino, ino_generation, or with the build-id misc bit
  // build_id_size and the build-id (the same 24 bytes).
  std::uint64_t addr = 0, len = 0, pgoff = 0;
  std::uint32_t maj = 0, min = 0;
  std::uint64_t ino = 0, generation = 0;
  std::uint8_t build_id_size = 0;
  std::array<std::uint8_t, 20> build_id{};
  // Building: the build-id body (perf_event_mmap_output's use_build_id: the
  // event asked and the file has one), whatever misc says (fidelity row 20).
  bool use_build_id = false;
  std::uint32_t prot = 0, flags = 0;
  // COMM: the name; MMAP2: the file name (NUL-terminated, cut at 255 bytes).
  std::array<char, 256> name{};
  // The sample's PERF_SAMPLE_TID and CPU, or the trailer's.
  bool has_tid = false;
  std::uint32_t id_pid = 0, id_tid = 0;
  bool has_cpu = false;
  std::uint32_t cpu = 0;
  // The sample's or trailer's PERF_SAMPLE_ID and STREAM_ID (read only),
  // and a sample's PERIOD.
  bool has_id = false, has_stream_id = false, has_period = false;
  std::uint64_t id = 0, stream_id = 0, period = 0;
  // A sample's PERF_SAMPLE_READ, read_words() u64s in read()'s order.
  bool has_read = false;
  std::array<std::uint64_t, 5> read{};
};

// A record of `type` as the kernel lays it out for this event: header, the
// body's fields, ids, TID, CPU, times; the rest zero. `body.name` is the
// COMM's or MMAP2's string.
void build_record(std::span<std::byte> out, std::uint32_t type, std::uint16_t misc, const EventSpec& spec,
                  std::uint64_t id, std::uint64_t time_ns, const RecordBody& body);

// The fields of the record at `pos` of a ring's `data` (a power of two,
// read with wrap-around): its body by type and misc, and, when `spec` (its
// writer's) is known, the sample's or trailer's TID and CPU.
RecordBody read_body(std::span<const std::byte> data, std::uint64_t pos, std::uint32_t type, std::uint16_t misc,
                     std::uint16_t size, const EventSpec* spec);

}  // namespace ringsim::conformance
