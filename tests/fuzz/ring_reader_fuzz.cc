// Fuzzes the core's ring reader (its four modes) and AUX reader
// (core/ring_reader.h, core/aux_reader.h) over a mapping whose control page
// and areas the input scripts (core/testing/scripted_mapping.h): heads set
// to anything, records written as a kernel would (or not), bytes poked,
// PAUSE_OUTPUT and AUX enabling failing, and any of these changed in the
// middle of a read, between two of the reader's calls.
//
// The input: two setup bytes (data area 8..4096 bytes and the ring mode:
// normal, backward, forward_overwrite, backward_writable; AUX area none or
// 8..4096 bytes, normal or snapshot), then up to kOpsMax
// operations (interpreted below). Every read is checked against an
// independent statement of the protocol:
//   - never a copy outside an area (the double, and ASan on the exactly
//     sized areas and destinations), never an endless loop (the double's
//     call bound, libFuzzer's -timeout);
//   - every bad state is reported, not read: an unaligned head, a head more
//     than an area ahead (or moved the wrong way), a bad header where
//     records must be (writable and forward rings); a good state is read:
//     the exact chunk, walk, gap, record count and AUXTRACE record the
//     protocol gives;
//   - what is delivered is what the area held when it was copied, in
//     order, and a snapshot that nothing changed during walks as whole
//     records;
//   - tails move only forward, over what was read; the output is resumed
//     and the AUX output re-enabled after a snapshot.
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/aux_reader.h"
#include "core/records.h"
#include "core/ring_reader.h"
#include "core/testing/scripted_mapping.h"
#include "core/verify.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using namespace ringsim;
using core::ReadStatus;
using core::testing::ScriptedMapping;

constexpr int kOpsMax = 256;
constexpr std::uint64_t kNewBytesMax = std::uint64_t{1} << 62;
constexpr std::uint32_t kCpu = 3;

// A change the input schedules inside the next read: at the reader's k-th
// call of that read.
struct Change {
  std::uint32_t at_call = 0;
  std::uint8_t kind = 0;
  std::uint64_t value = 0;
  std::uint16_t index = 0;
  std::uint64_t bytes = 0;
};

class Harness {
 public:
  Harness(fuzz::FuzzInput& in, std::uint64_t data_bytes, core::RingMode mode, std::uint64_t aux_bytes,
          bool aux_overwrite)
      : in_(in), mapping_(data_bytes, aux_bytes, aux_overwrite), mode_(mode) {
    reader_ = std::make_unique<core::RingReader<ScriptedMapping>>(mapping_, mode);
    if (aux_bytes > 0) aux_ = std::make_unique<core::AuxReader<ScriptedMapping>>(mapping_, kCpu);
    destination_.resize(data_bytes);
    mapping_.before_call = [this](ScriptedMapping::Call) { maybe_change(); };
  }

  void run() {
    for (int op = 0; op < kOpsMax && !in_.empty(); op++) step(in_.byte() % 12);
  }

 private:
  void step(std::uint8_t op) {
    switch (op) {
      case 0: kernel_write(); break;
      case 1: mapping_.head = in_.u64(); break;
      case 2: mapping_.head += static_cast<std::uint64_t>(static_cast<std::int8_t>(in_.byte())) * 8; break;
      case 3: poke(in_.u16(), in_.u64()); break;
      case 4: read(); break;
      case 5: aux_write(in_.byte()); break;
      case 6: mapping_.aux_head = in_.u64(); break;
      case 7: aux_op(); break;
      case 8: set_failures(in_.byte()); break;
      case 9: schedule_change(); break;
      case 10: mapping_.aux_head += in_.byte(); break;
      default: kernel_write_many(in_.byte() % 16); break;
    }
  }

  void read() {
    switch (mode_) {
      case core::RingMode::normal: read_forward(); break;
      case core::RingMode::backward_writable: read_backward(); break;
      default: snapshot(); break;
    }
  }

  // --- The kernel's side -------------------------------------------------------------

  void poke(std::uint16_t index, std::uint64_t value) {
    const std::size_t at = index % mapping_.data.size() & ~std::size_t{7};
    std::memcpy(mapping_.data.data() + at, &value, std::min<std::size_t>(8, mapping_.data.size() - at));
  }

