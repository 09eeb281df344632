// core::StagingGate: several reading threads into one staging target, with
// finished-round markers that stay valid across them.
#include "core/staging_gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

namespace ringsim::core {
namespace {

// A target that records what the gates passed on: chunks (with the times
// of the records they hold) and rounds (with or without a marker). It
// checks that one chunk is reserved at a time.
struct Target {
  struct Item {
    bool round = false;
    bool marker = false;
    std::size_t mapping = 0;
    std::uint64_t first_ns = 0;  // a chunk's records' times: first_ns..last_ns
    std::uint64_t last_ns = 0;
  };
  std::vector<Item> items;
  std::vector<std::byte> buffer = std::vector<std::byte>(64);
  bool reserved = false;
  int reservations_overlapped = 0;
  std::vector<std::size_t> acquired;  // mappings, as acquire() saw them
  // The times of the chunk being committed (set by the test between
  // acquire and commit, with the gate's lock held).
  std::uint64_t next_first_ns = 0;
  std::uint64_t next_last_ns = 0;
  std::size_t gaps = 0;

  std::span<std::byte> acquire(std::size_t mapping) {
    if (reserved) reservations_overlapped++;
    reserved = true;
    acquired.push_back(mapping);
    return buffer;
  }
  int commit(std::size_t mapping, std::uint64_t, const RecordCounts&) {
    reserved = false;
    items.push_back(Item{false, false, mapping, next_first_ns, next_last_ns});
    return 0;
  }
  void abandon(std::size_t) { reserved = false; }
  void note_gap(std::size_t, PositionRange, std::uint64_t) { gaps++; }
  void note_corrupt(std::size_t, PositionRange, ReadStatus) {}
  std::uint32_t references(std::size_t) const { return 0; }
  int end_round(bool marker) {
    items.push_back(Item{true, marker, 0, 0, 0});
    return 0;
  }
  int flush() { return 0; }
  std::vector<bool> markers() const {
    std::vector<bool> out;
    for (const Item& i : items) {
      if (i.round) out.push_back(i.marker);
    }
    return out;
  }
};

using Gates = StagingGates<Target, std::mutex>;
using Gate = StagingGate<Target, std::mutex>;

TEST(StagingGate, AMarkerOnlyOnceEveryThreadEndedADrainedRound) {
  Target target;
  Gates gates(target, 2);
  Gate a(gates, 0, {0});
  Gate b(gates, 1, {1});
  EXPECT_EQ(a.end_round(true), 0);   // b has not read its rings yet
  EXPECT_EQ(b.end_round(true), 0);   // now both have: a marker
  EXPECT_EQ(a.end_round(true), 0);   // began before that marker: does not count
  EXPECT_EQ(b.end_round(false), 0);  // not drained: does not count
  EXPECT_EQ(b.end_round(true), 0);   // counts
  EXPECT_EQ(a.end_round(true), 0);   // counts: a marker
  EXPECT_EQ(target.markers(), (std::vector<bool>{false, true, false, false, false, true}));
  EXPECT_EQ(gates.markers(), 2u);
  EXPECT_EQ(gates.rounds_unmarked(), 4u);
}

TEST(StagingGate, AFinishedThreadNoLongerHoldsTheMarkersBack) {
  Target target;
  Gates gates(target, 2);
  Gate a(gates, 0, {0});
  Gate b(gates, 1, {1});
  EXPECT_EQ(b.end_round(true), 0);  // b counted, then finishes: its count is withdrawn
  b.finish();
  EXPECT_EQ(a.end_round(true), 0);  // a alone: a marker
  EXPECT_EQ(a.end_round(true), 0);  // and at each of its drained rounds
  EXPECT_EQ(target.markers(), (std::vector<bool>{false, true, true}));
}

TEST(StagingGate, OneThreadMarksEveryDrainedRound) {
  Target target;
  Gates gates(target, 1);
  Gate a(gates, 0, {0, 1});
  for (const bool drained : {true, false, true, true}) EXPECT_EQ(a.end_round(drained), 0);
  EXPECT_EQ(target.markers(), (std::vector<bool>{true, false, true, true}));
}

TEST(StagingGate, RingIndicesAreTheSessions) {
  Target target;
  Gates gates(target, 2);
  Gate a(gates, 0, {0, 2});
  Gate b(gates, 1, {1, 3});
  ASSERT_FALSE(b.acquire(1).empty());
  EXPECT_EQ(b.commit(1, 8, RecordCounts{}), 0);
  ASSERT_FALSE(a.acquire(1).empty());
  a.abandon(1);
  a.note_gap(0, PositionRange{}, 0);
  EXPECT_EQ(target.acquired, (std::vector<std::size_t>{3, 2}));
  ASSERT_EQ(target.items.size(), 1u);
  EXPECT_EQ(target.items[0].mapping, 3u);
  EXPECT_EQ(target.gaps, 1u);
}

// From acquire() to commit() the lock is held: another thread's note waits.
TEST(StagingGate, OneChunkAtATime) {
  Target target;
  Gates gates(target, 2);
  Gate a(gates, 0, {0});
  Gate b(gates, 1, {1});
  ASSERT_FALSE(a.acquire(0).empty());
  a.note_gap(0, PositionRange{}, 0);  // the holder itself may note while it holds
  std::atomic<bool> noted{false};
  std::thread other([&] {
    b.note_gap(0, PositionRange{}, 0);
    noted = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(noted.load());
  EXPECT_EQ(a.commit(0, 8, RecordCounts{}), 0);
  other.join();
  EXPECT_TRUE(noted.load());
  EXPECT_EQ(target.gaps, 2u);
}

// Threads race: each "ring" gets records stamped by one clock, and each
// round loads its head (the clock) with the lock held, as the record loop
// does after acquire() (or without it, for an empty ring). What perf's ordered events needs must hold: after
// marker k, no record older than the newest one before marker k-1 (perf
// flushes, at each marker, up to the newest time it had at the one before).
TEST(StagingGate, MarkersStayValidWhileThreadsRace) {
  constexpr std::size_t kThreads = 3;
  constexpr int kRounds = 2000;
  Target target;
  Gates gates(target, kThreads);
  std::atomic<std::uint64_t> clock{1};
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      Gate gate(gates, t, {t});
      std::uint64_t last_head = 0;
      for (int round = 0; round < kRounds; round++) {
        if ((round + static_cast<int>(t)) % 3 == 0) {
          // The ring is empty: its head is loaded (no record up to then),
          // nothing is acquired.
          last_head = clock.fetch_add(1);
        } else {
          EXPECT_FALSE(gate.acquire(0).empty());
          const std::uint64_t head = clock.fetch_add(1);
          target.next_first_ns = last_head + 1;
          target.next_last_ns = head;
          last_head = head;
          EXPECT_EQ(gate.commit(0, 8, RecordCounts{}), 0);
        }
        if (round % 7 == 0) std::this_thread::yield();
        EXPECT_EQ(gate.end_round(true), 0);
      }
      gate.finish();
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(target.reservations_overlapped, 0);
  std::uint64_t newest = 0;              // over everything so far
  std::uint64_t newest_at_marker = 0;    // at the last marker
  std::uint64_t flushed_up_to = 0;       // at the last marker: newest at the one before
  std::size_t markers = 0;
  std::size_t chunks = 0;
  for (const Target::Item& item : target.items) {
    if (item.round) {
      if (!item.marker) continue;
      markers++;
      flushed_up_to = newest_at_marker;
      newest_at_marker = newest;
      continue;
    }
    chunks++;
    ASSERT_GT(item.first_ns, flushed_up_to) << "a chunk older than what perf flushed, after marker " << markers;
    newest = std::max(newest, item.last_ns);
  }
  EXPECT_EQ(chunks, static_cast<std::size_t>(kThreads * kRounds * 2 / 3));
  EXPECT_GT(markers, 10u);
}

}  // namespace
}  // namespace ringsim::core
