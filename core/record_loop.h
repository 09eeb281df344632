// The record loop: poll the rings, move ready chunks to a sink, release a
// ring once its event is gone, it is drained and nothing refers to it.
//
// Per mapping and per round (normal mode):
//   1. if the ring has data, get a buffer from the sink (this may wait for a
//      control block), read head again (more may have arrived), copy the
//      chunk in (two parts at the end of the area);
//   2. walk the records in the copy: a corrupt header stops this ring (the
//      valid prefix is kept, the rest is counted and reported), never the
//      others;
//   3. release the ring space at once (store tail), then commit the buffer
//      to the sink (which writes it, perhaps asynchronously).
// Overwrite (backward) mode reads a snapshot on request, at hangup and at
// stop. After POLLHUP the ring is drained before it is released, and it is
// released only when the sink holds no reference to it (no write in flight).
// Every loop is bounded: rounds by LoopOptions::rounds_max, chunks per ring
// per round by drain_chunks_max.
#pragma once

#include <cerrno>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "core/aux_reader.h"
#include "core/backend.h"
#include "core/drops.h"
#include "core/records.h"
#include "core/ring_reader.h"
#include "core/ring_share.h"
#include "core/verify.h"

namespace ringsim::core {

// Where the loop puts what it reads: a file writer (serial or AIO) in the
// recorder, an in-memory collector in simple simulations.
template <class S>
concept ChunkSink = requires(S& sink, std::size_t mapping, std::uint64_t bytes,
                             const RecordCounts& counts, PositionRange range,
                             std::uint64_t position, ReadStatus status, bool all_drained) {
  // A buffer for one chunk of `mapping`, at least that ring's data size.
  // May wait (for a control block to complete). An empty span means the
  // sink has stopped on an error; the loop then stops.
  { sink.acquire(mapping) } -> std::same_as<std::span<std::byte>>;

  // The first `bytes` bytes of the buffer from acquire() are whole records,
  // summarised by counts. The sink owns the buffer until its write is
  // complete. Returns 0, or -errno on a hard error (the loop stops).
  { sink.commit(mapping, bytes, counts) } -> std::same_as<int>;

  // Returns the buffer from acquire() unused.
  { sink.abandon(mapping) } -> std::same_as<void>;

  // Overwrite mode: positions overwritten before they were read, found by
  // the snapshot that saw head at `position`.
  { sink.note_gap(mapping, range, position) } -> std::same_as<void>;

  // The ring is corrupt at position range.begin; nothing more is read from it.
  { sink.note_corrupt(mapping, range, status) } -> std::same_as<void>;

  // References the sink holds on the mapping (writes in flight).
  { sink.references(mapping) } -> std::same_as<std::uint32_t>;

  // End of a poll round: check completions, mark a finished round. A round
  // may be marked finished (PERF_RECORD_FINISHED_ROUND) only if
  // `all_drained`: every ring still read was read up to the head it loaded
  // in this round. Otherwise a later round could bring records older than
  // what a reader of the file (perf's ordered events) flushed at the
  // marker. Returns 0 or -errno.
  { sink.end_round(all_drained) } -> std::same_as<int>;

  // Waits until nothing is in flight. Returns 0 or -errno.
  { sink.flush() } -> std::same_as<int>;
};

struct LoopOptions {
  std::uint64_t poll_timeout_ns = 100'000'000;
  std::uint64_t rounds_max = 1'000'000;
  std::uint32_t drain_chunks_max = 4;
  // Sharing rings (core/ring_share.h): a loop helps with another's ring
  // only if it holds at least this many quarters of the ring's size (0:
  // any data; at most 4).
  std::uint32_t help_min_quarters = 1;
  bool operator==(const LoopOptions&) const = default;
};

enum class LoopStatus : std::uint8_t {
  done,              // every event hung up, every ring drained and released
  stopped,           // stop requested; every ring drained once more
  sink_error,        // the sink failed (disk full, EIO): recording stopped
  poll_error,
  rounds_exhausted,  // liveness: the loop did not finish in rounds_max
};
const char* to_string(LoopStatus status);

struct LoopResult {
  LoopStatus status = LoopStatus::done;
  int error = 0;  // errno for sink_error / poll_error
  RingStats ring;
  AuxStats aux;
  RecordCounts records;  // committed to the sink
  // What the consumer dropped (core/drops.h): data rings (overwritten gaps,
  // corrupt rings, data abandoned at an early end) and AUX areas.
  Drops drops;
  Drops aux_drops;
  std::uint64_t rounds = 0;
  std::uint64_t poll_interrupted = 0;
  std::uint64_t poll_timeouts = 0;
  std::uint64_t hangups_with_data = 0;  // POLLHUP while the ring still had data
  // A ring's drain_chunks_max chunks read in one round with more still
  // there (left for a later round): the producers outran the reader.
  std::uint64_t chunk_budget_spent = 0;
  std::uint64_t mappings_held = 0;    // not released: writes on them never completed
  // Sharing rings (core/ring_share.h): chunks this loop read from other
  // loops' rings, and tries that found such a ring's lock held (not those
  // that found it detached, its owner done).
  std::uint64_t chunks_helped = 0;
  std::uint64_t help_busy = 0;

