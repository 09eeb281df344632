#include "sim/call_kernel.h"

#include <poll.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "core/verify.h"
#include "sim/attr_records.h"

namespace ringsim::sim {
namespace {

constexpr std::uint64_t kPageBytes = 4096;
constexpr std::size_t kEventsMax = 4096;
constexpr std::size_t kTasksMax = 64;
constexpr std::uint64_t kWorkloadText = 0x400000;   // where the executable is mapped
constexpr std::uint64_t kLibraryBase = 0x7f0000000000;
constexpr std::uint32_t kPageFaultsPerMillion = 200'000;

bool clock_event(const perf_event_attr& a) {
  return a.type == PERF_TYPE_SOFTWARE &&
         (a.config == PERF_COUNT_SW_CPU_CLOCK || a.config == PERF_COUNT_SW_TASK_CLOCK);
}
bool fault_event(const perf_event_attr& a) {
  return a.type == PERF_TYPE_SOFTWARE &&
         (a.config == PERF_COUNT_SW_PAGE_FAULTS || a.config == PERF_COUNT_SW_PAGE_FAULTS_MIN);
}

// The software events the simulated kernel has; every other software
// config opens (Linux has them) and never fires.
bool known_software(std::uint64_t config) { return config < PERF_COUNT_SW_MAX; }

// The clock an event's times come from (perf_event_set_clock): the
// default (local_clock) without use_clockid, else one of five clocks; any
// other clockid is EINVAL (-1 here). A software PMU takes all five (it
// never runs in NMI context).
int event_clock(const perf_event_attr& a) {
  constexpr int kDefault = 1000;
  if (!a.use_clockid) return kDefault;
  switch (a.clockid) {
    case CLOCK_MONOTONIC:
    case CLOCK_MONOTONIC_RAW:
    case CLOCK_REALTIME:
    case CLOCK_BOOTTIME:
    case CLOCK_TAI: return a.clockid;
    default: return -1;
  }
}

// The control page's head and tail, as the kernel accesses them (the
// consumer's side runs in the same thread here, but a consumer may read
// them from another).
std::uint64_t atomic_load_u64(__u64* p) { return std::atomic_ref<__u64>(*p).load(std::memory_order_acquire); }
void atomic_store_u64(__u64* p, std::uint64_t v) { std::atomic_ref<__u64>(*p).store(v, std::memory_order_release); }

// The bytes of a sample's STACK_USER part: the size alone for no dump,
// else size, dump, dyn_size.
std::uint32_t stack_bytes(const perf_event_attr& a) {
  if (!(a.sample_type & PERF_SAMPLE_STACK_USER)) return 0;
  return a.sample_stack_user == 0 ? 8 : 16 + a.sample_stack_user;
}

}  // namespace

// A software event's hit (___perf_sw_event) prepares one perf_sample_data
// for every event it reaches, in their order; perf_prepare_sample does not
// prepare again what data->sample_flags says is done. So a later event's
// sample carries the id an earlier one prepared, and its size
// (header_size + data->dyn_size) counts the user stack the earlier one
// added (fidelity row 21). A tracepoint's hit prepares it anew for each.
class SharedSampleData {
 public:
  struct Sample {
    std::uint64_t id = 0;
    std::uint32_t dyn = 0;         // data->dyn_size
    std::uint32_t stack_user = 0;  // data->stack_user_size
  };
  Sample prepare(const perf_event_attr& a, std::uint64_t event_id) {
    const std::uint64_t type = a.sample_type;
    std::uint64_t filtered = type | ((type & PERF_SAMPLE_STACK_USER) ? PERF_SAMPLE_REGS_USER : 0);
    filtered &= ~flags_;
    if (filtered != 0) flags_ |= type & kSampleIdFields;  // __perf_event_header__init_id
    if (filtered & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER)) id_ = event_id;
    if (filtered & PERF_SAMPLE_REGS_USER) flags_ |= PERF_SAMPLE_REGS_USER;
    if (filtered & PERF_SAMPLE_STACK_USER) {
      dyn_ += stack_bytes(a);
      stack_user_ = a.sample_stack_user;
      flags_ |= PERF_SAMPLE_STACK_USER;
    }
    return {id_, dyn_, stack_user_};
  }
  // __perf_event_header__init_id with the event's whole sample_type (a
  // LOST record written before the sample prepares the ids again).
  void prepare_ids(const perf_event_attr& a, std::uint64_t event_id) {
    flags_ |= a.sample_type & kSampleIdFields;
    if (a.sample_type & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER)) id_ = event_id;
  }

 private:
  std::uint64_t flags_ = PERF_SAMPLE_PERIOD;  // perf_sample_data_init
  std::uint64_t id_ = 0;
  std::uint32_t dyn_ = 0;
  std::uint32_t stack_user_ = 0;
};

CallKernel::CallKernel(DecisionSource& decisions, const KernelParams& params) : d_(decisions), p_(params) {}

