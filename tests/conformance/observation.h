// What a scenario's run logs, on either kernel, and how two logs compare.
//
// An observation is plain data (no allocation while a scenario runs: on
// the real kernel a fresh heap page touched between steps would be a page
// fault, i.e. a sample of a page-fault event). What is normalised: event
// ids (-> the event's letter), and nothing else; times, pids and addresses
// are never logged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/conformance/scenario.h"

namespace ringsim::conformance {

enum class Kind : std::uint8_t {
  result,        // of the step's call: 0 or an errno
  head,          // data_head of the event's ring
  poll,          // revents & (POLLIN | POLLHUP | POLLERR)
  record,        // a record the reader read: position, type, misc, size, event, lost
  woke,          // act with poll_each: the action after which poll saw POLLIN, and data_head
  lost_samples,  // PERF_FORMAT_LOST
  data_offset,   // control page
  data_size,
  time_order,    // 0: the records' times follow ring order; else the first record that goes back
  overrun,       // read of a read-only forward ring overwritten past the reader: the bytes it missed
};

inline constexpr std::uint8_t kUnknownEvent = 254;

struct Observation {
  std::uint16_t step = 0;
  Kind kind = Kind::result;
  std::uint8_t event = 0;
  std::uint32_t index = 0;  // record: its number in the event's ring; woke: the action
  std::uint64_t value = 0;  // result, head, poll, lost_samples, data_*, time_order; record: position
  std::uint32_t type = 0;   // record
  std::uint16_t misc = 0;
  std::uint16_t size = 0;
  std::uint8_t writer = kUnknownEvent;  // record: the event whose id it carries
  std::uint64_t lost = 0;               // record: PERF_RECORD_LOST's count; woke: data_head
  bool operator==(const Observation&) const = default;
};

// A run's log. Its storage is reserved and touched up front.
class Log {
 public:
  Log();
  void add(const Observation& o);
  const std::vector<Observation>& entries() const { return entries_; }
  void clear() { entries_.clear(); }

 private:
  std::vector<Observation> entries_;
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