  // Rings declared corrupt (each is one corrupt event, data ring or AUX).
  std::uint64_t mappings_corrupt() const {
    return drops[DropCause::corrupt].events + aux_drops[DropCause::corrupt].events;
  }
};

// Several loops' results (one per reading thread or fiber), summed; the
// status is the worst of them (sink error, poll error, rounds exhausted,
// stopped, done), with its error.
inline LoopResult merge_loop_results(const std::vector<LoopResult>& results) {
  VERIFY(!results.empty());
  const auto severity = [](LoopStatus status) {
    switch (status) {
      case LoopStatus::sink_error: return 4;
      case LoopStatus::poll_error: return 3;
      case LoopStatus::rounds_exhausted: return 2;
      case LoopStatus::stopped: return 1;
      case LoopStatus::done: return 0;
    }
    return 4;
  };
  LoopResult m;
  m.status = LoopStatus::done;
  for (const LoopResult& r : results) {
    if (severity(r.status) > severity(m.status)) {
      m.status = r.status;
      m.error = r.error;
    }
    m.ring.add(r.ring);
    m.aux.add(r.aux);
    m.records.add(r.records);
    m.drops.add(r.drops);
    m.aux_drops.add(r.aux_drops);
    m.rounds += r.rounds;
    m.poll_interrupted += r.poll_interrupted;
    m.poll_timeouts += r.poll_timeouts;
    m.hangups_with_data += r.hangups_with_data;
    m.chunk_budget_spent += r.chunk_budget_spent;
    m.mappings_held += r.mappings_held;
    m.chunks_helped += r.chunks_helped;
    m.help_busy += r.help_busy;
  }
  return m;
}

// The AUX readers of a record loop: a vector for mapping types with an AUX
// area, nothing otherwise.
struct NoAuxReaders {
  void resize(std::size_t) {}
};
template <class M, bool = AuxMapping<M>>
struct AuxReadersOf {
  using type = NoAuxReaders;
};
template <class M>
struct AuxReadersOf<M, true> {
  using type = std::vector<std::unique_ptr<AuxReader<M>>>;
};

// Share: core::NoRingShare, or a core::RingShare whose Seat says which of
// the share's rings are this loop's and which it helps with (normal mode
// only). The sink's mapping index of helped ring k is mapping_count() + k.
template <RingSession Session, ChunkSink Sink, class Share = NoRingShare>
class RecordLoop {
 public:
  using Reader = RingReader<typename Session::Mapping>;

