// The reading thread's scheduling: SCHED_FIFO, a nice value, or the
// normal scheduler, for the calling thread only (Linux schedules threads).
//
// --reader-priority TEXT:
//   auto      SCHED_FIFO 1 where permitted, else nice -20, else normal (the
//             default; a recorder already running SCHED_FIFO/RR with -r
//             keeps that)
//   off       the normal scheduler (what the process has)
//   fifo[:N]  SCHED_FIFO N (1..99, default 1); an error if not permitted
//   nice[:N]  nice N (-20..19, default -20); an error if not permitted
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "real/error.h"

namespace ringsim::real {

struct ThreadPriority {
  enum class Kind : std::uint8_t { automatic, normal, fifo, nice };
  Kind kind = Kind::automatic;
  int value = 0;  // fifo: 1..99; nice: -20..19
  bool operator==(const ThreadPriority&) const = default;
};

// "" or the problem ("fifo:0: ...").
std::string parse_thread_priority(std::string_view text, ThreadPriority& out);
// "SCHED_FIFO 1", "nice -20", "normal", "auto".
std::string to_string(const ThreadPriority& priority);

// What a thread got: the priority it runs with, and why it is lower than
// asked (auto's fallbacks), or the error for an explicit request.
struct PriorityOutcome {
  ThreadPriority got;
  std::string fallback;  // auto: why not SCHED_FIFO 1 ("" if it got it)
  Error error;           // fifo/nice: not permitted
};

// Applies `wanted` to the calling thread.
PriorityOutcome apply_thread_priority(const ThreadPriority& wanted);

// Runs apply_thread_priority on a short-lived thread (the permission check
// before the recording starts; the calling thread is not changed).
PriorityOutcome probe_thread_priority(const ThreadPriority& wanted);

}  // namespace ringsim::real
