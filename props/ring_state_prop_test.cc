// Stateful RapidCheck properties of one ring: the simulated kernel's ring
// (sim/kernel.h) and the core's reader (core/ring_reader.h), driven by
// random sequences of produce / read / consume / pause / resume /
// event-exit, checked against a model that knows only the rules:
//   - a record goes in if it fits (with a LOST record first when drops are
//     pending) with at least one byte left free, else it is dropped and
//     counted; paused output drops;
//   - a read returns exactly the records between tail and head, in order,
//     byte for byte; a consume gives their space back;
//   - every drop is reported by a LOST record, with the exact count, or is
//     still pending (an exit does not wait for room).
// And for overwrite (write_backward) rings: a snapshot returns exactly the
// records written since the previous snapshot that lie within one ring of
// head, oldest first, and reports the rest as one overwritten gap.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <rapidcheck/state.h>

#include <cstring>
#include <deque>
#include <memory>
#include <vector>

#include "core/records.h"
#include "core/ring_reader.h"
#include "core/testing/direct_mapping.h"
#include "sim/kernel.h"
#include "sim/sample.h"

namespace ringsim {
namespace {

using core::PositionRange;
using core::ReadStatus;
using core::RingMode;
using sim::SimRing;

constexpr std::uint64_t kLost = sim::kLostBytes;

// What the model expects a record to be.
struct Expected {
  bool lost = false;
  std::uint64_t count_or_sequence = 0;  // LOST: count; sample: sequence
  std::uint32_t size = 0;
};

std::vector<std::byte> sample_bytes(std::uint32_t size, std::uint64_t sequence) {
  std::vector<std::byte> bytes(size);
  sim::EventIdentity identity;
  identity.id = 1000;
  sim::build_sample(bytes, identity, sequence, sequence, 3);
  return bytes;
}

void check_record(const Expected& want, std::span<const std::byte> got) {
  perf_event_header header;
  std::memcpy(&header, got.data(), sizeof header);
  if (want.lost) {
    RC_ASSERT(header.type == static_cast<std::uint32_t>(PERF_RECORD_LOST));
    RC_ASSERT(header.size == kLost);
    std::uint64_t count;
    std::memcpy(&count, got.data() + core::kLostRecordLostOffset, 8);
    RC_ASSERT(count == want.count_or_sequence);
  } else {
    const std::vector<std::byte> bytes = sample_bytes(want.size, want.count_or_sequence);
    RC_ASSERT(got.size() == bytes.size());
    RC_ASSERT(std::memcmp(got.data(), bytes.data(), bytes.size()) == 0);
  }
}

// ---------------------------------------------------------------- normal --

struct Model {
  std::uint64_t ring_bytes = 0;
  std::deque<Expected> in_ring;  // records between tail and head, oldest first
  std::uint64_t used = 0;        // head - tail
  std::uint64_t read_records = 0;  // records the last read returned (a prefix of in_ring)
  std::uint64_t read_bytes = 0;
  std::uint64_t lost_pending = 0;
  std::uint64_t dropped = 0;
  std::uint64_t reported = 0;
  std::uint64_t next_sequence = 0;
  bool paused = false;
  bool exited = false;
};

// One ring and the core's reader over it, in either mode.
struct Sut {
  Sut(std::uint64_t ring_bytes, RingMode mode = RingMode::normal) {
    layout.size_bytes = ring_bytes;
    layout.mode = mode;
    event.identity.id = 1000;
    ring = std::make_unique<SimRing>(layout, log, probes);
    mapping = std::make_unique<core::testing::DirectMapping<sim::SimRing>>(*ring);
    reader = std::make_unique<core::RingReader<core::testing::DirectMapping<sim::SimRing>>>(*mapping, mode);
    buffer.resize(ring_bytes);
  }
  sim::RingLayout layout;
  sim::EventAttrs event;
  model::CpuLog log;
  sim::Probes probes;
  std::unique_ptr<SimRing> ring;
  std::unique_ptr<core::testing::DirectMapping<sim::SimRing>> mapping;
  std::unique_ptr<core::RingReader<core::testing::DirectMapping<sim::SimRing>>> reader;
  std::vector<std::byte> buffer;
  std::uint64_t read_end = 0;
};

using Command = rc::state::Command<Model, Sut>;

struct Produce : Command {
  std::uint32_t size;
  explicit Produce(const Model& m)
      : size(8 * *rc::gen::inRange<std::uint32_t>(6, static_cast<std::uint32_t>(m.ring_bytes / 8 + 4))) {}
  void checkPreconditions(const Model& m) const override { RC_PRE(!m.exited); }
  void apply(Model& m) const override {
    m.next_sequence++;
    const std::uint64_t need = size + (m.lost_pending > 0 ? kLost : 0);
    if (m.paused || m.used + need > m.ring_bytes - 1) {
      m.lost_pending++;
      m.dropped++;
      return;
    }
    if (m.lost_pending > 0) {
      m.in_ring.push_back(Expected{true, m.lost_pending, static_cast<std::uint32_t>(kLost)});
      m.reported += m.lost_pending;
      m.lost_pending = 0;
    }
    m.in_ring.push_back(Expected{false, m.next_sequence - 1, size});
    m.used += need;
  }
  void run(const Model& m, Sut& s) const override {
    const std::vector<std::byte> bytes = sample_bytes(size, m.next_sequence);
    const SimRing::Output out = s.ring->output(s.event, bytes, m.next_sequence);
    const Model after = nextState(m);
    RC_ASSERT((out == SimRing::Output::written) == (after.dropped == m.dropped));
    RC_ASSERT(s.ring->head() - s.ring->tail() == after.used);
    RC_ASSERT(s.log.dropped() == after.dropped);
  }
  void show(std::ostream& os) const override { os << "Produce(" << size << ")"; }
};

struct Read : Command {
  void apply(Model& m) const override {
    m.read_records = m.in_ring.size();
    m.read_bytes = m.used;
  }
  void run(const Model& m, Sut& s) const override {
    PositionRange chunk;
    const ReadStatus status = s.reader->available(chunk);
    if (m.in_ring.empty()) {
      RC_ASSERT(status == ReadStatus::empty);
      s.read_end = s.reader->tail();
      return;
    }
    RC_ASSERT(status == ReadStatus::ready);
    RC_ASSERT(chunk.bytes() == m.used);
    s.reader->copy(chunk, s.buffer);
    core::RecordCounts counts;
    std::size_t index = 0;
    const core::WalkResult walk =
        core::walk_records(std::span<const std::byte>(s.buffer.data(), chunk.bytes()), counts,
                           [&](const perf_event_header&, std::span<const std::byte> record) {
                             RC_ASSERT(index < m.in_ring.size());
                             check_record(m.in_ring[index++], record);
                           });
    RC_ASSERT(walk.error == core::RecordError::none);
    RC_ASSERT(index == m.in_ring.size());
    s.read_end = chunk.end;
  }
  void show(std::ostream& os) const override { os << "Read"; }
};

struct Consume : Command {
  void checkPreconditions(const Model& m) const override { RC_PRE(m.read_records > 0); }
  void apply(Model& m) const override {
    for (std::uint64_t i = 0; i < m.read_records; i++) m.in_ring.pop_front();
    m.used -= m.read_bytes;
    m.read_records = 0;
    m.read_bytes = 0;
  }
  void run(const Model& m, Sut& s) const override {
    s.reader->consume(s.read_end);
    RC_ASSERT(s.ring->head() - s.ring->tail() == nextState(m).used);
  }
  void show(std::ostream& os) const override { os << "Consume"; }
};

struct Pause : Command {
  bool paused;
  explicit Pause(const Model&) : paused(*rc::gen::arbitrary<bool>()) {}
  void apply(Model& m) const override { m.paused = paused; }
  void run(const Model&, Sut& s) const override { RC_ASSERT(s.mapping->pause_output(paused) == 0); }
  void show(std::ostream& os) const override { os << (paused ? "Pause" : "Resume"); }
};

// The event exits: pending drops stay pending (nothing waits for room to
// report them), the ring hangs up, the reader must still drain.
struct Exit : Command {
  void checkPreconditions(const Model& m) const override { RC_PRE(!m.exited); }
  void apply(Model& m) const override { m.exited = true; }
  void run(const Model& m, Sut& s) const override {
    s.ring->hang_up();
    RC_ASSERT(s.ring->hung_up());
    RC_ASSERT(s.log.lost_reported == nextState(m).reported);
    RC_ASSERT(s.ring->lost_pending() == nextState(m).lost_pending);
  }
  void show(std::ostream& os) const override { os << "Exit"; }
};

RC_GTEST_PROP(RingState, NormalModeAgainstTheModel, ()) {
  const std::uint64_t ring_bytes = std::uint64_t{4096} << *rc::gen::inRange(0, 3);
  Model model;
  model.ring_bytes = ring_bytes;
  Sut sut(ring_bytes);
  rc::state::check(model, sut,
                   rc::state::gen::execOneOfWithArgs<Produce, Produce, Produce, Read, Consume, Pause, Exit>());
  // Whatever happened, the kernel's accounting is exact.
  RC_ASSERT(sut.log.dropped() == sut.log.lost_reported + sut.ring->lost_pending());
  RC_CLASSIFY(sut.log.lost_reported > 0, "a LOST record was written");
  RC_CLASSIFY(sut.reader->stats().wrapped_chunks > 0, "a chunk wrapped");
  RC_CLASSIFY(sut.ring->hung_up(), "the event exited");
}

// ------------------------------------------------------------- backward --

struct BackModel {
  std::uint64_t ring_bytes = 0;
  std::uint64_t head = 0;           // position of the newest record
  std::uint64_t snapshot_head = 0;  // head at the previous snapshot
  struct Written {
    std::uint64_t position;
    Expected record;
  };
  std::vector<Written> written;  // every record, oldest first
  std::uint64_t next_sequence = 0;
};

using BackSut = Sut;

using BackCommand = rc::state::Command<BackModel, BackSut>;

struct BackProduce : BackCommand {
  std::uint32_t size;
  explicit BackProduce(const BackModel& m)
      : size(8 * *rc::gen::inRange<std::uint32_t>(6, static_cast<std::uint32_t>(m.ring_bytes / 16))) {}
  void apply(BackModel& m) const override {
    m.head -= size;
    m.written.push_back(BackModel::Written{m.head, Expected{false, m.next_sequence, size}});
    m.next_sequence++;
  }
  void run(const BackModel& m, BackSut& s) const override {
    const std::vector<std::byte> bytes = sample_bytes(size, m.next_sequence);
    RC_ASSERT(s.ring->output(s.event, bytes, m.next_sequence) == SimRing::Output::written);
    RC_ASSERT(s.ring->head() == nextState(m).head);
  }
  void show(std::ostream& os) const override { os << "Produce(" << size << ")"; }
};

struct BackSnapshot : BackCommand {
  void apply(BackModel& m) const override { m.snapshot_head = m.head; }
  void run(const BackModel& m, BackSut& s) const override {
    // The model's answer: new records entirely within one ring of head.
    std::vector<const BackModel::Written*> expected;
    bool gap = false;
    std::uint64_t gap_begin = m.snapshot_head;
    for (auto it = m.written.rbegin(); it != m.written.rend(); ++it) {
      if (it->position - m.head >= m.snapshot_head - m.head) break;  // read before
      if (it->position - m.head + it->record.size > m.ring_bytes) {
        gap = true;
        gap_begin = it->position;
        break;
      }
      expected.push_back(&*it);
    }
    const core::Snapshot snap = s.reader->snapshot(s.buffer);
    RC_ASSERT(snap.status == (expected.empty() ? ReadStatus::empty : ReadStatus::ready));
    RC_ASSERT(snap.records == expected.size());
    RC_ASSERT((snap.gap.bytes() > 0) == gap);
    if (gap) {
      RC_ASSERT(snap.gap.begin == gap_begin);
      RC_ASSERT(snap.gap.end == m.snapshot_head);
    }
    std::uint64_t offset = 0;
    for (auto it = expected.rbegin(); it != expected.rend(); ++it) {  // oldest first
      check_record((*it)->record, std::span<const std::byte>(s.buffer.data() + offset, (*it)->record.size));
      offset += (*it)->record.size;
    }
    RC_ASSERT(offset == snap.bytes);
    RC_ASSERT(!s.ring->paused());
  }
  void show(std::ostream& os) const override { os << "Snapshot"; }
};

RC_GTEST_PROP(RingState, BackwardSnapshotsAgainstTheModel, ()) {
  const std::uint64_t ring_bytes = std::uint64_t{4096} << *rc::gen::inRange(0, 3);
  BackModel model;
  model.ring_bytes = ring_bytes;
  BackSut sut(ring_bytes, RingMode::backward);
  rc::state::check(model, sut, rc::state::gen::execOneOfWithArgs<BackProduce, BackProduce, BackProduce, BackSnapshot>());
  RC_CLASSIFY(sut.reader->drops()[core::DropCause::overwritten].events > 0, "a snapshot found a gap");
  RC_CLASSIFY(sut.probes.count(sim::Probe::wrap_inside_record) > 0, "a record wrapped");
}

}  // namespace
}  // namespace ringsim
