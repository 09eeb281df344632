// Cutting samples' user stack dumps (PERF_SAMPLE_STACK_USER) in place:
// simpleperf's measure against a staging buffer running low. A cut sample
// keeps the first `keep` bytes of its dump: its static size becomes keep
// (a multiple of 8), its dyn_size at most that, the record shorter by the
// difference; the fields after the dump move down. perf reads and unwinds
// it as a sample with a shorter stack (fewer frames, never wrong ones).
//
// Sample layout (perf_event_open(2)): the fields before the dump are found
// from sample_type, the number of user registers (sample_regs_user's bits)
// and nothing else; a sample_type with READ or BRANCH_STACK (whose sizes
// depend on more of the attr) is not supported (stack_cut_problem).
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <span>
#include <string>

#include "core/records.h"
#include "core/ring_reader.h"

namespace ringsim::core {

struct SampleLayout {
  std::uint64_t sample_type = 0;
  std::uint32_t user_regs = 0;  // bits set in sample_regs_user
};

// "" if samples of this layout can be cut, else why not.
std::string stack_cut_problem(const SampleLayout& layout);

struct StackCutStats {
  std::uint64_t samples_cut = 0;   // samples whose dump was shortened
  std::uint64_t bytes_cut = 0;     // record bytes removed
  std::uint64_t chunks_cut = 0;    // chunks with at least one cut sample
  std::uint64_t dumps_seen = 0;    // samples with a dump, cut or not
  void add(const StackCutStats& o) {
    samples_cut += o.samples_cut;
    bytes_cut += o.bytes_cut;
    chunks_cut += o.chunks_cut;
    dumps_seen += o.dumps_seen;
  }
};

// Cuts every sample's dump in the whole records `records[0, bytes)` to at
// most `keep` bytes (rounded down to a multiple of 8), compacting them in
// place. Returns the new length; `counts` is updated (bytes), `stats`
// added to. A record that does not parse as the layout says is left
// whole (counted nowhere: it is not a sample of this layout).
std::uint64_t cut_stacks(std::span<std::byte> records, std::uint64_t bytes, const SampleLayout& layout,
                         std::uint64_t keep, RecordCounts& counts, StackCutStats& stats);

}  // namespace ringsim::core

namespace ringsim::core {

// When to cut (--cut-stacks): never; under pressure (the staging buffer
// more than half full: dumps cut to dump_bytes * room, room going from 1
// at half full to 0 when full); or always, to `keep_bytes`.
struct StackCutPolicy {
  enum class Mode : std::uint8_t { off, pressure, always };
  Mode mode = Mode::off;
  std::uint64_t keep_bytes = 0;  // always
  std::uint64_t dump_bytes = 0;  // pressure: the full dump (dwarf,SIZE)
  SampleLayout layout;

  // What a dump may keep with `held` of `capacity` bytes staged; UINT64_MAX:
  // no cut.
  std::uint64_t keep(std::uint64_t held, std::uint64_t capacity) const {
    switch (mode) {
      case Mode::off: return UINT64_MAX;
      case Mode::always: return keep_bytes;
      case Mode::pressure: {
        const std::uint64_t half = capacity / 2;
        if (held <= half || half == 0) return UINT64_MAX;
        const std::uint64_t room = capacity > held ? capacity - held : 0;  // 0..half
        return dump_bytes * room / half / 8 * 8;
      }
    }
    return UINT64_MAX;
  }
};

// A ChunkSink in front of the staging buffer (anything with
// held_bytes() and options().bytes): cuts the dumps of each chunk as the
// policy says before it is committed.
template <class Inner>
class StackCutter {
 public:
  StackCutter(Inner& inner, const StackCutPolicy& policy) : inner_(inner), policy_(policy) {}

  std::span<std::byte> acquire(std::size_t mapping) {
    buffer_ = inner_.acquire(mapping);
    return buffer_;
  }
  int commit(std::size_t mapping, std::uint64_t bytes, const RecordCounts& counts) {
    // Off: nothing to ask the staging (held_bytes() takes its lock).
    if (policy_.mode == StackCutPolicy::Mode::off) return inner_.commit(mapping, bytes, counts);
    const std::uint64_t keep = policy_.keep(inner_.held_bytes(), inner_.options().bytes);
    if (keep == UINT64_MAX) return inner_.commit(mapping, bytes, counts);
    RecordCounts cut = counts;
    const std::uint64_t left = cut_stacks(buffer_, bytes, policy_.layout, keep, cut, stats_);
    return inner_.commit(mapping, left, cut);
  }
  void abandon(std::size_t mapping) { inner_.abandon(mapping); }
  void note_gap(std::size_t mapping, PositionRange range, std::uint64_t position) {
    inner_.note_gap(mapping, range, position);
  }
  void note_corrupt(std::size_t mapping, PositionRange range, ReadStatus status) {
    inner_.note_corrupt(mapping, range, status);
  }
  std::uint32_t references(std::size_t mapping) const { return inner_.references(mapping); }
  int end_round(bool all_drained) { return inner_.end_round(all_drained); }
  int flush() { return inner_.flush(); }

  const StackCutStats& stats() const { return stats_; }

 private:
  Inner& inner_;
  const StackCutPolicy policy_;
  std::span<std::byte> buffer_;
  StackCutStats stats_;
};

}  // namespace ringsim::core
