#include "tests/conformance/sim_kernel.h"

#include <linux/perf_event.h>
#include <poll.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <optional>
#include <span>

#include "core/ring_mode.h"
#include "core/verify.h"
#include "tests/conformance/layout.h"

namespace ringsim::conformance {
namespace {

constexpr std::uint64_t kPageBytes = 4096;
constexpr std::uint64_t kActionNs = 1000;  // virtual time between two actions

// The simulated tasks' pids: a base plus their Who code, so that who() is
// the difference; the simulated executable mappings' addresses.
constexpr std::uint32_t kPidBase = 1u << 20;
constexpr std::uint32_t kThisPid = kPidBase + kWhoThis;
constexpr std::uint64_t kMappingBase = 0x7f0000000000;
std::uint32_t child_pid(int child) { return kPidBase + kWhoChild + static_cast<std::uint32_t>(child); }

core::RingMode mode_of(bool writable, bool backward) {
  if (writable) return backward ? core::RingMode::backward_writable : core::RingMode::normal;
  return backward ? core::RingMode::backward : core::RingMode::forward_overwrite;
}

// perf_event_open's cpu argument, and the task the event follows (0: none).
int cpu_of(Target t) { return t == Target::self || t == Target::child ? -1 : 0; }
int task_of(Target t) {
  if (t == Target::self || t == Target::self_cpu0) return 1;
  return t == Target::system_cpu0 ? 0 : 2;
}
bool on_child(Target t) { return t == Target::child || t == Target::child_cpu0; }
// Opened on the child's pid: its own events and a CPU-wide tracepoint
// filtered on it.
bool needs_child(const EventSpec& spec) {
  return on_child(spec.target) || (spec.target == Target::system_cpu0 && spec.source != Source::dummy);
}

}  // namespace

SimKernel::SimKernel(const SuiteFiles& files) : files_(files) {}

void SimKernel::begin(const Scenario& scenario) {
  scenario_ = &scenario;
  events_.assign(scenario.events.size(), Event{});
  rings_.clear();
  finished_.clear();
  now_ns_ = 0;
  opens_ = 0;
  child_alive_ = false;
  child_ = -1;
  forks_ = 0;
  current_ = kThisPid;
  mappings_ = 0;
}

void SimKernel::end() {
  for (const std::unique_ptr<Ring>& r : rings_) {
    if (!r->ring) continue;
    model::KernelLog k;
    k.mode = static_cast<model::Mode>(r->layout.mode);
    k.ring_bytes = r->layout.size_bytes;
    k.watermark_bytes = r->layout.watermark_bytes == 0 ? r->layout.size_bytes / 2
                                                       : std::min(r->layout.watermark_bytes, r->layout.size_bytes);
    k.cpus.push_back(std::move(r->log));
    finished_.push_back(std::move(k));
  }
  events_.clear();
  rings_.clear();
  scenario_ = nullptr;
}

int SimKernel::open(std::size_t event) {
  const EventSpec& spec = scenario_->events[event];
  Event& e = events_[event];
  VERIFY(!e.open);
  if (needs_child(spec) && !child_alive_) return ESRCH;
  e.open = true;
  e.child = needs_child(spec) ? child_ : -1;
  e.opened = ++opens_;
  e.attrs.identity.id = 1000 + event;
  e.attrs.identity.pid = e.attrs.identity.tid = on_child(spec.target) ? 101 : 100;
  e.attrs.identity.layout = trailer_layout(spec);
  e.attrs.wakeup_events = spec.wakeup_events;
  e.attrs.watermark = spec.watermark;
  e.periods.emplace(sim::SamplingAttr{.sample_period = spec.period,
                                      .sample_freq = spec.freq,
                                      .period_field = (spec.sample_type & PERF_SAMPLE_PERIOD) != 0});
  return 0;
}

std::uint64_t SimKernel::id(std::size_t event) { return events_[event].attrs.identity.id; }

// perf_mmap: 2^n data pages (or none: the control page alone), a ring of
// the mapping's mode (sim/ring.h) and the event's watermark.
int SimKernel::map(std::size_t event, std::uint32_t data_pages, bool writable) {
  Event& e = events_[event];
  VERIFY(e.open);
  VERIFY(e.ring == kNoRing);
  if ((data_pages & (data_pages - 1)) != 0) return EINVAL;
  const EventSpec& spec = scenario_->events[event];
  auto r = std::make_unique<Ring>();
  r->pages = data_pages;
  if (data_pages > 0) {
    r->layout.size_bytes = data_pages * kPageBytes;
    r->layout.mode = mode_of(writable, spec.backward);
    r->layout.watermark_bytes = spec.watermark ? spec.wakeup_watermark : 0;
    r->ring = std::make_unique<sim::SimRing>(r->layout, r->log, r->probes);
  }
  rings_.push_back(std::move(r));
  e.ring = static_cast<int>(rings_.size() - 1);
  e.mapped = true;
  // The real backend stores data_tail into a writable mapping at once:
  // that first store to the control page is a page fault of this thread.
  if (writable) act(Action::fault, false, "");
  return 0;
}

// perf_mmap_close of the last mapping: every event writing into the ring
// is detached from it.
void SimKernel::unmap(std::size_t event) {
  Event& e = events_[event];
  VERIFY(e.mapped);
  const int ring = e.ring;
  for (Event& other : events_) other.ring = other.ring == ring ? kNoRing : other.ring;
  e.mapped = false;
}

// perf_event_set_output: not to itself, not from an event with a mapping
// of its own, to a mapped event of the same CPU (and, for cpu -1, of the
// same task), writing in the same direction.
int SimKernel::set_output(std::size_t event, std::size_t target) {
  const EventSpec& from = scenario_->events[event];
  const EventSpec& to = scenario_->events[target];
  Event& e = events_[event];
  const Event& t = events_[target];
  VERIFY(e.open && t.open);
  if (event == target || e.mapped || t.ring == kNoRing) return EINVAL;
  if (cpu_of(from.target) != cpu_of(to.target)) return EINVAL;
  // hw.target: this thread or one of the children.
  const auto task = [this](std::size_t k) {
    return task_of(scenario_->events[k].target) == 1 ? -1 : events_[k].child;
  };
  if (cpu_of(from.target) == -1 && task(event) != task(target)) return EINVAL;
  if (from.backward != to.backward) return EINVAL;
  e.ring = t.ring;
  return 0;
}

int SimKernel::control(std::size_t event, Op op) {
  Event& e = events_[event];
  VERIFY(e.open);
  switch (op) {
    case Op::enable:
      // This thread's context and the CPU's are running: the event counts
      // time from now (a child's when the child next runs: run_events).
      e.enabled = true;
      // perf_swevent_add (perf_trace_add since 2024): the period restarts
      // only from a period_left that is not negative.
      if (!e.exited && task_of(scenario_->events[event].target) != 2) {
        e.time_ns += kActionNs;
        e.periods->add();
      }
      return 0;
    case Op::disable:
      e.enabled = false;
      return 0;
    case Op::pause:
    case Op::resume:
      // PAUSE_OUTPUT needs a ring with data pages; it pauses the ring,
      // i.e. every event writing into it.
      if (e.ring == kNoRing || !rings_[e.ring]->ring) return EINVAL;
      rings_[e.ring]->ring->set_paused(op == Op::pause);
      return 0;
    default:
      break;
  }
  VERIFY_MSG(false, "not an ioctl");
  return EINVAL;
}

bool SimKernel::follows(std::size_t event, bool by_child) const {
  const EventSpec& spec = scenario_->events[event];
  // A CPU-wide dummy event has no filter: everything on CPU 0, where the
  // runner and the child are pinned.
  if (spec.target == Target::system_cpu0 && spec.source == Source::dummy) return true;
  // The child's events, and the CPU-wide ones filtered on its pid, follow
  // the child they were opened on, not a later one.
  return by_child ? task_of(spec.target) != 1 && events_[event].child == child_ : task_of(spec.target) == 1;
}

// Which records an action asks for: the tracepoint's or the software
// event's sample, or side-band (perf_event_comm_match, perf_event_task_match,
// perf_event_mmap_match for an executable mapping).
bool SimKernel::reached(const EventSpec& spec, Action action) const {
  switch (action) {
    case Action::getpid: return spec.source == Source::getpid;
    case Action::getppid: return spec.source == Source::getppid;
    case Action::getuid: return spec.source == Source::getuid;
    case Action::fault: return spec.source == Source::page_faults;
    case Action::comm: return spec.comm;
    case Action::fork: return spec.comm || spec.task || spec.mmap2;
    case Action::mmap_exec: return spec.mmap2;
  }
  return false;
}

// perf_iterate_sb's order for side-band: the CPU-wide side-band events of
// this CPU (pmu_sb_events), then the task's context; both lists take new
// events at the head (list_add_rcu), so the newest comes first. Samples
// (`sideband` false) go the other way round between the two: a tracepoint's
// or software event's hlist takes each event at its head as it is
// scheduled in, the CPU's context before the task's (perf_event_sched_in),
// so the task's events come first (fidelity row 11).
std::vector<std::size_t> SimKernel::order(bool sideband) const {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < events_.size(); i++) {
    if (events_[i].open) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [this, sideband](std::size_t a, std::size_t b) {
    const bool cpu_wide_a = scenario_->events[a].target == Target::system_cpu0;
    const bool cpu_wide_b = scenario_->events[b].target == Target::system_cpu0;
    if (cpu_wide_a != cpu_wide_b) return sideband ? cpu_wide_a : cpu_wide_b;
    return events_[a].opened > events_[b].opened;
  });
  return order;
}
std::vector<std::size_t> SimKernel::sideband_order() const { return order(true); }

