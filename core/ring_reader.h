// Reading one perf data ring, in each of the four ways the kernel can map
// and write it (core/ring_mode.h).
//
// normal (writable, forward), the reader protocol:
//   1. h = load_head() (C); the ready chunk is [tail, h).
//   2. If h - tail is larger than the data area, or h is not 8-aligned, the
//      control page is corrupt: report it, never copy garbage.
//   3. Copy the chunk out, in two parts if it crosses the end of the area.
//      A record's header never straddles the end (records are 8-aligned and
//      the area is a multiple of 8); its body may.
//   4. store_tail(h) (D): the space is the kernel's again.
//
// backward_writable (writable, write_backward): the kernel writes each
// record below the previous one and honours the tail, so [h, tail) holds
// the unread records, newest at h. The reader walks them up from h by
// their sizes (any header that cannot be a record there means corruption),
// copies them oldest first, then stores tail = h (D).
//
// backward (read-only, write_backward): the kernel ignores the tail and
// overwrites the oldest records; head is the newest record's position. A
// snapshot:
//   1. pauses output (PAUSE_OUTPUT), so no new write begins;
//   2. walks from h = load_head() up through the record sizes to where the
//      previous snapshot started (it has those already), stopping before it
//      would pass one data-area size from h (older bytes are overwritten).
//      A header that cannot start a record there (size 0 as in
//      never-written space, below 8, unaligned, an unknown type, a LOST
//      record too short for its fields, or reaching past the previous
//      snapshot's start) is where overwriting
//      reached (a record larger than the area wraps onto its own header):
//      the walk stops there;
//   3. copies the records it walked oldest first, so the output is in time
//      order;
//   4. loads head again: a write that had passed its check before the pause
//      (on another CPU, or an interrupt) may have landed meanwhile, below h,
//      on the bytes at the top of the window, which are the oldest records
//      it copied. Those records are dropped, never delivered;
//   5. resumes output.
// forward_overwrite (read-only, forward): a snapshot pauses, copies
// [previous head, h) when it is within one area of h (else every byte of it
// was overwritten or is unreachable: no record boundary is known past the
// previous head), loads head again and drops the records a late write may
// have reached, resumes.
// Whatever was overwritten before anyone read it is reported to the sink
// as a gap (never filled with garbage) and counted in the reader's Drops
// (DropCause::overwritten). Corrupt rings are counted once, by the record
// loop.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "core/backend.h"
#include "core/drops.h"
#include "core/perf_abi.h"
#include "core/records.h"
#include "core/ring_mode.h"
#include "core/verify.h"

namespace ringsim::core {

// A range of ring positions, begin inclusive, end exclusive, in modular
// u64 arithmetic (end - begin is the length).
struct PositionRange {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::uint64_t bytes() const { return end - begin; }
  bool operator==(const PositionRange&) const = default;
};

enum class ReadStatus : std::uint8_t {
  empty,
  ready,
  head_unaligned,    // data_head not a multiple of 8
  head_past_ring,    // head more than one area from the tail, or (read-only
                     // rings) moved the wrong way
  record_corrupt,    // a header that cannot be a record (writable rings)
  pause_failed,      // PAUSE_OUTPUT failed: the ring cannot be read safely
  snapshot_changed,  // the copy does not match the walk: the ring moved
};
const char* to_string(ReadStatus status);

// What the reader did; the record loop adds them up per run. What it
// dropped is in its Drops (overwritten gaps), not here.
struct RingStats {
  std::uint64_t chunks = 0;
  std::uint64_t bytes_read = 0;
  std::uint64_t wrapped_chunks = 0;  // copies split at the end of the area
  std::uint64_t snapshots = 0;
  std::uint64_t resume_failed = 0;   // PAUSE_OUTPUT(0) failed
  std::uint64_t late_writes = 0;     // snapshots whose head moved while paused
  std::uint64_t damaged_headers = 0; // overwrite walks that stopped at a header overwriting reached

  void add(const RingStats& other);
};

// What a snapshot or a backward read copied.
struct Snapshot {
  ReadStatus status = ReadStatus::empty;
  std::uint64_t head = 0;        // the head the read started from
  std::uint64_t bytes = 0;       // bytes copied into the destination
  std::uint64_t records = 0;
  PositionRange gap{};           // overwritten before read; empty if none
  std::uint64_t gap_head = 0;    // the head that shows the gap overwritten (the last one loaded)
  std::uint64_t corrupt_at = 0;  // position of the bad header, on error
};

template <RingMapping M>
class RingReader {
 public:
  RingReader(M& mapping, RingMode mode)
      : mapping_(mapping), mode_(mode), size_bytes_(mapping.data_size_bytes()), mask_(size_bytes_ - 1) {
    VERIFY(size_bytes_ >= kRecordAlignBytes);
    VERIFY((size_bytes_ & mask_) == 0);
    if (mode_ != RingMode::normal) {
      // At most one record start per 8 bytes of area; allocated now, not on
      // the read path.
      walk_positions_.resize(size_bytes_ / kRecordAlignBytes);
    }
  }

