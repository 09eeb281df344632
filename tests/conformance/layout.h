// The sizes and layouts of the records an event's attributes give
// (kernel/events/core.c: perf_prepare_sample, perf_output_sample,
// __perf_event_header_size, perf_event__id_header_size and the side-band
// outputs), as the simulated side builds them and the reader decodes them.
#pragma once

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

// The sample_id trailer with sample_id_all (perf_event__id_header_size).
std::uint32_t id_header_bytes(const EventSpec& spec);
// The trailer as the simulated ring builds it for the LOST records it
// writes (sim/sample.h's layouts a, b and none). The suite's events use one
// of these three.
sim::RecordLayout trailer_layout(const EventSpec& spec);
// PERF_RECORD_SAMPLE of this event.
std::uint32_t sample_bytes(const EventSpec& spec);
// Its PERF_SAMPLE_STACK_USER part (0 without): a dynamic part of the sample
// (data->dyn_size).
std::uint32_t user_stack_bytes(const EventSpec& spec);
// A side-band record of this event: COMM (`name` the new name), FORK,
// EXIT, MMAP2 (`name` the file's path), LOST.
std::uint32_t sideband_bytes(std::uint32_t type, const EventSpec& spec, std::string_view name = {});

// Where the reader finds things in a record of this event.
bool has_identifier(const EventSpec& spec);  // PERF_SAMPLE_IDENTIFIER: the id first in samples, last in trailers
std::optional<std::uint32_t> time_offset(std::uint32_t type, std::uint32_t size, const EventSpec& spec);

// A record of `type` as the kernel lays it out for this event (the fields
// the suite observes: header, ids, times; the rest zero).
void build_record(std::span<std::byte> out, std::uint32_t type, std::uint16_t misc, const EventSpec& spec,
                  std::uint64_t id, std::uint64_t time_ns);

}  // namespace ringsim::conformance