// One side-band record of `action` for `event`. MMAP2: perf_event_mmap_output
// sets PERF_RECORD_MISC_MMAP_BUILD_ID in the mmap event that every event
// shares, when an event with attr.build_id writes one and the file has a
// build-id, and restores only size and type afterwards: `misc_build_id`
// carries it to the events iterated later (fidelity row 20).
void SimKernel::sideband(std::size_t event, Action action, const std::string& name, bool& misc_build_id) {
  const EventSpec& spec = scenario_->events[event];
  switch (action) {
    case Action::comm:
      output(event, PERF_RECORD_COMM, 0, sideband_bytes(PERF_RECORD_COMM, spec, name), std::nullopt,
             sideband_body(action, name));
      return;
    case Action::fork:
      output(event, PERF_RECORD_FORK, 0, sideband_bytes(PERF_RECORD_FORK, spec), std::nullopt,
             sideband_body(action, name));
      return;
    case Action::mmap_exec: {
      const bool own = spec.build_id && files_.exec_has_build_id;
      const std::uint16_t misc = PERF_RECORD_MISC_USER | (own || misc_build_id ? PERF_RECORD_MISC_MMAP_BUILD_ID : 0);
      RecordBody body = sideband_body(action, name);
      if (own) {
        // perf_event_mmap_output: the build-id body only for an event that
        // asked (use_build_id); the others keep the device/inode body.
        body.use_build_id = true;
        body.build_id_size = files_.exec_build_id_size;
        body.build_id = files_.exec_build_id;
      }
      const bool written = output(event, PERF_RECORD_MMAP2, misc, sideband_bytes(PERF_RECORD_MMAP2, spec, files_.exec_file),
                                  std::nullopt, body);
      misc_build_id = misc_build_id || (own && written);
      return;
    }
    default:
      break;
  }
  VERIFY_MSG(false, "not a side-band action");
}

