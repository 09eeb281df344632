// One reading thread per CPU.
//
// The single reading thread of a staged recording reads every CPU's rings.
// Held off its CPU for a few milliseconds (preempted by something of higher
// priority, or, in a virtual machine, its virtual CPU not run by the host
// while the other one runs), it leaves the other CPUs' rings unread, and at
// the benchmark's dwarf point (-m 8: 32 KiB rings, 0.7 ms of samples) they
// overflow: bursts of 15-30 records lost on one CPU, two or three times a
// recording (docs/recorder.md, "One reading thread per CPU"). perf record
// --threads -r 1 lost almost nothing in the same runs. So, by default, each
// CPU's rings get their own reading thread, pinned to that CPU (where the
// kernel wakes it: the ring's producer is that CPU), at the reading
// thread's priority, running its own record loop over its rings
// (RealSessionSlice) into the one staging buffer through a
// core::StagingGate, which keeps the finished-round markers valid across
// the threads. With `help` (the default, --readers cpu), each thread, after
// its own rings, also drains the other CPUs' rings whose lock it gets at
// once (core/ring_share.h): every ring is then drained when any thread
// wakes, as the single thread drains every ring (--readers cpu-own: each
// its own rings only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/record_loop.h"
#include "core/ring_share.h"
#include "core/stack_cut.h"
#include "core/staging.h"
#include "core/staging_gate.h"
#include "real/error.h"
#include "real/real_backend.h"
#include "real/staging_sync.h"
#include "real/thread_priority.h"

namespace ringsim::real {

// The rings one thread reads, and the CPU it is pinned to (-1: none).
struct RingGroup {
  int cpu = -1;
  std::vector<std::size_t> rings;
};

// A thread's first malloc or free sets up its malloc arena and tcache (an
// mmap of the arena's heap and its first page faults). Done as a reading
// thread starts, before any event is enabled, rather than at its first
// allocation, where -a samples it: measured, with the other causes, in
// docs/recorder.md ("Self-sampling").
void prepare_thread_allocator();

// The session's rings grouped by the CPU of their event, in CPU order;
// rings of no CPU (per-task rings) join the first group.
std::vector<RingGroup> rings_by_cpu(RealSession& session);

struct ReadingThreadsResult {
  core::LoopResult loop;           // core::merge_loop_results of every thread's
  core::StackCutStats cut;         // summed
  PriorityOutcome priority;        // the first thread's (the others asked for the same)
  std::size_t threads = 0;
  std::size_t pinned = 0;          // threads pinned to their CPU
  std::string pin_problem;         // the first pin that failed, or ""
  std::uint64_t markers = 0;       // finished-round markers staged (epochs)
  std::uint64_t rounds_unmarked = 0;
  bool help = false;               // the threads drain each other's rings
  bool started = false;            // start() returned true
};

class ReadingThreads {
 public:
  using Staging = core::Staging<ThreadSync>;
  using Gates = core::StagingGates<Staging, PriorityInheritingMutex>;
  using Gate = core::StagingGate<Staging, PriorityInheritingMutex>;
  using Cutter = core::StackCutter<Gate>;
  using Share = core::RingShare<core::RingReader<RealMapping>, PriorityInheritingMutex>;

  // groups: at least one, each with rings, together each of the session's
  // normal-mode rings once. help: each thread also drains the other
  // groups' rings it can lock.
  ReadingThreads(RealSession& session, Staging& staging, std::vector<RingGroup> groups,
                 const core::LoopOptions& loop, const core::StackCutPolicy& cut, const ThreadPriority& priority,
                 bool help);
  ~ReadingThreads();
  ReadingThreads(const ReadingThreads&) = delete;
  ReadingThreads& operator=(const ReadingThreads&) = delete;

  // Starts the threads. The first calls start_events() once every thread
  // has its loop (and, if it returns false, disables the events and stops
  // the others); the last one to end closes the staging buffer. An error
  // (no thread started) leaves the staging buffer open.
  Error start(std::function<bool()> start_events);
  // Waits for every thread.
  ReadingThreadsResult join();

 private:
  void read(std::size_t index);
  // The rings thread `index` helps with (none without help).
  std::vector<std::size_t> helped(std::size_t index) const;

  RealSession& session_;
  Staging& staging_;
  std::vector<RingGroup> groups_;
  core::LoopOptions loop_options_;
  core::StackCutPolicy cut_policy_;
  ThreadPriority priority_;
  std::function<bool()> start_events_;
  Gates gates_;
  bool help_;
  Share share_;
  std::vector<std::unique_ptr<RealSessionSlice>> slices_;
  std::vector<std::unique_ptr<Gate>> gate_;
  std::vector<std::unique_ptr<Cutter>> cutters_;
  std::vector<core::LoopResult> results_;
  std::vector<PriorityOutcome> priorities_;
  std::vector<std::string> pin_problems_;  // per thread: "" pinned, else why not
  std::unique_ptr<std::latch> ready_;
  std::atomic<std::size_t> running_{0};
  bool started_ = false;  // the first thread's; read after join
  std::vector<std::thread> threads_;
};

}  // namespace ringsim::real