  RecordLoop(Session& session, Sink& sink, RingMode mode, const LoopOptions& options,
             typename Share::Seat seat = {})
      : session_(session), sink_(sink), mode_(mode), options_(options), seat_(std::move(seat)) {
    const std::size_t count = session_.mapping_count();
    VERIFY(count > 0);
    VERIFY(options_.rounds_max > 0);
    VERIFY(options_.drain_chunks_max > 0);
    VERIFY(options_.help_min_quarters <= 4);
    readers_.reserve(count);
    for (std::size_t i = 0; i < count; i++) {
      readers_.push_back(std::make_unique<RingReader<typename Session::Mapping>>(
          session_.mapping(i), mode_));
      if constexpr (AuxMapping<typename Session::Mapping>) {
        if (session_.mapping(i).aux_size_bytes() > 0) {
          aux_.resize(count);
          aux_[i] = std::make_unique<AuxReader<typename Session::Mapping>>(session_.mapping(i),
                                                                           session_.mapping(i).aux_cpu());
        }
      }
    }
    aux_.resize(count);
    state_.assign(count, State::live);
    events_.assign(count, PollEvents{});
    if constexpr (Share::enabled) {
      VERIFY(seat_.share != nullptr);
      VERIFY(mode_ == RingMode::normal);
      VERIFY(seat_.own.size() == count);
      for (std::size_t i = 0; i < count; i++) seat_.share->attach(seat_.own[i], readers_[i].get());
    }
  }

  LoopResult run() {
    const std::size_t count = state_.size();
    for (std::uint64_t round = 0; round < options_.rounds_max; round++) {
      result_.rounds = round + 1;
      const bool stopping = session_.stop_requested();
      bool any_live = false;
      for (std::size_t i = 0; i < count; i++) any_live |= state_[i] == State::live;
      if (!stopping && !any_live) {
        // Every event is gone; what is left are writes in flight on drained
        // rings. Wait for them rather than for a poll timeout nothing would
        // cut short.
        const int flushed = sink_.flush();
        if (flushed < 0) {
          finish(LoopStatus::sink_error, -flushed);
          return result_;
        }
      } else if (!stopping) {
        for (std::size_t i = 0; i < count; i++) events_[i] = PollEvents{state_[i] == State::live};
        const int polled = session_.poll(events_, options_.poll_timeout_ns);
        // Interrupted (a signal, e.g. a snapshot request): serve the round
        // anyway, as after a timeout.
        if (polled == -EINTR) result_.poll_interrupted++;
        if (polled < 0 && polled != -EINTR) {
          finish(LoopStatus::poll_error, -polled);
          return result_;
        }
        if (polled == 0) result_.poll_timeouts++;
      }
      // Snapshot requests serve read-only data rings and snapshot-mode AUX
      // areas alike.
      const bool snapshot = session_.take_snapshot_request();
      round_drained_ = true;
      for (std::size_t i = 0; i < count; i++) {
        if (state_[i] == State::live && events_[i].hangup) state_[i] = State::hung_up;
        if (state_[i] != State::live && state_[i] != State::hung_up) continue;
        const bool final_read = stopping || state_[i] == State::hung_up;
        const int rc = service(i, snapshot || final_read, final_read);
        if (rc < 0) {
          finish(LoopStatus::sink_error, -rc);
          return result_;
        }
      }
      if constexpr (Share::enabled) {
        const int rc = stopping ? 0 : help();
        if (rc < 0) {
          finish(LoopStatus::sink_error, -rc);
          return result_;
        }
      }
      const int round_rc = sink_.end_round(round_drained_);
      if (round_rc < 0) {
        finish(LoopStatus::sink_error, -round_rc);
        return result_;
      }
      release_finished();
      if (stopping) {
        finish(LoopStatus::stopped, 0);
        return result_;
      }
      if (released_ == count) {
        finish(LoopStatus::done, 0);
        return result_;
      }
    }
    finish(LoopStatus::rounds_exhausted, 0);
    return result_;
  }

