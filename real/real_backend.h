// The real backend's side of the seam: a core::RingMapping over a mapped
// perf ring and a core::RingSession over a set of them, read with poll(2).
//
// RealMapping is a view of one mapped PerfEvent: plain memory accesses on
// the control page and the data area (with the ordering the protocol in
// core/backend.h needs) and one ioctl. RealSession owns the events and
// their mappings: one per CPU for a system-wide recording (pid -1), or one
// per CPU with inherit=1 for a command and its children (the kernel refuses
// to map an inherited event with cpu -1), or one per thread (cpu -1,
// inherit=0).
//
// Signals: install_signal_handlers() makes SIGINT and SIGTERM request a stop
// and SIGUSR2 a snapshot, without SA_RESTART. The handlers set process-wide
// flags and write to a process-wide eventfd that every session polls, so a
// request wakes a waiting poll() whichever thread the signal lands on, and
// a request that arrives just before poll() is not missed until the
// timeout. RealSession::request_stop() and request_snapshot() do the same
// for one session from any thread.
//
// Stop: the first time stop_requested() returns true it disables every
// event that is still open (PERF_EVENT_IOC_DISABLE), before it returns, so
// the record loop's final drain (which follows that call in the same round)
// reads rings the kernel no longer writes to. A poll() that returns with a
// stop requested disables them already, so the round it ends copies with
// the events disabled too.
//
// Known limit (the kernel's; perf has it too): PAUSE_OUTPUT only sets a
// flag. A record that a writer on another CPU had already reserved when the
// ioctl returned is still written after it, below the head the reader
// loads, which in an overwrite ring is where the oldest bytes of the
// reader's window are. For a per-CPU event whose writer runs in interrupt
// context (cpu-clock, task-clock) a reader running on the event's CPU sees
// exact pauses. Elsewhere a snapshot can, rarely, meet such a write: the
// core reports it when it sees it (a header that does not walk:
// record_corrupt; bytes that changed between walk and copy:
// snapshot_changed), but a record rewritten completely before the walk
// reaches it is indistinguishable from a valid one.
#pragma once

#include <poll.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "core/backend.h"
#include "core/ring_reader.h"
#include "real/perf_event.h"

namespace ringsim::real {

class RealMapping {
 public:
  // A view of `event`, which must be mapped and stay mapped until detach().
  explicit RealMapping(PerfEvent& event);
  RealMapping(const RealMapping&) = delete;
  RealMapping& operator=(const RealMapping&) = delete;

  // core::RingMapping. load_head() changes no state of this object: it may
  // be called from any thread while the ring is mapped.
  std::uint64_t data_size_bytes() const { return size_bytes_; }
  std::uint64_t load_head();
  void store_tail(std::uint64_t tail);
  void copy_out(std::uint64_t position, std::span<std::byte> destination);
  int pause_output(bool paused);

  // write_backward: read-only mapping, read by snapshots.
  bool overwrite() const { return !writable_; }
  core::RingMode mode() const { return writable_ ? core::RingMode::normal : core::RingMode::backward; }

  // Called before the event is unmapped: every later access (other than
  // data_size_bytes()) fails a VERIFY instead of touching unmapped memory.
  void detach();
  bool detached() const { return page_ == nullptr; }

