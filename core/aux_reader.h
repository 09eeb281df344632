// Reading an AUX area (core/backend.h, AuxMapping).
//
// aux_head moves by bytes (a PMU stops where its packets stop), not words.
//
// Non-overwrite mode, per read:
//   1. h = load_aux_head() (C'); the new data is [tail, h). h - tail larger
//      than the area is corruption: reported, nothing copied.
//   2. Copy it, in up to two parts (it may cross the end of the area),
//      behind a PERF_RECORD_AUXTRACE header {size, offset = tail, cpu}.
//      Only whole multiples of 8 bytes are taken, except at the final read
//      (hangup, stop), which takes everything and pads with zeros: the
//      record's size stays a multiple of 8 without invented bytes in the
//      middle of the stream (the rest waits for the next read).
//   3. store_aux_tail(tail + taken) (D'): the space is the driver's again.
//   4. set_aux_enabled(true): the PMU disables the event when the area is
//      full or a transaction was TRUNCATED (a full area leaves no record
//      to tell), and nobody but the consumer turns it back on. ENABLE on
//      an enabled event does nothing.
// Overwrite (snapshot) mode, on request, at hangup and at stop:
//   1. stop the AUX output (set_aux_enabled(false));
//   2. h = load_aux_head();
//      free-running heads: the newest data is [max(previous h, h - size),
//      h), taken in multiples of 8 up to the final snapshot as above. If
//      more than an area was written since, the older bytes were
//      overwritten before anyone read them: that range is a gap (the
//      record that follows it then covers the whole area, give or take the
//      last word, which is how a reader of the file tells a gap from a
//      bug);
//      offset heads (h inside the area): the reader cannot tell how much
//      was written since the previous snapshot once the driver has gone
//      round the area. It decides the driver has (for good) as perf does
//      for Intel PT (intel_pt_find_snapshot, intel_pt_first_wrap): a
//      non-zero word in the area's last 4 KiB (the whole area if smaller;
//      the kernel hands AUX pages out zeroed), or h behind the previous h.
//      Until then the new data is [previous h, h); from then on every
//      snapshot takes the whole area, oldest byte (at h) first. The test
//      errs towards the whole area: with h inside the last 4 KiB before
//      the first lap, the record starts with the zeros past h (a PT
//      decoder reads them as PAD packets); what it cannot see is a lap
//      that left 4 KiB of zero words at the end. What was overwritten
//      between wrapped snapshots is unknown: not counted (the stream's own
//      packets tell);
//   3. copy it behind an AUXTRACE header, restart the output.
// The watermark and aux_wakeup are the driver's business (wakeups come
// through poll); the reader never divides by the watermark.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>

#include "core/backend.h"
#include "core/drops.h"
#include "core/perf_abi.h"
#include "core/ring_reader.h"
#include "core/verify.h"

namespace ringsim::core {

// What the reader did. What it dropped (snapshot gaps) is in its Drops.
struct AuxStats {
  std::uint64_t reads = 0;          // AUXTRACE records produced
  std::uint64_t bytes = 0;          // AUX data bytes taken
  std::uint64_t wrapped = 0;        // copies split at the end of the area
  std::uint64_t snapshots = 0;
  std::uint64_t enable_failures = 0;
  std::uint64_t wrapped_snapshots = 0;  // offset heads: the whole area taken

  void add(const AuxStats& o) {
    reads += o.reads;
    bytes += o.bytes;
    wrapped += o.wrapped;
    snapshots += o.snapshots;
    enable_failures += o.enable_failures;
    wrapped_snapshots += o.wrapped_snapshots;
  }
};

struct AuxRead {
  ReadStatus status = ReadStatus::empty;
  std::uint64_t record_bytes = 0;  // AUXTRACE header + data written into the destination
  PositionRange gap{};             // snapshot mode: overwritten before read
};

template <AuxMapping M>
class AuxReader {
 public:
  AuxReader(M& mapping, std::uint32_t cpu)
      : mapping_(mapping),
        cpu_(cpu),
        size_bytes_(mapping.aux_size_bytes()),
        mask_(size_bytes_ - 1),
        overwrite_(mapping.aux_overwrite()),
        offset_heads_(overwrite_ && mapping.aux_offset_heads()) {
    VERIFY(size_bytes_ >= 8);
    VERIFY((size_bytes_ & mask_) == 0);
  }

  bool overwrite() const { return overwrite_; }
  std::uint64_t size_bytes() const { return size_bytes_; }
  // The destination a read needs: a header and the whole area.
  std::uint64_t record_bytes_max() const { return kAuxtraceHeaderBytes + size_bytes_; }
  const AuxStats& stats() const { return stats_; }
  // Snapshot gaps (overwrite mode).
  const Drops& drops() const { return drops_; }

  // Whether there is data the next read would take (non-overwrite).
  bool has_data() {
    VERIFY(!overwrite_);
    return mapping_.load_aux_head() != tail_;  // (C')
  }

  // Non-overwrite mode. `final_read`: take every byte, padding to 8.
  AuxRead read(std::span<std::byte> destination, bool final_read) {
    VERIFY(!overwrite_);
    VERIFY(destination.size() >= record_bytes_max());
    AuxRead result;
    const std::uint64_t head = mapping_.load_aux_head();  // (C')
    const std::uint64_t available = head - tail_;
    if (available > size_bytes_) {
      result.status = ReadStatus::head_past_ring;
      return result;
    }
    const std::uint64_t taken = final_read ? available : available & ~std::uint64_t{7};
    if (taken == 0) return result;
    result.record_bytes = emit(destination, tail_, taken);
    tail_ += taken;
    mapping_.store_aux_tail(tail_);  // (D')
    if (!final_read && mapping_.set_aux_enabled(true) != 0) stats_.enable_failures++;
    result.status = ReadStatus::ready;
    return result;
  }

