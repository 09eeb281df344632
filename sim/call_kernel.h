// The simulated perf kernel behind a system-call surface: what an
// unmodified consumer calls (perf_event_open, mmap of the ring as Linux
// lays it out, ioctl, poll, read, close, munmap), answered from one seed.
// The rings are sim/ring.h's SimRing (the campaign's and the conformance
// suite's ring), over the pages the consumer mapped; the records are built
// from the attribute the consumer asked for (sim/attr_records.h).
//
// The kernel never runs on its own: it advances only when the consumer
// calls in (step(): one tick of virtual time of the simulated workload), by
// the decisions of its DecisionSource, so the same seed and the same
// consumer give the same records in the same places. It holds no
// descriptors and no memory of its own: sim/interpose/preload.cc does that
// (an eventfd per event, a memfd per ring).
//
// The workload: the tasks the consumer's events follow (the pid passed to
// perf_event_open, or the caller's for 0), each on one CPU at a time. It
// starts at the consumer's first wait (its exec: events with enable_on_exec are
// enabled, COMM with COMM_EXEC and the executable's MMAP2 written), then
// every tick: a clock sample on its CPU, sometimes a burst of samples (an
// interrupt storm), a page fault, an mmap of a library, a new thread, a
// migration; at the drawn end its tasks exit (PERF_RECORD_EXIT, then the
// events following them hang up: POLLHUP).
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/log.h"
#include "sim/attr_records.h"
#include "sim/decisions.h"
#include "sim/probes.h"
#include "sim/ring.h"
#include "sim/sampling.h"

