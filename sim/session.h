// The simulated backend's side of the seam: a RingSession and RingMapping
// (core/backend.h) over the simulated kernel.
//
// Every call is a scheduling point: it may yield to another fiber first
// (SchedulerLimits::yield_per_million). Calls also cost virtual time: a
// system call `syscall_ns`, a copy `copy_ns_per_kib` per KiB. During a
// copy's time the kernel keeps running; with copy_interrupt_per_million the
// copy is split and the kernel may write between its halves, so a reader
// that copies bytes it does not own (an unpaused overwrite ring, space it
// already released) reads torn data, as it would on a real machine.
//
// Faults (fault phase only): poll fails with EINTR. Signals: a snapshot
// request and a stop request interrupt a waiting poll (EINTR), like
// SIGUSR2 and SIGINT. Touching a released mapping is a VERIFY failure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "core/backend.h"
#include "core/verify.h"
#include "sim/kernel.h"
#include "sim/probes.h"
#include "sim/scheduler.h"

namespace ringsim::sim {

struct SessionConfig {
  std::uint64_t syscall_ns = 1000;
  std::uint64_t copy_ns_per_kib = 250;
  std::uint32_t poll_eintr_per_million = 0;
  std::uint32_t copy_interrupt_per_million = 0;
  bool operator==(const SessionConfig&) const = default;
};

class SimSession;

class SimMapping {
 public:
  SimMapping(SimSession& session, std::size_t index) : session_(session), index_(index) {}
  std::uint64_t data_size_bytes() const;
  std::uint64_t load_head();
  void store_tail(std::uint64_t tail);
  void copy_out(std::uint64_t position, std::span<std::byte> destination);
  int pause_output(bool paused);
  // core::AuxMapping
  std::uint64_t aux_size_bytes() const;
  bool aux_overwrite() const;
  bool aux_offset_heads() const;
  std::uint32_t aux_cpu() const { return static_cast<std::uint32_t>(index_); }  // ring i is CPU i's
  std::uint64_t load_aux_head();
  void store_aux_tail(std::uint64_t tail);
  void copy_aux(std::uint64_t position, std::span<std::byte> destination);
  int set_aux_enabled(bool enabled);

 private:
  SimRing& ring() const;
  SimAux& aux() const;
  SimSession& session_;
  const std::size_t index_;
};

class SimSession {
 public:
  using Mapping = SimMapping;

  SimSession(Scheduler& scheduler, Kernel& kernel, Probes& probes, const SessionConfig& config);

  // core::RingSession
  std::size_t mapping_count() const { return mappings_.size(); }
  SimMapping& mapping(std::size_t index);
  int poll(std::span<core::PollEvents> events, std::uint64_t timeout_ns);
  void release(std::size_t index);
  std::uint64_t now_ns() const { return scheduler_.now_ns(); }
  bool stop_requested() const { return stop_requested_; }
  bool take_snapshot_request();
  void disable_events() { kernel_.disable_all(); }

  // Driven by the run's helper fibers.
  void request_snapshot();
  void request_stop();
  void set_faults(bool enabled) { faults_ = enabled; }
  // Called at release(index), before the mapping goes (the run checks that
  // nothing still refers to it).
  void set_release_check(std::function<void(std::size_t)> check) { release_check_ = std::move(check); }
  // Writes of a mapping in flight (for the hangup_with_write_in_flight probe).
  void set_in_flight_query(std::function<std::uint32_t(std::size_t)> query) { in_flight_query_ = std::move(query); }
  bool released(std::size_t index) const { return released_[index]; }

  // Several reading fibers (SimSessionSlice): each polls some rings and
  // sees each interruption (a stop, a snapshot request) once, as each of
  // the recorder's reading threads wakes on its own eventfd. 1 by default.
  void set_pollers(std::size_t pollers);
  // poll() over the rings `rings` (session indices; events[k] is rings[k]'s)
  // for poller `poller`.
  int poll_rings(std::span<const std::size_t> rings, std::span<core::PollEvents> events, std::uint64_t timeout_ns,
                 std::size_t poller);

 private:
  friend class SimMapping;
  void interrupt();
  SimRing& live_ring(std::size_t index);
  int poll_some(const std::size_t* rings, std::span<core::PollEvents> events, std::uint64_t timeout_ns,
                std::size_t poller);

  Scheduler& scheduler_;
  Kernel& kernel_;
  Probes& probes_;
  const SessionConfig config_;
  std::vector<std::unique_ptr<SimMapping>> mappings_;
  std::vector<bool> released_;
  std::function<void(std::size_t)> release_check_;
  std::function<std::uint32_t(std::size_t)> in_flight_query_;
  bool faults_ = true;
  std::vector<std::uint8_t> interrupted_ = std::vector<std::uint8_t>(1, 0);  // per poller
  bool snapshot_requested_ = false;
  bool stop_requested_ = false;
};

// Some of a session's rings, for one of several reading fibers (a
// core::RingSession over those rings; index i here is rings[i] there), as
// real::RealSessionSlice is for one of the recorder's reading threads.
// Only the primary slice takes snapshot requests.
class SimSessionSlice {
 public:
  using Mapping = SimMapping;
  SimSessionSlice(SimSession& session, std::vector<std::size_t> rings, std::size_t poller)
      : session_(session), rings_(std::move(rings)), poller_(poller) {}

  std::size_t mapping_count() const { return rings_.size(); }
  SimMapping& mapping(std::size_t index) { return session_.mapping(ring(index)); }
  int poll(std::span<core::PollEvents> events, std::uint64_t timeout_ns) {
    return session_.poll_rings(rings_, events, timeout_ns, poller_);
  }
  void release(std::size_t index) { session_.release(ring(index)); }
  std::uint64_t now_ns() const { return session_.now_ns(); }
  bool stop_requested() const { return session_.stop_requested(); }
  bool take_snapshot_request() { return poller_ == 0 && session_.take_snapshot_request(); }
  void disable_events() { session_.disable_events(); }

 private:
  std::size_t ring(std::size_t index) const {
    VERIFY(index < rings_.size());
    return rings_[index];
  }
  SimSession& session_;
  const std::vector<std::size_t> rings_;
  const std::size_t poller_;
};

static_assert(core::RingMapping<SimMapping>);
static_assert(core::AuxMapping<SimMapping>);
static_assert(core::RingSession<SimSession>);
static_assert(core::RingSession<SimSessionSlice>);

}  // namespace ringsim::sim
