// core::RingShare: record loops on real threads, one per ring, each also
// draining the other rings it can lock, into one staging gate. Producers on
// their own threads fill small rings fast; every ring's records must come
// out once each and in order, whichever thread read them (the ring's lock
// held from the head's load to the commit). Run under TSan by .ci/run.
#include "core/ring_share.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "core/perf_abi.h"
#include "core/record_loop.h"
#include "core/staging_gate.h"

namespace ringsim::core {
namespace {

constexpr std::uint64_t kRingBytes = 1024;
constexpr std::uint64_t kRecordBytes = 16;  // a header and a sequence number

// A ring one producer thread writes and any reading thread reads, with the
// kernel's orderings: data before head (release), tail after the copy.
struct ThreadRing {
  std::vector<std::byte> data = std::vector<std::byte>(kRingBytes);
  std::atomic<std::uint64_t> head{0};
  std::atomic<std::uint64_t> tail{0};
  std::atomic<bool> done{false};
  std::uint64_t written = 0;  // the producer's
  std::uint64_t full = 0;     // records the producer found no room for

  void produce(std::uint64_t records) {
    for (std::uint64_t i = 0; i < records; i++) {
      const std::uint64_t h = head.load(std::memory_order_relaxed);
      if (h + kRecordBytes - tail.load(std::memory_order_acquire) > kRingBytes) {
        full++;
        std::this_thread::yield();
        continue;
      }
      perf_event_header header{};
      header.type = PERF_RECORD_SAMPLE;
      header.size = kRecordBytes;
      std::byte* at = data.data() + (h & (kRingBytes - 1));
      std::memcpy(at, &header, sizeof header);
      std::memcpy(at + sizeof header, &written, sizeof written);
      written++;
      head.store(h + kRecordBytes, std::memory_order_release);
    }
    done.store(true, std::memory_order_release);
  }
};

class TestMapping {
 public:
  explicit TestMapping(ThreadRing& ring) : ring_(ring) {}
  std::uint64_t data_size_bytes() const { return kRingBytes; }
  std::uint64_t load_head() { return ring_.head.load(std::memory_order_acquire); }
  void store_tail(std::uint64_t tail) { ring_.tail.store(tail, std::memory_order_release); }
  // The copy yields halfway: a wider window for another reader of the ring
  // (there is none while the ring's lock is held, as there must be).
  void copy_out(std::uint64_t position, std::span<std::byte> destination) {
    const std::byte* from = ring_.data.data() + (position & (kRingBytes - 1));
    const std::size_t half = destination.size() / 2;
    std::memcpy(destination.data(), from, half);
    std::this_thread::yield();
    std::memcpy(destination.data() + half, from + half, destination.size() - half);
  }
  int pause_output(bool) { return 0; }

 private:
  ThreadRing& ring_;
};

// One loop's session: its one ring, polled by spinning briefly; it hangs up
// once its producer is done and the ring is empty.
class Slice {
 public:
  using Mapping = TestMapping;
  explicit Slice(ThreadRing& ring) : ring_(ring), mapping_(ring) {}
  std::size_t mapping_count() const { return 1; }
  TestMapping& mapping(std::size_t index) {
    VERIFY(index == 0 && !released_);
    return mapping_;
  }
  int poll(std::span<PollEvents> events, std::uint64_t) {
    std::this_thread::sleep_for(std::chrono::microseconds(20));
    events[0].hangup = events[0].wanted && ring_.done.load(std::memory_order_acquire) &&
                       ring_.head.load(std::memory_order_acquire) == ring_.tail.load(std::memory_order_acquire);
    events[0].readable = events[0].wanted && !events[0].hangup;
    return events[0].wanted ? 1 : 0;
  }
  void release(std::size_t) { released_ = true; }
  std::uint64_t now_ns() const { return 0; }
  bool stop_requested() const { return false; }
  bool take_snapshot_request() { return false; }
  void disable_events() {}