// perf_event_open's checks of a group's new member (perf_event_group_
// leader_check and the inherit test before it): the leader leads, shares
// the member's CPU and context (the same task, or CPU-wide on the same
// CPU), the member is neither pinned nor exclusive, and a task's member
// inherits as its leader. Not modelled: a context the kernel swapped with
// a thread's (docs/fidelity.md, row 26).
bool CallKernel::joins_group(const OpenedEvent& leader, const perf_event_attr& attr, int pid, int cpu) const {
  if (leader.group >= 0) return false;
  if (event_clock(leader.attr) != event_clock(attr)) return false;
  if (leader.cpu != cpu || leader.pid != pid) return false;
  if (attr.pinned || attr.exclusive) return false;
  return pid == -1 || leader.attr.inherit == attr.inherit;
}

long CallKernel::open(const perf_event_attr& attr, int pid, int cpu, int group, unsigned long flags,
                      int caller_pid) {
  if (events_.size() >= kEventsMax) return -EMFILE;
  if ((flags & ~static_cast<unsigned long>(PERF_FLAG_FD_CLOEXEC)) != 0) return -EINVAL;
  if (pid == -1 && cpu == -1) return -EINVAL;
  if (cpu < -1 || cpu >= 1024) return -EINVAL;
  // No PMU here (as on this machine): hardware and cache events do not
  // exist; perf falls back to cpu-clock.
  // Tracepoints open with any config and fire only when a driver says so
  // (occurrence()): the drawn workload makes none.
  // The one AUX PMU here is the simulated one (kAuxPmuType).
  if (attr.type != PERF_TYPE_SOFTWARE && attr.type != PERF_TYPE_TRACEPOINT && attr.type != kAuxPmuType) {
    return -ENOENT;
  }
  if (attr.type == PERF_TYPE_SOFTWARE && !known_software(attr.config)) return -EINVAL;
  if (!sim::unsupported_sample_type(attr.sample_type).empty()) return -EINVAL;
  // perf_event_open since 6.12 (this machine's 6.18 measured 2026-12-01):
  // an inherited event samples READ only with TID (before: never).
  if (attr.inherit && (attr.sample_type & PERF_SAMPLE_READ) && !(attr.sample_type & PERF_SAMPLE_TID)) return -EINVAL;
  if (attr.read_format & ~static_cast<std::uint64_t>(PERF_FORMAT_TOTAL_TIME_ENABLED |
                                                     PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID |
                                                     PERF_FORMAT_GROUP | PERF_FORMAT_LOST)) {
    return -EINVAL;
  }
  if (group >= 0 && (static_cast<std::size_t>(group) >= events_.size() || events_[group].closed)) return -EBADF;
  if (event_clock(attr) < 0) return -EINVAL;
  const int task = pid == 0 ? caller_pid : pid;
  if (group >= 0 && !joins_group(events_[static_cast<std::size_t>(group)], attr, task, cpu)) return -EINVAL;
  if (attr.freq && attr.sample_freq == 0) return -EINVAL;
  OpenedEvent e;
  e.attr = attr;
  e.id = next_id_++;
  e.pid = task;
  e.cpu = cpu;
  e.group = group;
  e.always_running = e.pid == caller_pid || pid == -1;
  e.enabled_at_ns = now_ns_;
  e.enabled = !attr.disabled && !attr.enable_on_exec;
  if (attr.enable_on_exec && started_) e.enabled = !attr.disabled;
  e.periods = sim::PeriodState(sim::SamplingAttr{.sample_period = attr.freq ? 0 : attr.sample_period,
                                                 .sample_freq = attr.freq ? attr.sample_freq : 0,
                                                 .period_field = (attr.sample_type & PERF_SAMPLE_PERIOD) != 0});
  if (e.enabled) e.periods.add();
  e.writer.identity = sim::attr_identity(attr, e.id, 0, 0, cpu < 0 ? 0 : static_cast<std::uint32_t>(cpu));
  e.writer.wakeup_events = attr.watermark ? 0 : attr.wakeup_events;
  e.writer.watermark = attr.watermark != 0;
  // An event on the caller itself (a consumer's probe of the kernel's
  // features: ringsim-record's, before it forks its command) makes no
  // workload task: the workload is what the consumer watches, not the
  // consumer, whose own exit the simulated kernel does not decide.
  if (e.pid > 0 && e.pid != caller_pid) task_of(e.pid);
  events_.push_back(e);
  return static_cast<long>(events_.size() - 1);
}

CallKernel::Task& CallKernel::task_of(int pid) {
  for (Task& t : tasks_) {
    if (t.pid == pid && t.tid == pid) return t;
  }
  VERIFY(tasks_.size() < kTasksMax);
  Task t;
  t.pid = t.tid = pid;
  t.comm = "ringsim-task";
  tasks_.push_back(t);
  return tasks_.back();
}