// The body of `action`'s side-band record, the same for every event
// (perf_event_comm_event, perf_event_task, perf_event_mmap_event): COMM of
// the current task and its new name; FORK: the new task, its parent the
// current one (perf_event_task_output); MMAP2: the current task, the
// mapping (one page of the suite's executable at offset 0, PROT_READ |
// PROT_EXEC, MAP_PRIVATE), its inode's device, number and generation.
RecordBody SimKernel::sideband_body(Action action, const std::string& name) const {
  RecordBody b;
  const auto copy_name = [&b](const std::string& n) {
    VERIFY(n.size() < b.name.size());
    std::copy(n.begin(), n.end(), b.name.begin());
  };
  b.time = now_ns_;
  switch (action) {
    case Action::comm:
      b.pids = {current_, current_, 0, 0};
      copy_name(name);
      break;
    case Action::fork:
      b.pids = {new_child_, new_child_, current_, current_};
      break;
    case Action::mmap_exec:
      b.pids = {current_, current_, 0, 0};
      b.addr = kMappingBase + (mappings_ - 1) * kPageBytes;
      b.len = kPageBytes;
      b.prot = PROT_READ | PROT_EXEC;
      b.flags = MAP_PRIVATE;
      b.maj = files_.exec_major;
      b.min = files_.exec_minor;
      b.ino = files_.exec_ino;
      b.generation = files_.exec_generation;
      copy_name(files_.exec_file);
      break;
    default:
      VERIFY_MSG(false, "not a side-band action");
  }
  return b;
}