 private:
  enum class State : std::uint8_t { live, hung_up, drained, broken, released };

  // Reads mapping i. Returns 0 or -errno from the sink.
  // Reads mapping i: its data ring, then its AUX area if it has one. A hung-up
  // mapping becomes drained when both are empty.
  int service(std::size_t i, bool read_snapshot, bool final_read) {
    bool ring_drained = false;
    int rc = service_ring(i, read_snapshot, final_read, ring_drained);
    if (rc < 0 || state_[i] == State::broken) return rc;
    bool aux_drained = true;
    if constexpr (AuxMapping<typename Session::Mapping>) {
      if (aux_[i]) rc = service_aux(i, read_snapshot, final_read, aux_drained);
      if (rc < 0 || state_[i] == State::broken) return rc;
    }
    if (state_[i] == State::hung_up && ring_drained && aux_drained) state_[i] = State::drained;
    return 0;
  }

  int service_ring(std::size_t i, bool read_snapshot, bool final_read, bool& drained) {
    RingReader<typename Session::Mapping>& reader = *readers_[i];
    if (!writable(mode_)) {
      if (!read_snapshot) {
        round_drained_ = false;  // its records arrive in a later round
        return 0;
      }
      const int rc = service_snapshot(i, reader);
      drained = rc == 0 && final_read;
      return rc;
    }
    if (mode_ == RingMode::backward_writable) return service_backward(i, reader, drained);
    [[maybe_unused]] const auto held = hold(i);  // helpers wait until this ring's chunks are committed
    bool hung_up_with_data = state_[i] == State::hung_up;
    for (std::uint32_t k = 0; k < options_.drain_chunks_max; k++) {
      PositionRange chunk;
      ReadStatus status = reader.available(chunk);
      if (status == ReadStatus::empty) {
        drained = true;
        return 0;
      }
      if (status != ReadStatus::ready) {
        mark_corrupt(i, PositionRange{reader.tail(), reader.tail()}, status, 0);
        return 0;
      }
      if (hung_up_with_data) {
        result_.hangups_with_data++;
        hung_up_with_data = false;
      }
      const std::span<std::byte> buffer = sink_.acquire(i);
      if (buffer.empty()) return -ECANCELED;
      VERIFY(buffer.size() >= reader.size_bytes());
      // acquire() may have waited: take what arrived meanwhile too.
      status = reader.available(chunk);
      if (status != ReadStatus::ready) {
        sink_.abandon(i);
        VERIFY(status != ReadStatus::empty);  // head never moves back
        mark_corrupt(i, PositionRange{reader.tail(), reader.tail()}, status, 0);
        return 0;
      }
      reader.copy(chunk, buffer);
      const std::span<const std::byte> copied(buffer.data(), chunk.bytes());
      RecordCounts counts;
      const WalkResult walk = walk_records(copied, counts);
      if (walk.error != RecordError::none) {
        const PositionRange bad{chunk.begin + walk.valid_bytes, chunk.end};
        if (walk.valid_bytes > 0) {
          const int rc = commit(i, walk.valid_bytes, counts);
          if (rc < 0) return rc;
        } else {
          sink_.abandon(i);
        }
        mark_corrupt(i, bad, ReadStatus::record_corrupt, bad.bytes());
        return 0;
      }
      reader.consume(chunk.end);
      const int rc = commit(i, chunk.bytes(), counts);
      if (rc < 0) return rc;
    }
    // The chunk budget ran out: is there more, for a later round?
    PositionRange rest;
    const ReadStatus after = reader.available(rest);
    if (after == ReadStatus::empty) {
      drained = true;
    } else if (after == ReadStatus::ready) {
      round_drained_ = false;
      result_.chunk_budget_spent++;
    }  // else: corrupt, reported by the next round's read
    return 0;
  }