// perf_mmap: the control page, then 2^n data pages; the mapping is
// writable (data_tail honoured) or read-only (overwrite).
long CallKernel::map(int event, std::span<std::byte> memory, bool writable, model::CpuLog* log, Probes* probes) {
  OpenedEvent& e = events_.at(static_cast<std::size_t>(event));
  if (memory.size() < kPageBytes || memory.size() % kPageBytes != 0) return -EINVAL;
  const std::uint64_t data_bytes = memory.size() - kPageBytes;
  if (data_bytes != 0 && (data_bytes & (data_bytes - 1)) != 0) return -EINVAL;
  if (e.ring >= 0) return -EINVAL;  // SET_OUTPUT to another ring, or mapped already (map_again)
  auto r = std::make_unique<MappedRing>();
  r->control = reinterpret_cast<perf_event_mmap_page*>(memory.data());
  std::memset(memory.data(), 0, kPageBytes);
  // perf_event_init_userpage / perf_event_update_userpage: version and
  // compat_version 0, cap_bit0_is_deprecated and the machine's bits, the
  // page's size up to __reserved, index 0 (a software event has no counter
  // for rdpmc).
  r->control->data_offset = kPageBytes;
  r->control->data_size = data_bytes;
  r->control->compat_version = 0;
  r->control->size = offsetof(perf_event_mmap_page, __reserved);
  r->control->capabilities = (1ull << 1) | machine_capabilities_;
  r->control->pmc_width = machine_pmc_width_;
  r->data = memory.subspan(kPageBytes);
  r->owner = event;
  r->mappings = 1;
  r->writable = writable;
  if (data_bytes > 0) {
    RingLayout layout;
    layout.size_bytes = data_bytes;
    const bool backward = e.attr.write_backward != 0;
    layout.mode = writable ? (backward ? core::RingMode::backward_writable : core::RingMode::normal)
                           : (backward ? core::RingMode::backward : core::RingMode::forward_overwrite);
    layout.watermark_bytes = e.attr.watermark ? e.attr.wakeup_watermark : 0;
    r->ring = std::make_unique<SimRing>(layout, log != nullptr ? *log : r->log, probes != nullptr ? *probes : r->probes,
                                        r->data);
  }
  rings_.push_back(std::move(r));
  e.ring = e.own_ring = static_cast<int>(rings_.size() - 1);
  return e.ring;
}

void CallKernel::map_again(int ring) { rings_.at(static_cast<std::size_t>(ring))->mappings++; }

// perf_mmap_close of the last mapping: the events writing into it lose it.
void CallKernel::unmap(int ring) {
  MappedRing& r = *rings_.at(static_cast<std::size_t>(ring));
  VERIFY(r.mappings > 0);
  if (--r.mappings > 0) return;
  sync_tails();
  for (OpenedEvent& e : events_) {
    if (e.ring == ring) e.ring = -1;
    if (e.own_ring == ring) e.own_ring = -1;
  }
  if (r.ring) r.ring->abandon_pending();
  r.control = nullptr;
  r.data = {};
}

long CallKernel::ioctl(int event, unsigned long request, unsigned long arg) {
  OpenedEvent& e = events_.at(static_cast<std::size_t>(event));
  const bool group = (arg & PERF_IOC_FLAG_GROUP) != 0;
  const auto each = [&](auto&& f) {
    for (std::size_t i = 0; i < events_.size(); i++) {
      if (events_[i].closed) continue;
      if (static_cast<int>(i) == event || (group && events_[i].group == (e.group < 0 ? event : e.group))) {
        f(events_[i]);
      }
    }
  };
  switch (request) {
    case PERF_EVENT_IOC_ENABLE:
      each([this](OpenedEvent& x) {
        if (!x.enabled) x.periods.add();  // perf_swevent_add
        set_enabled(x, true);
      });
      return 0;
    case PERF_EVENT_IOC_DISABLE:
      each([this](OpenedEvent& x) { set_enabled(x, false); });
      return 0;
    case PERF_EVENT_IOC_RESET:
      each([](OpenedEvent& x) { x.count = 0; });
      return 0;
    case PERF_EVENT_IOC_PAUSE_OUTPUT: {
      if (e.ring < 0 || !rings_[e.ring]->ring) return -EINVAL;
      MappedRing& r = *rings_[e.ring];
      if (arg != 0 && !r.ring->paused()) r.pauses.push_back(r.ring->head());
      r.ring->set_paused(arg != 0);
      return 0;
    }
    default:
      break;
  }
  return -ENOTTY;
}

// perf_event_set_output: not to itself, not from an event with a mapping
// of its own, to an event with a ring on the same CPU (and, for cpu -1,
// following the same task), writing in the same direction.
long CallKernel::set_output(int event, int target) {
  OpenedEvent& e = events_.at(static_cast<std::size_t>(event));
  if (target < 0) {
    if (e.own_ring >= 0) return -EINVAL;
    e.ring = -1;
    return 0;
  }
  const OpenedEvent& t = events_.at(static_cast<std::size_t>(target));
  if (event == target || e.own_ring >= 0 || t.ring < 0) return -EINVAL;
  if (e.cpu != t.cpu) return -EINVAL;
  if (e.cpu == -1 && e.pid != t.pid) return -EINVAL;
  if (e.attr.write_backward != t.attr.write_backward) return -EINVAL;
  e.ring = t.ring;
  return 0;
}

