// The staging buffer: reading decoupled from writing.
//
// A bounded byte ring of whole chunks between the record loop (the reading
// side, a ChunkSink) and the trace writer (the writing side, drain_staging).
// The reading side copies a ring's records straight into the staging
// buffer and releases the kernel ring space at once; it never waits for a
// write. The writing side takes the chunks in order and hands them to the
// writer, several adjacent chunks (of any rings) in one write.
//
//   - Whole chunks only, never torn across the buffer's end: a chunk that
//     would not fit before the end starts at the beginning instead, and the
//     bytes skipped are counted (wrap_skips).
//   - A batch is adjacent bytes of the buffer, never past its end: a chunk
//     of the largest size can end exactly at the end, and the next one
//     then starts at the same position, at the beginning of the buffer.
//     Adjacent positions are not adjacent bytes there: the batch stops
//     (end_cuts).
//   - Nothing refers to a kernel ring once its bytes are staged:
//     references() is always 0, so rings are released as soon as they are
//     drained (the writer's buffers are its own).
//   - Backpressure: when the buffer has no room for a chunk of the largest
//     size, acquire() waits for the writing side (counted: full, full_waits,
//     full_ns). Meanwhile the kernel drops what does not fit in its rings
//     and reports it in PERF_RECORD_LOST records, as always: nothing is
//     dropped here silently. A writing side that frees no room for
//     wait_ns * full_waits_max ends the recording (ETIMEDOUT).
//   - Poll rounds travel with the data: the writer marks a finished round
//     where the reader's round ended (and only if that round read every
//     ring up to its head). Consecutive rounds without data between them
//     merge; a writer that is behind writes several rounds' chunks in one
//     write and marks only the last of them (fewer markers are always
//     valid: perf's ordered events then holds more in memory).
//   - A hard error of the writing side stops the reading side at its next
//     acquire(); what was staged and never written is counted
//     (drops[output_error]), records and bytes, as one event. Gap and
//     corrupt notes still pass (they are bookkeeping, not data).
//
// Waiting and locking come from the Sync policy: a mutex and condition
// variables with two threads (real/), wait queues with two fibers (sim/).
//   struct Sync {
//     class Guard { explicit Guard(Sync&); };  // holds the lock
//     // With the guard held: waits until notify(side) or timeout_ns; false
//     // if the wait was cancelled (the simulation ends).
//     bool wait(Guard&, StagingSide side, std::uint64_t timeout_ns);
//     void notify(StagingSide side);  // with the guard held
//     std::uint64_t now_ns();
//   };
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/drops.h"
#include "core/records.h"
#include "core/ring_reader.h"
#include "core/verify.h"

