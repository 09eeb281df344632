#include "sim/interpose/kernel.h"

#include <poll.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "core/verify.h"
#include "sim/attr_records.h"

namespace ringsim::sim::interpose {
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

// The control page's head and tail, as the kernel accesses them (the
// consumer's side runs in the same thread here, but a consumer may read
// them from another).
std::uint64_t atomic_load_u64(__u64* p) { return std::atomic_ref<__u64>(*p).load(std::memory_order_acquire); }
void atomic_store_u64(__u64* p, std::uint64_t v) { std::atomic_ref<__u64>(*p).store(v, std::memory_order_release); }

}  // namespace

CallKernel::CallKernel(DecisionSource& decisions, const KernelParams& params) : d_(decisions), p_(params) {}

long CallKernel::open(const perf_event_attr& attr, int pid, int cpu, int group, unsigned long flags,
                      int caller_pid) {
  if (events_.size() >= kEventsMax) return -EMFILE;
  if ((flags & ~static_cast<unsigned long>(PERF_FLAG_FD_CLOEXEC)) != 0) return -EINVAL;
  if (pid == -1 && cpu == -1) return -EINVAL;
  if (cpu < -1 || cpu >= 1024) return -EINVAL;
  // No PMU here (as on this machine): hardware and cache events do not
  // exist; perf falls back to cpu-clock.
  if (attr.type != PERF_TYPE_SOFTWARE) return -ENOENT;
  if (!known_software(attr.config)) return -EINVAL;
  if (!sim::unsupported_sample_type(attr.sample_type).empty()) return -EINVAL;
  if (attr.read_format & ~static_cast<std::uint64_t>(PERF_FORMAT_TOTAL_TIME_ENABLED |
                                                     PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID |
                                                     PERF_FORMAT_GROUP | PERF_FORMAT_LOST)) {
    return -EINVAL;
  }
  if (group >= 0 && (static_cast<std::size_t>(group) >= events_.size() || events_[group].closed)) return -EBADF;
  if (attr.freq && attr.sample_freq == 0) return -EINVAL;
  OpenedEvent e;
  e.attr = attr;
  e.id = next_id_++;
  e.pid = pid == 0 ? caller_pid : pid;
  e.cpu = cpu;
  e.group = group;
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
long CallKernel::map(int event, std::span<std::byte> memory, bool writable) {
  OpenedEvent& e = events_.at(static_cast<std::size_t>(event));
  if (memory.size() < kPageBytes || memory.size() % kPageBytes != 0) return -EINVAL;
  const std::uint64_t data_bytes = memory.size() - kPageBytes;
  if (data_bytes != 0 && (data_bytes & (data_bytes - 1)) != 0) return -EINVAL;
  if (e.ring >= 0) return -EINVAL;  // SET_OUTPUT to another ring, or mapped already (map_again)
  auto r = std::make_unique<MappedRing>();
  r->control = reinterpret_cast<perf_event_mmap_page*>(memory.data());
  std::memset(memory.data(), 0, kPageBytes);
  r->control->data_offset = kPageBytes;
  r->control->data_size = data_bytes;
  r->control->compat_version = 0;
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
    r->ring = std::make_unique<SimRing>(layout, r->log, r->probes, r->data);
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
      each([](OpenedEvent& x) {
        if (!x.enabled) x.periods.add();  // perf_swevent_add
        x.enabled = true;
      });
      return 0;
    case PERF_EVENT_IOC_DISABLE:
      each([](OpenedEvent& x) { x.enabled = false; });
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
  e.closed = true;
  e.enabled = false;
}

// read() with read_format (perf_read_one / perf_read_group).
long CallKernel::read(int event, std::span<std::byte> out) {
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
    if (f & PERF_FORMAT_TOTAL_TIME_ENABLED) words.push_back(events_[leader].enabled_ns);
    if (f & PERF_FORMAT_TOTAL_TIME_RUNNING) words.push_back(events_[leader].enabled_ns);
    for (const OpenedEvent* m : members) member(*m);
  } else {
    words.push_back(e.count);
    if (f & PERF_FORMAT_TOTAL_TIME_ENABLED) words.push_back(e.enabled_ns);
    if (f & PERF_FORMAT_TOTAL_TIME_RUNNING) words.push_back(e.enabled_ns);
    if (f & PERF_FORMAT_ID) words.push_back(e.id);
    if (f & PERF_FORMAT_LOST) words.push_back(e.lost_samples);
  }
  const std::size_t bytes = words.size() * 8;
  if (out.size() < bytes) return -ENOSPC;
  std::memcpy(out.data(), words.data(), bytes);
  return static_cast<long>(bytes);
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
    if (!r->ring || r->control == nullptr) continue;
    atomic_store_u64(&r->control->data_head, r->ring->head());
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
      e.enabled = true;
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
  return samples || a.comm || a.mmap || a.mmap2 || a.task || a.mmap_data;
}

