#include "model/kernel_rules.h"

#include <string>

namespace ringsim::model {
namespace {

// Replays one ring's steps.
class RingRules {
 public:
  RingRules(const KernelLog& log, std::size_t cpu, std::vector<Violation>& out)
      : size_(log.ring_bytes),
        writable_(is_writable(log.mode)),
        backward_(is_backward(log.mode)),
        watermark_(log.watermark_bytes),
        cpu_(cpu),
        out_(out) {}

  void run(const std::vector<RingOp>& ops) {
    if (watermark_ == 0 || watermark_ > size_) {
      violate(0, "the wakeup watermark is " + std::to_string(watermark_) + " for a ring of " + std::to_string(size_));
      return;
    }
    for (std::size_t i = 0; i < ops.size() && out_.size() < kViolationsMax; i++) step(i, ops[i]);
  }

 private:
  static constexpr std::size_t kViolationsMax = 20;
  struct Handle {
    std::uint64_t saved_mark;
    bool sample;
    std::uint32_t wakeup_events;
  };

  void violate(std::size_t i, const std::string& what) {
    out_.push_back(Violation{kKernelRules, "cpu " + std::to_string(cpu_) + ", step " + std::to_string(i) + ": " + what});
  }

  // Bytes written so far (backward positions count down from 0).
  std::uint64_t written_bytes() const { return backward_ ? 0 - head_ : head_; }

  std::uint8_t expected_result(const RingOp& op, std::uint64_t need) const {
    if (!writable_) return RingOp::written;
    const std::uint64_t used = backward_ ? tail_ - head_ : head_ - tail_;
    const std::uint64_t space = used < size_ ? size_ - 1 - used : 0;
    if (need <= space) return RingOp::written;
    return op.size >= size_ ? RingOp::too_big : RingOp::full;
  }

  void begin(std::size_t i, const RingOp& op) {
    if (paused_ && !op.past_check) {
      if (op.result != RingOp::paused) violate(i, "a write while paused was not dropped as paused");
      lost_++;
      return;
    }
    handles_.push_back(Handle{mark_, op.sample, op.wakeup_events});
    const std::uint64_t need = op.size + (lost_ > 0 ? op.lost_size : 0);
    const std::uint8_t want = expected_result(op, need);
    if (op.result != want) {
      violate(i, "a write of " + std::to_string(op.size) + " bytes (+" + std::to_string(lost_ > 0 ? op.lost_size : 0) +
                     " for LOST) ended " + std::to_string(op.result) + ", the rules say " + std::to_string(want) +
                     " (head " + std::to_string(head_) + ", tail " + std::to_string(tail_) + ")");
    }
    if (want != RingOp::written) {
      lost_++;
      handles_.back().sample = false;  // a dropped write is no sample
      return;
    }
    const std::uint64_t at = backward_ ? head_ - need : head_;
    if (op.position != at) {
      violate(i, "a record reserved at " + std::to_string(op.position) + ", the rules say " + std::to_string(at));
    }
    if (op.lost != lost_) {
      violate(i, "a LOST record of " + std::to_string(op.lost) + " before the record, " + std::to_string(lost_) +
                     " drops were pending");
    }
    lost_ = 0;
    head_ = backward_ ? head_ - need : head_ + need;
    if (written_bytes() - mark_ > watermark_) mark_ += watermark_;
  }

  void end(std::size_t i, const RingOp& op) {
    if (handles_.empty()) {
      violate(i, "a handle ended that never began");
      return;
    }
    const Handle h = handles_.back();
    handles_.pop_back();
    if (h.sample && h.wakeup_events > 0 && ++events_ >= h.wakeup_events) {
      events_ -= h.wakeup_events;
      mark_++;
    }
    if (!handles_.empty()) {
      if (op.head != data_head_) violate(i, "a nested writer published data_head");
      if (op.woke) violate(i, "a nested writer woke the reader");
      return;
    }
    data_head_ = head_;
    if (op.head != data_head_) {
      violate(i, "data_head published as " + std::to_string(op.head) + ", rb->head is " + std::to_string(head_));
    }
    const bool woke = h.saved_mark != mark_;
    if (op.woke != woke) violate(i, woke ? "the reader was not woken" : "the reader was woken for nothing");
    if (woke) poll_pending_ = true;
  }

  void poll(std::size_t i, const RingOp& op) {
    const bool hup = op.per_task && op.all_exited;
    if (op.hangup != hup) violate(i, hup ? "no POLLHUP for exited per-task events" : "POLLHUP while events live");
    if (op.hangup && op.readable) violate(i, "POLLIN with POLLHUP");
    if (!hup && op.readable != poll_pending_) {
      violate(i, op.readable ? "POLLIN without a wakeup" : "a pending wakeup not reported by poll");
    }
    if (!hup) poll_pending_ = false;
  }

  void step(std::size_t i, const RingOp& op) {
    switch (op.kind) {
      case RingOp::Kind::begin: begin(i, op); break;
      case RingOp::Kind::end: end(i, op); break;
      case RingOp::Kind::tail: tail_ = op.position; break;
      case RingOp::Kind::pause: paused_ = true; break;
      case RingOp::Kind::resume: paused_ = false; break;
      case RingOp::Kind::poll: poll(i, op); break;
      case RingOp::Kind::wake: poll_pending_ = true; break;
      case RingOp::Kind::read: break;  // the reader's side: the oracle's no_torn_records
    }
  }

  const std::uint64_t size_;
  const bool writable_;
  const bool backward_;
  const std::uint64_t watermark_;
  const std::size_t cpu_;
  std::vector<Violation>& out_;
  std::uint64_t head_ = 0;  // rb->head
  std::uint64_t data_head_ = 0;
  std::uint64_t tail_ = 0;
  std::uint64_t mark_ = 0;  // rb->wakeup
  std::uint64_t events_ = 0;
  std::uint64_t lost_ = 0;
  bool paused_ = false;
  bool poll_pending_ = false;
  std::vector<Handle> handles_;
};

}  // namespace

std::vector<Violation> check_kernel_rules(const KernelLog& log) {
  std::vector<Violation> out;
  for (std::size_t cpu = 0; cpu < log.cpus.size(); cpu++) RingRules(log, cpu, out).run(log.cpus[cpu].ops);
  return out;
}

}  // namespace ringsim::model