void CallKernel::close(int event) {
  OpenedEvent& e = events_.at(static_cast<std::size_t>(event));
  set_enabled(e, false);
  e.closed = true;
}

void CallKernel::set_enabled(OpenedEvent& e, bool enabled) {
  if (e.always_running && e.enabled && !enabled) e.enabled_ns += now_ns_ - e.enabled_at_ns;
  if (enabled && !e.enabled) e.enabled_at_ns = now_ns_;
  e.enabled = enabled;
}

std::uint64_t CallKernel::enabled_time(const OpenedEvent& e) const {
  const bool running = e.always_running && e.enabled && !e.exited;
  return e.enabled_ns + (running ? now_ns_ - e.enabled_at_ns : 0);
}

// read() with read_format (perf_read_one / perf_read_group).
long CallKernel::read(int event, std::span<std::byte> out) {
  const std::vector<std::uint64_t> words = read_words(event, false);
  const std::size_t bytes = words.size() * 8;
  if (out.size() < bytes) return -ENOSPC;
  std::memcpy(out.data(), words.data(), bytes);
  return static_cast<long>(bytes);
}

// The words of read_format: read(2)'s (perf_read_one / perf_read_group:
// a group's times its leader's), or a sample's READ (perf_output_read_one
// / _group: the times the sampled event's own).
std::vector<std::uint64_t> CallKernel::read_words(int event, bool in_sample) const {
  const OpenedEvent& e = events_.at(static_cast<std::size_t>(event));
  const std::uint64_t f = e.attr.read_format;
  std::vector<std::uint64_t> words;
  const auto member = [&](const OpenedEvent& m) {
    words.push_back(m.count);
    if (f & PERF_FORMAT_ID) words.push_back(m.id);
    if (f & PERF_FORMAT_LOST) words.push_back(m.lost_samples);
  };
  if (f & PERF_FORMAT_GROUP) {
    const int leader = e.group < 0 ? event : e.group;
    std::vector<const OpenedEvent*> members{&events_[leader]};
    for (const OpenedEvent& m : events_) {
      if (!m.closed && m.group == leader) members.push_back(&m);
    }
    words.push_back(members.size());
    const OpenedEvent& timed = in_sample ? e : events_[leader];
    if (f & PERF_FORMAT_TOTAL_TIME_ENABLED) words.push_back(enabled_time(timed));
    if (f & PERF_FORMAT_TOTAL_TIME_RUNNING) words.push_back(enabled_time(timed));
    for (const OpenedEvent* m : members) member(*m);
  } else {
    words.push_back(e.count);
    if (f & PERF_FORMAT_TOTAL_TIME_ENABLED) words.push_back(enabled_time(e));
    if (f & PERF_FORMAT_TOTAL_TIME_RUNNING) words.push_back(enabled_time(e));
    if (f & PERF_FORMAT_ID) words.push_back(e.id);
    if (f & PERF_FORMAT_LOST) words.push_back(e.lost_samples);
  }
  return words;
}

// perf_poll (sim::poll_event): POLLHUP once the task the event follows
// exited, POLLHUP without a ring, else the ring's pending wakeup.
short CallKernel::poll(int event) {
  const OpenedEvent& e = events_.at(static_cast<std::size_t>(event));
  SimRing* ring = e.ring >= 0 ? rings_[e.ring]->ring.get() : nullptr;
  const EventPoll p = poll_event(ring, e.ring >= 0, e.exited, e.pid > 0);
  return static_cast<short>((p.readable ? POLLIN : 0) | (p.hangup ? POLLHUP : 0));
}

// The consumer's data_tail stores, read as the kernel reads them (with a
// barrier) before it reuses space. A tail the kernel cannot take is kept
// as a finding and not stored (the ring keeps the last good one).
void CallKernel::sync_tails() {
  for (std::unique_ptr<MappedRing>& r : rings_) {
    sync_aux_tail(*r);
    if (!r->ring || r->control == nullptr || !r->writable) continue;
    const std::uint64_t tail = atomic_load_u64(&r->control->data_tail);
    if (tail == r->tail_seen) continue;
    const std::uint64_t head = r->ring->head();
    const std::uint64_t size = r->ring->data_size_bytes();
    const bool backward = core::backward(r->ring->mode());
    const std::uint64_t unread = backward ? tail - head : head - tail;
    const std::uint64_t moved = backward ? r->tail_seen - tail : tail - r->tail_seen;
    if (unread > size || moved > size) {
      if (r->bad_tail.empty()) {
        r->bad_tail = "data_tail " + std::to_string(tail) + " stored with data_head " + std::to_string(head) +
                      " and the previous tail " + std::to_string(r->tail_seen) + " (area " +
                      std::to_string(size) + " bytes)";
      }
      continue;
    }
    r->ring->store_tail(tail);
    r->tail_seen = tail;
  }
}