  // The lock of own ring i while it is read (nothing without a share).
  auto hold(std::size_t i) {
    if constexpr (Share::enabled) {
      VERIFY(i < seat_.own.size());
      return typename Share::Held(*seat_.share, seat_.own[i]);
    } else {
      return 0;
    }
  }

  // The other loops' rings whose lock is free: whole ready chunks, up to
  // drain_chunks_max each (core/ring_share.h). Returns 0 or -errno from
  // the sink.
  int help() {
    if constexpr (Share::enabled) {  // (not a requires-clause: clang 14 instantiates those bodies anyway)
      const std::size_t count = state_.size();
      for (std::size_t k = 0; k < seat_.helped.size(); k++) {
        const std::size_t ring = seat_.helped[k];
        bool busy = false;
        Reader* reader = seat_.share->try_take(ring, busy);
        if (reader == nullptr) {
          if (busy) result_.help_busy++;  // (a ring whose owner is done is no one's to count)
          continue;
        }
        const int rc = help_ring(*reader, count + k);
        seat_.share->give_back(ring);
        if (rc < 0) return rc;
      }
    }
    return 0;
  }

  int help_ring(Reader& reader, std::size_t mapping) {
    for (std::uint32_t k = 0; k < options_.drain_chunks_max; k++) {
      PositionRange chunk;
      if (reader.available(chunk) != ReadStatus::ready) return 0;  // empty, or the owner's to report
      // Less than help_min_quarters of the ring: left to its owner (helping
      // with a few records costs both threads the lock and a chunk's
      // overhead for little).
      if (k == 0 && chunk.bytes() * 4 < reader.size_bytes() * options_.help_min_quarters) return 0;
      const std::span<std::byte> buffer = sink_.acquire(mapping);
      if (buffer.empty()) return -ECANCELED;
      VERIFY(buffer.size() >= reader.size_bytes());
      if (reader.available(chunk) != ReadStatus::ready) {
        sink_.abandon(mapping);
        return 0;
      }
      reader.copy(chunk, buffer);
      RecordCounts counts;
      if (walk_records(std::span<const std::byte>(buffer.data(), chunk.bytes()), counts).error != RecordError::none) {
        sink_.abandon(mapping);  // the owner reads it again and reports it
        return 0;
      }
      reader.consume(chunk.end);
      result_.chunks_helped++;
      const int rc = commit(mapping, chunk.bytes(), counts);
      if (rc < 0) return rc;
    }
    return 0;
  }

  // No helper reads own ring i after this.
  void detach(std::size_t i) {
    if constexpr (Share::enabled) seat_.share->detach(seat_.own[i]);
  }

  // A writable backward ring: everything unread, oldest first, each round.
  int service_backward(std::size_t i, RingReader<typename Session::Mapping>& reader, bool& drained) {
    const std::span<std::byte> buffer = sink_.acquire(i);
    if (buffer.empty()) return -ECANCELED;
    VERIFY(buffer.size() >= reader.size_bytes());
    const Snapshot read = reader.read_backward(buffer);
    if (read.status == ReadStatus::empty) {
      sink_.abandon(i);
      drained = true;
      return 0;
    }
    if (read.status != ReadStatus::ready) {
      sink_.abandon(i);
      mark_corrupt(i, PositionRange{read.corrupt_at, read.corrupt_at}, read.status, 0);
      return 0;
    }
    if (state_[i] == State::hung_up) result_.hangups_with_data++;
    RecordCounts counts;
    const WalkResult walk = walk_records(std::span<const std::byte>(buffer.data(), read.bytes), counts);
    if (walk.error != RecordError::none || counts.records != read.records) {
      sink_.abandon(i);
      mark_corrupt(i, PositionRange{read.head, read.head + read.bytes}, ReadStatus::snapshot_changed, read.bytes);
      return 0;
    }
    drained = true;  // the kernel may have written more since: a later round takes it
    return commit(i, read.bytes, counts);
  }

