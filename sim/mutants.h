// Deliberately broken consumers (RunConfig::mutant). Each is the production
// core with one step of its protocol broken, introduced as a wrapper of the
// backend interface (core/ is never touched), to show that the properties
// catch exactly the bug they are meant to catch:
//   early_release  stores tail = head as soon as it reads head, i.e. gives
//                  the space back before copying it out -> exactly_once;
//   no_pause       makes PAUSE_OUTPUT a no-op, so snapshots walk a ring the
//                  kernel is still writing -> no_torn_records/exactly_once;
//   drop_lost      (see MemorySink) the output loses LOST records ->
//                  lost_accounting.
#pragma once

#include <memory>
#include <vector>

#include "sim/config.h"
#include "sim/session.h"

namespace ringsim::sim {

class MutantMapping {
 public:
  MutantMapping(SimMapping& base, Mutant mutant) : base_(base), mutant_(mutant) {}
  std::uint64_t data_size_bytes() const { return base_.data_size_bytes(); }
  std::uint64_t load_head() {
    const std::uint64_t head = base_.load_head();
    if (mutant_ == Mutant::early_release) base_.store_tail(head);
    return head;
  }
  void store_tail(std::uint64_t tail) { base_.store_tail(tail); }
  void copy_out(std::uint64_t position, std::span<std::byte> destination) {
    base_.copy_out(position, destination);
  }
  int pause_output(bool paused) { return mutant_ == Mutant::no_pause ? 0 : base_.pause_output(paused); }

 private:
  SimMapping& base_;
  const Mutant mutant_;
};

class MutantSession {
 public:
  using Mapping = MutantMapping;
  MutantSession(SimSession& base, Mutant mutant) : base_(base) {
    for (std::size_t i = 0; i < base_.mapping_count(); i++) {
      mappings_.push_back(std::make_unique<MutantMapping>(base_.mapping(i), mutant));
    }
  }
  std::size_t mapping_count() const { return base_.mapping_count(); }
  MutantMapping& mapping(std::size_t index) {
    base_.mapping(index);  // checks the mapping is live
    return *mappings_[index];
  }
  int poll(std::span<core::PollEvents> events, std::uint64_t timeout_ns) { return base_.poll(events, timeout_ns); }
  void release(std::size_t index) { base_.release(index); }
  std::uint64_t now_ns() const { return base_.now_ns(); }
  bool stop_requested() const { return base_.stop_requested(); }
  bool take_snapshot_request() { return base_.take_snapshot_request(); }

 private:
  SimSession& base_;
  std::vector<std::unique_ptr<MutantMapping>> mappings_;
};

}  // namespace ringsim::sim