namespace {

constexpr std::uint64_t kIdAll = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
                                 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;

}  // namespace

// A software event's hit (___perf_sw_event) prepares one perf_sample_data
// for every event it reaches, in the order of their list (newest first);
// perf_prepare_sample does not prepare again what data->sample_flags says
// is done. So a later event's sample carries the id an earlier one
// prepared, and its size (header_size + data->dyn_size) includes the user
// stacks the earlier ones added (fidelity row 21). perf_tp_event prepares
// it anew for each event.
class SharedSampleData {
 public:
  struct Sample {
    std::uint32_t size = 0;
    std::uint64_t id = 0;
    std::uint32_t stack_user = 0;  // data->stack_user_size
  };
  Sample prepare(const EventSpec& spec, std::uint64_t event_id) {
    const std::uint64_t type = spec.sample_type;
    std::uint64_t filtered = type | ((type & PERF_SAMPLE_STACK_USER) ? PERF_SAMPLE_REGS_USER : 0);
    filtered &= ~flags_;
    if (filtered != 0) flags_ |= type & kIdAll;  // __perf_event_header__init_id
    if (filtered & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER)) id_ = event_id;
    if (filtered & PERF_SAMPLE_REGS_USER) flags_ |= PERF_SAMPLE_REGS_USER;
    if (filtered & PERF_SAMPLE_STACK_USER) {
      dyn_ += user_stack_bytes(spec);
      stack_user_ = spec.stack_user;
      flags_ |= PERF_SAMPLE_STACK_USER;
    }
    return {sample_bytes(spec) - user_stack_bytes(spec) + dyn_, id_, stack_user_};
  }
  // __perf_event_header__init_id with the event's whole sample_type.
  void prepare_ids(const EventSpec& spec, std::uint64_t event_id) {
    flags_ |= spec.sample_type & kIdAll;
    if (spec.sample_type & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER)) id_ = event_id;
  }

 private:
  std::uint64_t flags_ = PERF_SAMPLE_PERIOD;  // perf_sample_data_init
  std::uint64_t id_ = 0;
  std::uint32_t dyn_ = 0;
  std::uint32_t stack_user_ = 0;
};

void SimKernel::act(Action action, bool by_child, const std::string& name) {
  VERIFY(!by_child || child_alive_);
  now_ns_ += kActionNs;
  current_ = by_child ? child_pid(child_) : kThisPid;
  if (by_child) run_events(child_);
  if (action == Action::fork && new_child_ == 0) new_child_ = kPidBase + kWhoForked + forks_++;
  if (action == Action::mmap_exec) mappings_++;
  const bool is_sideband = action == Action::comm || action == Action::fork || action == Action::mmap_exec;
  bool misc_build_id = false;  // the shared mmap event's misc, for this action
  SharedSampleData shared;  // of a software event's hit
  for (const std::size_t i : order(is_sideband)) {
    const Event& e = events_[i];
    const EventSpec& spec = scenario_->events[i];
    if (!e.enabled || e.exited || !follows(i, by_child) || !reached(spec, action)) continue;
    if (is_sideband) {
      sideband(i, action, name, misc_build_id);
      continue;
    }
    // perf_swevent_event counts every occurrence, sampled or not.
    events_[i].count++;
    const sim::PeriodState::Hit hit = period_fires(i);
    for (std::uint64_t k = 0; k < hit.samples; k++) sample(i, action, shared, hit.period);
  }
  new_child_ = 0;
  current_ = kThisPid;
}

// The child runs (an order, its exit): the context of its events is
// scheduled in, and those enabled count time (__perf_update_times: enabled
// and running alike, a software event always being on its PMU).
void SimKernel::run_events(int child) {
  for (std::size_t i = 0; i < events_.size(); i++) {
    Event& e = events_[i];
    if (e.enabled && !e.exited && on_child(scenario_->events[i].target) && e.child == child) {
      e.time_ns += kActionNs;
      e.periods->add();  // its context is scheduled in: perf_swevent_add
    }
  }
}