// The CPUs the consumer's events name (at least one).
std::uint32_t CallKernel::cpu_count() const {
  int cpus = 1;
  for (const OpenedEvent& e : events_) cpus = std::max(cpus, e.cpu + 1);
  return static_cast<std::uint32_t>(cpus);
}

bool CallKernel::follows(const OpenedEvent& e, const Task& t) const {
  if (e.closed || !e.enabled || e.exited) return false;
  if (e.cpu >= 0 && static_cast<std::uint32_t>(e.cpu) != t.cpu) return false;
  return e.pid < 0 || e.pid == t.pid;
}

// The events an action of `task` reaches, newest first (the kernel's
// lists take new events at the head).
std::vector<int> CallKernel::reached(const Task& task, bool sideband) const {
  std::vector<int> out;
  for (std::size_t i = events_.size(); i-- > 0;) {
    const OpenedEvent& e = events_[i];
    if (!follows(e, task)) continue;
    if (sideband) {
      if (e.attr.comm || e.attr.mmap || e.attr.mmap2 || e.attr.task || e.attr.mmap_data) out.push_back(int(i));
    } else {
      out.push_back(static_cast<int>(i));
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
    e.enabled_ns += p_.tick_ns;
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
}

void CallKernel::sample(int event, const Task& task, std::uint16_t misc, std::uint64_t ip, std::uint64_t period) {
  OpenedEvent& e = events_[event];
  e.writer.identity.pid = static_cast<std::uint32_t>(task.pid);
  e.writer.identity.tid = static_cast<std::uint32_t>(task.tid);
  e.writer.identity.cpu = task.cpu;
  SampleFields f;
  f.ip = ip;
  f.time_ns = record_time();
  f.period = period;
  sim::build_attr_sample(scratch_, e.writer.identity, misc, f);
  stats_.samples++;
  write_record(event, scratch_);
}

// __perf_output_begin .. end into the event's ring; a record of an event
// without a ring vanishes, uncounted.
void CallKernel::write_record(int event, std::span<const std::byte> record) {
  OpenedEvent& e = events_[event];
  if (e.ring < 0 || !rings_[e.ring]->ring) {
    stats_.vanished++;
    return;
  }
  const SimRing::Output out = rings_[e.ring]->ring->output(e.writer, record, now_ns_ + record_clock_);
  if (out != SimRing::Output::written) e.lost_samples++;
}

void CallKernel::sideband_comm(const Task& task, bool exec) {
  for (const int i : reached(task, true)) {
    OpenedEvent& e = events_[i];
    if (!e.attr.comm) continue;
    e.writer.identity.pid = static_cast<std::uint32_t>(task.pid);
    e.writer.identity.tid = static_cast<std::uint32_t>(task.tid);
    e.writer.identity.cpu = task.cpu;
    sim::build_attr_comm(scratch_, e.writer.identity, task.comm, exec, record_time());
    stats_.sideband++;
    write_record(i, scratch_);
  }
}

void CallKernel::sideband_task(std::uint32_t type, const Task& task, const Task& parent) {
  for (const int i : reached(task, true)) {
    OpenedEvent& e = events_[i];
    if (!e.attr.task && !(type == PERF_RECORD_FORK && (e.attr.comm || e.attr.mmap || e.attr.mmap2))) continue;
    e.writer.identity.pid = static_cast<std::uint32_t>(task.pid);
    e.writer.identity.tid = static_cast<std::uint32_t>(task.tid);
    e.writer.identity.cpu = task.cpu;
    sim::build_attr_task(scratch_, type, e.writer.identity, static_cast<std::uint32_t>(parent.pid),
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
    e.writer.identity.pid = static_cast<std::uint32_t>(task.pid);
    e.writer.identity.tid = static_cast<std::uint32_t>(task.tid);
    e.writer.identity.cpu = task.cpu;
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

}  // namespace ringsim::sim::interpose