namespace ringsim::core {

enum class StagingSide : std::uint8_t {
  space,  // the reading side waits for room
  data,   // the writing side waits for entries
};

struct StagingOptions {
  std::uint64_t bytes = 0;            // capacity; at least 2 * chunk_bytes_max
  std::uint64_t chunk_bytes_max = 0;  // the largest chunk (a ring's data size, an AUXTRACE record)
  std::uint64_t batch_bytes_max = 0;  // the most the writing side takes at once (>= chunk_bytes_max)
  // The reading side wakes a waiting writing side once this many bytes are
  // staged (0: at every chunk); otherwise the writing side looks every
  // wait_ns. Fewer wakeups, larger writes.
  std::uint64_t wake_bytes = 0;
  std::uint64_t wait_ns = 10'000'000;  // one wait of either side
  // Each round wakes a waiting writing side (else it takes rounds with the
  // data, or after wait_ns): for a writer that acts on requests at round
  // ends (ringsim-record's --switch-output=signal: a SIGUSR2 while no data
  // comes must switch at once, not when the next data does).
  bool notify_rounds = false;
  std::uint32_t full_waits_max = 1'000;  // the reading side's waits for room, per chunk
  std::uint64_t drain_steps_max = std::uint64_t{1} << 62;  // the writing side's loop bound
  std::uint64_t entries_max = 0;  // the entry queue's size (entries_for); 0: derived from bytes
  bool operator==(const StagingOptions&) const = default;
};

// "" or "<field>: <problem>". Never clamped.
std::string validate(const StagingOptions& options);

// The entry queue's size: entries_max, or one per 256 bytes of buffer
// (1,024..65,536). Each chunk, round, gap or corrupt note takes one until
// the writing side has taken it; a full queue is backpressure like a full
// buffer.
inline std::uint64_t entries_for(const StagingOptions& o) {
  if (o.entries_max > 0) return o.entries_max;
  return std::clamp<std::uint64_t>(o.bytes / 256, 1024, 65536);
}

struct StagingStats {
  std::uint64_t chunks = 0;          // staged by the reading side
  std::uint64_t bytes = 0;
  std::uint64_t chunks_written = 0;  // handed to the writer
  std::uint64_t bytes_written = 0;
  std::uint64_t writes = 0;          // batches handed to the writer (each one or more chunks)
  std::uint64_t rounds = 0;          // poll rounds ended by the reading side
  std::uint64_t rounds_merged = 0;   // merged with the round before (no data between)
  std::uint64_t rounds_absorbed = 0; // dropped by the writing side: more data was already staged after them
  std::uint64_t wrap_skips = 0;      // chunks started at the beginning, not to be torn at the end
  std::uint64_t wrap_skip_bytes = 0;
  std::uint64_t end_cuts = 0;        // batches stopped at a chunk that ended exactly at the buffer's end
  std::uint64_t full = 0;            // backpressure: acquire() found no room (episodes)
  std::uint64_t full_waits = 0;      // its waits
  std::uint64_t full_ns = 0;         // time the reading side spent waiting for room
  std::uint64_t data_waits = 0;      // the writing side found nothing staged and waited
  std::uint64_t fill_max = 0;        // most bytes held at once (skipped ends included)
  std::uint64_t entries_max = 0;     // most entries queued at once
  RecordCounts records;              // staged
  Drops drops;                       // output_error: staged, never written (the writer had failed); one
                                     // event, the error (the file it cut), however many chunks
  int error = 0;                     // the writing side's error (errno), 0 if none
};

// What the writing side takes next.
enum class StagedKind : std::uint8_t { chunks, round, gap, corrupt };
struct StagedBatch {
  StagedKind kind = StagedKind::chunks;
  std::span<const std::byte> data;   // chunks: one or more whole chunks, adjacent
  RecordCounts counts;               // chunks: their records
  std::uint64_t chunks = 0;
  bool all_drained = false;          // round
  std::uint64_t round_ns = 0;        // round: when the reading side ended it
  std::uint32_t mapping = 0;         // gap, corrupt
  PositionRange range;               // gap, corrupt
  std::uint64_t position = 0;        // gap: the head its snapshot saw
  ReadStatus status = ReadStatus::ready;  // corrupt
  std::uint64_t entries = 0;         // entries it ends (internal)
  std::uint64_t end = 0;             // staging position it frees up to (internal)
};

template <class Sync>
class Staging {
 public:
  Staging(Sync& sync, const StagingOptions& options) : sync_(sync), options_(options) {
    const std::string problem = validate(options_);
    VERIFY_MSG(problem.empty(), problem.c_str());
    memory_.reset(new std::byte[options_.bytes]);
    // Touched now, before any ring is read: the reading side never waits
    // for a page fault (and its zeroing) in the middle of a recording.
    std::memset(memory_.get(), 0, options_.bytes);
    // A full entry queue is backpressure too (room_for).
    entries_.resize(static_cast<std::size_t>(entries_for(options_)));
  }
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;

  const StagingOptions& options() const { return options_; }
  // A copy, taken under the lock.
  StagingStats stats() {
    typename Sync::Guard guard(sync_);
    return stats_;
  }

  // --- The reading side: a ChunkSink ---------------------------------------

  std::span<std::byte> acquire(std::size_t mapping) {
    typename Sync::Guard guard(sync_);
    VERIFY_MSG(!reserved_, "acquire twice without commit or abandon");
    const std::uint64_t n = options_.chunk_bytes_max;
    bool waited = false;
    std::uint64_t waited_from = 0;
    // Bounded by time (wait_ns * full_waits_max of waiting for this chunk)
    // and by count (each wait ends at a notify or after wait_ns).
    const std::uint64_t patience_ns = options_.wait_ns * options_.full_waits_max;
    const std::uint64_t waits_max = std::uint64_t{options_.full_waits_max} * 1024;
    for (std::uint64_t wait = 0;; wait++) {
      if (stats_.error != 0) break;
      if (room_for(n)) break;
      if (!waited) {
        stats_.full++;
        waited = true;
        waited_from = sync_.now_ns();
      }
      if (wait == waits_max || sync_.now_ns() - waited_from >= patience_ns) {
        fail_locked(ETIMEDOUT, "the writing side freed no room for a chunk of ring " + std::to_string(mapping) +
                                   " in " + std::to_string(patience_ns / 1'000'000) + " ms of staging full");
        break;
      }
      stats_.full_waits++;
      if (!sync_.wait(guard, StagingSide::space, options_.wait_ns)) {
        fail_locked(ECANCELED, "cancelled while waiting for staging space");
        break;
      }
    }
    if (waited) stats_.full_ns += sync_.now_ns() - waited_from;
    if (stats_.error != 0) return {};
    const std::uint64_t start = start_for(n);
    if (start != head_) {
      stats_.wrap_skips++;
      stats_.wrap_skip_bytes += start - head_;
    }
    reserved_ = true;
    reserved_start_ = start;
    return std::span<std::byte>(memory_.get() + start % options_.bytes, n);
  }