 private:
  perf_event_mmap_page* page_;
  std::byte* data_;
  const std::uint64_t size_bytes_;
  const std::uint64_t mask_;
  const int fd_;
  const bool writable_;
};

// An event that writes into another event's ring
// (PERF_EVENT_IOC_SET_OUTPUT): the other events of a recording on that
// CPU, or other tasks' events on it.
struct SharedEvent {
  perf_event_attr attr{};
  EventTarget target{};
  // A group member: its leader among the spec's events (0: the spec's own
  // event, k + 1: shared[k], opened before this one); -1: none.
  int group_leader = -1;
};

// One event to open and map, and the events that share its ring.
struct RingSpec {
  perf_event_attr attr{};
  EventTarget target{};
  std::uint64_t data_pages = 0;  // a power of two
  std::vector<SharedEvent> shared;
};

// The CPUs the kernel lists in a cpu list such as /sys/devices/system/cpu/online
// ("0-3,5\n"). Fails on anything else.
Error parse_cpu_list(std::string_view text, std::vector<int>& cpus_out);
// The online CPUs.
Error online_cpus(std::vector<int>& cpus_out);

// One spec per CPU: pid -1 (every task on that CPU).
std::vector<RingSpec> system_wide_specs(const perf_event_attr& attr, std::span<const int> cpus,
                                        std::uint64_t data_pages);
// One spec per CPU for `pid` and (with inherit=1) the tasks it creates
// after the events are opened.
std::vector<RingSpec> command_specs(const perf_event_attr& attr, pid_t pid, std::span<const int> cpus,
                                    std::uint64_t data_pages);
// One ring per CPU shared by every event in `attrs` and every task in
// `tasks` (pid -1: every task on that CPU): the first attr on the first
// task owns the ring, the others write into it.
// leaders (empty, or one per attr): a group member's leader among attrs
// (an earlier index), or -1; each task's member joins that task's leader.
// cgroup_fds (empty, or one per attr; tasks then {-1}): the cgroup each
// attr's events count in (-G), or -1.
std::vector<RingSpec> shared_ring_specs(std::span<const perf_event_attr> attrs, std::span<const pid_t> tasks,
                                        std::span<const int> cpus, std::uint64_t data_pages,
                                        std::span<const int> leaders = {}, std::span<const int> cgroup_fds = {});

// --per-thread: one ring per task of `tasks` (cpu -1, which the kernel
// maps only for events without inherit), shared by that task's events of
// every attr. leaders as for shared_ring_specs.
std::vector<RingSpec> per_thread_ring_specs(std::span<const perf_event_attr> attrs, std::span<const pid_t> tasks,
                                            std::uint64_t data_pages, std::span<const int> leaders = {});

// Threads: the record loop's thread calls the core::RingSession methods;
// request_stop() and request_snapshot() may be called from any thread (and
// the signal handlers from any thread). poll() returns -EINTR both for a
// signal and for a request that woke it through the eventfd; only one
// session should poll at a time (they share the eventfd).
class RealSession {
 public:
  using Mapping = RealMapping;

  // Opens and maps every spec, in order, and after each one opens its
  // shared events and points them at its ring. Every event must have the
  // same attr.write_backward (one session reads one mode). Events are left
  // as their attr says (open them with attr.disabled = 1 and call
  // enable_all() once the reader is ready). On failure returns the first
  // error, prefixed with the spec's index, closes everything opened so
  // far, and leaves `out` empty.
  //
  // A ring hangs up (poll) when every event writing into it has: each
  // event's POLLHUP is noted and that event is not polled again.
  static Error open(std::span<const RingSpec> specs, std::unique_ptr<RealSession>& out);

  RealSession(const RealSession&) = delete;
  RealSession& operator=(const RealSession&) = delete;
  ~RealSession() = default;  // the events unmap and close themselves

  Error enable_all();
  Error disable_all();
  // The events that ask for side-band records (attr.mmap: the recording's
  // tracking event), for -D with -a, -C, -p, -t: the others wait.
  Error enable_tracking();
  // -D/--delay: every event is enabled at deadline_ns (CLOCK_MONOTONIC) by
  // the thread that polls, in poll() (never racing with release()), unless
  // the stop came first. Any thread may call it; it wakes the poll.
  void enable_all_at(std::uint64_t deadline_ns);
  // Whether that enable ran, and its result.
  bool delayed_enable_done() const { return delayed_enable_done_.load(std::memory_order_acquire); }
  Error delayed_enable_error() const;
  core::RingMode mode() const { return mode_; }
  std::uint64_t data_size_bytes_max() const;
  PerfEvent& event(std::size_t index);  // the ring's own event
  std::size_t shared_count(std::size_t index) const;
  PerfEvent& shared_event(std::size_t index, std::size_t k);
  bool released(std::size_t index) const;
  // Each event's lost samples (read_format with PERF_FORMAT_LOST): read
  // when its ring is released (the events close then) and, for the rest,
  // now. Events opened without that read format are left out; `unread`
  // counts those whose read failed. Call once, once the loop has ended.
  struct LostSamples {
    std::uint64_t id = 0;
    std::uint64_t lost = 0;
  };
  std::vector<LostSamples> lost_samples(std::uint64_t& unread);
  // DISABLE failures when a stop was requested, and the last of them.
  std::uint64_t disable_failures() const { return disable_failures_; }
  const Error& last_disable_error() const { return last_disable_error_; }