namespace ringsim::sim {

class SharedSampleData;

// How the workload and the kernel behave. The seed draws each from its
// range; 0 is the plain choice (shrinking pushes towards it).
struct KernelParams {
  std::uint64_t tick_ns = 250'000;        // one step of virtual time
  std::uint64_t run_ticks_max = 1000;     // the workload runs 1..this ticks (drawn: up to 0.25 virtual s)
  std::uint32_t burst_per_million = 20'000;  // chance per tick of a burst of samples
  std::uint32_t burst_records_max = 300;  // a burst overflows a small ring (perf record -m 8) with a slow disk
  std::uint32_t sideband_per_million = 20'000;  // an mmap, a thread, a comm change per tick
  std::uint32_t migrate_per_million = 50'000;
  std::uint32_t sigint_per_million = 100'000;  // a run that ends by SIGINT to the consumer
  std::uint32_t sigusr2_max = 3;  // SIGUSR2s drawn (0..this) when the consumer has a handler for it
  // The AUX PMU: chance per tick that an enabled AUX event's task runs a
  // trace transaction (of 1 to half the area's bytes). Drawn only when the
  // consumer opened an AUX event: other runs draw the same decisions.
  std::uint32_t aux_per_million = 400'000;
};

// The simulated AUX PMU ("ringsim_aux"): an event of this type writes a
// trace into the AUX area its consumer maps (as Intel PT or CoreSight
// do), PERF_RECORD_AUX into its ring for each transaction. The bytes at
// AUX position p of the event with id I are model::aux_byte(seed, I, p):
// the oracle knows every byte without a copy. Only its non-overwrite mode
// (a writable AUX mapping) is simulated; it has no ITRACE_START (Intel
// PT's capability) and no PMU format bits. A number no Linux PMU has (they
// are allocated from PERF_TYPE_MAX up, one per PMU of the machine).
inline constexpr std::uint32_t kAuxPmuType = 0x7a11;

// The AUX area of a ring (rb->aux_*), over the consumer's pages, laid out
// as perf_mmap and rb_alloc_aux lay it out.
struct CallAux {
  std::span<std::byte> area;     // empty once unmapped
  std::uint64_t size_bytes = 0;  // aux_size
  std::uint64_t offset = 0;     // aux_offset (the mapping's file offset)
  int mappings = 0;             // aux_mmap_count
  std::uint64_t head = 0;       // rb->aux_head: a free-running position
  std::uint64_t tail_seen = 0;  // the consumer's aux_tail as last taken
  std::uint64_t wakeup = 0;     // rb->aux_wakeup
  std::uint64_t watermark = 0;  // attr.aux_watermark, or half the area
  std::uint64_t seed = 0;       // of its bytes (model::aux_byte)
  std::uint64_t owner_id = 0;   // the AUX event's id
  std::uint64_t transactions = 0;
  std::uint64_t truncated = 0;       // transactions cut short (TRUNCATED)
  std::uint64_t truncated_bytes = 0; // what did not fit
  std::uint64_t full_disables = 0;   // no room at all at a transaction's begin
  std::uint64_t disabled_bytes = 0;  // the bytes of those transactions
  // The consumer stored an aux_tail the kernel could not take (ahead of
  // aux_head, or moved back): a finding.
  std::string bad_tail;
};

// What an event is, as perf_event_open made it.
struct OpenedEvent {
  perf_event_attr attr{};
  std::uint64_t id = 0;
  int pid = -1;  // the task followed (-1: every task on `cpu`)
  int cpu = -1;  // -1: the task's, wherever it runs
  int group = -1;
  bool enabled = false;
  bool exited = false;
  bool closed = false;
  int ring = -1;  // its own mapping's or SET_OUTPUT's
  int own_ring = -1;
  std::uint64_t count = 0;             // read_format's value
  std::uint64_t enabled_ns = 0;        // time_enabled = time_running (accrued; see enabled_time)
  // An event whose context is always running (the caller's own task, or
  // CPU-wide) accrues virtual time while enabled, from enabled_at_ns; the
  // others accrue the time their task runs (ticks, run_task).
  bool always_running = false;
  std::uint64_t enabled_at_ns = 0;
  std::uint64_t clock_left_ns = 0;     // clock events: task time since the hrtimer's last expiry
  // Counting events (page faults): occurrences and periods (sim/sampling.h).
  sim::PeriodState periods{sim::SamplingAttr{}};
  std::uint64_t lost_samples = 0;      // PERF_FORMAT_LOST
  int filter_pid = -1;                 // a tracepoint's "common_pid == N" filter (-1: none)
  EventAttrs writer;
};

// A ring a consumer mapped: the control page and the data pages (the
// kernel's view of the consumer's memory).
struct MappedRing {
  perf_event_mmap_page* control = nullptr;
  std::span<std::byte> data;
  model::CpuLog log;
  Probes probes;
  std::unique_ptr<SimRing> ring;
  int owner = -1;         // the event it was mapped from
  int mappings = 0;       // mmap calls not yet unmapped
  bool writable = false;
  std::uint64_t tail_seen = 0;
  // The consumer stored a data_tail the kernel could not take (ahead of
  // data_head, or moved back by more than the area): a finding.
  std::string bad_tail;
  // data_head at each PAUSE_OUTPUT that paused the ring.
  std::vector<std::uint64_t> pauses;
  std::unique_ptr<CallAux> aux;  // once the AUX area is mapped
};

struct KernelStats {
  std::uint64_t steps = 0;
  std::uint64_t samples = 0;
  std::uint64_t sideband = 0;
  std::uint64_t bursts = 0;
  std::uint64_t vanished = 0;  // records of events without a ring (uncounted, as in Linux)
};

class CallKernel {
 public:
  CallKernel(DecisionSource& decisions, const KernelParams& params);

  // perf_event_open from `caller_pid`: an event index, or -errno.
  long open(const perf_event_attr& attr, int pid, int cpu, int group, unsigned long flags, int caller_pid);
  // mmap of an event at offset 0: `memory` is the whole mapping (control
  // page + 2^n data pages) as the kernel writes it. A ring index or -errno.
  // The ring logs into `log` and hits `probes` when given (the campaign's
  // kernel, whose log is the run's), else into its own (MappedRing).
  long map(int event, std::span<std::byte> memory, bool writable, model::CpuLog* log = nullptr,
           Probes* probes = nullptr);
  // A further mmap of an event that has a ring (the same pages).
  void map_again(int ring);
  // munmap of one mapping of `ring`; the last one detaches its events.
  void unmap(int ring);
  // mmap of an event's AUX area at file offset `offset` (the control
  // page's aux_offset, aux_size the mapping's length): `memory` the area
  // as the kernel writes it, or, when the ring has one, the same area
  // mapped again. The ring's index, or -errno as perf_mmap and
  // rb_alloc_aux give it (EOPNOTSUPP for an event of no AUX PMU).
  // `seed` draws nothing: it names the area's bytes (model::aux_byte).
  long map_aux(int event, std::span<std::byte> memory, std::uint64_t offset, bool writable, std::uint64_t seed);
  // munmap of one mapping of a ring's AUX area (it holds the ring too).
  void unmap_aux(int ring);
  long ioctl(int event, unsigned long request, unsigned long arg);
  // PERF_EVENT_IOC_SET_OUTPUT to `target`'s ring (-1: none).
  long set_output(int event, int target);
  // read(): read_format; the bytes written or -errno.
  long read(int event, std::span<std::byte> out);
  // read_format's words for read(2), or for a sample's READ (in_sample).
  std::vector<std::uint64_t> read_words(int event, bool in_sample) const;
  void close(int event);
  // poll of one event: POLLIN/POLLHUP (POLLIN is taken: edge-triggered).
  short poll(int event);