  int commit(std::size_t mapping, std::uint64_t bytes, const RecordCounts& counts) {
    typename Sync::Guard guard(sync_);
    VERIFY_MSG(reserved_, "commit without acquire");
    VERIFY(bytes > 0 && bytes <= options_.chunk_bytes_max);
    VERIFY(counts.bytes == bytes);
    reserved_ = false;
    if (stats_.error != 0) {
      // Copied out of the ring, never to be written: staged and dropped.
      stats_.chunks++;
      stats_.bytes += bytes;
      stats_.records.add(counts);
      count_dropped(counts);
      return -stats_.error;
    }
    // Inside the buffer (acquire() chose a start where the largest chunk fits).
    VERIFY(reserved_start_ % options_.bytes + bytes <= options_.bytes);
    Entry& e = push();
    e.kind = StagedKind::chunks;
    e.mapping = static_cast<std::uint32_t>(mapping);
    e.begin = reserved_start_;
    e.bytes = bytes;
    e.counts = counts;
    head_ = reserved_start_ + bytes;
    stats_.chunks++;
    stats_.bytes += bytes;
    stats_.records.add(counts);
    stats_.fill_max = std::max(stats_.fill_max, head_ - tail_);
    if (head_ - tail_ >= options_.wake_bytes) sync_.notify(StagingSide::data);
    return 0;
  }

  void abandon(std::size_t) {
    typename Sync::Guard guard(sync_);
    VERIFY_MSG(reserved_, "abandon without acquire");
    reserved_ = false;
  }

  void note_gap(std::size_t mapping, PositionRange range, std::uint64_t position) {
    typename Sync::Guard guard(sync_);
    push_note(StagedKind::gap, mapping, range).position = position;
  }

  void note_corrupt(std::size_t mapping, PositionRange range, ReadStatus status) {
    typename Sync::Guard guard(sync_);
    push_note(StagedKind::corrupt, mapping, range).status = status;
  }

  // Staged bytes belong to no ring.
  std::uint32_t references(std::size_t) const { return 0; }

  int end_round(bool all_drained) {
    typename Sync::Guard guard(sync_);
    if (stats_.error != 0) return -stats_.error;
    stats_.rounds++;
    const std::uint64_t now = sync_.now_ns();
    if (count_ > 0 && entry(count_ - 1).kind == StagedKind::round) {
      // No data since the round before: one marker position. A marker is
      // valid there if either round read every ring up to its head; its
      // time is that of the last such round.
      Entry& last = entry(count_ - 1);
      if (all_drained) last.round_ns = now;
      last.all_drained = last.all_drained || all_drained;
      stats_.rounds_merged++;
      if (options_.notify_rounds) sync_.notify(StagingSide::data);
      return 0;
    }
    Entry& e = push();
    e.kind = StagedKind::round;
    e.all_drained = all_drained;
    e.round_ns = now;  // the writing side takes it with the data (no wakeup for a round, unless notify_rounds)
    if (options_.notify_rounds) sync_.notify(StagingSide::data);
    return 0;
  }

  // Nothing refers to a ring: nothing to wait for. The writing side's error.
  int flush() {
    typename Sync::Guard guard(sync_);
    return -stats_.error;
  }

  // The reading side is done: the writing side ends once it has taken
  // everything.
  void close() {
    typename Sync::Guard guard(sync_);
    closed_ = true;
    sync_.notify(StagingSide::data);
  }

  // --- The writing side ------------------------------------------------------

  // The next batch, waiting for one. false: closed and empty (or the wait
  // was cancelled).
  bool next(StagedBatch& batch) {
    typename Sync::Guard guard(sync_);
    for (std::uint32_t wait = 0; count_ == 0; wait++) {
      if (closed_) return false;
      if (wait == 0) stats_.data_waits++;
      // Bounded by the caller's step budget: a wait returns after wait_ns.
      if (!sync_.wait(guard, StagingSide::data, options_.wait_ns)) return false;
    }
    VERIFY_MSG(held_ == 0, "next() twice without done()");
    batch = StagedBatch{};
    const Entry& first = entry(0);
    batch.kind = first.kind;
    batch.entries = 1;
    batch.end = tail_;
    switch (first.kind) {
      case StagedKind::chunks:
        take_chunks(batch);
        break;
      case StagedKind::round:
        batch.all_drained = first.all_drained;
        batch.round_ns = first.round_ns;
        break;
      case StagedKind::gap:
      case StagedKind::corrupt:
        batch.mapping = first.mapping;
        batch.range = first.range;
        batch.position = first.position;
        batch.status = first.status;
        break;
    }
    held_ = batch.entries;
    return true;
  }

