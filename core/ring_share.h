// Rings shared by several record loops: a reading thread per CPU that,
// once woken, also drains the other CPUs' rings it can lock at once.
//
// Why: a thread per CPU drains its CPU's ring only when that ring's wakeup
// watermark wakes it; one thread for every ring drains them all whenever
// either wakes it, so each ring is drained at the first of the watermarks.
// With small rings at high rates that halves what overflows
// (docs/recorder.md, "One reading thread per CPU"). Helping keeps both: the
// thread per CPU (no ring waits for a thread held off another CPU) and the
// drain at every wakeup.
//
// Each ring has one owner, the loop whose session maps it: it alone polls
// it, sees its hangup, reports its corruption, counts what its end leaves
// and releases it. Any other loop may help: after its own rings, each round
// that is not the last, it tries each other ring's lock and, if it gets it,
// drains whole chunks of records with the owner's reader. The rules:
//   - A ring's reader is used only with the ring's lock held. The owner
//     takes it (waits for it) around each read of its ring; a helper only
//     tries it, and passes on when it is held.
//   - The lock is held from the head's load to the chunk's commit, so one
//     ring's chunks are staged in ring order whoever reads them.
//   - Lock order: a ring's lock, then the staging gates' lock, never the
//     other way; no one holds two rings' locks.
//   - A helper takes only a ready chunk of whole records. Anything else (a
//     corrupt header, a head past the ring) it leaves to the owner, who
//     reads the ring again and reports it.
//   - A helper starts on a ring only if it holds at least a quarter of its
//     size (LoopOptions::help_min_quarters, 1 in the recorder; the
//     simulator draws 0 or 1): below that, the lock and a chunk's
//     overhead for little, taken by both threads (measured: at the benchmark's fp point, helping at
//     any fill cost 1.20x perf -r 1's CPU, at a quarter 1.06x, for the same
//     loss; docs/recorder.md).
//   - Finished-round markers (core/staging_gate.h) are unchanged: a
//     helper's reads count for no epoch. The owner's drained round still
//     reads its ring up to a head it loaded after the previous marker; a
//     helper's chunk staged after the next marker was read with the lock,
//     so after the owner's read ended, from past that head: newer than
//     everything staged before the previous marker.
//   - The owner detaches its reader (under the lock) before it releases the
//     mapping or its loop ends: a helper never reads a released ring.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "core/verify.h"

namespace ringsim::core {

// A record loop that shares nothing (the default).
struct NoRingShare {
  static constexpr bool enabled = false;
  struct Seat {};
};

// Reader: the record loop's ring reader type. Lock: lock(), try_lock(),
// unlock() (a mutex in the recorder, a fiber lock in the simulator).
template <class Reader, class Lock>
class RingShare {
 public:
  static constexpr bool enabled = true;

  // One loop's place: the share's index of each of the loop's own rings
  // (own[i] is the loop's ring i) and of the rings it helps with.
  struct Seat {
    RingShare* share = nullptr;
    std::vector<std::size_t> own;
    std::vector<std::size_t> helped;
  };

  // The lock of ring `ring` held for its scope (waits for it).
  class Held {
   public:
    Held(RingShare& share, std::size_t ring) : lock_(share.slot(ring).lock) { lock_.lock(); }
    ~Held() { lock_.unlock(); }
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;

   private:
    Lock& lock_;
  };

  // lock_args: what each ring's lock is made from.
  template <class... LockArgs>
  explicit RingShare(std::size_t rings, LockArgs&... lock_args) {
    VERIFY(rings > 0);
    slots_.reserve(rings);
    for (std::size_t i = 0; i < rings; i++) slots_.push_back(std::make_unique<Slot>(lock_args...));
  }
  RingShare(const RingShare&) = delete;
  RingShare& operator=(const RingShare&) = delete;

  std::size_t rings() const { return slots_.size(); }
  // For the lock's own counts.
  const Lock& lock(std::size_t ring) const {
    VERIFY(ring < slots_.size());
    return slots_[ring]->lock;
  }

  // The owner's reader of ring `ring`, from its loop's start to detach().
  void attach(std::size_t ring, Reader* reader) {
    VERIFY(reader != nullptr);
    Slot& s = slot(ring);
    const Held held(*this, ring);
    VERIFY_MSG(s.reader == nullptr && !s.detached, "a shared ring attached twice");
    s.reader = reader;
  }
  void detach(std::size_t ring) {
    Slot& s = slot(ring);
    const Held held(*this, ring);
    s.reader = nullptr;
    s.detached = true;
  }

  // A helper's try: the ring's reader with its lock held (give_back()
  // after), or nullptr: `busy` if another holds the lock, else the ring is
  // not attached yet or detached.
  Reader* try_take(std::size_t ring, bool& busy) {
    Slot& s = slot(ring);
    busy = !s.lock.try_lock();
    if (busy) return nullptr;
    if (s.reader == nullptr) {
      s.lock.unlock();
      return nullptr;
    }
    return s.reader;
  }
  void give_back(std::size_t ring) { slot(ring).lock.unlock(); }

 private:
  struct Slot {
    template <class... LockArgs>
    explicit Slot(LockArgs&... lock_args) : lock(lock_args...) {}
    Lock lock;
    Reader* reader = nullptr;
    bool detached = false;
  };
  Slot& slot(std::size_t ring) {
    VERIFY(ring < slots_.size());
    return *slots_[ring];
  }

  std::vector<std::unique_ptr<Slot>> slots_;
};

}  // namespace ringsim::core