void CallKernel::publish_heads() {
  for (std::unique_ptr<MappedRing>& r : rings_) {
    if (r->control == nullptr) continue;
    if (r->ring) atomic_store_u64(&r->control->data_head, r->ring->head());
    if (r->aux && r->aux->mappings > 0) atomic_store_u64(&r->control->aux_head, r->aux->head);
  }
}

void CallKernel::step(bool may_start) {
  sync_tails();
  stats_.steps++;
  if (!started_ && !may_start) {
    now_ns_ += p_.tick_ns;
  } else if (!started_) {
    start();
  } else if (!ended_) {
    now_ns_ += p_.tick_ns + d_.draw(p_.tick_ns / 4 + 1);
    record_clock_ = 0;
    if (now_ns_ >= end_at_ns_) {
      end_workload();
    } else {
      for (std::size_t i = 0; i < tasks_.size(); i++) {
        if (tasks_[i].alive) tick(tasks_[i]);
      }
    }
  } else {
    now_ns_ += p_.tick_ns;
  }
  publish_heads();
}

// The exec of the workload: enable_on_exec, COMM (exec) and the
// executable's mapping. Its end and a SIGINT are drawn here.
void CallKernel::start() {
  started_ = true;
  end_at_ns_ = now_ns_ + p_.tick_ns * d_.between(1, p_.run_ticks_max);
  if (d_.chance(p_.sigint_per_million)) sigint_at_ns_ = now_ns_ + d_.between(1, end_at_ns_ - now_ns_);
  if (sigusr2_handled_) {
    const std::uint64_t n = d_.draw(p_.sigusr2_max + 1);
    for (std::uint64_t k = 0; k < n; k++) sigusr2_at_ns_.push_back(now_ns_ + d_.between(1, end_at_ns_ - now_ns_));
    std::sort(sigusr2_at_ns_.begin(), sigusr2_at_ns_.end());
  }
  for (OpenedEvent& e : events_) {
    if (!e.closed && e.attr.enable_on_exec && !e.enabled) {
      set_enabled(e, true);
      e.periods.add();
    }
  }
  for (Task& t : tasks_) {
    t.cpu = static_cast<std::uint32_t>(d_.draw(cpu_count()));
    t.comm = "workload";
    sideband_comm(t, true);
    sideband_mmap(t, kWorkloadText, 0x10000, "/usr/bin/ringsim-workload", true);
  }
}

// The tasks exit: PERF_RECORD_EXIT into the events asking for task
// records, then the events following them are in EXIT state (POLLHUP).
void CallKernel::end_workload() {
  ended_ = true;
  for (Task& t : tasks_) {
    if (!t.alive) continue;
    const Task parent{t.pid, t.pid, t.cpu, t.comm, true};
    sideband_task(PERF_RECORD_EXIT, t, parent);
    t.alive = false;
  }
  for (OpenedEvent& e : events_) {
    if (!e.closed && e.pid > 0) e.exited = true;
  }
  for (std::unique_ptr<MappedRing>& r : rings_) {
    if (!r->ring) continue;
    bool live = false;
    for (const OpenedEvent& e : events_) live |= e.ring >= 0 && rings_[e.ring].get() == r.get() && !e.exited;
    if (!live) r->ring->abandon_pending();
  }
}

bool CallKernel::can_fire(int event) const {
  const OpenedEvent& e = events_.at(static_cast<std::size_t>(event));
  const perf_event_attr& a = e.attr;
  const bool samples = (clock_event(a) || fault_event(a)) && (a.freq || a.sample_period != 0);
  return samples || a.type == kAuxPmuType || a.comm || a.mmap || a.mmap2 || a.task || a.mmap_data;
}

// The CPUs the consumer's events name (at least one).
std::uint32_t CallKernel::cpu_count() const {
  int cpus = 1;
  for (const OpenedEvent& e : events_) cpus = std::max(cpus, e.cpu + 1);
  return static_cast<std::uint32_t>(cpus);
}

// The TID and CPU fields of the records `e` writes next (the sample's, or
// the sample_id trailer's: the task writing them).
void CallKernel::write_as(OpenedEvent& e, int pid, int tid, std::uint32_t cpu) {
  e.writer.identity.pid = static_cast<std::uint32_t>(pid);
  e.writer.identity.tid = static_cast<std::uint32_t>(tid);
  e.writer.identity.cpu = cpu;
}

bool CallKernel::follows(const OpenedEvent& e, const Task& t) const {
  if (e.closed || !e.enabled || e.exited) return false;
  if (e.cpu >= 0 && static_cast<std::uint32_t>(e.cpu) != t.cpu) return false;
  if (e.filter_pid >= 0 && e.filter_pid != t.pid) return false;
  return e.pid < 0 || e.pid == t.pid;
}