  // One tick of the workload. The tail stores of the consumer are taken
  // first, the heads published after. The workload starts at the first
  // step that `may_start` (the consumer's first wait for records: its
  // reading loop, by which time it released its real workload); before
  // that, time passes with nothing to record.
  void step(bool may_start = true);
  // Whether records may ever come for this event (samples of a simulated
  // source, or side-band it asks for); perf's BPF side-band events get none.
  bool can_fire(int event) const;
  // The consumer killed the workload: its tasks exit at the next step.
  void kill_workload() {
    if (started_ && !ended_) end_at_ns_ = std::min(end_at_ns_, now_ns_ + 1);
  }
  // The virtual clock (CLOCK_MONOTONIC of the target).
  std::uint64_t now_ns() const { return now_ns_; }
  bool started() const { return started_; }
  bool ended() const { return ended_; }
  // When a drawn SIGINT is due (0: none), and the workload's end.
  std::uint64_t sigint_at_ns() const { return sigint_at_ns_; }
  // Whether the consumer handles SIGUSR2 (perf record --switch-output):
  // told before the workload starts; only then are SIGUSR2s drawn (other
  // consumers' runs draw the same decisions as before).
  void set_sigusr2_handled(bool handled) { sigusr2_handled_ = handled; }
  // When the drawn SIGUSR2s are due, in order (empty: none).
  const std::vector<std::uint64_t>& sigusr2_at_ns() const { return sigusr2_at_ns_; }
  std::uint64_t end_at_ns() const { return end_at_ns_; }
  // The pid of the first task (the workload the events follow), 0 if none.
  int workload_pid() const { return tasks_.empty() ? 0 : tasks_.front().pid; }

  const std::vector<OpenedEvent>& events() const { return events_; }
  // An event to drive directly (the campaign's kernel writes its own
  // workload's records with the event's writer attributes and periods).
  OpenedEvent& event(int i) { return events_.at(static_cast<std::size_t>(i)); }
  const std::vector<std::unique_ptr<MappedRing>>& rings() const { return rings_; }
  const KernelStats& stats() const { return stats_; }
  // The consumer's data_tail now, taken as at a step (for the final state).
  void sync_tails();