  // A record as the kernel writes it: forward at head, or (overwrite) below
  // head. Bytes wrap around the end of the area.
  void kernel_write() {
    const std::uint16_t size = static_cast<std::uint16_t>(8 * (1 + in_.byte() % 32));
    const std::uint32_t type = in_.byte() % 12;
    write_record(size, type);
  }
  void kernel_write_many(int count) {
    for (int i = 0; i < count; i++) write_record(static_cast<std::uint16_t>(8 * (1 + i % 5)), PERF_RECORD_SAMPLE);
  }
  void write_record(std::uint16_t size, std::uint32_t type) {
    if (core::backward(mode_)) mapping_.head -= size;
    const std::uint64_t at = mapping_.head;
    perf_event_header header{type, 0, size};
    std::byte bytes[8];
    std::memcpy(bytes, &header, 8);
    const std::uint64_t mask = mapping_.data.size() - 1;
    for (std::uint64_t i = 0; i < size; i++) {
      mapping_.data[(at + i) & mask] = i < 8 ? bytes[i] : std::byte{static_cast<std::uint8_t>(at + i)};
    }
    if (!core::backward(mode_)) mapping_.head += size;
  }

  void aux_write(std::uint8_t length) {
    if (mapping_.aux.empty()) return;
    const std::uint64_t mask = mapping_.aux.size() - 1;
    for (std::uint64_t i = 0; i < length; i++) {
      mapping_.aux[(mapping_.aux_head + i) & mask] = std::byte{static_cast<std::uint8_t>(mapping_.aux_head + i)};
    }
    mapping_.aux_head += length;
  }

  // Failing calls, and the PMU disabling the AUX event (truncation, a
  // full area): only the reader's ENABLE turns it back on.
  void set_failures(std::uint8_t bits) {
    mapping_.pause_result = (bits & 1) ? -EINVAL : 0;
    mapping_.enable_result = (bits & 2) ? -EIO : 0;
    if (bits & 4) mapping_.disable_aux_by_pmu();
  }

  void schedule_change() {
    Change c;
    c.at_call = in_.byte() % 8;
    c.kind = in_.byte() % 5;
    c.value = in_.u64();
    c.index = in_.u16();
    change_ = c;
  }

  // Runs at the start of every call of the reader.
  void maybe_change() {
    const std::uint64_t call = mapping_.calls() - calls_at_read_start_;
    if (!change_ || !in_read_ || call != change_->at_call + 1) return;
    const Change c = *change_;
    change_.reset();
    changed_ = true;
    switch (c.kind) {
      case 0: mapping_.head = c.value; break;
      case 1: mapping_.head += (c.value % 33) * 8; break;
      case 2: poke(c.index, c.value); break;
      case 3: mapping_.aux_head = c.value; break;
      default: mapping_.aux_head += c.value % 300; break;
    }
  }

  void start_read() {
    in_read_ = true;
    changed_ = false;
    calls_at_read_start_ = mapping_.calls();
    mapping_.copies.clear();
  }
  void end_read() { in_read_ = false; }

  // --- Checks ------------------------------------------------------------------------

  // The copies of this read, concatenated, must be `delivered`, and start at
  // `position` one after the other.
  void check_copies(bool aux, std::uint64_t position, std::span<const std::byte> delivered) {
    std::uint64_t at = 0;
    for (const ScriptedMapping::Copy& copy : mapping_.copies) {
      if (copy.aux != aux) continue;
      VERIFY(copy.position == position + at);
      VERIFY(at + copy.bytes.size() <= delivered.size());
      VERIFY(std::memcmp(copy.bytes.data(), delivered.data() + at, copy.bytes.size()) == 0);
      at += copy.bytes.size();
    }
    VERIFY(at == delivered.size());
  }

  // --- Forward (normal mode): the record loop's sequence -----------------------------

  ReadStatus expected_forward(std::uint64_t head, std::uint64_t tail) const {
    if (head % 8 != 0) return ReadStatus::head_unaligned;
    if (head == tail) return ReadStatus::empty;
    if (head - tail > mapping_.data.size()) return ReadStatus::head_past_ring;
    return ReadStatus::ready;
  }

