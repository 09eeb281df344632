// A corrupted ring (a header of size 0, unaligned, or larger than the ring;
// a head that is unaligned or more than a ring ahead) never makes the
// record loop run forever or read out of bounds (ASan builds check the
// latter): it is reported as an error for that ring, the whole records
// before the corruption are delivered, and the other rings are unaffected.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstring>
#include <memory>

#include "core/record_loop.h"
#include "core/testing/direct_mapping.h"
#include "core/testing/vector_sink.h"
#include "sim/kernel.h"
#include "sim/sample.h"

namespace ringsim {
namespace {

using core::testing::VectorSink;
using DirectSession = core::testing::DirectSession<sim::SimRing>;

RC_GTEST_PROP(CorruptRing, ReportedNeverLoopsNeverOverruns, ()) {
  const std::uint64_t ring_bytes = 4096u << *rc::gen::inRange(0, 3);
  sim::RingLayout layout;
  layout.size_bytes = ring_bytes;
  std::vector<model::CpuLog> logs(2);
  sim::Probes probes;
  std::vector<std::unique_ptr<sim::SimRing>> rings;
  std::vector<sim::EventAttrs> events(2);
  for (std::uint32_t cpu = 0; cpu < 2; cpu++) {
    events[cpu].identity.cpu = cpu;
    events[cpu].identity.id = 1000 + cpu;
    rings.push_back(std::make_unique<sim::SimRing>(layout, logs[cpu], probes));
  }
  // Fill both rings with valid samples (less than a ring each).
  const auto sizes = *rc::gen::container<std::vector<std::uint32_t>>(
      *rc::gen::inRange(1, 40), rc::gen::map(rc::gen::inRange<std::uint32_t>(6, 64), [](std::uint32_t v) { return 8 * v; }));
  std::vector<std::byte> bytes;
  for (std::uint32_t cpu = 0; cpu < 2; cpu++) {
    std::uint64_t sequence = 0;
    for (std::uint32_t size : sizes) {
      bytes.assign(size, std::byte{0});
      sim::build_sample(bytes, events[cpu].identity, sequence, sequence, 1);
      sequence++;
      if (rings[cpu]->head() + size > ring_bytes - 1) break;
      RC_ASSERT(rings[cpu]->output(events[cpu], bytes, sequence) == sim::SimRing::Output::written);
    }
    rings[cpu]->hang_up();
  }
  // Corrupt ring 0: either one record's size field or the head.
  const std::uint64_t written = rings[0]->head();
  const bool corrupt_head = *rc::gen::inRange(0, 4) == 0;
  std::uint64_t first_bad = written;  // offset of the first corrupt record
  if (corrupt_head) {
    const std::uint64_t head = *rc::gen::element<std::uint64_t>(written + 4, ring_bytes + 8, written + 3 * ring_bytes);
    rings[0]->set_head_for_test(head);
    first_bad = 0;
  } else {
    const std::size_t victim = *rc::gen::inRange<std::size_t>(0, logs[0].written.size());
    const std::uint16_t size = *rc::gen::element<std::uint16_t>(0, 3, 12, 44, 65528, static_cast<std::uint16_t>(ring_bytes <= 65528 ? ring_bytes : 8));
    first_bad = logs[0].written[victim].position;
    std::memcpy(rings[0]->data_for_test().data() + first_bad + 6, &size, 2);
  }

  DirectSession session({rings[0].get(), rings[1].get()});
  VectorSink sink(2, ring_bytes);
  core::LoopOptions options;
  options.rounds_max = 1000;
  core::RecordLoop<DirectSession, VectorSink> loop(session, sink, core::RingMode::normal, options);
  const core::LoopResult result = loop.run();
  RC_ASSERT(result.status == core::LoopStatus::done);
  RC_ASSERT(result.mappings_corrupt() == 1u);
  RC_ASSERT(sink.corrupt[0]);
  RC_ASSERT(!sink.corrupt[1]);
  // The valid prefix of ring 0 and all of ring 1 were delivered.
  RC_ASSERT(sink.out[0].size() == first_bad);
  if (first_bad > 0) {
    const bool same = std::memcmp(sink.out[0].data(), logs[0].bytes.data(), first_bad) == 0;
    RC_ASSERT(same);
  }
  RC_ASSERT(sink.out[1] == logs[1].bytes);
  RC_ASSERT(session.released(0));
  RC_ASSERT(session.released(1));
}

}  // namespace
}  // namespace ringsim