  // The batch from next() is written (or, written = false, dropped after a
  // failure: counted): its entries and bytes are free.
  void done(const StagedBatch& batch, bool written = true) {
    typename Sync::Guard guard(sync_);
    VERIFY(batch.entries > 0 && batch.entries == held_ && batch.entries <= count_);
    held_ = 0;
    first_ = (first_ + batch.entries) % entries_.size();
    count_ -= batch.entries;
    VERIFY(batch.end >= tail_ && batch.end <= head_);
    tail_ = batch.end;
    if (batch.kind == StagedKind::chunks && written) {
      stats_.writes++;
      stats_.chunks_written += batch.chunks;
      stats_.bytes_written += batch.data.size();
    } else if (batch.kind == StagedKind::chunks) {
      count_dropped(batch.counts);
    }
    sync_.notify(StagingSide::space);
  }

  // A side failed (errno): the reading side stops at its next acquire()
  // (a chunk it commits now is counted as dropped); the writing side takes
  // what is queued and counts its chunks as dropped (done(batch, false)).
  void fail(int error, const std::string& what) {
    typename Sync::Guard guard(sync_);
    fail_locked(error, what);
  }
  std::string error_context() {
    typename Sync::Guard guard(sync_);
    return error_context_;
  }

  // Bytes held now (chunks staged and not yet written, skipped ends).
  std::uint64_t held_bytes() {
    typename Sync::Guard guard(sync_);
    return head_ - tail_;
  }

  // Checks (tests, the simulator's properties): entries queued now.
  std::uint64_t queued() {
    typename Sync::Guard guard(sync_);
    return count_;
  }

 private:
  struct Entry {
    StagedKind kind = StagedKind::chunks;
    bool all_drained = false;
    std::uint32_t mapping = 0;
    std::uint64_t begin = 0;  // chunks: staging position
    std::uint64_t bytes = 0;
    RecordCounts counts;
    std::uint64_t round_ns = 0;
    PositionRange range;
    std::uint64_t position = 0;
    ReadStatus status = ReadStatus::ready;
  };

  Entry& entry(std::uint64_t k) { return entries_[(first_ + k) % entries_.size()]; }

  // Staged records the writer's error cut off: one event (the error, the
  // file it cut), not one per chunk or batch.
  void count_dropped(const RecordCounts& counts) {
    if (stats_.drops[DropCause::output_error].events == 0) {
      stats_.drops.add(DropCause::output_error, counts);
    } else {
      stats_.drops.add_records(DropCause::output_error, counts);
    }
  }

  // A gap or corrupt note, the writing side woken for it (with the guard held).
  Entry& push_note(StagedKind kind, std::size_t mapping, PositionRange range) {
    Entry& e = push();
    e.kind = kind;
    e.mapping = static_cast<std::uint32_t>(mapping);
    e.range = range;
    sync_.notify(StagingSide::data);
    return e;
  }

  Entry& push() {
    VERIFY_MSG(count_ < entries_.size(), "staging entry queue full");  // bounded by construction
    Entry& e = entries_[(first_ + count_) % entries_.size()];
    e = Entry{};
    count_++;
    stats_.entries_max = std::max<std::uint64_t>(stats_.entries_max, count_);
    return e;
  }

  // Where a chunk of n bytes starts: at head, or at the beginning of the
  // buffer if it would cross the end.
  std::uint64_t start_for(std::uint64_t n) const {
    const std::uint64_t offset = head_ % options_.bytes;
    return offset + n <= options_.bytes ? head_ : head_ + (options_.bytes - offset);
  }

  bool room_for(std::uint64_t n) {
    if (head_ == tail_ && count_ == 0) {
      // Empty: start again at the beginning (never a skip).
      head_ = tail_ = (head_ + options_.bytes - 1) / options_.bytes * options_.bytes;
    }
    if (count_ + 3 > entries_.size()) return false;
    return start_for(n) + n - tail_ <= options_.bytes;
  }