  RingMode mode() const { return mode_; }
  std::uint64_t size_bytes() const { return size_bytes_; }
  std::uint64_t tail() const { return tail_; }
  const RingStats& stats() const { return stats_; }
  // Overwritten gaps (read-only modes).
  const Drops& drops() const { return drops_; }

  // normal, steps 1-2: the ready chunk [tail, head). backward_writable: the
  // unread range [head, tail) (for counting what is left behind).
  ReadStatus available(PositionRange& chunk) {
    VERIFY(writable(mode_));
    const std::uint64_t head = mapping_.load_head();  // (C)
    if (head % kRecordAlignBytes != 0) return ReadStatus::head_unaligned;
    const std::uint64_t ready_bytes = backward(mode_) ? tail_ - head : head - tail_;
    if (ready_bytes == 0) return ReadStatus::empty;
    if (ready_bytes > size_bytes_) return ReadStatus::head_past_ring;
    chunk = backward(mode_) ? PositionRange{head, tail_} : PositionRange{tail_, head};
    return ReadStatus::ready;
  }

  // normal, step 3: copies `chunk` into the front of destination.
  void copy(const PositionRange& chunk, std::span<std::byte> destination) {
    VERIFY(mode_ == RingMode::normal);
    VERIFY(chunk.begin == tail_);
    VERIFY(chunk.bytes() <= size_bytes_);
    VERIFY(chunk.bytes() <= destination.size());
    if (copy_range(chunk.begin, chunk.bytes(), destination.data())) stats_.wrapped_chunks++;
    stats_.chunks++;
    stats_.bytes_read += chunk.bytes();
  }

  // normal, step 4: hands [tail, end) back to the kernel.
  void consume(std::uint64_t end) {
    VERIFY(mode_ == RingMode::normal);
    VERIFY(end - tail_ <= size_bytes_);
    VERIFY(end % kRecordAlignBytes == 0);
    tail_ = end;
    mapping_.store_tail(tail_);  // (D)
  }

  // backward_writable: copies [head, tail) oldest first into destination
  // (at least size_bytes() long) and hands it back to the kernel.
  Snapshot read_backward(std::span<std::byte> destination) {
    VERIFY(mode_ == RingMode::backward_writable);
    VERIFY(destination.size() >= size_bytes_);
    Snapshot result;
    PositionRange unread;
    result.status = available(unread);
    result.head = unread.begin;
    if (result.status != ReadStatus::ready) return result;
    const Walk walk = walk_up(unread.begin, unread.bytes(), false);
    if (walk.stopped_at_bad_header || walk.end != unread.end) {
      result.status = ReadStatus::record_corrupt;
      result.corrupt_at = walk.end;
      return result;
    }
    copy_oldest_first(walk, destination, result);
    tail_ = unread.begin;
    mapping_.store_tail(tail_);  // (D)
    return result;
  }

  // Read-only modes: copies the records written since the previous
  // snapshot, oldest first, into destination (at least size_bytes() long).
  // Pauses and resumes output around it.
  Snapshot snapshot(std::span<std::byte> destination) {
    VERIFY(!writable(mode_));
    VERIFY(destination.size() >= size_bytes_);
    Snapshot result;
    stats_.snapshots++;
    if (mapping_.pause_output(true) != 0) {
      result.status = ReadStatus::pause_failed;
      return result;
    }
    const std::uint64_t head = mapping_.load_head();  // (C)
    result.head = head;
    result.gap_head = head;
    if (head % kRecordAlignBytes != 0) {
      result.status = ReadStatus::head_unaligned;
    } else if (mode_ == RingMode::backward) {
      snapshot_backward(head, destination, result);
    } else {
      snapshot_forward(head, destination, result);
    }
    // A failed resume leaves the event paused: the kernel counts what it
    // drops and reports it, so nothing is lost silently; the next snapshot's
    // pause tells again.
    if (mapping_.pause_output(false) != 0) stats_.resume_failed++;
    return result;
  }

  // Read-only modes: the bytes written since the newest byte a snapshot
  // read, as far as the area still holds them (older ones are overwritten:
  // a later snapshot would have reported them as a gap). What an early end
  // leaves unread. Loads the head.
  std::uint64_t unread_bytes() {
    VERIFY(!writable(mode_));
    const std::uint64_t head = mapping_.load_head();  // (C)
    const std::uint64_t written = mode_ == RingMode::backward ? previous_head_ - head : head - previous_head_;
    return std::min(written, size_bytes_);
  }