  // core::RingSession
  std::size_t mapping_count() const { return mappings_.size(); }
  RealMapping& mapping(std::size_t index);
  int poll(std::span<core::PollEvents> events, std::uint64_t timeout_ns);
  void release(std::size_t index);
  std::uint64_t now_ns() const;
  bool stop_requested();
  bool take_snapshot_request();
  // Snapshot requests taken so far (by take_snapshot_request).
  std::uint64_t snapshots_taken() const { return snapshots_taken_.load(std::memory_order_acquire); }
  // The loop ends early on an error: stop the events (failures are
  // counted in disable_failures()).
  void disable_events() { disable_all(); }

  // From any thread: wake the loop with a stop or a snapshot request.
  void request_stop();
  void request_snapshot();
  // Polls `pidfd` (a command's, pidfd_open) with the rings from now on:
  // once it is readable (the command exited) a stop is requested, as
  // request_stop() does. Called by the polling thread (or before it
  // polls); the descriptor must stay open while the session polls. So no
  // thread of the recorder's waits for the command: ringsim-run's
  // simulated kernel decides the exit inside this poll, and an -a
  // recording does not sample a waiter's wakeup.
  void watch_exit(int pidfd);
  // --control: polls `fd` with the rings from now on; when it is readable
  // `on_readable` runs on the polling thread, inside poll() (so it may call
  // enable_all(), disable_all(), enable_where() and request_stop() without
  // racing with release()); it returns false once the descriptor is done
  // with (the writer hung up), and it is not polled again. Called before
  // the loop polls; fd stays open while the session polls.
  void watch_control(int fd, std::function<bool()> on_readable);
  // enable (or disable) the events whose attr `which` accepts.
  Error enable_where(bool enable, const std::function<bool(const perf_event_attr&)>& which);

 private:
  friend class RealSessionSlice;
  RealSession() = default;

  // What one poll watches: rings (global indices, ascending), their events
  // (indices into polled_, with the ring's index in `rings`), then the
  // wake eventfd (the primary set: the process-wide one, with --control's
  // descriptor, the command's pidfd and -D's enable) or the set's own kick
  // eventfd.
  struct PollSet {
    std::vector<std::size_t> rings;
    std::vector<std::size_t> polled;
    std::vector<std::size_t> local;
    std::vector<pollfd> fds;
    bool primary = true;
    int kick_fd = -1;
  };
  PollSet make_poll_set(std::vector<std::size_t> rings, bool primary, int kick_fd) const;
  int poll_set(PollSet& set, std::span<core::PollEvents> events, std::uint64_t timeout_ns);
  int poll_set_results(PollSet& set, std::span<core::PollEvents> events);
  void kick_slices();

  core::RingMode mode_ = core::RingMode::normal;
  // One file descriptor poll() watches: an event and its ring.
  struct Polled {
    std::size_t ring = 0;
    int fd = -1;
    bool hung = false;  // POLLHUP seen: not polled again
  };
  void each_event(std::size_t ring, const std::function<void(PerfEvent&)>& fn);
  bool ring_hung(std::size_t ring) const;