  // Snapshot mode. `final_read`: take every byte, padding to 8.
  AuxRead snapshot(std::span<std::byte> destination, bool final_read) {
    VERIFY(overwrite_);
    VERIFY(destination.size() >= record_bytes_max());
    stats_.snapshots++;
    if (mapping_.set_aux_enabled(false) != 0) stats_.enable_failures++;
    const std::uint64_t head = mapping_.load_aux_head();  // (C')
    const AuxRead result = offset_heads_ ? snapshot_in_area(destination, head, final_read)
                                         : snapshot_stream(destination, head, final_read);
    if (mapping_.set_aux_enabled(true) != 0) stats_.enable_failures++;
    return result;
  }

 private:
  static constexpr std::uint64_t kNewBytesMax = std::uint64_t{1} << 62;
  static constexpr std::uint64_t kFirstWrapBytes = 4096;  // perf: 512 words

  // Free-running heads: [max(previous, head - size), head), by words.
  AuxRead snapshot_stream(std::span<std::byte> destination, std::uint64_t head, bool final_read) {
    AuxRead result;
    const std::uint64_t written = head - previous_head_;
    if (written > kNewBytesMax) {
      result.status = ReadStatus::head_past_ring;
      return result;
    }
    const std::uint64_t end = final_read ? head : previous_head_ + (written & ~std::uint64_t{7});
    if (end == previous_head_) return result;
    const std::uint64_t oldest = head - std::min(written, size_bytes_);  // still in the area
    std::uint64_t begin = previous_head_;
    if (begin < oldest) {
      begin = final_read ? oldest : end - ((end - oldest) & ~std::uint64_t{7});
      // An area of a word or so holds no whole word ending at `end`: wait.
      if (begin == end) return result;
      result.gap = PositionRange{previous_head_, begin};
      drops_.add_bytes(DropCause::overwritten, result.gap.bytes());
    }
    result.record_bytes = emit(destination, begin, end - begin);
    result.status = ReadStatus::ready;
    previous_head_ = end;
    return result;
  }

  // Offset heads: [previous, head) until the driver has gone round the
  // area, then the whole area from head. AUXTRACE offsets are indexes.
  AuxRead snapshot_in_area(std::span<std::byte> destination, std::uint64_t head, bool final_read) {
    AuxRead result;
    if (head >= size_bytes_) {
      result.status = ReadStatus::head_past_ring;
      return result;
    }
    if (!wrapped_) wrapped_ = head < previous_head_ || end_written(destination);
    if (wrapped_) {
      stats_.wrapped_snapshots++;
      result.record_bytes = emit(destination, head, size_bytes_);
      previous_head_ = head;
    } else {
      const std::uint64_t written = head - previous_head_;
      const std::uint64_t taken = final_read ? written : written & ~std::uint64_t{7};
      if (taken == 0) return result;
      result.record_bytes = emit(destination, previous_head_, taken);
      previous_head_ += taken;
    }
    result.status = ReadStatus::ready;
    return result;
  }

  // perf's first-wrap test: whether any 8-byte word of the area's last
  // kFirstWrapBytes (all of it, if smaller) is not zero. Uses destination
  // as scratch.
  bool end_written(std::span<std::byte> destination) {
    const std::uint64_t length = std::min(size_bytes_, kFirstWrapBytes) & ~std::uint64_t{7};
    const std::span<std::byte> end(destination.data(), length);
    mapping_.copy_aux(size_bytes_ - length, end);
    return std::any_of(end.begin(), end.end(), [](std::byte b) { return b != std::byte{0}; });
  }

  // Writes an AUXTRACE record for [position, position + length) into
  // destination; returns its size.
  std::uint64_t emit(std::span<std::byte> destination, std::uint64_t position, std::uint64_t length) {
    VERIFY(length > 0);
    VERIFY(length <= size_bytes_);
    const std::uint64_t padded = (length + 7) & ~std::uint64_t{7};
    VERIFY(kAuxtraceHeaderBytes + padded <= destination.size());
    AuxtraceHeader h{};
    h.header.type = kRecordAuxtrace;
    h.header.size = kAuxtraceHeaderBytes;
    h.size = padded;
    h.offset = position;
    h.idx = cpu_;
    h.tid = static_cast<std::uint32_t>(-1);
    h.cpu = cpu_;
    std::memcpy(destination.data(), &h, sizeof h);
    std::byte* out = destination.data() + kAuxtraceHeaderBytes;
    const std::uint64_t index = position & mask_;
    const std::uint64_t first = std::min(length, size_bytes_ - index);
    mapping_.copy_aux(position, std::span<std::byte>(out, first));
    if (first < length) {
      mapping_.copy_aux(position + first, std::span<std::byte>(out + first, length - first));
      stats_.wrapped++;
    }
    std::memset(out + length, 0, padded - length);
    stats_.reads++;
    stats_.bytes += length;
    return kAuxtraceHeaderBytes + padded;
  }

  M& mapping_;
  const std::uint32_t cpu_;
  const std::uint64_t size_bytes_;
  const std::uint64_t mask_;
  const bool overwrite_;
  const bool offset_heads_;
  std::uint64_t tail_ = 0;
  std::uint64_t previous_head_ = 0;  // snapshots: free-running, or an index with offset heads
  bool wrapped_ = false;             // offset heads: the driver has gone round the area
  AuxStats stats_;
  Drops drops_;
};

}  // namespace ringsim::core