  // The workload driven by its caller, one action at a time, instead of
  // drawn by step() (the conformance suite's scenarios: tests/conformance/
  // call_backend.h). Never mixed with step() in one kernel. Each action
  // takes the consumer's tail stores first and publishes the heads after.
  //
  // A task (pid == tid: a process's main thread) on CPU 0.
  void add_task(int pid);
  // The consumer's tail stores taken and the heads published, as at an
  // action (a driver reading the control page between actions).
  void publish() {
    sync_tails();
    publish_heads();
  }
  // Virtual time passes.
  void advance(std::uint64_t ns) { now_ns_ += ns; }
  // The task's context is scheduled in for `ns`: its enabled events count
  // the time and restart their period (perf_swevent_add).
  void run_task(int pid, std::uint64_t ns);
  // One occurrence of a software event or a tracepoint (type, config) by
  // the task: counted and sampled by each event it reaches
  // (perf_swevent_event); a tracepoint's samples carry `raw_size` bytes
  // of raw data.
  void occurrence(int pid, std::uint32_t type, std::uint64_t config, std::uint32_t raw_size);
  // prctl(PR_SET_NAME): COMM.
  void rename_task(int pid, const std::string& comm);
  // fork(): FORK (into the events following the parent) and the new task.
  void fork_task(int parent, int child);
  // An executable mapping by the task: MMAP2 (MMAP) with the file's
  // identity (`m`: device, inode, generation, build-id if it has one).
  void map_exec(int pid, const MmapFields& m);
  // The task exits (perf_event_exit_task): EXIT into its enabled events
  // that ask for task records, then every event following it is in EXIT
  // state (POLLHUP).
  void exit_task(int pid, int parent);
  // PERF_EVENT_IOC_SET_FILTER with "common_pid == N" (the one filter the
  // simulated tracepoints know): the event counts only that task's
  // occurrences. -EINVAL for any other filter or a non-tracepoint.
  long set_filter(int event, const std::string& filter);
  // The control page's capability bits and pmc_width, as the machine's
  // kernel sets them for a software event (the conformance suite reads
  // them from the real kernel).
  void set_machine_page(std::uint64_t capabilities, std::uint16_t pmc_width) {
    machine_capabilities_ = capabilities;
    machine_pmc_width_ = pmc_width;
  }

 private:
  bool joins_group(const OpenedEvent& leader, const perf_event_attr& attr, int pid, int cpu) const;
  struct Task {
    int pid = 0;
    int tid = 0;
    std::uint32_t cpu = 0;
    std::string comm;
    bool alive = true;
  };
  // The driven actions' frame: tails taken first, heads published after.
  template <class F>
  void action(F&& f) {
    sync_tails();
    f();
    publish_heads();
  }

  void start();
  void end_workload();
  void tick(Task& task);
  void publish_heads();
  bool follows(const OpenedEvent& e, const Task& t) const;
  static void write_as(OpenedEvent& e, int pid, int tid, std::uint32_t cpu);
  std::uint32_t cpu_count() const;
  // Which events of `type`/`config` `task`'s action reaches, in the order
  // the kernel offers them (newest first).
  std::vector<int> reached(const Task& task, bool sideband) const;
  void sample(int event, const Task& task, std::uint16_t misc, std::uint64_t ip, std::uint64_t period);
  void driven_sample(int event, const Task& t, SharedSampleData* shared, std::uint64_t period, std::uint32_t raw_size);
  // Whether it was written (not lost, not vanished).
  bool write_record(int event, std::span<const std::byte> record);
  void sideband_comm(const Task& task, bool exec);
  void sideband_task(std::uint32_t type, const Task& task, const Task& parent);
  void set_enabled(OpenedEvent& e, bool enabled);
  std::uint64_t enabled_time(const OpenedEvent& e) const;
  void sideband_mmap(const Task& task, std::uint64_t addr, std::uint64_t len, const std::string& file, bool exec);
  // The AUX PMU's transactions of a tick of `task` (sim/call_kernel_aux.cc).
  void aux_tick(const Task& task);
  void aux_transaction(int event, const Task& task, CallAux& a);
  void sync_aux_tail(MappedRing& r);
  std::uint64_t record_time() { return now_ns_ + ++record_clock_; }
  Task& task_of(int pid);

  DecisionSource& d_;
  KernelParams p_;
  std::vector<OpenedEvent> events_;
  std::vector<std::unique_ptr<MappedRing>> rings_;
  std::vector<Task> tasks_;
  std::vector<std::byte> scratch_;
  std::uint64_t now_ns_ = 1'000'000'000;
  std::uint64_t record_clock_ = 0;  // distinct times for the records of one tick
  std::uint64_t next_id_ = 1000;
  std::uint64_t end_at_ns_ = 0;
  std::uint64_t sigint_at_ns_ = 0;
  std::vector<std::uint64_t> sigusr2_at_ns_;
  bool sigusr2_handled_ = false;
  std::uint64_t next_library_ = 0;
  int next_tid_offset_ = 0;
  bool started_ = false;
  bool ended_ = false;
  bool aux_opened_ = false;  // an event of the AUX PMU was opened
  std::uint64_t machine_capabilities_ = 0;
  std::uint16_t machine_pmc_width_ = 0;
  KernelStats stats_;
};

}  // namespace ringsim::sim