  std::vector<PerfEvent> events_;  // never resized after open(): mappings view them
  std::vector<std::vector<PerfEvent>> shared_;  // per ring
  std::vector<std::unique_ptr<RealMapping>> mappings_;
  std::vector<std::uint8_t> released_;  // not vector<bool>: slices write their own rings' entries
  std::vector<LostSamples> released_lost_;  // read as their rings were released
  std::uint64_t lost_unread_ = 0;
  bool lost_collected_ = false;
  void note_lost(const PerfEvent& e);
  std::vector<Polled> polled_;    // every event, ring by ring
  PollSet own_;                   // every ring: poll()'s
  // Enabling, disabling, releasing and the lost-sample reads, which slices'
  // threads may do at once.
  std::mutex rings_mutex_;
  std::vector<int> kick_fds_;  // the secondary slices' eventfds (under rings_mutex_)
  int control_fd_ = -1;           // watch_control(), -1 once done with; the primary set's polling thread only
  std::function<bool()> on_control_;
  int exit_fd_ = -1;              // watch_exit(), -1 once its exit is seen; polling thread only
  std::atomic<bool> stop_{false};
  std::atomic<bool> snapshot_{false};
  std::atomic<std::uint64_t> snapshots_taken_{0};
  std::atomic<std::uint64_t> enable_at_ns_{0};  // -D: 0, or when poll() enables every event
  std::atomic<bool> delayed_enable_done_{false};
  Error delayed_enable_error_;  // written by the polling thread before delayed_enable_done_
  void run_delayed_enable(std::uint64_t& wait_ns);
  bool stop_is_requested() const;
  void disable_for_stop();

  std::atomic<bool> stopped_{false};  // events disabled for the stop
  std::uint64_t disable_failures_ = 0;
  Error last_disable_error_;
};

// Some of a session's rings, for one of several reading threads (a
// core::RingSession over those rings; index i here is rings()[i] there).
// The primary slice also watches what the session's own poll watches (the
// process-wide wake eventfd, the command's exit, -D's enable) and takes
// snapshot requests; the others wake on their own eventfd, which a stop
// writes to. Normal (forward) rings only. Made before the threads start;
// destroyed after they end.
class RealSessionSlice {
 public:
  using Mapping = RealMapping;
  static Error make(RealSession& session, std::vector<std::size_t> rings, bool primary,
                    std::unique_ptr<RealSessionSlice>& out);
  ~RealSessionSlice();
  RealSessionSlice(const RealSessionSlice&) = delete;
  RealSessionSlice& operator=(const RealSessionSlice&) = delete;

  const std::vector<std::size_t>& rings() const { return set_.rings; }

  // core::RingSession
  std::size_t mapping_count() const { return set_.rings.size(); }
  RealMapping& mapping(std::size_t index);
  int poll(std::span<core::PollEvents> events, std::uint64_t timeout_ns) {
    return session_.poll_set(set_, events, timeout_ns);
  }
  void release(std::size_t index);
  std::uint64_t now_ns() const { return session_.now_ns(); }
  bool stop_requested() { return session_.stop_requested(); }
  void disable_events() { session_.disable_events(); }
  bool take_snapshot_request() { return set_.primary && session_.take_snapshot_request(); }

 private:
  RealSessionSlice(RealSession& session, RealSession::PollSet set) : session_(session), set_(std::move(set)) {}
  RealSession& session_;
  RealSession::PollSet set_;
};

// SIGINT, SIGTERM: stop; SIGUSR2: snapshot. Installed without SA_RESTART
// (a blocked poll returns EINTR) and with the process-wide wake eventfd
// (a request is seen at once). Clears earlier signal requests.
Error install_signal_handlers();
// Restores the default dispositions of those signals and clears the
// requests they made.
void restore_signal_handlers();

// What the handlers call; async-signal-safe.
void signal_stop_request();
// The first stop signal (SIGINT, SIGTERM) the handlers installed by the
// signal set received, or 0.
int received_stop_signal();
void signal_snapshot_request();
// Whether SIGUSR2 came since the last call (--switch-output=signal: a new
// file), cleared by it. Apart from the snapshot request the same signal
// makes.
bool take_switch_request();

static_assert(core::RingMapping<RealMapping>);
static_assert(core::RingSession<RealSession>);

}  // namespace ringsim::real

extern template class ringsim::core::RingReader<ringsim::real::RealMapping>;