  // Adjacent chunk entries (rounds between them absorbed) up to the batch
  // bound.
  void take_chunks(StagedBatch& batch) {
    const Entry& first = entry(0);
    const std::uint64_t begin = first.begin;
    std::uint64_t end = first.begin + first.bytes;
    batch.counts = first.counts;
    batch.chunks = 1;
    std::uint64_t taken = 1;
    std::uint64_t absorbed = 0;
    for (std::uint64_t k = 1; k < count_; k++) {
      const Entry& e = entry(k);
      if (e.kind == StagedKind::round) {
        absorbed++;
        continue;
      }
      if (e.kind != StagedKind::chunks || e.begin != end || end + e.bytes - begin > options_.batch_bytes_max) break;
      if (end % options_.bytes == 0) {
        // The batch so far ends exactly at the buffer's end; e starts at
        // its beginning.
        stats_.end_cuts++;
        break;
      }
      end += e.bytes;
      batch.counts.add(e.counts);
      batch.chunks++;
      taken = k + 1;
      stats_.rounds_absorbed += absorbed;
      absorbed = 0;
    }
    batch.entries = taken;
    batch.end = end;
    VERIFY(end - begin <= options_.batch_bytes_max);
    VERIFY_MSG(begin % options_.bytes + (end - begin) <= options_.bytes, "a staged batch runs past the buffer's end");
    batch.data = std::span<const std::byte>(memory_.get() + begin % options_.bytes, end - begin);
  }

  void fail_locked(int error, const std::string& what) {
    VERIFY(error > 0);
    if (stats_.error == 0) {
      stats_.error = error;
      error_context_ = what;
    }
    sync_.notify(StagingSide::space);
    sync_.notify(StagingSide::data);
  }

  Sync& sync_;
  const StagingOptions options_;
  std::unique_ptr<std::byte[]> memory_;
  std::vector<Entry> entries_;  // a ring of count_ entries from first_
  std::uint64_t first_ = 0;
  std::uint64_t count_ = 0;
  std::uint64_t held_ = 0;  // entries of the batch the writing side holds
  std::uint64_t head_ = 0;  // staging positions (monotonic): head_ - tail_ bytes held
  std::uint64_t tail_ = 0;
  bool reserved_ = false;
  std::uint64_t reserved_start_ = 0;
  bool closed_ = false;
  std::string error_context_;
  StagingStats stats_;
};

// Where the writing side puts batches: the trace writer (write_staged),
// or a wrapper around it.
template <class W>
concept StagedWriter = requires(W& w, std::span<const std::byte> data, const RecordCounts& counts, bool drained,
                                std::size_t mapping, PositionRange range, std::uint64_t position, ReadStatus status) {
  { w.write_staged(data, counts) } -> std::same_as<int>;
  { w.end_round(drained) } -> std::same_as<int>;
  { w.note_gap(mapping, range, position) } -> std::same_as<void>;
  { w.note_corrupt(mapping, range, status) } -> std::same_as<void>;
};

// The writing side: takes every batch until the reading side has closed
// the staging and it is empty, or the writer fails (then the staging
// fails too, and the reading side stops). Returns 0 or -errno.
template <class Sync, StagedWriter W>
int drain_staging(Staging<Sync>& staging, W& writer) {
  int error = 0;
  for (std::uint64_t step = 0; step < staging.options().drain_steps_max; step++) {
    StagedBatch batch;
    if (!staging.next(batch)) return error != 0 ? -error : staging.flush();
    int rc = 0;
    bool written = true;
    switch (batch.kind) {
      case StagedKind::chunks:
        // After a failure the rest is counted, not written.
        written = error == 0;
        if (written) rc = writer.write_staged(batch.data, batch.counts);
        break;
      case StagedKind::round:
        if (error != 0) break;
        // A writer that wants to know when the reader's round ended (the
        // simulator's round-order check) takes the time too.
        if constexpr (requires { writer.end_round(true, std::uint64_t{0}); }) {
          rc = writer.end_round(batch.all_drained, batch.round_ns);
        } else {
          rc = writer.end_round(batch.all_drained);
        }
        break;
      // Notes are bookkeeping, not data: they pass even after a failure.
      case StagedKind::gap:
        writer.note_gap(batch.mapping, batch.range, batch.position);
        break;
      case StagedKind::corrupt:
        writer.note_corrupt(batch.mapping, batch.range, batch.status);
        break;
    }
    // A batch the writer took, even if it failed, is the writer's to count.
    staging.done(batch, written);
    if (rc < 0 && error == 0) {
      error = -rc;
      staging.fail(error, "the writer failed");  // the reading side stops at its next chunk
    }
  }
  staging.fail(ETIMEDOUT, "the writing side's step budget ran out");
  return -ETIMEDOUT;
}

}  // namespace ringsim::core
