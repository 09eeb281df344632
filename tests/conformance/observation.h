// What a scenario's run logs, on either kernel, and how two logs compare.
//
// An observation is plain data (no allocation while a scenario runs: on
// the real kernel a fresh heap page touched between steps would be a page
// fault, i.e. a sample of a page-fault event). What is normalised
// (docs/conformance.md, "What the log shows"): event ids (-> the event's
// letter), pids and tids (-> whose: this thread, child N, forked K), an
// MMAP2's address (-> one of the scenario's mappings or not), its file
// (-> the suite's executable, its device/inode/generation or build-id, or
// not), read()'s times (-> zero or not, equal or not); record times are
// only compared with each other within one ring. Raw times and addresses
// are never logged.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tests/conformance/backend.h"
#include "tests/conformance/scenario.h"

namespace ringsim::conformance {

enum class Kind : std::uint8_t {
  result,        // of the step's call: 0 or an errno
  head,          // data_head of the event's ring
  poll,          // revents & (POLLIN | POLLHUP | POLLERR)
  record,        // a record the reader read: position, type, misc, size, event, lost
  body,          // the fields of that record after its header (its body, its sample_id trailer)
  woke,          // act with poll_each: the action after which poll saw POLLIN, and data_head
  read_bytes,    // read(): the bytes it returned
  count,         // read(): the event's count
  times,         // read(): PERF_FORMAT_TOTAL_TIME_ENABLED/RUNNING, as kTime* bits
  read_id,       // read(): PERF_FORMAT_ID, as the event's letter (`writer`)
  lost_samples,  // read(): PERF_FORMAT_LOST
  data_offset,   // control page
  data_size,
  page_field,    // control page: the field `index` (PageField)
  time_order,    // 0: the records' times follow ring order; else the first record that goes back
  overrun,       // read of a read-only forward ring overwritten past the reader: the bytes it missed
};

inline constexpr std::uint8_t kUnknownEvent = 254;

// Kind::page_field's fields.
enum class PageField : std::uint8_t {
  version,
  compat_version,
  capabilities,  // the whole word: cap_bit0, cap_bit0_is_deprecated and the machine's bits
  pmc_width,     // the machine's
  index,
  size,
  data_tail,
  aux_head,
  aux_tail,
  aux_offset,
  aux_size,
};
inline constexpr std::size_t kPageFields = 11;

// Kind::times: which of the two read() times the read_format asks for,
// which are not zero, and, with both, whether they are equal (they are
// never logged raw).
inline constexpr std::uint64_t kTimeEnabled = 1, kTimeRunning = 2, kTimesEqual = 4;
inline constexpr std::uint64_t kTimeEnabledAsked = 8, kTimeRunningAsked = 16;

// Kind::body of an MMAP2: `file` bits (device, inode and generation are the
// suite's executable's), or with the build-id misc bit: kFileBuildId if its
// 20 bytes are the file's.
inline constexpr std::uint8_t kFileMajor = 1, kFileMinor = 2, kFileIno = 4, kFileGeneration = 8, kFileBuildId = 16;
// Kind::body: no PERF_SAMPLE_CPU, ID or STREAM_ID, PERIOD field.
inline constexpr std::uint32_t kNoCpu = UINT32_MAX;
inline constexpr std::uint8_t kNoLetter = 255;
inline constexpr std::uint64_t kNoPeriod = UINT64_MAX;
// The PERIOD of a frequency-mode sample above 1: what it is depends on the
// time between samples (perf_adjust_period), so the log says "adapted".
inline constexpr std::uint64_t kAdaptedPeriod = UINT64_MAX - 1;
// Kind::body of a sample without PERF_SAMPLE_READ (or read_format without
// PERF_FORMAT_LOST).
inline constexpr std::uint64_t kNoRead = UINT64_MAX;

// Kind::times' bits of what read_format asks, from the words it gives.
std::uint64_t time_bits(std::uint64_t read_format, std::uint64_t enabled, std::uint64_t running);

struct Observation {
  std::uint16_t step = 0;
  Kind kind = Kind::result;
  std::uint8_t event = 0;
  std::uint32_t index = 0;  // record: its number in the event's ring; woke: the action
  std::uint64_t value = 0;  // result, head, poll, lost_samples, data_*, time_order; record: position
  std::uint32_t type = 0;   // record
  std::uint16_t misc = 0;
  std::uint16_t size = 0;
  std::uint8_t writer = kUnknownEvent;  // record: the event whose id it carries; read_id: the id's event
  std::uint64_t lost = 0;               // record: PERF_RECORD_LOST's count; woke: data_head
  // body (Who codes, kWhoAbsent where the record has no such field): the
  // body's pid, tid, ppid, ptid, then the sample's or trailer's pid, tid.
  std::array<std::uint8_t, 6> who{kWhoAbsent, kWhoAbsent, kWhoAbsent, kWhoAbsent, kWhoAbsent, kWhoAbsent};
  std::uint32_t cpu = kNoCpu;  // body: the sample's or trailer's PERF_SAMPLE_CPU
  // body: the sample's or trailer's PERF_SAMPLE_ID and STREAM_ID as event
  // letters (kNoLetter: absent, kUnknownEvent: no event's), a sample's
  // PERIOD (kNoPeriod: absent).
  std::array<std::uint8_t, 2> ids{kNoLetter, kNoLetter};
  std::uint64_t period = kNoPeriod;
  // body of a sample with PERF_SAMPLE_READ (perf_output_read_one: the
  // words read() gives, at the sample): the count (kNoRead: absent), the
  // times as Kind::times' bits, the id as a letter, PERF_FORMAT_LOST's
  // count (kNoRead: not asked).
  std::uint64_t read_value = kNoRead;
  std::uint8_t read_times = 0;
  std::uint8_t read_id = kNoLetter;
  std::uint64_t read_lost = kNoRead;
  // body of an MMAP2: its address is one of the scenario's mappings (1) or
  // not (0); len, pgoff, prot, flags as they are; the file (kFile* bits,
  // build_id_size with the build-id misc bit).
  std::uint8_t addr = 0;
  std::uint8_t file = 0;
  std::uint8_t build_id_size = 0;
  std::uint64_t len = 0, pgoff = 0;
  std::uint32_t prot = 0, flags = 0;
  // body of a COMM: its name; of an MMAP2: its file name, "=" for the
  // suite's executable (the name both sides map), else its last 23 bytes.
  std::array<char, 24> text{};
  bool operator==(const Observation&) const = default;
};

// A run's log. Its storage is reserved and touched up front.
class Log {
 public:
  Log();
  void add(const Observation& o);
  std::span<const Observation> entries() const { return {storage_.data(), size_}; }
  void clear() { size_ = 0; }
  // Stores to every page of the storage again. A fork (a scenario's child,
  // its fork action) write-protects the parent's pages, and the first store
  // to each after it is a page fault, which a real page-fault event
  // counts: runner.cc's run() calls this before every scenario.
  void touch();

 private:
  std::vector<Observation> storage_;
  std::size_t size_ = 0;
};

// "data_head A", "poll B", "record 3 in A's ring", ...
std::string observable(const Observation& o);
// "-4080", "IN", "@4088 LOST misc=0x0 size=24 event=C lost=34", ...
std::string value(const Observation& o);

struct Comparison {
  std::size_t compared = 0;  // observables compared (the longer log's length)
  bool match = true;
  std::string first_difference;  // step, observable, both values
};
Comparison compare(const Scenario& scenario, const Log& real, const Log& simulated);

// The whole log, one observation a line, grouped by step.
std::string format(const Scenario& scenario, const Log& log);

}  // namespace ringsim::conformance
