// Stateful RapidCheck property of the trace writer's control blocks
// (core/trace_writer.h): random sequences of pushes, write completions
// (full, short, interrupted, failed, in any order) and poll-round ends,
// against a model of the state machine:
//   free -> in flight (push: offset reserved, mapping referenced)
//   in flight -> in flight (short write: the remainder resubmitted at
//     offset + written; EINTR: resubmitted)
//   in flight -> free (complete: reference dropped; hard error: recording
//     stopped, reported once, never resubmitted)
// At the end: every write completes, the mapping references are zero, and
// the file holds exactly the chunks before the first failed one, in
// reservation order, with the header saying so.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <rapidcheck/state.h>

#include <map>
#include <memory>
#include <vector>

#include "core/trace_writer.h"
#include "model/perf_data_file.h"
#include "sim/sample.h"
#include "core/testing/scripted_disk.h"

namespace ringsim {
namespace {

using core::testing::ScriptedDisk;
using Writer = core::TraceWriter<ScriptedDisk>;

constexpr std::uint32_t kMappings = 2;

std::vector<std::byte> chunk_bytes(std::uint32_t size, std::uint64_t id) {
  std::vector<std::byte> bytes(size);
  sim::EventIdentity identity;
  identity.id = 1000 + id % kMappings;
  sim::build_sample(bytes, identity, id, id, 9);
  return bytes;
}

struct Model {
  std::uint32_t cblocks = 1;
  struct Slot {
    bool in_flight = false;
    bool completed = false;     // the disk finished it; the writer has not reaped yet
    std::int64_t result = 0;    // what the disk reported
    std::uint64_t chunk = 0;
    std::uint64_t written = 0;  // bytes of the chunk written so far
  };
  std::vector<Slot> slots;
  struct Chunk {
    std::uint64_t offset = 0;
    std::uint32_t size = 0;     // 8 for a FINISHED_ROUND marker
    bool marker = false;
    bool failed = false;
  };
  std::vector<Chunk> chunks;
  std::uint64_t next_offset = 0;
  std::uint64_t round_bytes = 0;
  int error = 0;