// The events an action of `task` reaches, in the order the kernel offers
// them. Side-band (perf_iterate_sb): the CPU's side-band events
// (pmu_sb_events), then the task's context; samples of a software event
// or tracepoint: the task's events first, then the CPU's (their hlist
// takes each event at its head as it is scheduled in, the CPU's context
// before the task's). Each list has the newest first (list_add_rcu).
std::vector<int> CallKernel::reached(const Task& task, bool sideband) const {
  std::vector<int> out;
  const auto sideband_asked = [](const perf_event_attr& a) {
    return a.comm || a.mmap || a.mmap2 || a.task || a.mmap_data;
  };
  for (const bool cpu_wide : {sideband, !sideband}) {
    for (std::size_t i = events_.size(); i-- > 0;) {
      const OpenedEvent& e = events_[i];
      if ((e.pid < 0) != cpu_wide || !follows(e, task)) continue;
      if (!sideband || sideband_asked(e.attr)) out.push_back(static_cast<int>(i));
    }
  }
  return out;
}

void CallKernel::tick(Task& t) {
  if (d_.chance(p_.migrate_per_million)) t.cpu = static_cast<std::uint32_t>(d_.draw(cpu_count()));
  if (d_.chance(p_.sideband_per_million)) {
    switch (d_.draw(3)) {
      case 0: {
        const std::uint64_t addr = kLibraryBase + 0x100000 * next_library_;
        sideband_mmap(t, addr, 0x20000, "/usr/lib/ringsim/lib" + std::to_string(next_library_++) + ".so", true);
        break;
      }
      case 1:
        if (tasks_.size() < kTasksMax) {
          Task child;
          child.pid = t.pid;
          child.tid = t.pid + 1000 + ++next_tid_offset_;
          child.cpu = t.cpu;
          child.comm = t.comm;
          sideband_task(PERF_RECORD_FORK, child, t);
          tasks_.push_back(child);
          return;  // tasks_ may have moved: `t` is stale
        }
        break;
      default:
        t.comm = "workload-" + std::to_string(d_.draw(100));
        sideband_comm(t, false);
        break;
    }
  }
  const std::uint64_t ip = kWorkloadText + 0x1000 + 8 * d_.draw(0x1000);
  const bool burst = d_.chance(p_.burst_per_million);
  const std::uint64_t samples = burst ? d_.between(2, p_.burst_records_max) : 1;
  stats_.bursts += burst ? 1 : 0;
  // A tick's page faults: none, one, or a burst.
  const std::uint64_t faults = d_.chance(kPageFaultsPerMillion) ? samples : 0;
  for (const int i : reached(t, false)) {
    OpenedEvent& e = events_[i];
    if (!e.always_running) e.enabled_ns += p_.tick_ns;
    if (clock_event(e.attr)) {
      // cpu-clock and task-clock are hrtimers (perf_swevent_init_hrtimer):
      // a frequency becomes the fixed period NSEC_PER_SEC / freq; the
      // timer expires every max(10 us, period) of task time
      // (perf_swevent_hrtimer) and each sample's PERIOD is the period.
      e.count += p_.tick_ns;
      const std::uint64_t period =
          e.attr.freq ? 1'000'000'000 / std::max<std::uint64_t>(e.attr.sample_freq, 1) : e.attr.sample_period;
      if (period == 0) continue;  // counting only
      const std::uint64_t interval = std::max<std::uint64_t>(period, 10'000);
      e.clock_left_ns += p_.tick_ns;
      const std::uint64_t fires = e.clock_left_ns / interval;
      e.clock_left_ns %= interval;
      for (std::uint64_t k = 0; k < fires; k++) sample(i, t, PERF_RECORD_MISC_USER, ip + 8 * k, period);
    } else if (fault_event(e.attr)) {
      // perf_swevent_event for each fault (sim/sampling.h).
      for (std::uint64_t f = 0; f < faults; f++) {
        e.count++;
        const sim::PeriodState::Hit hit = e.periods.event(1, sim::perf_clock(now_ns_ + f));
        for (std::uint64_t k = 0; k < hit.samples; k++) sample(i, t, PERF_RECORD_MISC_USER, ip + 8 * f, hit.period);
      }
    }
  }
  aux_tick(t);
}

void CallKernel::sample(int event, const Task& task, std::uint16_t misc, std::uint64_t ip, std::uint64_t period) {
  OpenedEvent& e = events_[event];
  write_as(e, task.pid, task.tid, task.cpu);
  SampleFields f;
  f.ip = ip;
  f.time_ns = record_time();
  f.period = period;
  std::vector<std::uint64_t> read;
  if (e.attr.sample_type & PERF_SAMPLE_READ) {
    read = read_words(event, true);
    f.read = read;
  }
  sim::build_attr_sample(scratch_, e.writer.identity, misc, f);
  stats_.samples++;
  write_record(event, scratch_);
}

// __perf_output_begin .. end into the event's ring; a record of an event
// without a ring vanishes, uncounted.
bool CallKernel::write_record(int event, std::span<const std::byte> record) {
  OpenedEvent& e = events_[event];
  if (e.ring < 0 || !rings_[e.ring]->ring) {
    stats_.vanished++;
    return false;
  }
  const SimRing::Output out = rings_[e.ring]->ring->output(e.writer, record, now_ns_ + record_clock_);
  if (out == SimRing::Output::written) return true;
  e.lost_samples++;
  return false;
}

void CallKernel::sideband_comm(const Task& task, bool exec) {
  for (const int i : reached(task, true)) {
    OpenedEvent& e = events_[i];
    if (!e.attr.comm) continue;
    write_as(e, task.pid, task.tid, task.cpu);
    sim::build_attr_comm(scratch_, e.writer.identity, task.comm, exec, record_time());
    stats_.sideband++;
    write_record(i, scratch_);
  }
}

void CallKernel::sideband_task(std::uint32_t type, const Task& task, const Task& parent) {
  // FORK goes to the events following the parent (perf_event_fork runs in
  // the parent), EXIT to the task's own.
  for (const int i : reached(type == PERF_RECORD_FORK ? parent : task, true)) {
    OpenedEvent& e = events_[i];
    // perf_event_task_match: FORK and EXIT go to every event asking for
    // side-band (comm, mmap, mmap2, mmap_data, task): reached() says so.
    // The trailer's task is the one writing: the parent in fork, the task
    // itself at its exit.
    const Task& writer = type == PERF_RECORD_FORK ? parent : task;
    write_as(e, writer.pid, writer.tid, task.cpu);
    sim::build_attr_task(scratch_, type, e.writer.identity, static_cast<std::uint32_t>(task.pid),
                         static_cast<std::uint32_t>(task.tid), static_cast<std::uint32_t>(parent.pid),
                         static_cast<std::uint32_t>(parent.tid), record_time());
    stats_.sideband++;
    write_record(i, scratch_);
  }
}

void CallKernel::sideband_mmap(const Task& task, std::uint64_t addr, std::uint64_t len, const std::string& file,
                               bool exec) {
  for (const int i : reached(task, true)) {
    OpenedEvent& e = events_[i];
    if (!(e.attr.mmap || e.attr.mmap2) || (!exec && !e.attr.mmap_data)) continue;
    write_as(e, task.pid, task.tid, task.cpu);
    MmapFields m;
    m.addr = addr;
    m.len = len;
    m.maj = 8;
    m.min = 1;
    m.ino = 1000 + addr / 0x100000 % 100000;
    m.prot = exec ? 0x5 : 0x3;  // PROT_READ|PROT_EXEC, PROT_READ|PROT_WRITE
    m.flags = 0x2;              // MAP_PRIVATE
    m.filename = file;
    sim::build_attr_mmap(scratch_, e.attr.mmap2 != 0, e.writer.identity, m, record_time());
    stats_.sideband++;
    write_record(i, scratch_);
  }
}

// The driven workload (kernel.h).

void CallKernel::add_task(int pid) {
  Task& t = task_of(pid);
  t.cpu = 0;
  started_ = true;  // driven: no exec to wait for, no drawn end
  end_at_ns_ = UINT64_MAX;
}

void CallKernel::run_task(int pid, std::uint64_t ns) {
  action([&] {
    for (OpenedEvent& e : events_) {
      if (e.closed || !e.enabled || e.exited || e.pid != pid) continue;
      e.enabled_ns += ns;
      e.periods.add();  // its context is scheduled in: perf_swevent_add
    }
  });
}

void CallKernel::occurrence(int pid, std::uint32_t type, std::uint64_t config, std::uint32_t raw_size) {
  action([&] {
    const Task t = task_of(pid);
    record_clock_ = 0;
    SharedSampleData shared;  // of a software event's hit
    for (const int i : reached(t, false)) {
      OpenedEvent& e = events_[i];
      if (e.attr.type != type || e.attr.config != config) continue;
      e.count++;  // perf_swevent_event counts every occurrence, sampled or not
      const sim::PeriodState::Hit hit = e.periods.event(1, sim::perf_clock(now_ns_));
      for (std::uint64_t k = 0; k < hit.samples; k++) {
        driven_sample(i, t, type == PERF_TYPE_SOFTWARE ? &shared : nullptr, hit.period,
                      type == PERF_TYPE_TRACEPOINT ? raw_size : 0);
      }
    }
  });
}

// One sample of a driven occurrence; `shared` the hit's sample data (a
// software event's), or none (a tracepoint's: prepared for each event).
void CallKernel::driven_sample(int event, const Task& t, SharedSampleData* shared, std::uint64_t period,
                               std::uint32_t raw_size) {
  OpenedEvent& e = events_[event];
  SharedSampleData::Sample s{e.id, stack_bytes(e.attr), e.attr.sample_stack_user};
  if (shared != nullptr) s = shared->prepare(e.attr, e.id);
  SimRing* ring = e.ring >= 0 ? rings_[e.ring]->ring.get() : nullptr;
  const std::uint64_t lost_before = ring != nullptr ? ring->lost_pending() : 0;
  if (lost_before > 0 && e.attr.sample_id_all) s.id = e.id;
  write_as(e, t.pid, t.tid, t.cpu);
  SampleFields f;
  f.ip = kWorkloadText;
  f.time_ns = record_time();
  f.period = period;
  f.raw_size = raw_size;
  f.stack_user = e.attr.sample_stack_user;
  std::vector<std::uint64_t> read;  // each event's own, not the hit's shared data
  if (e.attr.sample_type & PERF_SAMPLE_READ) {
    read = read_words(event, true);
    f.read = read;
  }
  EventIdentity id = e.writer.identity;
  id.id = s.id;
  sim::build_attr_sample(scratch_, id, PERF_RECORD_MISC_USER, f);
  // The size counts the stack the hit's data holds, not this event's.
  const std::uint32_t own_stack = stack_bytes(e.attr);
  if (s.dyn != own_stack) {
    // (IDENTIFIER comes first; every other field after STACK_USER has a
    // higher bit.)
    VERIFY_MSG((e.attr.sample_type & ~static_cast<std::uint64_t>(PERF_SAMPLE_STACK_USER | PERF_SAMPLE_IDENTIFIER)) <
                   PERF_SAMPLE_STACK_USER,
               "a shared user stack with sample fields after it");
    scratch_.resize(scratch_.size() - own_stack + s.dyn);
    if (own_stack > 0) std::memset(scratch_.data() + scratch_.size() - s.dyn, 0, s.dyn);
    const std::uint16_t size = static_cast<std::uint16_t>(scratch_.size());
    std::memcpy(scratch_.data() + offsetof(perf_event_header, size), &size, sizeof size);
  }
  stats_.samples++;
  if (!write_record(event, scratch_)) return;
  if (lost_before > 0 && e.attr.sample_id_all && shared != nullptr) shared->prepare_ids(e.attr, e.id);
  if ((e.attr.sample_type & PERF_SAMPLE_STACK_USER) && s.stack_user == 0) {
    // perf_output_sample_ustack puts dyn_size after an empty dump: 8 bytes
    // the sample did not reserve, past the record's end (fidelity row 22).
    const std::uint64_t lost = lost_before > 0 ? lost_bytes(e.writer.identity) : 0;
    const std::uint64_t end = e.attr.write_backward ? ring->head() + lost + scratch_.size() : ring->head();
    const std::span<std::byte> data = ring->data_for_test();
    for (std::uint64_t b = 0; b < 8; b++) data[(end + b) & (data.size() - 1)] = std::byte{0};
  }
}

void CallKernel::rename_task(int pid, const std::string& comm) {
  action([&] {
    Task& t = task_of(pid);
    t.comm = comm;
    sideband_comm(t, false);
  });
}

void CallKernel::fork_task(int parent, int child) {
  action([&] {
    const Task p = task_of(parent);
    Task& c = task_of(child);
    c.cpu = p.cpu;
    c.comm = p.comm;
    sideband_task(PERF_RECORD_FORK, Task(c), p);
  });
}

// perf_event_mmap_output for each event asking for it: the build-id body
// for an event with attr.build_id when the file has one; the misc bit it
// sets in the shared mmap event stays for the events after it (fidelity
// row 20), whose body is the device and inode one.
void CallKernel::map_exec(int pid, const MmapFields& m) {
  action([&] {
    const Task t = task_of(pid);
    bool misc_build_id = false;
    for (const int i : reached(t, true)) {
      OpenedEvent& e = events_[i];
      if (!(e.attr.mmap || e.attr.mmap2)) continue;
      write_as(e, t.pid, t.tid, t.cpu);
      MmapFields own = m;
      own.use_build_id = e.attr.mmap2 && e.attr.build_id && m.build_id_size > 0;
      own.misc_build_id = own.use_build_id || misc_build_id;
      sim::build_attr_mmap(scratch_, e.attr.mmap2 != 0, e.writer.identity, own, record_time());
      stats_.sideband++;
      const bool written = write_record(i, scratch_);
      misc_build_id = misc_build_id || (own.use_build_id && written);
    }
  });
}

void CallKernel::exit_task(int pid, int parent) {
  action([&] {
    const Task p = task_of(parent);
    const Task t = task_of(pid);  // copies: task_of may grow tasks_
    sideband_task(PERF_RECORD_EXIT, t, p);
    task_of(pid).alive = false;
    for (OpenedEvent& e : events_) {
      if (!e.closed && e.pid == pid) e.exited = true;
    }
  });
}

long CallKernel::set_filter(int event, const std::string& filter) {
  OpenedEvent& e = events_.at(static_cast<std::size_t>(event));
  constexpr std::string_view kPrefix = "common_pid == ";
  if (e.attr.type != PERF_TYPE_TRACEPOINT || filter.rfind(kPrefix, 0) != 0) return -EINVAL;
  const std::string digits = filter.substr(kPrefix.size());
  if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) {
    return -EINVAL;
  }
  e.filter_pid = std::stoi(digits);
  return 0;
}

}  // namespace ringsim::sim