// perf_swevent_event, for software events and tracepoints alike
// (sim/sampling.h): in period mode a sample that carries
// PERF_SAMPLE_PERIOD is taken at every occurrence (the count reported as
// its period); a period of 1 samples every one; otherwise period_left
// (-period after the event is added) counts the occurrences while the
// event is enabled and the N-th, 2N-th, ... overflow it. Disabling keeps
// the count (perf_swevent_add only resets a period_left that is not
// negative). In frequency mode the period starts at 1 and adapts at each
// sample to the time since the previous one: perf_clock() is the suite's
// virtual time (an action every kActionNs).
sim::PeriodState::Hit SimKernel::period_fires(std::size_t event) {
  const EventSpec& spec = scenario_->events[event];
  VERIFY(spec.period >= 1 || spec.freq > 0);
  return events_[event].periods->event(1, sim::perf_clock(now_ns_));
}

// A sample, from user space. A software event's samples share `shared`
// (its hit's perf_sample_data); a LOST record written first prepares the
// id fields of that data again with its writer's when the writer has
// sample_id_all (perf_event_header__init_id in __perf_output_begin).
void SimKernel::sample(std::size_t event, Action action, SharedSampleData& shared, std::uint64_t period) {
  const Event& e = events_[event];
  const EventSpec& spec = scenario_->events[event];
  SharedSampleData::Sample s{sample_bytes(spec), e.attrs.identity.id, spec.stack_user};
  if (action == Action::fault) s = shared.prepare(spec, e.attrs.identity.id);
  sim::SimRing* ring = e.ring == kNoRing ? nullptr : rings_[e.ring]->ring.get();
  const std::uint64_t lost_before = ring != nullptr ? ring->lost_pending() : 0;
  if (lost_before > 0 && spec.sample_id_all) s.id = e.attrs.identity.id;
  RecordBody body;
  body.period = period;  // perf_swevent_event sets data->period for each event
  if (!output(event, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, s.size, s.id, body)) return;
  if (lost_before > 0 && spec.sample_id_all) shared.prepare_ids(spec, e.attrs.identity.id);
  if ((spec.sample_type & PERF_SAMPLE_STACK_USER) && s.stack_user == 0) {
    // perf_output_sample_ustack puts dyn_size after an empty dump, 8
    // bytes the sample did not reserve: past the record's end (fidelity
    // row 22).
    const std::uint64_t lost = lost_before > 0 ? sideband_bytes(PERF_RECORD_LOST, spec) : 0;
    const std::uint64_t end = spec.backward ? ring->head() + lost + s.size : ring->head();
    const std::span<std::byte> data = ring->data_for_test();
    for (std::uint64_t k = 0; k < 8; k++) data[(end + k) & (data.size() - 1)] = std::byte{0};
  }
}

// __perf_output_begin finds no ring: the record vanishes, uncounted.
// Whether it was written.
bool SimKernel::output(std::size_t event, std::uint32_t type, std::uint16_t misc, std::uint32_t size,
                       std::optional<std::uint64_t> sample_id, RecordBody body) {
  Event& e = events_[event];
  if (e.ring == kNoRing || !rings_[e.ring]->ring) return false;
  // The TID and CPU fields (perf_event_header__init_id: current, the CPU
  // it runs on), also in the LOST record SimRing writes before this one.
  e.attrs.identity.pid = e.attrs.identity.tid = current_;
  e.attrs.identity.cpu = 0;
  body.id_pid = body.id_tid = current_;
  body.cpu = 0;
  scratch_.resize(size);
  build_record(scratch_, type, misc, scenario_->events[event], sample_id.value_or(e.attrs.identity.id), now_ns_,
               body);
  if (rings_[e.ring]->ring->output(e.attrs, scratch_, now_ns_) == sim::SimRing::Output::written) return true;
  e.lost_samples++;
  return false;
}

// The child is a fork of this thread: FORK into this thread's events that
// ask for it, as Action::fork.
void SimKernel::spawn_child() {
  VERIFY(!child_alive_);
  new_child_ = child_pid(child_ + 1);
  act(Action::fork, false, "");
  child_alive_ = true;
  child_++;
}

