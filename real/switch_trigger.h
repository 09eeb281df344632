// --switch-output-event: events whose every record asks for a new file (a
// snapshot with --overwrite), as perf's side-band thread sends its main
// thread SIGUSR2 for each record it reads (tools/perf/util/
// sideband_evlist.c; builtin-record.c, record__process_signal_event).
//
// Each event has a ring of its own (one data page: the records are only
// counted, never written to the file), woken at every record (watermark 1,
// as perf's evlist__set_cb). A thread of its own polls the rings and, after
// a round that read records, makes the request SIGUSR2's handler makes
// (signal_snapshot_request()): requests the recording has not taken yet
// coalesce, as signals do. A ring whose task exited (POLLHUP) is read once
// more and left out of the poll.
#pragma once

#include <linux/perf_event.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "real/error.h"
#include "real/perf_event.h"

namespace ringsim::real {

class SwitchTrigger {
 public:
  struct Stats {
    std::uint64_t records = 0;   // read from the rings (a LOST record counts as one)
    std::uint64_t requests = 0;  // rounds that read records: each one request
    std::uint64_t hangups = 0;   // rings whose task exited
  };

  SwitchTrigger() = default;
  SwitchTrigger(const SwitchTrigger&) = delete;
  SwitchTrigger& operator=(const SwitchTrigger&) = delete;
  ~SwitchTrigger();  // stop()

  // Opens each of `attrs` (named by `names`) on each target and maps its
  // ring. One error line naming the event and the target.
  Error open(const std::vector<perf_event_attr>& attrs, const std::vector<std::string>& names,
             const std::vector<EventTarget>& targets);
  // Enables every event, then starts the thread.
  Error start();
  // Ends the thread (joined) and disables the events; idempotent.
  void stop();
  Stats stats() const;
  std::size_t events() const { return events_.size(); }

 private:
  void run();
  // Reads what the ring holds: the records counted, data_tail moved to
  // data_head.
  std::uint64_t drain(PerfEvent& event);

  std::vector<PerfEvent> events_;
  std::thread thread_;
  int stop_fd_ = -1;  // an eventfd: stop() wakes the thread's poll
  std::atomic<std::uint64_t> records_{0};
  std::atomic<std::uint64_t> requests_{0};
  std::atomic<std::uint64_t> hangups_{0};
};

}  // namespace ringsim::real
