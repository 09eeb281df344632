// Reading one perf data ring.
//
// Normal (non-overwrite) mode, the reader protocol:
//   1. h = load_head() (C); the ready chunk is [tail, h).
//   2. If h - tail is larger than the data area, or h is not 8-aligned, the
//      control page is corrupt (or the reader has fallen behind by more than
//      the ring, which a correct kernel never allows here): report it, never
//      copy garbage.
//   3. Copy the chunk out, in two parts if it crosses the end of the area.
//      A record's header never straddles the end (records are 8-aligned and
//      the area is a multiple of 8); its body may.
//   4. store_tail(h) (D): the space is the kernel's again.
//
// Overwrite mode with write_backward. The kernel ignores tail and writes
// each record *below* the previous one: head is the position of the newest
// record, and older records follow it upward. The reader:
//   1. pauses output, so nothing moves while it walks;
//   2. walks from h = load_head() through the record sizes up to where the
//      previous snapshot started (it has those already), stopping before it
//      would pass one data-area size from h (older bytes are overwritten).
//      A header that cannot start a record there (size 0 as in
//      never-written space, below 8, unaligned, reaching past the previous
//      snapshot's start, or refused by the record walker: a LOST record too
//      short for its fields, an AUXTRACE record) means the ring is corrupt:
//      reported, nothing of this snapshot delivered;
//   3. copies the records it walked oldest first, so the output is in time
//      order, then resumes output.
// When the walk stops before reaching the previous snapshot, the records in
// between were overwritten before anyone read them: the reader has fallen
// behind. That range is reported to the sink as a gap (never filled with
// garbage) and counted in the reader's Drops (DropCause::overwritten).
// Corrupt rings are counted once, by the record loop.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
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
  head_past_ring,    // head - tail larger than the data area (backward:
                     // head moved up)
  record_corrupt,    // a header in the walk is invalid (backward mode)
  pause_failed,      // PAUSE_OUTPUT failed: the ring cannot be read safely
  snapshot_changed,  // the copy does not match the walk: the ring moved
};
const char* to_string(ReadStatus status);

// What the reader did; the record loop adds them up per run. What it
// dropped is in its Drops (overwritten gaps), not here.
struct RingStats {
  std::uint64_t chunks = 0;
  std::uint64_t bytes_read = 0;
  std::uint64_t wrapped_chunks = 0;     // copies split at the end of the area
  std::uint64_t snapshots = 0;
  std::uint64_t resume_failed = 0;      // PAUSE_OUTPUT(0) failed

  void add(const RingStats& other);
};

// Result of a backward snapshot.
struct Snapshot {
  ReadStatus status = ReadStatus::empty;
  std::uint64_t head = 0;           // the head the snapshot walked from
  std::uint64_t bytes = 0;          // bytes copied into the destination
  std::uint64_t records = 0;
  PositionRange gap{};              // overwritten before read; empty if none
  std::uint64_t corrupt_at = 0;     // position of the bad header, on error
};

template <RingMapping M>
class RingReader {
 public:
  RingReader(M& mapping, RingMode mode)
      : mapping_(mapping),
        mode_(mode),
        size_bytes_(mapping.data_size_bytes()),
        mask_(size_bytes_ - 1) {
    VERIFY(size_bytes_ >= kRecordAlignBytes);
    VERIFY((size_bytes_ & mask_) == 0);
    if (mode_ == RingMode::backward) {
      // At most one record start per 8 bytes of area; allocated now, not on
      // the snapshot path.
      walk_positions_.resize(size_bytes_ / kRecordAlignBytes);
    }
  }

  RingMode mode() const { return mode_; }
  std::uint64_t size_bytes() const { return size_bytes_; }
  std::uint64_t tail() const { return tail_; }
  const RingStats& stats() const { return stats_; }
  // Overwritten gaps (backward mode).
  const Drops& drops() const { return drops_; }

  // Normal mode, steps 1-2: the ready chunk [tail, head).
  ReadStatus available(PositionRange& chunk) {
    VERIFY(mode_ == RingMode::normal);
    const std::uint64_t head = mapping_.load_head();  // (C)
    if (head % kRecordAlignBytes != 0) return ReadStatus::head_unaligned;
    const std::uint64_t ready_bytes = head - tail_;
    if (ready_bytes == 0) return ReadStatus::empty;
    if (ready_bytes > size_bytes_) return ReadStatus::head_past_ring;
    chunk = PositionRange{tail_, head};
    return ReadStatus::ready;
  }

  // Normal mode, step 3: copies `chunk` into the front of destination.
  void copy(const PositionRange& chunk, std::span<std::byte> destination) {
    VERIFY(mode_ == RingMode::normal);
    VERIFY(chunk.begin == tail_);
    VERIFY(chunk.bytes() <= size_bytes_);
    VERIFY(chunk.bytes() <= destination.size());
    if (copy_range(chunk.begin, chunk.bytes(), destination.data())) stats_.wrapped_chunks++;
    stats_.chunks++;
    stats_.bytes_read += chunk.bytes();
  }