// The child's exit (perf_event_exit_task_context): PERF_RECORD_EXIT into
// its enabled events that ask for task records, in its context's order
// (newest first; nothing waits for room), then every event of the child
// is in EXIT state. The events of an earlier child exited with it.
// perf_event_task_output: EXIT's pid and tid are the child's, ppid and
// ptid both its parent's pid (this thread's); written by the child.
void SimKernel::child_exit() {
  VERIFY(child_alive_);
  now_ns_ += kActionNs;
  run_events(child_);
  current_ = child_pid(child_);
  RecordBody body;
  body.pids = {current_, current_, kThisPid, kThisPid};
  body.time = now_ns_;
  for (const std::size_t i : sideband_order()) {
    const EventSpec& spec = scenario_->events[i];
    Event& e = events_[i];
    if (!on_child(spec.target) || e.child != child_) continue;
    if (e.enabled && reached(spec, Action::fork)) {
      output(i, PERF_RECORD_EXIT, 0, sideband_bytes(PERF_RECORD_EXIT, spec), std::nullopt, body);
    }
    e.exited = true;
  }
  current_ = kThisPid;
  child_alive_ = false;
}

short SimKernel::child_exit_polling(std::size_t event) {
  child_exit();
  return poll(event);
}

short SimKernel::poll(std::size_t event) {
  const Event& e = events_[event];
  VERIFY(e.open);
  sim::SimRing* ring = e.ring == kNoRing ? nullptr : rings_[e.ring]->ring.get();
  const bool per_task = scenario_->events[event].target != Target::system_cpu0;
  const sim::EventPoll p = sim::poll_event(ring, e.ring != kNoRing, e.exited, per_task);
  return static_cast<short>((p.readable ? POLLIN : 0) | (p.hangup ? POLLHUP : 0));
}

sim::SimRing& SimKernel::ring_of(std::size_t owner) {
  const Event& e = events_[owner];
  VERIFY(e.mapped);
  VERIFY(rings_[e.ring]->ring != nullptr);
  return *rings_[e.ring]->ring;
}

std::uint64_t SimKernel::head(std::size_t owner) { return ring_of(owner).head(); }
std::span<const std::byte> SimKernel::data(std::size_t owner) { return ring_of(owner).data(); }
void SimKernel::store_tail(std::size_t owner, std::uint64_t tail) { ring_of(owner).store_tail(tail); }
// perf_read_one: the count, then what read_format asks for in its order.
ReadValues SimKernel::read_values(std::size_t event) {
  const Event& e = events_[event];
  const std::uint64_t format = scenario_->events[event].read_format;
  ReadValues v;
  std::size_t n = 0;
  v.words[n++] = e.count;
  if (format & PERF_FORMAT_TOTAL_TIME_ENABLED) v.words[n++] = e.time_ns;
  if (format & PERF_FORMAT_TOTAL_TIME_RUNNING) v.words[n++] = e.time_ns;
  if (format & PERF_FORMAT_ID) v.words[n++] = e.attrs.identity.id;
  if (format & PERF_FORMAT_LOST) v.words[n++] = e.lost_samples;
  v.bytes = static_cast<std::uint32_t>(8 * n);
  return v;
}

// perf_event_init_userpage and perf_event_update_userpage: version and
// compat_version stay 0, cap_bit0_is_deprecated is set, size is the
// page's fields up to __reserved; index 0 (a software event has no
// counter to read with rdpmc: perf_event_idx_default); the machine's bits
// as the machine set them (MachinePage); no AUX area. data_tail is the
// reader's store.
ControlPage SimKernel::control_page(std::size_t owner) {
  const Event& e = events_[owner];
  VERIFY(e.mapped);
  ControlPage p;
  p.capabilities = (1ull << 1) | files_.machine.capabilities;  // cap_bit0_is_deprecated
  p.pmc_width = files_.machine.pmc_width;
  p.size = offsetof(perf_event_mmap_page, __reserved);
  p.data_offset = kPageBytes;
  p.data_size = rings_[e.ring]->pages * kPageBytes;
  p.data_tail = rings_[e.ring]->ring ? rings_[e.ring]->ring->tail() : 0;
  return p;
}

Who SimKernel::who(std::uint32_t pid) {
  if (pid == 0) return kWhoZero;
  if (pid < kPidBase + kWhoThis || pid >= kPidBase + kWhoOther) return kWhoOther;
  return static_cast<Who>(pid - kPidBase);
}

bool SimKernel::scenario_mapping(std::uint64_t address) {
  return address >= kMappingBase && address < kMappingBase + mappings_ * kPageBytes &&
         (address - kMappingBase) % kPageBytes == 0;
}

}  // namespace ringsim::conformance