  ReadStatus checked_available(core::PositionRange& chunk) {
    const std::uint64_t tail = reader_->tail();
    const ReadStatus status = reader_->available(chunk);
    const std::uint64_t head = mapping_.loaded_head();
    VERIFY(status == expected_forward(head, tail));
    if (status == ReadStatus::ready) VERIFY(chunk == (core::PositionRange{tail, head}));
    VERIFY(reader_->tail() == tail);
    return status;
  }

  void read_forward() {
    start_read();
    core::PositionRange chunk;
    if (checked_available(chunk) == ReadStatus::ready && checked_available(chunk) == ReadStatus::ready) {
      mapping_.copies.clear();
      reader_->copy(chunk, destination_);
      const std::span<const std::byte> copied(destination_.data(), chunk.bytes());
      check_copies(false, chunk.begin, copied);
      core::RecordCounts counts;
      if (core::walk_records(copied, counts).error == core::RecordError::none) {
        reader_->consume(chunk.end);
        VERIFY(mapping_.tail() == chunk.end);
      }
    }
    end_read();
  }

  // --- The other modes: walks, snapshots, backward reads -----------------------------

  // A walk up through record sizes as core/ring_reader.h states it: from
  // `from`, over at most `limit` bytes, never past one area; it stops at a
  // header that cannot be a record the kernel wrote (too small, unaligned,
  // past the limit, refused by the record walker, type 0 or a user type)
  // and, with stop_at_area, before a record that passes one area.
  struct Walk {
    std::uint64_t bytes = 0;
    std::uint64_t records = 0;
    bool bad_header = false;
  };

  Walk expected_walk(std::uint64_t from, std::uint64_t limit, bool stop_at_area) const {
    Walk w;
    const std::uint64_t area = mapping_.data.size();
    while (w.bytes != limit && w.bytes + 8 <= area) {
      perf_event_header header;
      std::memcpy(&header, mapping_.data.data() + ((from + w.bytes) & (area - 1)), 8);
      const bool lost_too_small = header.type == PERF_RECORD_LOST && header.size < 24;
      if (header.size < 8 || header.size % 8 != 0 || header.size > limit - w.bytes || lost_too_small ||
          header.type == 0 || header.type >= 64) {
        w.bad_header = true;
        break;
      }
      if (stop_at_area && w.bytes + header.size > area) break;
      w.bytes += header.size;
      w.records++;
    }
    return w;
  }

  // What was delivered walks as whole records, as many as the reader said.
  void check_delivered(std::uint64_t bytes, std::uint64_t records) {
    core::RecordCounts counts;
    const std::span<const std::byte> copied(destination_.data(), bytes);
    VERIFY(core::walk_records(copied, counts).error == core::RecordError::none);
    VERIFY(counts.records == records);
  }

  void check_backward_snapshot(const core::Snapshot& s, std::uint64_t head, std::uint64_t previous) {
    const std::uint64_t new_bytes = previous - head;
    if (new_bytes > kNewBytesMax) {
      VERIFY(s.status == ReadStatus::head_past_ring);
      return;
    }
    VERIFY(s.status == ReadStatus::ready || s.status == ReadStatus::empty || s.status == ReadStatus::head_past_ring);
    if (s.status == ReadStatus::head_past_ring) return;  // head moved up while paused
    previous_head_ = head;
    VERIFY(s.bytes <= mapping_.data.size());
    VERIFY((s.status == ReadStatus::ready) == (s.records > 0));
    VERIFY(s.bytes + s.gap.bytes() == new_bytes);
    VERIFY(s.gap.bytes() == 0 || s.gap.end == previous);
    if (changed_) return;  // the ring moved during the read: the record loop checks the copy
    const Walk w = expected_walk(head, new_bytes, true);
    VERIFY(s.bytes == w.bytes && s.records == w.records);
    check_delivered(s.bytes, s.records);
  }

  void check_forward_snapshot(const core::Snapshot& s, std::uint64_t head, std::uint64_t previous) {
    const std::uint64_t new_bytes = head - previous;
    if (new_bytes > kNewBytesMax) {
      VERIFY(s.status == ReadStatus::head_past_ring);
      return;
    }
    previous_head_ = head;
    VERIFY(s.bytes <= mapping_.data.size());
    VERIFY(s.gap.bytes() == 0 || s.gap.begin == previous);
    if (changed_) return;  // the ring moved during the read: the record loop checks the copy
    if (s.status == ReadStatus::ready) check_delivered(s.bytes, s.records);
    if (new_bytes > mapping_.data.size()) {
      VERIFY(s.status == ReadStatus::empty && s.gap == (core::PositionRange{previous, head}));
      return;
    }
    const Walk w = expected_walk(previous, new_bytes, false);
    if (w.bad_header) {
      VERIFY(s.status == ReadStatus::record_corrupt && s.corrupt_at == previous + w.bytes);
    } else {
      VERIFY(s.status == (new_bytes == 0 ? ReadStatus::empty : ReadStatus::ready));
      VERIFY(s.bytes == new_bytes && s.records == w.records);
    }
  }

