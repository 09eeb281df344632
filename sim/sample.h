// The records the simulated kernel writes, laid out exactly as the real
// kernel lays them out for the events it simulates. Two layouts of
// sample_type, both with sample_id_all = 1 and PERF_SAMPLE_IDENTIFIER first
// (as perf sets it when several events share a ring, so a reader finds a
// record's event by its identifier), and a third without the trailer:
//
//   layout a: IDENTIFIER | TID | TIME | CPU | RAW
//     SAMPLE { header; u64 identifier; u32 pid, tid; u64 time;
//              u32 cpu, res; u32 raw_size; u8 raw[raw_size] }
//     sample_id trailer { u32 pid, tid; u64 time; u32 cpu, res; u64 identifier }  32 bytes
//   layout b: IDENTIFIER | TID | TIME | RAW
//     SAMPLE { header; u64 identifier; u32 pid, tid; u64 time;
//              u32 raw_size; u8 raw[raw_size] }
//     sample_id trailer { u32 pid, tid; u64 time; u64 identifier }  24 bytes
//   layout none: layout b's samples with sample_id_all = 0 (or a
//     sample_type with none of the sample_id fields): the other records
//     carry no trailer (a LOST record is 24 bytes).
//
// Records of the other types carry the writing event's trailer:
//   LOST          { header; u64 id; u64 lost; trailer }          24 + trailer
//   COMM          { header; u32 pid, tid; char comm[16]; trailer }   24 + trailer
//   FORK, EXIT    { header; u32 pid, ppid, tid, ptid; u64 time; trailer }  32 + trailer
//   SWITCH        { header; trailer }                             8 + trailer
//   THROTTLE, UNTHROTTLE { header; u64 time, id, stream_id; trailer }  32 + trailer
//   MMAP2         { header; u32 pid, tid; u64 addr, len, pgoff; u32 maj, min;
//                   u64 ino, ino_generation; u32 prot, flags; char name[16]; trailer }
//                                                                 88 + trailer
// A sample's raw payload starts with its sequence number on its event and
// is filled from it: every record is distinct, so a duplicate, a swap or a
// torn copy shows as a byte difference.
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace ringsim::sim {

// `attr`: the trailer of any sample_type (with sample_id_all), for the
// simulated kernel behind the system-call surface (sim/interpose/), whose
// records are built from the attribute the consumer asked for
// (sim/attr_records.h); the identity carries that sample_type.
enum class RecordLayout : std::uint8_t { a, b, none, attr };

// `period`: PERF_SAMPLE_PERIOD too (after CPU, before RAW: perf_output_sample's
// order), for a sampling event whose attribute asks for it.
inline constexpr std::uint64_t sample_type_of(RecordLayout layout, bool period = false) {
  const std::uint64_t common = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW |
                               (period ? PERF_SAMPLE_PERIOD : 0);
  return layout == RecordLayout::a ? common | PERF_SAMPLE_CPU : common;
}
// The sample_id trailer's size (the kernel's id_header_size).
inline constexpr std::uint32_t trailer_bytes(RecordLayout layout) {
  return layout == RecordLayout::a ? 32 : layout == RecordLayout::b ? 24 : 0;
}
// The fixed part of a sample before its raw payload (raw_size included).
inline constexpr std::uint32_t sample_head_bytes(RecordLayout layout, bool period = false) {
  return (layout == RecordLayout::a ? 44 : 36) + (period ? 8 : 0);
}
// Where a sample's PERIOD field is (with `period`): after CPU (a) or TIME (b).
inline constexpr std::uint32_t sample_period_offset(RecordLayout layout) { return layout == RecordLayout::a ? 40 : 32; }
inline constexpr std::uint32_t lost_bytes(RecordLayout layout) { return 24 + trailer_bytes(layout); }

// The first layout's sample_type, and the sizes the campaign's first event
// has always used.
inline constexpr std::uint64_t kSampleType = sample_type_of(RecordLayout::a);
inline constexpr std::uint32_t kSampleBytesMin = 48;
inline constexpr std::uint32_t kSampleBytesMax = 65528;  // u16 size, 8-aligned
inline constexpr std::uint32_t kLostBytes = lost_bytes(RecordLayout::a);
// Offset of the cpu field in a layout-a sample and in its LOST record.
inline constexpr std::uint32_t kSampleCpuOffset = 32;
inline constexpr std::uint32_t kLostCpuOffset = 40;

struct EventIdentity {
  std::uint64_t id = 0;
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::uint32_t cpu = 0;
  RecordLayout layout = RecordLayout::a;
  // Layouts a and b: the samples carry PERF_SAMPLE_PERIOD.
  bool period_field = false;
  // RecordLayout::attr: the event's attr.sample_type and sample_id_all.
  std::uint64_t sample_type = 0;
  bool sample_id_all = false;
};

// The fields of the sample_id trailer (perf_event__id_header_size).
inline constexpr std::uint64_t kSampleIdFields = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
                                                 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
// The trailer and LOST record of an event, whatever its layout.
inline constexpr std::uint32_t trailer_bytes(const EventIdentity& e) {
  if (e.layout != RecordLayout::attr) return trailer_bytes(e.layout);
  return e.sample_id_all ? 8 * static_cast<std::uint32_t>(__builtin_popcountll(e.sample_type & kSampleIdFields)) : 0;
}
inline constexpr std::uint32_t lost_bytes(const EventIdentity& e) { return 24 + trailer_bytes(e); }
// Writes the sample_id trailer at `at` (trailer_bytes(e) bytes), in
// perf_event__output_id_sample's order.
void put_sample_id(std::byte* at, const EventIdentity& e, std::uint64_t time_ns);

// The smallest sample of a layout (a raw payload of 4 bytes).
inline constexpr std::uint32_t sample_bytes_min(RecordLayout layout, bool period = false) {
  return (layout == RecordLayout::a ? 48 : 40) + (period ? 8 : 0);
}

// Writes a sample of out.size() bytes (sample_bytes_min..kSampleBytesMax,
// a multiple of 8) in the event's layout; `period` in its PERIOD field
// (event.period_field).
void build_sample(std::span<std::byte> out, const EventIdentity& event, std::uint64_t time_ns,
                  std::uint64_t sequence, std::uint64_t payload_seed, std::uint64_t period = 0);
// The same in two steps: everything but the raw payload's words after the
// sequence number, then those (the simulated kernel fills them only for a
// sample that is written, not for one dropped).
void build_sample_head(std::span<std::byte> out, const EventIdentity& event, std::uint64_t time_ns,
                       std::uint64_t sequence, std::uint64_t period);
void fill_sample_payload(std::span<std::byte> out, const EventIdentity& event, std::uint64_t sequence,
                         std::uint64_t payload_seed);

// Writes a PERF_RECORD_LOST of lost_bytes(event) bytes.
void build_lost(std::span<std::byte> out, const EventIdentity& event, std::uint64_t time_ns, std::uint64_t lost);

// Side-band records (PERF_RECORD_COMM, FORK, EXIT, SWITCH, THROTTLE,
// UNTHROTTLE, MMAP2) of the event, with misc as the kernel sets it.
std::uint32_t sideband_bytes(std::uint32_t type, RecordLayout layout);
// foreign_build_id_misc: an MMAP2's misc also says build-id, over its
// device/inode body (another session's build-id event: fidelity row 20).
void build_sideband(std::span<std::byte> out, std::uint32_t type, const EventIdentity& event, std::uint64_t time_ns,
                    std::uint64_t sequence, bool foreign_build_id_misc = false);

// The device of the simulated kernel's MMAP2 bodies (/dev/sda1: read as a
// build-id, 8 bytes of min and inode).
inline constexpr std::uint32_t kSimMmapMajor = 8;
inline constexpr std::uint32_t kSimMmapMinor = 1;

}  // namespace ringsim::sim