  // The AUX area of mapping i: new data every round (non-overwrite), a
  // snapshot on request and at the end (overwrite).
  // (A member template: clang 14 instantiates a constrained member's body
  // in an explicit instantiation of the class even when its constraint
  // fails.)
  template <typename M = typename Session::Mapping>
    requires AuxMapping<M>
  int service_aux(std::size_t i, bool read_snapshot, bool final_read, bool& drained) {
    AuxReader<M>& aux = *aux_[i];
    if (aux.overwrite() && !read_snapshot) {
      drained = false;
      return 0;
    }
    drained = false;
    for (std::uint32_t k = 0; k < options_.drain_chunks_max; k++) {
      if (!aux.overwrite() && !aux.has_data()) {
        drained = true;
        return 0;
      }
      const std::span<std::byte> buffer = sink_.acquire(i);
      if (buffer.empty()) return -ECANCELED;
      VERIFY_MSG(buffer.size() >= aux.record_bytes_max(), "the sink's buffers are smaller than an AUX area");
      const AuxRead read = aux.overwrite() ? aux.snapshot(buffer, final_read) : aux.read(buffer, final_read);
      if (read.status == ReadStatus::empty) {
        sink_.abandon(i);
        drained = aux.overwrite() ? final_read : true;
        return 0;
      }
      if (read.status != ReadStatus::ready) {
        sink_.abandon(i);
        mark_corrupt(i, PositionRange{}, read.status, 0, /*aux=*/true);
        return 0;
      }
      RecordCounts counts;
      const WalkResult walk = walk_records(std::span<const std::byte>(buffer.data(), read.record_bytes), counts);
      VERIFY(walk.error == RecordError::none);  // the reader built this record itself
      VERIFY(counts.auxtrace_records == 1);
      const int rc = commit(i, read.record_bytes, counts);
      if (rc < 0) return rc;
      if (aux.overwrite()) {
        drained = final_read;
        return 0;
      }
    }
    return 0;  // more next round
  }

  int service_snapshot(std::size_t i, RingReader<typename Session::Mapping>& reader) {
    const std::span<std::byte> buffer = sink_.acquire(i);
    if (buffer.empty()) return -ECANCELED;
    const Snapshot snapshot = reader.snapshot(buffer);
    if (snapshot.gap.bytes() > 0) sink_.note_gap(i, snapshot.gap, snapshot.gap_head);
    if (snapshot.status == ReadStatus::empty) {
      sink_.abandon(i);
      return 0;
    }
    if (snapshot.status != ReadStatus::ready) {
      sink_.abandon(i);
      mark_corrupt(i, PositionRange{snapshot.corrupt_at, snapshot.corrupt_at}, snapshot.status, 0);
      return 0;
    }
    RecordCounts counts;
    const WalkResult walk = walk_records(std::span<const std::byte>(buffer.data(), snapshot.bytes), counts);
    // The reader walked the headers before copying; if the copy does not
    // walk the same way, the ring changed under it (output was not paused).
    if (walk.error != RecordError::none || counts.records != snapshot.records) {
      sink_.abandon(i);
      mark_corrupt(i, PositionRange{snapshot.head, snapshot.head + snapshot.bytes}, ReadStatus::snapshot_changed,
                   snapshot.bytes);
      return 0;
    }
    return commit(i, snapshot.bytes, counts);
  }

  int commit(std::size_t i, std::uint64_t bytes, const RecordCounts& counts) {
    VERIFY(bytes > 0);
    VERIFY(counts.bytes == bytes);
    result_.records.add(counts);
    return sink_.commit(i, bytes, counts);
  }