  std::uint32_t references(std::uint32_t mapping) const {
    std::uint32_t n = 0;
    for (std::uint32_t k = 0; k < cblocks; k++) n += slots[mapping * cblocks + k].in_flight;
    return n;
  }
};

struct Sut {
  Sut(std::uint32_t cblocks, const core::PerfDataHead& head) : disk(kMappings * cblocks) {
    core::WriterOptions o;
    o.mode = core::WriteMode::aio;
    o.cblocks = cblocks;
    o.mappings = kMappings;
    o.buffer_bytes = 4096;
    writer = std::make_unique<Writer>(disk, o, head);
  }
  ScriptedDisk disk;
  std::unique_ptr<Writer> writer;
  Model model;  // the model after the last command (rc::state::check works on a copy)
};

using Command = rc::state::Command<Model, Sut>;

// What the writer does with the completions the disk reported.
void reap(Model& m) {
  for (Model::Slot& slot : m.slots) {
    if (!slot.in_flight || !slot.completed) continue;
    slot.completed = false;
    Model::Chunk& c = m.chunks[slot.chunk];
    if (slot.result == -EINTR && m.error == 0) continue;  // resubmitted whole
    if (slot.result < 0) {
      if (m.error == 0) m.error = static_cast<int>(-slot.result);
      c.failed = true;
      slot.in_flight = false;
      continue;
    }
    slot.written += static_cast<std::uint64_t>(slot.result);
    if (slot.written == c.size) {
      slot.in_flight = false;
    } else if (m.error != 0) {
      c.failed = true;  // a short write after the failure is not restarted
      slot.in_flight = false;
    }  // else: the remainder is resubmitted
  }
}

void check_in_flight(const Model& m, Sut& s) {
  for (std::uint32_t slot = 0; slot < m.slots.size(); slot++) {
    const Model::Slot& want = m.slots[slot];
    const bool disk_has = s.disk.in_flight.count(slot) > 0;
    RC_ASSERT(disk_has == (want.in_flight && !want.completed));
    if (disk_has) {
      const Model::Chunk& c = m.chunks[want.chunk];
      RC_ASSERT(s.disk.in_flight[slot].offset == c.offset + want.written);
      RC_ASSERT(s.disk.in_flight[slot].size == c.size - want.written);
    }
  }
  for (std::uint32_t mapping = 0; mapping < kMappings; mapping++) {
    RC_ASSERT(s.writer->references(mapping) == m.references(mapping));
  }
}

struct Push : Command {
  std::uint32_t mapping;
  std::uint32_t size;
  explicit Push(const Model&)
      : mapping(*rc::gen::inRange<std::uint32_t>(0, kMappings)),
        size(8 * *rc::gen::inRange<std::uint32_t>(6, 512)) {}
  std::uint32_t free_slot(const Model& m) const {
    for (std::uint32_t k = 0; k < m.cblocks; k++) {
      if (!m.slots[mapping * m.cblocks + k].in_flight) return mapping * m.cblocks + k;
    }
    return UINT32_MAX;
  }
  void checkPreconditions(const Model& m) const override {
    RC_PRE(m.error == 0);
    RC_PRE(free_slot(m) != UINT32_MAX);  // waiting is the unit tests' business
  }
  void apply(Model& m) const override {
    Model::Slot& slot = m.slots[free_slot(m)];
    slot = Model::Slot{true, false, 0, m.chunks.size(), 0};
    m.chunks.push_back(Model::Chunk{m.next_offset, size, false, false});
    m.next_offset += size;
    m.round_bytes += size;
  }
  void run(const Model& m, Sut& s) const override {
    const std::span<std::byte> buffer = s.writer->acquire(mapping);
    RC_ASSERT(buffer.size() == 4096u);
    const std::vector<std::byte> bytes = chunk_bytes(size, m.chunks.size());
    std::memcpy(buffer.data(), bytes.data(), size);
    core::RecordCounts counts;
    core::walk_records(std::span<const std::byte>(buffer.data(), size), counts);
    RC_ASSERT(s.writer->commit(mapping, size, counts) == 0);
    s.model = nextState(m);
    check_in_flight(s.model, s);
  }
  void show(std::ostream& os) const override { os << "Push(mapping " << mapping << ", " << size << " bytes)"; }
};

struct Complete : Command {
  std::uint32_t slot;
  int kind;  // 0 full, 1 short, 2 EINTR, 3 EIO
  std::uint64_t short_bytes_seed;
  explicit Complete(const Model& m)
      : slot(*rc::gen::inRange<std::uint32_t>(0, static_cast<std::uint32_t>(m.slots.size()))),
        kind(*rc::gen::weightedElement<int>({{6, 0}, {3, 1}, {2, 2}, {1, 3}})),
        short_bytes_seed(*rc::gen::arbitrary<std::uint64_t>()) {}
  std::int64_t result(const Model& m) const {
    const Model::Slot& s = m.slots[slot];
    const std::uint64_t remaining = m.chunks[s.chunk].size - s.written;
    switch (kind) {
      case 0: return static_cast<std::int64_t>(remaining);
      case 1: return remaining > 1 ? static_cast<std::int64_t>(1 + short_bytes_seed % (remaining - 1)) : 1;
      case 2: return -EINTR;
      default: return -EIO;
    }
  }
  void checkPreconditions(const Model& m) const override {
    RC_PRE(m.slots[slot].in_flight);
    RC_PRE(!m.slots[slot].completed);
  }
  void apply(Model& m) const override {
    m.slots[slot].completed = true;
    m.slots[slot].result = result(m);
  }
  void run(const Model& m, Sut& s) const override {
    s.disk.complete(slot, result(m));
    s.model = nextState(m);
  }
  void show(std::ostream& os) const override {
    static const char* names[] = {"full", "short", "EINTR", "EIO"};
    os << "Complete(slot " << slot << ", " << names[kind] << ")";
  }
};

// End of a poll round: the writer reaps completions (restarting short and
// interrupted writes), then marks the round.
struct EndRound : Command {
  void apply(Model& m) const override {
    reap(m);
    if (m.error == 0 && m.round_bytes > 0) {
      m.chunks.push_back(Model::Chunk{m.next_offset, 8, true, false});
      m.next_offset += 8;
      m.round_bytes = 0;
    }
  }
  void run(const Model& m, Sut& s) const override {
    const int rc = s.writer->end_round();
    const Model after = nextState(m);
    s.model = after;
    RC_ASSERT(rc == -after.error);
    RC_ASSERT(s.writer->stats().error == after.error);
    check_in_flight(after, s);
  }
  void show(std::ostream& os) const override { os << "EndRound"; }
};

RC_GTEST_PROP(CblockState, AgainstTheModel, ()) {
  const std::uint32_t cblocks = *rc::gen::inRange<std::uint32_t>(1, 5);
  core::EventDescription event;
  event.attr.sample_type = sim::kSampleType;
  event.attr.sample_id_all = 1;
  event.ids = {1000, 1001};
  const core::PerfDataHead head({event});
  Model model;
  model.cblocks = cblocks;
  model.slots.assign(kMappings * cblocks, Model::Slot{});
  model.next_offset = head.data_offset();
  Sut sut(cblocks, head);
  sut.model = model;
  RC_ASSERT(sut.writer->start() == 0);
  rc::state::check(model, sut, rc::state::gen::execOneOfWithArgs<Push, Push, Complete, Complete, Complete, EndRound>());

  model = sut.model;
  // finish(): the completions already reported are reaped, then every
  // write in flight completes in full (the disk below completes them).
  reap(model);
  for (Model::Slot& slot : model.slots) {
    if (slot.in_flight) slot.written = model.chunks[slot.chunk].size, slot.in_flight = false;
  }
  // Whatever state the sequence left: every write completes, nothing is
  // referenced any more, the file is its valid prefix.
  sut.disk.on_suspend = [&](std::span<const std::uint32_t>) { sut.disk.complete_all_full(); };
  const int finished = sut.writer->finish();
  const int error = sut.writer->stats().error;
  RC_ASSERT(finished == -error);
  RC_ASSERT(sut.disk.in_flight.empty());
  for (std::uint32_t mapping = 0; mapping < kMappings; mapping++) RC_ASSERT(sut.writer->references(mapping) == 0u);
  RC_ASSERT(sut.disk.bytes_put_twice == 0u);
  model::PerfDataFile file;
  RC_ASSERT(model::parse_perf_data(sut.disk.files[0], file) == "");
  RC_ASSERT(sut.disk.files[0].size() == file.data_offset + file.data_size);
  // Expected: the chunks in reservation order (markers included) up to the
  // first failed one, exactly.
  std::vector<std::byte> want;
  std::vector<std::uint64_t> boundaries = {0};
  const std::uint64_t first_failed = [&] {
    for (std::size_t i = 0; i < model.chunks.size(); i++) {
      if (model.chunks[i].failed) return i;
    }
    return model.chunks.size();
  }();
  for (std::size_t i = 0; i < model.chunks.size(); i++) {
    const Model::Chunk& c = model.chunks[i];
    if (c.marker) {
      const auto& marker = core::finished_round_record();
      want.insert(want.end(), marker.begin(), marker.end());
    } else {
      const auto bytes = chunk_bytes(c.size, i);
      want.insert(want.end(), bytes.begin(), bytes.end());
    }
    boundaries.push_back(want.size());
  }
  RC_ASSERT(error == model.error);
  RC_ASSERT(file.data.size() == boundaries[first_failed]);
  RC_ASSERT(std::equal(file.data.begin(), file.data.end(), want.begin()));
  RC_CLASSIFY(error != 0, "hard error");
  RC_CLASSIFY(sut.writer->stats().short_writes_restarted > 0, "short write restarted");
  RC_CLASSIFY(sut.writer->stats().eintr_retries > 0, "EINTR resubmitted");
}

}  // namespace
}  // namespace ringsim