 private:
  // The records found by a walk: walk_positions_[0..count), ascending
  // positions, the last one ending at `end`.
  struct Walk {
    std::uint64_t count = 0;
    std::uint64_t end = 0;
    bool stopped_at_bad_header = false;
  };

  // Copies length bytes from ring position `position` into out, in two parts
  // if the range crosses the end of the area. Returns whether it did.
  bool copy_range(std::uint64_t position, std::uint64_t length, std::byte* out) {
    VERIFY(length <= size_bytes_);
    const std::uint64_t index = position & mask_;
    const std::uint64_t first = std::min(length, size_bytes_ - index);
    mapping_.copy_out(position, std::span<std::byte>(out, first));
    if (first == length) return false;
    mapping_.copy_out(position + first, std::span<std::byte>(out + first, length - first));
    return true;
  }

  // Whether `header` can be a record the kernel wrote, `room` bytes before
  // the end of what may hold records: one the record walker accepts
  // (core::header_error: a LOST record long enough for its fields too, so
  // that the record loop's walk of the copy agrees with this walk), of a
  // type the kernel writes.
  static bool plausible(const perf_event_header& header, std::uint64_t room) {
    return header_error(header, room) == RecordError::none && header.type != 0 &&
           header.type < kRecordUserTypeFirst;
  }

  // Walks up from `from` through record sizes over at most `limit` bytes
  // (and never past one area). Each step advances at least 8 bytes, so the
  // loop has a fixed bound.
  Walk walk_up(std::uint64_t from, std::uint64_t limit, bool stop_at_area) {
    Walk walk;
    walk.end = from;
    const std::uint64_t steps_max = walk_positions_.size();
    for (std::uint64_t step = 0; step <= steps_max; step++) {
      const std::uint64_t walked = walk.end - from;
      if (walked == limit) break;
      if (walked + kRecordHeaderBytes > size_bytes_) break;  // would pass one area
      std::byte raw[kRecordHeaderBytes];
      mapping_.copy_out(walk.end, std::span<std::byte>(raw, sizeof raw));
      const perf_event_header header = load_header(raw);
      if (!plausible(header, limit - walked)) {
        walk.stopped_at_bad_header = true;
        break;
      }
      if (stop_at_area && walked + header.size > size_bytes_) break;  // partly overwritten
      VERIFY(walk.count < walk_positions_.size());
      walk_positions_[walk.count++] = walk.end;
      walk.end += header.size;
    }
    VERIFY(walk.end - from <= size_bytes_);
    VERIFY(walk.end - from <= limit);
    return walk;
  }

  // Copies the walked records into destination, the highest position (the
  // oldest, for a backward ring) first.
  void copy_oldest_first(const Walk& walk, std::span<std::byte> destination, Snapshot& result) {
    std::uint64_t out = 0;
    for (std::uint64_t i = walk.count; i > 0; i--) {
      const std::uint64_t at = walk_positions_[i - 1];
      const std::uint64_t next = (i == walk.count) ? walk.end : walk_positions_[i];
      VERIFY(out + (next - at) <= destination.size());
      if (copy_range(at, next - at, destination.data() + out)) stats_.wrapped_chunks++;
      out += next - at;
    }
    result.status = walk.count == 0 ? ReadStatus::empty : ReadStatus::ready;
    result.bytes = out;
    result.records = walk.count;
    stats_.bytes_read += out;
    if (walk.count > 0) stats_.chunks++;
  }

  void note_gap(Snapshot& result, PositionRange gap) {
    result.gap = gap;
    if (gap.bytes() > 0) drops_.add_bytes(DropCause::overwritten, gap.bytes());
  }

  void snapshot_backward(std::uint64_t head, std::span<std::byte> destination, Snapshot& result) {
    // Bytes the kernel wrote since the previous snapshot: head only moves
    // down, so a head above the previous one is corrupt.
    const std::uint64_t new_bytes = previous_head_ - head;
    if (new_bytes > kNewBytesMax) {
      result.status = ReadStatus::head_past_ring;
      return;
    }
    const Walk walk = walk_up(head, new_bytes, true);
    if (walk.stopped_at_bad_header) stats_.damaged_headers++;
    copy_oldest_first(walk, destination, result);
    std::uint64_t gap_begin = walk.end;
    // Step 4: a write that landed meanwhile reached the top of the window.
    const std::uint64_t after = mapping_.load_head();  // (C)
    const std::uint64_t moved = head - after;
    if (moved > kNewBytesMax) {
      result = Snapshot{ReadStatus::head_past_ring, head};
      return;
    }
    if (moved != 0) {
      stats_.late_writes++;
      result.gap_head = after;
      gap_begin = drop_oldest(walk, moved >= size_bytes_ ? 0 : size_bytes_ - moved, head, destination, result);
    }
    const std::uint64_t previous = previous_head_;
    previous_head_ = head;
    if (gap_begin != previous) note_gap(result, PositionRange{gap_begin, previous});
  }