  // Normal mode, step 4: hands [tail, end) back to the kernel.
  void consume(std::uint64_t end) {
    VERIFY(mode_ == RingMode::normal);
    VERIFY(end - tail_ <= size_bytes_);
    VERIFY(end % kRecordAlignBytes == 0);
    tail_ = end;
    mapping_.store_tail(tail_);  // (D)
  }

  // Backward mode: copies the records written since the previous snapshot,
  // oldest first, into destination (at least size_bytes() long). Pauses and
  // resumes output around the walk unless the caller has paused already.
  Snapshot snapshot(std::span<std::byte> destination) {
    VERIFY(mode_ == RingMode::backward);
    VERIFY(destination.size() >= size_bytes_);
    Snapshot result;
    stats_.snapshots++;
    const int pause_rc = mapping_.pause_output(true);
    if (pause_rc != 0) {
      result.status = ReadStatus::pause_failed;
      return result;
    }
    const std::uint64_t head = mapping_.load_head();  // (C)
    result.head = head;
    if (head % kRecordAlignBytes != 0) {
      result.status = ReadStatus::head_unaligned;
    } else {
      walk_and_copy(head, destination, result);
    }
    // A failed resume leaves the event paused: the kernel counts what it
    // drops and reports it, so nothing is lost silently; the next snapshot's
    // pause tells again.
    const int resume_rc = mapping_.pause_output(false);
    if (resume_rc != 0) stats_.resume_failed++;
    return result;
  }

 private:
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

  void walk_and_copy(std::uint64_t head, std::span<std::byte> destination, Snapshot& result) {
    // Bytes the kernel wrote since the previous snapshot: head only moves
    // down, so a head above the previous one is corrupt.
    const std::uint64_t new_bytes = previous_head_ - head;
    if (new_bytes > kNewBytesMax) {
      result.status = ReadStatus::head_past_ring;
      return;
    }
    // Step 2: walk up from head. Each step advances by at least 8 bytes and
    // stops within one area size, so the loop has a fixed bound.
    const std::uint64_t steps_max = walk_positions_.size();
    std::uint64_t position = head;
    std::uint64_t count = 0;
    bool reached_previous = false;
    for (std::uint64_t step = 0; step <= steps_max; step++) {
      const std::uint64_t walked = position - head;
      if (walked == new_bytes) {
        reached_previous = true;
        break;
      }
      if (walked + kRecordHeaderBytes > size_bytes_) break;  // would pass one area
      std::byte raw[kRecordHeaderBytes];
      mapping_.copy_out(position, std::span<std::byte>(raw, sizeof raw));
      const perf_event_header header = load_header(raw);
      // Zero: never-written space where records must be. A record crossing
      // the previous snapshot's start cannot exist either. The walker's own
      // checks (a LOST record too short for its fields), so that what this
      // walk accepts the record loop's walk of the copy accepts too; and no
      // kernel writes an AUXTRACE record (perf.data's own) into a ring.
      const bool invalid = header_error(header, new_bytes - walked) != RecordError::none ||
                           header.type == kRecordAuxtrace;
      if (invalid) {
        result.status = ReadStatus::record_corrupt;
        result.corrupt_at = position;
        return;
      }
      if (walked + header.size > size_bytes_) break;  // partly overwritten
      VERIFY(count < walk_positions_.size());
      walk_positions_[count++] = position;
      position += header.size;
    }
    const std::uint64_t walked_bytes = position - head;
    VERIFY(walked_bytes <= size_bytes_);
    VERIFY(walked_bytes <= new_bytes);
    if (!reached_previous) {
      // The records between where the walk stopped and the previous
      // snapshot were overwritten before anyone read them.
      result.gap = PositionRange{position, previous_head_};
      VERIFY(result.gap.bytes() > 0);
      drops_.add_bytes(DropCause::overwritten, result.gap.bytes());
    }
    // Step 3: oldest first.
    std::uint64_t out = 0;
    for (std::uint64_t i = count; i > 0; i--) {
      const std::uint64_t at = walk_positions_[i - 1];
      const std::uint64_t next = (i == count) ? position : walk_positions_[i];
      const std::uint64_t length = next - at;
      VERIFY(out + length <= destination.size());
      if (copy_range(at, length, destination.data() + out)) stats_.wrapped_chunks++;
      out += length;
    }
    VERIFY(out == walked_bytes);
    result.status = count == 0 ? ReadStatus::empty : ReadStatus::ready;
    result.bytes = out;
    result.records = count;
    stats_.bytes_read += out;
    if (count > 0) stats_.chunks++;
    previous_head_ = head;
  }

  // No run writes 2^62 bytes between two snapshots; a larger distance means
  // head moved up.
  static constexpr std::uint64_t kNewBytesMax = std::uint64_t{1} << 62;

  M& mapping_;
  const RingMode mode_;
  const std::uint64_t size_bytes_;
  const std::uint64_t mask_;
  std::uint64_t tail_ = 0;           // normal mode: consumed up to here
  std::uint64_t previous_head_ = 0;  // backward mode: newest record already read
  std::vector<std::uint64_t> walk_positions_;
  RingStats stats_;
  Drops drops_;
};

}  // namespace ringsim::core