  // Read-only modes.
  void snapshot() {
    start_read();
    const std::uint64_t previous = previous_head_;
    const int pause = mapping_.pause_result;
    const core::Snapshot s = reader_->snapshot(destination_);
    const std::uint64_t head = s.head;
    if (pause != 0) {
      VERIFY(s.status == ReadStatus::pause_failed);
      VERIFY(mapping_.copies.empty());
    } else if (head % 8 != 0) {
      VERIFY(s.status == ReadStatus::head_unaligned);
    } else {
      VERIFY(!mapping_.paused());  // resumed
      if (mode_ == core::RingMode::backward) {
        check_backward_snapshot(s, head, previous);
      } else {
        check_forward_snapshot(s, head, previous);
      }
    }
    end_read();
  }

  // backward_writable: [head, tail) read oldest first, the tail stored at head.
  void read_backward() {
    start_read();
    const std::uint64_t tail = reader_->tail();
    const core::Snapshot s = reader_->read_backward(destination_);
    const std::uint64_t head = mapping_.loaded_head();
    const ReadStatus available = expected_backward_available(head, tail);
    if (available != ReadStatus::ready) {
      VERIFY(s.status == available);
    } else if (s.status == ReadStatus::ready) {
      VERIFY(s.bytes == tail - head && mapping_.tail() == head && reader_->tail() == head);
      if (!changed_) check_delivered(s.bytes, s.records);
    } else {
      VERIFY(s.status == ReadStatus::record_corrupt && reader_->tail() == tail);
    }
    if (!changed_ && available == ReadStatus::ready) {
      const Walk w = expected_walk(head, tail - head, false);
      VERIFY((s.status == ReadStatus::ready) == (!w.bad_header && w.bytes == tail - head));
    }
    end_read();
  }

  ReadStatus expected_backward_available(std::uint64_t head, std::uint64_t tail) const {
    if (head % 8 != 0) return ReadStatus::head_unaligned;
    if (tail == head) return ReadStatus::empty;
    if (tail - head > mapping_.data.size()) return ReadStatus::head_past_ring;
    return ReadStatus::ready;
  }

  // --- AUX ---------------------------------------------------------------------------

  void aux_op() {
    if (!aux_) return;
    start_read();
    if (aux_->overwrite()) {
      aux_snapshot(in_.byte() & 1);
    } else if (in_.byte() % 3 == 0) {
      const std::uint64_t tail = mapping_.aux_tail();
      const bool has = aux_->has_data();
      VERIFY(has == (mapping_.loaded_aux_head() != tail));
    } else {
      aux_read(in_.byte() & 1);
    }
    end_read();
  }

  // An AUXTRACE record of `data_bytes` taken from `position`, as the reader
  // must have built it in the destination.
  void check_auxtrace(const core::AuxRead& r, std::uint64_t position, std::uint64_t data_bytes) {
    const std::uint64_t padded = (data_bytes + 7) & ~std::uint64_t{7};
    VERIFY(r.record_bytes == core::kAuxtraceHeaderBytes + padded);
    VERIFY(r.record_bytes <= aux_destination_.size());
    core::AuxtraceHeader h;
    std::memcpy(&h, aux_destination_.data(), sizeof h);
    VERIFY(h.header.type == core::kRecordAuxtrace);
    VERIFY(h.header.size == core::kAuxtraceHeaderBytes);
    VERIFY(h.size == padded);
    VERIFY(h.offset == position);
    VERIFY(h.cpu == kCpu && h.idx == kCpu);
    const std::byte* data = aux_destination_.data() + core::kAuxtraceHeaderBytes;
    check_copies(true, position, std::span<const std::byte>(data, data_bytes));
    for (std::uint64_t i = data_bytes; i < padded; i++) VERIFY(data[i] == std::byte{0});
    core::RecordCounts counts;
    const std::span<const std::byte> record(aux_destination_.data(), r.record_bytes);
    VERIFY(core::walk_records(record, counts).error == core::RecordError::none);
    VERIFY(counts.auxtrace_records == 1 && counts.records == 1);
  }

