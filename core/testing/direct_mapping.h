// Test doubles: a core::RingMapping and a core::RingSession with no
// scheduler, over any ring model (a simulated kernel's ring, or a test's
// own) that offers what a kernel's ring offers:
//   data_size_bytes(), mode(), head(), store_tail(tail), data() (the data
//   area's bytes), paused() / set_paused(paused), note_reader_head(head)
//   (overwrite mode: the head a paused reader saw), take_wakeup(),
//   hung_up().
// Each call acts at once, so a test (or a stateful property) decides
// exactly what the kernel writes between two reader steps. `on_copy` runs
// in the middle of every copy_out, for tests that write into the ring
// while the reader copies.
#pragma once

#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "core/backend.h"
#include "core/ring_mode.h"
#include "core/verify.h"

namespace ringsim::core::testing {

template <class Ring>
class DirectMapping {
 public:
  explicit DirectMapping(Ring& ring) : ring_(ring) {}

  std::uint64_t data_size_bytes() const { return ring_.data_size_bytes(); }
  std::uint64_t load_head() {
    head_loads++;
    if (ring_.mode() == RingMode::backward && ring_.paused()) ring_.note_reader_head(ring_.head());
    return ring_.head();
  }
  void store_tail(std::uint64_t tail) {
    tail_stores++;
    ring_.store_tail(tail);
  }
  void copy_out(std::uint64_t position, std::span<std::byte> destination) {
    const std::span<const std::byte> data = ring_.data();
    const std::uint64_t index = position & (data.size() - 1);
    VERIFY(index + destination.size() <= data.size());
    const std::size_t half = destination.size() / 2;
    std::memcpy(destination.data(), data.data() + index, half);
    if (on_copy) on_copy(destination.size());
    std::memcpy(destination.data() + half, data.data() + index + half, destination.size() - half);
    copies++;
  }
  int pause_output(bool paused) {
    if (fail_pause) return -EINVAL;
    pause_calls++;
    ring_.set_paused(paused);
    return 0;
  }

  std::function<void(std::size_t)> on_copy;  // called with the copy's length
  bool fail_pause = false;
  int head_loads = 0;
  int tail_stores = 0;
  int copies = 0;
  int pause_calls = 0;

 private:
  Ring& ring_;
};

// poll() never waits: it reports wakeups and hangups as they are.
template <class Ring>
class DirectSession {
 public:
  using Mapping = DirectMapping<Ring>;
  explicit DirectSession(std::vector<Ring*> rings) : rings_(std::move(rings)) {
    for (Ring* ring : rings_) mappings_.push_back(std::make_unique<Mapping>(*ring));
    released_.assign(rings_.size(), false);
  }
  std::size_t mapping_count() const { return mappings_.size(); }
  Mapping& mapping(std::size_t i) {
    VERIFY(!released_[i]);
    return *mappings_[i];
  }
  int poll(std::span<PollEvents> events, std::uint64_t) {
    polls++;
    int ready = 0;
    for (std::size_t i = 0; i < events.size(); i++) {
      events[i].readable = events[i].wanted && rings_[i]->take_wakeup();
      events[i].hangup = events[i].wanted && rings_[i]->hung_up();
      ready += events[i].readable || events[i].hangup;
    }
    return ready;
  }
  void release(std::size_t i) {
    VERIFY(!released_[i]);
    released_[i] = true;
  }
  std::uint64_t now_ns() const { return 0; }
  bool stop_requested() const { return false; }
  bool take_snapshot_request() { return false; }
  void disable_events() { disabled = true; }
  bool disabled = false;
  bool released(std::size_t i) const { return released_[i]; }
  int polls = 0;

 private:
  std::vector<Ring*> rings_;
  std::vector<std::unique_ptr<Mapping>> mappings_;
  std::vector<bool> released_;
};

}  // namespace ringsim::core::testing