 private:
  ThreadRing& ring_;
  TestMapping mapping_;
  bool released_ = false;
};
static_assert(RingSession<Slice>);

// What the gates pass on, per ring: the sequence numbers in staging order.
struct Target {
  std::vector<std::byte> buffer = std::vector<std::byte>(kRingBytes);
  std::vector<std::vector<std::uint64_t>> sequences;
  int ring0_commit_error = 0;  // errno a commit of ring 0 fails with (0: none)
  explicit Target(std::size_t rings) : sequences(rings) {}
  std::span<std::byte> acquire(std::size_t) { return buffer; }
  int commit(std::size_t mapping, std::uint64_t bytes, const RecordCounts&) {
    if (mapping == 0 && ring0_commit_error != 0) return -ring0_commit_error;
    for (std::uint64_t at = 0; at < bytes; at += kRecordBytes) {
      std::uint64_t sequence = 0;
      std::memcpy(&sequence, buffer.data() + at + sizeof(perf_event_header), sizeof sequence);
      sequences.at(mapping).push_back(sequence);
    }
    return 0;
  }
  void abandon(std::size_t) {}
  void note_gap(std::size_t, PositionRange, std::uint64_t) {}
  void note_corrupt(std::size_t, PositionRange, ReadStatus) { ADD_FAILURE() << "a ring reported corrupt"; }
  std::uint32_t references(std::size_t) const { return 0; }
  int end_round(bool) { return 0; }
  int flush() { return 0; }
};

using Gates = StagingGates<Target, std::mutex>;
using Gate = StagingGate<Target, std::mutex>;
using Share = RingShare<RingReader<TestMapping>, std::mutex>;

struct Outcome {
  std::vector<ThreadRing> rings;
  Target target;
  LoopResult merged;
  explicit Outcome(std::size_t n) : rings(n), target(n) {}
};

// n rings, a producer and a reading thread each; `help`: the readers help.
void run(Outcome& out, bool help, std::uint64_t records) {
  const std::size_t n = out.rings.size();
  Gates gates(out.target, n);
  Share share(n);
  std::vector<LoopResult> results(n);
  std::vector<std::thread> threads;
  for (std::size_t r = 0; r < n; r++) {
    threads.emplace_back([&, r] {
      std::vector<std::size_t> helped;
      for (std::size_t o = 0; o < n; o++) {
        if (help && o != r) helped.push_back(o);
      }
      std::vector<std::size_t> mappings{r};
      mappings.insert(mappings.end(), helped.begin(), helped.end());
      Slice slice(out.rings[r]);
      Gate gate(gates, r, mappings);
      LoopOptions options;
      options.drain_chunks_max = 1;
      RecordLoop<Slice, Gate, Share> loop(slice, gate, RingMode::normal, options, Share::Seat{&share, {r}, helped});
      results[r] = loop.run();
      gate.finish();
    });
    threads.emplace_back([&, r] { out.rings[r].produce(records); });
  }
  for (std::thread& t : threads) t.join();
  out.merged = merge_loop_results(results);
}

void expect_each_once_in_order(const Outcome& out) {
  for (std::size_t r = 0; r < out.rings.size(); r++) {
    const std::vector<std::uint64_t>& got = out.target.sequences[r];
    ASSERT_EQ(got.size(), out.rings[r].written) << "ring " << r;
    for (std::uint64_t i = 0; i < got.size(); i++) {
      ASSERT_EQ(got[i], i) << "ring " << r << ": record " << i << " staged out of order or twice";
    }
  }
}

TEST(RingShare, HelpedRingsComeOutOnceAndInOrder) {
  Outcome out(3);
  run(out, true, 200'000);
  EXPECT_EQ(out.merged.status, LoopStatus::done);
  expect_each_once_in_order(out);
  // The test is about helping: it happened (at least a quarter of a ring
  // left for a reader that was asleep), and the locks met.
  EXPECT_GT(out.merged.chunks_helped, 0u);
  std::uint64_t written = 0;
  for (const ThreadRing& ring : out.rings) written += ring.written;
  EXPECT_EQ(out.merged.records.records, written);
}

TEST(RingShare, WithoutHelpEachLoopReadsItsOwn) {
  Outcome out(2);
  run(out, false, 20'000);
  EXPECT_EQ(out.merged.status, LoopStatus::done);
  expect_each_once_in_order(out);
  EXPECT_EQ(out.merged.chunks_helped, 0u);
  EXPECT_EQ(out.merged.help_busy, 0u);
}

TEST(RingShare, AHelperPassesALockedRingAndADetachedOne) {
  ThreadRing ring;
  TestMapping mapping(ring);
  RingReader<TestMapping> reader(mapping, RingMode::normal);
  Share share(2);
  bool busy = true;
  EXPECT_EQ(share.try_take(0, busy), nullptr);  // not attached yet
  EXPECT_FALSE(busy);
  share.attach(0, &reader);
  {
    const Share::Held held(share, 0);  // the owner reads
    std::thread helper([&] {
      bool locked = false;
      EXPECT_EQ(share.try_take(0, locked), nullptr);
      EXPECT_TRUE(locked);
    });
    helper.join();
  }
  EXPECT_EQ(share.try_take(0, busy), &reader);
  EXPECT_FALSE(busy);
  share.give_back(0);
  share.detach(0);
  EXPECT_EQ(share.try_take(0, busy), nullptr);
  EXPECT_FALSE(busy);
}

// One round of a loop that owns ring 1 (empty, its producer done: the
// loop ends after one round) and helps with ring 0, whose owner's reader is
// attached by hand and never reads: what the helper does with ring 0 alone.
struct OneHelpingRound {
  std::vector<ThreadRing> rings = std::vector<ThreadRing>(2);
  TestMapping owner_mapping{rings[0]};
  RingReader<TestMapping> owner{owner_mapping, RingMode::normal};
  Target target{2};
  LoopResult result;

  void run(std::uint32_t help_min_quarters) {
    rings[1].done.store(true);
    Gates gates(target, 1);
    Share share(2);
    share.attach(0, &owner);
    Slice slice(rings[1]);
    Gate gate(gates, 0, {1, 0});
    LoopOptions options;
    options.help_min_quarters = help_min_quarters;
    RecordLoop<Slice, Gate, Share> loop(slice, gate, RingMode::normal, options, Share::Seat{&share, {1}, {0}});
    result = loop.run();
    gate.finish();
  }
  void write_records(std::uint64_t records) {
    for (std::uint64_t i = 0; i < records; i++) rings[0].produce(1);
  }
};

TEST(RingShare, AHelperTakesARingFromAQuarterFullOnly) {
  OneHelpingRound below;
  below.write_records(kRingBytes / 4 / kRecordBytes - 1);  // one record short of a quarter
  below.run(1);
  EXPECT_EQ(below.result.status, LoopStatus::done);
  EXPECT_EQ(below.result.chunks_helped, 0u);
  EXPECT_EQ(below.rings[0].tail.load(), 0u);  // left to its owner
  EXPECT_TRUE(below.target.sequences[0].empty());

  OneHelpingRound quarter;
  quarter.write_records(kRingBytes / 4 / kRecordBytes);
  quarter.run(1);
  EXPECT_EQ(quarter.result.chunks_helped, 1u);
  EXPECT_EQ(quarter.rings[0].tail.load(), quarter.rings[0].head.load());
  EXPECT_EQ(quarter.target.sequences[0].size(), kRingBytes / 4 / kRecordBytes);

  OneHelpingRound any;  // help_min_quarters 0: any data
  any.write_records(1);
  any.run(0);
  EXPECT_EQ(any.result.chunks_helped, 1u);
  EXPECT_EQ(any.target.sequences[0], std::vector<std::uint64_t>{0});
}

// The sink fails a helped chunk (a full disk): the helping loop stops with
// the sink's error, as it does for its own ring's.
TEST(RingShare, ASinkErrorOnAHelpedChunkStopsTheLoop) {
  OneHelpingRound round;
  round.target.ring0_commit_error = ENOSPC;
  round.write_records(kRingBytes / 4 / kRecordBytes);
  round.run(1);
  EXPECT_EQ(round.result.status, LoopStatus::sink_error);
  EXPECT_EQ(round.result.error, ENOSPC);
  EXPECT_TRUE(round.target.sequences[0].empty());
}

// A corrupt header is the owner's to report: the helper leaves the ring as
// it was (the target fails the test if anything reports it corrupt).
TEST(RingShare, AHelperLeavesACorruptRingToItsOwner) {
  OneHelpingRound round;
  round.write_records(kRingBytes / kRecordBytes / 2);
  perf_event_header bad{};
  bad.type = PERF_RECORD_SAMPLE;
  bad.size = 0;
  std::memcpy(round.rings[0].data.data() + kRecordBytes, &bad, sizeof bad);  // the second record's header
  round.run(0);
  EXPECT_EQ(round.result.status, LoopStatus::done);
  EXPECT_EQ(round.result.chunks_helped, 0u);
  EXPECT_EQ(round.rings[0].tail.load(), 0u);
  EXPECT_TRUE(round.target.sequences[0].empty());
}

}  // namespace
}  // namespace ringsim::core
