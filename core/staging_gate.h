// Several reading threads into one staging buffer.
//
// With one reading thread per CPU (each reading its own CPU's rings, so
// that a thread held off one CPU - preempted, or its virtual CPU not run by
// the host - does not leave the other CPUs' rings unread), each thread's
// record loop writes through its own StagingGate: a ChunkSink that takes
// the gates' shared lock from acquire() to commit() (one chunk is staged
// at a time; the copy is a few microseconds), and maps the loop's ring
// indices to the session's.
//
// Finished rounds. One loop's round that read its rings up to their heads
// says nothing about the other threads' rings, so a gate does not pass it
// on as such. A marker (PERF_RECORD_FINISHED_ROUND) is staged only when
// every reading thread still running has ended such a round that began
// after the previous marker was staged: an epoch. Then every record staged
// after the marker was read after a head each thread loaded after the
// marker before it, so it is newer than everything staged before that one,
// which is what perf's ordered events needs (it flushes, at each marker,
// what came before the previous one). Rounds that end no epoch are staged
// without a marker (they merge); fewer markers are always valid.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "core/records.h"
#include "core/ring_reader.h"
#include "core/verify.h"

namespace ringsim::core {

template <class Target, class Lock>
class StagingGate;

// What the gates share: the target (a core::Staging), the lock, the epoch.
template <class Target, class Lock>
class StagingGates {
 public:
  // lock_args: what the lock is made from (none for a mutex; the
  // simulation's scheduler for its fibers' lock).
  template <class... LockArgs>
  StagingGates(Target& target, std::size_t readers, LockArgs&&... lock_args)
      : target_(target),
        lock_(std::forward<LockArgs>(lock_args)...),
        ended_round_(readers, 0),
        running_(readers),
        finished_(readers, 0) {
    VERIFY(readers > 0);
  }
  StagingGates(const StagingGates&) = delete;
  StagingGates& operator=(const StagingGates&) = delete;

  std::size_t readers() const { return finished_.size(); }
  // Markers staged (epochs ended), rounds staged without one.
  std::uint64_t markers() {
    const Held held(*this);
    return markers_;
  }
  std::uint64_t rounds_unmarked() {
    const Held held(*this);
    return rounds_unmarked_;
  }
  // For the lock's own counts (after the readers ended).
  const Lock& lock() const { return lock_; }

 private:
  friend class StagingGate<Target, Lock>;
  struct Held {
    explicit Held(StagingGates& g) : gates(g) { gates.lock_.lock(); }
    ~Held() { gates.lock_.unlock(); }
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;
    StagingGates& gates;
  };

  // With the lock held: reader ended a round; whether it ends the epoch.
  bool round_ended(std::size_t reader, bool all_drained, std::uint64_t round_epoch) {
    VERIFY(reader < finished_.size() && finished_[reader] == 0);
    if (all_drained && round_epoch == epoch_ && ended_round_[reader] == 0) {
      ended_round_[reader] = 1;
      ended_++;
    }
    return epoch_complete();
  }
  // With the lock held: reader's loop is over; the epochs no longer wait
  // for it.
  void reader_finished(std::size_t reader) {
    VERIFY(reader < finished_.size() && finished_[reader] == 0);
    finished_[reader] = 1;
    running_--;
    if (ended_round_[reader] != 0) {
      ended_round_[reader] = 0;
      ended_--;
    }
  }
  bool epoch_complete() {
    if (running_ == 0 || ended_ < running_) return false;
    epoch_++;
    markers_++;
    ended_ = 0;
    for (auto& e : ended_round_) e = 0;
    return true;
  }

  Target& target_;
  Lock lock_;
  std::uint64_t epoch_ = 0;
  std::vector<std::uint8_t> ended_round_;  // per reader: a drained round began and ended in this epoch
  std::size_t ended_ = 0;
  std::size_t running_;
  std::vector<std::uint8_t> finished_;
  std::uint64_t markers_ = 0;
  std::uint64_t rounds_unmarked_ = 0;
};

// One reading thread's ChunkSink.
template <class Target, class Lock>
class StagingGate {
 public:
  // mappings: the session's index of each of the loop's rings.
  StagingGate(StagingGates<Target, Lock>& gates, std::size_t reader, std::vector<std::size_t> mappings)
      : gates_(gates), reader_(reader), mappings_(std::move(mappings)) {
    VERIFY(reader_ < gates_.readers());
    VERIFY(!mappings_.empty());
  }
  StagingGate(const StagingGate&) = delete;
  StagingGate& operator=(const StagingGate&) = delete;
  ~StagingGate() { VERIFY_MSG(!held_, "a staging gate destroyed with a chunk reserved"); }

  std::span<std::byte> acquire(std::size_t mapping) {
    VERIFY_MSG(!held_, "acquire twice without commit or abandon");
    gates_.lock_.lock();
    held_ = true;
    const std::span<std::byte> buffer = gates_.target_.acquire(global(mapping));
    if (buffer.empty()) unhold();  // the target stopped: no commit follows
    return buffer;
  }
  int commit(std::size_t mapping, std::uint64_t bytes, const RecordCounts& counts) {
    VERIFY_MSG(held_, "commit without acquire");
    const int rc = gates_.target_.commit(global(mapping), bytes, counts);
    unhold();
    return rc;
  }
  void abandon(std::size_t mapping) {
    VERIFY_MSG(held_, "abandon without acquire");
    gates_.target_.abandon(global(mapping));
    unhold();
  }
  void note_gap(std::size_t mapping, PositionRange range, std::uint64_t position) {
    locked([&] { gates_.target_.note_gap(global(mapping), range, position); });
  }
  void note_corrupt(std::size_t mapping, PositionRange range, ReadStatus status) {
    locked([&] { gates_.target_.note_corrupt(global(mapping), range, status); });
  }
  std::uint32_t references(std::size_t mapping) { return gates_.target_.references(global(mapping)); }
  int end_round(bool all_drained) {
    VERIFY_MSG(!held_, "a round ended with a chunk reserved");
    const typename StagingGates<Target, Lock>::Held held(gates_);
    const bool marker = gates_.round_ended(reader_, all_drained, round_epoch_);
    if (!marker) gates_.rounds_unmarked_++;
    round_epoch_ = gates_.epoch_;  // the next round begins after this
    return gates_.target_.end_round(marker);
  }
  int flush() {
    int rc = 0;
    locked([&] { rc = gates_.target_.flush(); });
    return rc;
  }
  // This thread's loop has ended (whatever its status).
  void finish() {
    VERIFY_MSG(!held_, "a reading thread finished with a chunk reserved");
    const typename StagingGates<Target, Lock>::Held held(gates_);
    gates_.reader_finished(reader_);
  }

  // For core::StackCutter's pressure mode (the target's own lock).
  std::uint64_t held_bytes() { return gates_.target_.held_bytes(); }
  const auto& options() const { return gates_.target_.options(); }

 private:
  std::size_t global(std::size_t mapping) const {
    VERIFY(mapping < mappings_.size());
    return mappings_[mapping];
  }
  void unhold() {
    held_ = false;
    gates_.lock_.unlock();
  }
  // Runs fn with the lock held (already held between acquire and commit).
  template <class F>
  void locked(F&& fn) {
    if (held_) {
      fn();
      return;
    }
    const typename StagingGates<Target, Lock>::Held held(gates_);
    fn();
  }

  StagingGates<Target, Lock>& gates_;
  std::size_t reader_;
  std::vector<std::size_t> mappings_;
  bool held_ = false;
  std::uint64_t round_epoch_ = 0;  // the epoch when this thread's current round began
};

}  // namespace ringsim::core
