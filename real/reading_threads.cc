#include "real/reading_threads.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <utility>

#include "core/verify.h"

// The core, compiled for a slice of the real session with the gate.
template class ringsim::core::RecordLoop<ringsim::real::RealSessionSlice, ringsim::real::ReadingThreads::Cutter,
                                         ringsim::real::ReadingThreads::Share>;

namespace ringsim::real {
namespace {

// "" or why the calling thread could not be pinned to cpu.
std::string pin_to(int cpu) {
  if (cpu < 0) return "no CPU (per-task rings)";
  if (cpu >= CPU_SETSIZE) return "CPU " + std::to_string(cpu) + " beyond CPU_SETSIZE";
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  const int rc = ::pthread_setaffinity_np(::pthread_self(), sizeof set, &set);
  return rc == 0 ? "" : "CPU " + std::to_string(cpu) + ": " + errno_text(rc);
}

}  // namespace

void prepare_thread_allocator() {
  void* volatile block = std::malloc(64);
  std::free(block);
}

std::vector<RingGroup> rings_by_cpu(RealSession& session) {
  std::map<int, std::vector<std::size_t>> by_cpu;
  std::vector<std::size_t> no_cpu;
  for (std::size_t i = 0; i < session.mapping_count(); i++) {
    const int cpu = session.event(i).target().cpu;
    if (cpu < 0) {
      no_cpu.push_back(i);
    } else {
      by_cpu[cpu].push_back(i);
    }
  }
  std::vector<RingGroup> groups;
  for (auto& [cpu, rings] : by_cpu) groups.push_back(RingGroup{cpu, std::move(rings)});
  if (groups.empty()) return {RingGroup{-1, std::move(no_cpu)}};
  auto& first = groups.front().rings;
  first.insert(first.end(), no_cpu.begin(), no_cpu.end());
  std::sort(first.begin(), first.end());
  return groups;
}

ReadingThreads::ReadingThreads(RealSession& session, Staging& staging, std::vector<RingGroup> groups,
                               const core::LoopOptions& loop, const core::StackCutPolicy& cut,
                               const ThreadPriority& priority, bool help)
    : session_(session),
      staging_(staging),
      groups_(std::move(groups)),
      loop_options_(loop),
      cut_policy_(cut),
      priority_(priority),
      gates_(staging, groups_.size()),
      help_(help),
      share_(session.mapping_count()) {
  VERIFY(!groups_.empty());
  std::vector<std::uint8_t> seen(session_.mapping_count(), 0);
  for (const RingGroup& g : groups_) {
    VERIFY(!g.rings.empty());
    for (const std::size_t ring : g.rings) {
      VERIFY(ring < seen.size() && seen[ring] == 0);
      seen[ring] = 1;
    }
  }
  VERIFY(std::all_of(seen.begin(), seen.end(), [](std::uint8_t s) { return s != 0; }));
}

std::vector<std::size_t> ReadingThreads::helped(std::size_t index) const {
  std::vector<std::size_t> rings;
  if (!help_) return rings;
  for (std::size_t g = 0; g < groups_.size(); g++) {
    if (g != index) rings.insert(rings.end(), groups_[g].rings.begin(), groups_[g].rings.end());
  }
  return rings;
}

ReadingThreads::~ReadingThreads() { VERIFY_MSG(threads_.empty(), "reading threads destroyed without join()"); }

Error ReadingThreads::start(std::function<bool()> start_events) {
  VERIFY(threads_.empty());
  start_events_ = std::move(start_events);
  const std::size_t n = groups_.size();
  for (std::size_t r = 0; r < n; r++) {
    std::unique_ptr<RealSessionSlice> slice;
    if (const Error e = RealSessionSlice::make(session_, groups_[r].rings, r == 0, slice); !e.ok()) return e;
    slices_.push_back(std::move(slice));
    std::vector<std::size_t> mappings = groups_[r].rings;
    const std::vector<std::size_t> others = helped(r);
    mappings.insert(mappings.end(), others.begin(), others.end());
    gate_.push_back(std::make_unique<Gate>(gates_, r, std::move(mappings)));
    cutters_.push_back(std::make_unique<Cutter>(*gate_.back(), cut_policy_));
  }
  results_.assign(n, core::LoopResult{});
  priorities_.assign(n, PriorityOutcome{});
  pin_problems_.assign(n, "");
  ready_ = std::make_unique<std::latch>(static_cast<std::ptrdiff_t>(n));
  running_.store(n);
  for (std::size_t r = 0; r < n; r++) threads_.emplace_back([this, r] { read(r); });
  return Error{};
}

void ReadingThreads::read(std::size_t index) {
  priorities_[index] = apply_thread_priority(priority_);
  pin_problems_[index] = pin_to(groups_[index].cpu);
  prepare_thread_allocator();
  core::RecordLoop<RealSessionSlice, Cutter, Share> loop(*slices_[index], *cutters_[index], core::RingMode::normal,
                                                         loop_options_,
                                                         Share::Seat{&share_, groups_[index].rings, helped(index)});
  if (index == 0) {
    // Every other thread has its loop (and polls, or is about to: poll
    // sees what is ready when it is entered) before the events start.
    ready_->arrive_and_wait();
    started_ = start_events_();
    if (!started_) {
      // Every thread drains once and ends, this one too: its loop's rings
      // are in the ring share, where the others may help with them until
      // it ends (returning without it left them torn down under a helper:
      // VERIFY(writable(mode_)), 2026-11-27, a filter refused at the start).
      session_.disable_all();
      session_.request_stop();
    }
  } else {
    ready_->count_down();
  }
  results_[index] = loop.run();
  // The first thread alone watches the command's exit, the signals,
  // --control and -D: once its loop has ended (its rings hung up and
  // released, or an error), nothing would stop the others. Its rings hang
  // up with the others' (the same tasks on every CPU), so this ends a
  // recording that is ending anyway.
  if (index == 0) session_.request_stop();
  gate_[index]->finish();
  if (running_.fetch_sub(1) == 1) staging_.close();
}

ReadingThreadsResult ReadingThreads::join() {
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  ReadingThreadsResult out;
  out.loop = core::merge_loop_results(results_);
  for (const auto& c : cutters_) out.cut.add(c->stats());
  out.priority = priorities_.empty() ? PriorityOutcome{} : priorities_[0];
  out.threads = groups_.size();
  for (const std::string& p : pin_problems_) {
    if (p.empty()) {
      out.pinned++;
    } else if (out.pin_problem.empty()) {
      out.pin_problem = p;
    }
  }
  out.markers = gates_.markers();
  out.rounds_unmarked = gates_.rounds_unmarked();
  out.help = help_;
  out.started = started_;
  return out;
}

}  // namespace ringsim::real