  // Ring i is corrupt: nothing more is read from it. `bytes`: what is known
  // to be lost with it (0 when the control page itself is bad).
  void mark_corrupt(std::size_t i, PositionRange at, ReadStatus status, std::uint64_t bytes, bool aux = false) {
    VERIFY(status != ReadStatus::ready);
    VERIFY(status != ReadStatus::empty);
    VERIFY(state_[i] != State::broken);
    (aux ? result_.aux_drops : result_.drops).add_bytes(DropCause::corrupt, bytes);
    sink_.note_corrupt(i, at, status);
    state_[i] = State::broken;
  }

  void release_finished() {
    for (std::size_t i = 0; i < state_.size(); i++) {
      const bool finished = state_[i] == State::drained || state_[i] == State::broken;
      if (finished && sink_.references(i) == 0) release(i);
    }
  }

  void release(std::size_t i) {
    VERIFY(state_[i] != State::released);
    VERIFY(sink_.references(i) == 0);
    detach(i);
    session_.release(i);
    state_[i] = State::released;
    released_++;
  }

  // Ends the run: waits for everything in flight, counts what is left in
  // rings that could not be drained, releases every mapping.
  void finish(LoopStatus status, int error) {
    result_.status = status;
    result_.error = error;
    const bool early = status == LoopStatus::sink_error || status == LoopStatus::poll_error ||
                       status == LoopStatus::rounds_exhausted;
    if (early) session_.disable_events();
    for (std::size_t i = 0; i < state_.size(); i++) {
      if (state_[i] != State::released) detach(i);  // count_abandoned and release without helpers
    }
    const int flush_rc = sink_.flush();
    if (flush_rc < 0 && result_.error == 0) {
      result_.status = LoopStatus::sink_error;
      result_.error = -flush_rc;
    }
    for (std::size_t i = 0; i < state_.size(); i++) {
      if (state_[i] == State::released) continue;
      if (state_[i] != State::broken) count_abandoned(*readers_[i], early);
      // A write still in flight (the sink could not wait for it) keeps its
      // mapping: releasing it could free memory the write still reads.
      if (sink_.references(i) != 0) {
        result_.mappings_held++;
        continue;
      }
      release(i);
    }
    for (const auto& reader : readers_) {
      result_.ring.add(reader->stats());
      result_.drops.add(reader->drops());
    }
    if constexpr (AuxMapping<typename Session::Mapping>) {
      for (const auto& aux : aux_) {
        if (!aux) continue;
        result_.aux.add(aux->stats());
        result_.aux_drops.add(aux->drops());
      }
    }
    VERIFY(released_ + result_.mappings_held == state_.size());
    VERIFY(result_.mappings_held == 0 || result_.status != LoopStatus::done);
  }

  // What the end leaves in a ring: bytes only. Reading the headers to
  // count the records would take the reader's time in a recording that is
  // already failing (and in the simulator, change the run being reported).
  // A writable ring: what is between its tail and head. A read-only ring,
  // at an early end only (the end's own snapshot reads it otherwise): what
  // was written since its last snapshot and is still there, which no
  // snapshot will take.
  void count_abandoned(RingReader<typename Session::Mapping>& reader, bool early) {
    if (!writable(mode_)) {
      const std::uint64_t unread = early ? reader.unread_bytes() : 0;
      if (unread > 0) result_.drops.add_bytes(DropCause::abandoned, unread);
      return;
    }
    PositionRange chunk;
    if (reader.available(chunk) != ReadStatus::ready) return;
    result_.drops.add_bytes(DropCause::abandoned, chunk.bytes());
  }

  Session& session_;
  Sink& sink_;
  const RingMode mode_;
  const LoopOptions options_;
  typename Share::Seat seat_;
  std::vector<std::unique_ptr<Reader>> readers_;
  // Present only for a mapping type with an AUX area.
  typename AuxReadersOf<typename Session::Mapping>::type aux_;
  std::vector<State> state_;
  std::vector<PollEvents> events_;
  std::size_t released_ = 0;
  bool round_drained_ = true;  // this round read every ring up to the head it loaded
  LoopResult result_;
};

}  // namespace ringsim::core