  // Drops from destination the walked records that reach past `keep_bytes`
  // above `base` (the oldest, first in destination). Returns the position
  // where the kept records end.
  std::uint64_t drop_oldest(const Walk& walk, std::uint64_t keep_bytes, std::uint64_t base,
                            std::span<std::byte> destination, Snapshot& result) {
    std::uint64_t kept = walk.count;
    while (kept > 0) {
      const std::uint64_t next = kept == walk.count ? walk.end : walk_positions_[kept];
      if (next - base <= keep_bytes) break;
      kept--;
    }
    const std::uint64_t kept_end = kept == walk.count ? walk.end : walk_positions_[kept];
    const std::uint64_t dropped_bytes = walk.end - kept_end;
    if (dropped_bytes == 0) return walk.end;
    VERIFY(dropped_bytes <= result.bytes);
    std::memmove(destination.data(), destination.data() + dropped_bytes, result.bytes - dropped_bytes);
    result.bytes -= dropped_bytes;
    result.records = kept;
    stats_.bytes_read -= dropped_bytes;
    if (kept == 0) result.status = ReadStatus::empty;
    return kept_end;
  }

  void snapshot_forward(std::uint64_t head, std::span<std::byte> destination, Snapshot& result) {
    const std::uint64_t new_bytes = head - previous_head_;
    if (new_bytes > kNewBytesMax) {
      result.status = ReadStatus::head_past_ring;
      return;
    }
    const std::uint64_t from = previous_head_;
    previous_head_ = head;
    if (new_bytes > size_bytes_) {
      // The oldest of it was overwritten, and no record boundary is known
      // past `from`: all of it is lost.
      note_gap(result, PositionRange{from, head});
      return;
    }
    if (new_bytes == 0) return;
    const Walk walk = walk_up(from, new_bytes, false);
    if (!walk.stopped_at_bad_header) {
      // Newest last: copy in ring order.
      if (copy_range(from, walk.end - from, destination.data())) stats_.wrapped_chunks++;
      result.status = ReadStatus::ready;
      result.bytes = walk.end - from;
      result.records = walk.count;
      stats_.bytes_read += result.bytes;
      stats_.chunks++;
    }
    // A write that landed meanwhile reached the bottom of the window:
    // positions below after - size may hold its bytes.
    const std::uint64_t after = mapping_.load_head();  // (C)
    if (after - head > kNewBytesMax) {
      result = Snapshot{ReadStatus::head_past_ring, head};
      return;
    }
    if (after != head) stats_.late_writes++;
    result.gap_head = after;
    const std::uint64_t reached = after - from > size_bytes_ ? after - size_bytes_ - from : 0;
    if (walk.stopped_at_bad_header) {
      if (walk.end - from >= reached) {
        result = Snapshot{ReadStatus::record_corrupt, head};
        result.corrupt_at = walk.end;
        return;
      }
      stats_.damaged_headers++;
      note_gap(result, PositionRange{from, head});  // no boundary known past the damage
      return;
    }
    const std::uint64_t kept_from = reached == 0 ? from : drop_below(walk, from + reached, from, destination, result);
    if (kept_from != from) note_gap(result, PositionRange{from, result.records == 0 ? head : kept_from});
  }

  // Forward: drops the walked records that start before `limit` (the
  // first in destination). Returns where the kept ones begin.
  std::uint64_t drop_below(const Walk& walk, std::uint64_t limit, std::uint64_t from,
                           std::span<std::byte> destination, Snapshot& result) {
    std::uint64_t first = 0;
    while (first < walk.count && walk_positions_[first] - from < limit - from) first++;
    const std::uint64_t kept_from = first == walk.count ? walk.end : walk_positions_[first];
    const std::uint64_t dropped_bytes = kept_from - from;
    VERIFY(dropped_bytes <= result.bytes);
    std::memmove(destination.data(), destination.data() + dropped_bytes, result.bytes - dropped_bytes);
    result.bytes -= dropped_bytes;
    result.records = walk.count - first;
    stats_.bytes_read -= dropped_bytes;
    if (result.records == 0) result.status = ReadStatus::empty;
    return kept_from;
  }

  // No run writes 2^62 bytes between two snapshots; a larger distance means
  // head moved the wrong way.
  static constexpr std::uint64_t kNewBytesMax = std::uint64_t{1} << 62;

  M& mapping_;
  const RingMode mode_;
  const std::uint64_t size_bytes_;
  const std::uint64_t mask_;
  std::uint64_t tail_ = 0;           // writable modes: consumed up to here
  std::uint64_t previous_head_ = 0;  // read-only modes: newest byte already read
  std::vector<std::uint64_t> walk_positions_;
  RingStats stats_;
  Drops drops_;
};

}  // namespace ringsim::core