  void aux_read(bool final_read) {
    aux_destination_.assign(aux_->record_bytes_max(), std::byte{0xee});
    const std::uint64_t tail = mapping_.aux_tail();
    const core::AuxRead r = aux_->read(aux_destination_, final_read);
    const std::uint64_t available = mapping_.loaded_aux_head() - tail;
    const std::uint64_t taken = final_read ? available : available & ~std::uint64_t{7};
    if (available > mapping_.aux.size()) {
      VERIFY(r.status == ReadStatus::head_past_ring);
    } else if (taken == 0) {
      VERIFY(r.status == ReadStatus::empty);
    } else {
      VERIFY(r.status == ReadStatus::ready);
      check_auxtrace(r, tail, taken);
    }
    VERIFY(mapping_.aux_tail() == (r.status == ReadStatus::ready ? tail + taken : tail));
    // A live read that made room turns the event back on (the PMU may have
    // disabled it; nothing else would).
    if (r.status == ReadStatus::ready && !final_read && mapping_.enable_result == 0) VERIFY(mapping_.aux_enabled());
  }

  // Free-running heads: what was written since the previous snapshot,
  // within one area, in whole words except at the final snapshot; the
  // bytes before the area's oldest one a gap.
  void aux_snapshot(bool final_read) {
    aux_destination_.assign(aux_->record_bytes_max(), std::byte{0xee});
    const bool enable_fails = mapping_.enable_result != 0;
    const core::AuxRead r = aux_->snapshot(aux_destination_, final_read);
    if (!enable_fails) VERIFY(mapping_.aux_enabled());
    const std::uint64_t head = mapping_.loaded_aux_head();
    const std::uint64_t written = head - aux_previous_head_;
    const std::uint64_t size = mapping_.aux.size();
    const std::uint64_t end = final_read ? head : aux_previous_head_ + written / 8 * 8;
    // The first byte still in the area, and the first taken: a whole
    // number of words before `end` unless it is the final snapshot.
    const std::uint64_t oldest = written > size ? head - size : aux_previous_head_;
    const std::uint64_t begin = oldest == aux_previous_head_ || final_read ? oldest : end - (end - oldest) / 8 * 8;
    if (written > kNewBytesMax) {
      VERIFY(r.status == ReadStatus::head_past_ring);
    } else if (end == aux_previous_head_ || begin == end) {
      VERIFY(r.status == ReadStatus::empty);
      VERIFY(r.gap == core::PositionRange{});
    } else {
      VERIFY(r.status == ReadStatus::ready);
      VERIFY(r.gap == (begin == aux_previous_head_ ? core::PositionRange{} : core::PositionRange{aux_previous_head_, begin}));
      check_auxtrace(r, begin, end - begin);
      aux_previous_head_ = end;
    }
  }

  fuzz::FuzzInput& in_;
  ScriptedMapping mapping_;
  const core::RingMode mode_;
  std::unique_ptr<core::RingReader<ScriptedMapping>> reader_;
  std::unique_ptr<core::AuxReader<ScriptedMapping>> aux_;
  std::vector<std::byte> destination_;
  std::vector<std::byte> aux_destination_;
  std::uint64_t previous_head_ = 0;
  std::uint64_t aux_previous_head_ = 0;
  std::optional<Change> change_;
  bool in_read_ = false;
  bool changed_ = false;
  std::uint64_t calls_at_read_start_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::FuzzInput in(data, size);
  const std::uint8_t ring = in.byte();
  const std::uint8_t aux = in.byte();
  const std::uint64_t data_bytes = std::uint64_t{8} << (ring % 10);
  const auto mode = static_cast<core::RingMode>(ring >> 6);  // normal, backward, forward_overwrite, backward_writable
  const std::uint64_t aux_bytes = aux % 11 == 0 ? 0 : std::uint64_t{4} << (aux % 11);
  Harness(in, data_bytes, mode, aux_bytes, (aux & 0x80) != 0).run();
  return 0;
}
