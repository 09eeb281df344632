#include "sim/kernel.h"

#include <poll.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "core/verify.h"
#include "model/aux_content.h"

namespace ringsim::sim {

const char* to_string(SizeMix mix) {
  switch (mix) {
    case SizeMix::small: return "small";
    case SizeMix::mixed: return "mixed";
    case SizeMix::large: return "large";
    case SizeMix::huge: return "huge";
  }
  return "unknown";
}

Kernel::Kernel(Scheduler& scheduler, const KernelConfig& config, model::KernelLog& log, Probes& probes)
    : scheduler_(scheduler),
      config_(config),
      log_(log),
      probes_(probes),
      no_draws_(std::vector<Decision>{}, DecisionSource::Mode::replay_strict),
      calls_(no_draws_, KernelParams{}),
      aux_done_queue_(scheduler),
      poll_queue_(scheduler),
      exit_queue_(scheduler),
      writes_queue_(scheduler) {
  VERIFY(config_.cpus >= 1);
  VERIFY(config_.burst_records_max >= 1);
  VERIFY(config_.events_per_cpu >= 1);
  VERIFY(config_.events_per_cpu <= 3);
  log.mode = static_cast<model::Mode>(config_.mode);
  log.ring_bytes = config_.ring_bytes;
  log.watermark_bytes = config_.wakeup_watermark_bytes == 0
                            ? config_.ring_bytes / 2
                            : std::min(config_.wakeup_watermark_bytes, config_.ring_bytes);
  log.cpus.assign(config_.cpus, model::CpuLog{});
  events_.resize(config_.cpus);
  for (std::uint32_t cpu = 0; cpu < config_.cpus; cpu++) {
    open_events(cpu);
    auxes_.push_back(std::make_unique<SimAux>(config_.aux, log.cpus[cpu].aux));
    scratch_.emplace_back(kSampleBytesMax);
    inner_.emplace_back(kSampleBytesMax);
    payloads_.emplace_back();
  }
  log.seed = config_.payload_seed;
  log.sampling.sample_period = config_.sampling.sample_period;
  log.sampling.sample_freq = config_.sampling.sample_freq;
  log.sampling.period_field = config_.sampling.period_field;
  log.sampling.clock_offset_ns = kBootClockNs;
  for (std::uint32_t k = 0; k < config_.events_per_cpu; k++) {
    const RecordLayout sample_layout = attrs(0, k).identity.layout;
    log.sampling.period_offsets.push_back(config_.sampling.period_field ? sample_period_offset(sample_layout) : 0);
    log.sampling.sequence_offsets.push_back(sample_head_bytes(sample_layout, config_.sampling.period_field));
  }
  for (model::CpuLog& c : log.cpus) {
    c.unsampled_after.assign(config_.events_per_cpu, 0);
    reserve_log(c);
  }
  occurrences_.assign(config_.cpus, 0);
  owed_ns_.assign(config_.cpus, 0);
  aux_done_.assign(config_.cpus, !has_aux());
}

// Room for the records the workload plans (with their LOST records, ring
// steps and hits) in a CPU's log, so that it does not grow by copying
// itself over and over.
void Kernel::reserve_log(model::CpuLog& c) const {
  const std::uint64_t records = config_.records_per_cpu;
  c.written.reserve(records + records / 4);
  c.ops.reserve(2 * records + records / 2);
  c.hits.reserve(records);
  c.bytes.reserve(planned_bytes_per_cpu());
}

// A little above the mean record size of the mix (draw_size) times the
// records, at most kLogReserveBytesMax (a larger log still grows). The
// large mixes' largest records mostly do not fit the ring: counted at an
// eighth of it.
std::uint64_t Kernel::planned_bytes_per_cpu() const {
  std::uint64_t mean = 256;
  switch (config_.size_mix) {
    case SizeMix::small: break;
    case SizeMix::mixed: mean = 640; break;
    case SizeMix::large:
    case SizeMix::huge: mean = 256 + config_.ring_bytes / 8; break;
  }
  return std::min<std::uint64_t>(std::uint64_t{config_.records_per_cpu} * mean, kLogReserveBytesMax);
}

// cpu's events through the call kernel: perf_event_open of each (the
// sampling events, then the dummy side-band one; following the CPU's task,
// or system-wide), mmap of the first, SET_OUTPUT of the others to it. The
// writer attributes (the records' layouts: sim/sample.h) and the sampling
// rules are the run's.
void Kernel::open_events(std::uint32_t cpu) {
  constexpr int kCaller = 1;  // the recorder: not a task the events follow
  const int task = config_.per_task ? static_cast<int>(4000 + cpu) : -1;
  const bool writable = config_.mode == core::RingMode::normal || config_.mode == core::RingMode::backward_writable;
  for (std::uint32_t k = 0; k < config_.events_per_cpu + (config_.sideband ? 1 : 0); k++) {
    const bool sideband = k == config_.events_per_cpu;
    const RecordLayout layout = (k % 2 == 0 && !sideband) ? RecordLayout::a : RecordLayout::b;
    perf_event_attr a{};
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = sideband ? PERF_COUNT_SW_DUMMY : PERF_COUNT_SW_PAGE_FAULTS;
    a.sample_period = 1;
    a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                    (layout == RecordLayout::a ? PERF_SAMPLE_CPU : 0) |
                    (config_.sampling.period_field && !sideband ? PERF_SAMPLE_PERIOD : 0);
    a.sample_id_all = 1;
    a.write_backward = core::backward(config_.mode) ? 1 : 0;
    a.watermark = config_.wakeup_watermark_bytes > 0 ? 1 : 0;
    if (a.watermark) {
      a.wakeup_watermark = static_cast<std::uint32_t>(config_.wakeup_watermark_bytes);
    } else {
      a.wakeup_events = config_.wakeup_events;
    }
    const long h = calls_.open(a, task, static_cast<int>(cpu), -1, 0, kCaller);
    VERIFY_MSG(h >= 0, "the call kernel refused a campaign event");
    SimEvent e;
    e.handle = static_cast<int>(h);
    e.sideband = sideband;
    OpenedEvent& o = calls_.event(e.handle);
    o.writer.identity.id = (sideband ? 9000 : 1000 * (k + 1)) + cpu;
    o.writer.identity.pid = 4000 + cpu;
    o.writer.identity.tid = 4000 + cpu;
    o.writer.identity.cpu = cpu;
    o.writer.identity.layout = layout;
    o.writer.watermark = config_.wakeup_watermark_bytes > 0;
    o.writer.wakeup_events = config_.wakeup_events;
    if (!sideband) {
      o.writer.identity.period_field = config_.sampling.period_field;
      SamplingAttr rules = config_.sampling;
      if (config_.period_rule_ignored) rules.period_field = false;  // the bug: the samples still carry PERIOD
      o.periods = PeriodState(rules);
      o.periods.add();  // enabled from the start (perf_swevent_add)
    }
    if (k == 0) {
      mappings_.emplace_back(4096 + config_.ring_bytes);
      const long ring = calls_.map(e.handle, mappings_.back(), writable, &log_.cpus[cpu], &probes_);
      VERIFY_MSG(ring >= 0, "the call kernel refused a campaign ring");
      rings_.push_back(calls_.rings()[static_cast<std::size_t>(ring)]->ring.get());
    } else {
      VERIFY(calls_.set_output(e.handle, events_[cpu].front().handle) == 0);
    }
    events_[cpu].push_back(e);
  }
}

void Kernel::disable_all() {
  if (!disabled_) {
    disabled_ = true;
    for (std::size_t cpu = 0; cpu < rings_.size(); cpu++) {
      if (has_aux() && !exited(cpu)) {
        aux_stop_output(cpu);  // the PMU stops: an open transaction ends now
        aux(cpu).enabled = false;
      }
      for (const SimEvent& e : events_[cpu]) {
        if (calls_.events()[static_cast<std::size_t>(e.handle)].enabled) {
          VERIFY(calls_.ioctl(e.handle, PERF_EVENT_IOC_DISABLE, 0) == 0);
        }
      }
    }
  }
  // Every caller waits (a second PERF_EVENT_IOC_DISABLE, from another
  // thread, also returns only after the writes in progress).
  for (int i = 0; i < 1'000'000 && writes_in_progress(); i++) {
    if (writes_queue_.wait() == Wake::cancelled) break;
  }
  exit_queue_.notify_all();
}

bool Kernel::writes_in_progress() const {
  if (writers_held_ > 0) return true;
  for (const auto& ring : rings_) {
    if (ring->nesting() > 0) return true;
  }
  return false;
}

void Kernel::abandon_pending() {
  VERIFY_MSG(!no_draws_.diverged(), "the call kernel drew a decision under the campaign's kernel");
  for (std::size_t cpu = 0; cpu < rings_.size(); cpu++) {
    if (rings_[cpu]->lost_pending() > 0) probes_.hit(Probe::lost_unreported_at_end);
    rings_[cpu]->abandon_pending();
  }
}

bool Kernel::exited(std::size_t cpu) const {
  for (const SimEvent& e : events_[cpu]) {
    if (!calls_.events()[static_cast<std::size_t>(e.handle)].exited) return false;
  }
  return true;
}

void Kernel::poll(std::size_t cpu, bool& readable, bool& hangup) {
  // The ring's events exit together: polling one is polling them all.
  const short revents = calls_.poll(events_[cpu].front().handle);
  readable = (revents & POLLIN) != 0;
  hangup = (revents & POLLHUP) != 0;
}

void Kernel::start() {
  for (std::size_t cpu = 0; cpu < rings_.size(); cpu++) {
    scheduler_.spawn("producer" + std::to_string(cpu), [this, cpu] { produce(cpu); });
    if (has_aux()) scheduler_.spawn("aux" + std::to_string(cpu), [this, cpu] { aux_produce(cpu); });
  }
}

// Traces a finished write and wakes a polling reader.
SimRing::Handle Kernel::begin(std::size_t cpu, std::size_t event, std::span<const std::byte> record,
                              bool past_pause_check) {
  SimRing& ring = *rings_[cpu];
  perf_event_header header;
  std::memcpy(&header, record.data(), sizeof header);
  const std::uint64_t lost_before = ring.lost_pending();
  const SimRing::Handle h = ring.begin(attrs(cpu, event), record.size(), header.type == PERF_RECORD_SAMPLE,
                                       scheduler_.now_ns(), past_pause_check);
  if (h.lost > 0) {
    scheduler_.trace(TraceKind::lost_emitted, cpu, h.lost);
    if (event != 0 || lost_before != h.lost) probes_.hit(Probe::lost_id_other_event);
  }
  if (event != 0 && h.result == SimRing::Output::written) probes_.hit(Probe::shared_ring_write);
  return h;
}

void Kernel::finish(std::size_t cpu, const SimRing::Handle& h, std::span<const std::byte> record) {
  SimRing& ring = *rings_[cpu];
  const bool wakeup_before = ring.wakeup_pending();
  if (h.result == SimRing::Output::written) {
    fill_payload(cpu, record);
    ring.write(h, record, scheduler_.now_ns());
  }
  ring.end(h, scheduler_.now_ns());
  if (ring.nesting() == 0) writes_queue_.notify_all();
  scheduler_.trace(h.result == SimRing::Output::written ? TraceKind::record_written : TraceKind::record_dropped, cpu,
                   record.size(), ring.head());
  if (ring.wakeup_pending()) {
    if (!wakeup_before) scheduler_.trace(TraceKind::wakeup, cpu);
    poll_queue_.notify_all();
  }
}

SimRing::Output Kernel::output(std::size_t cpu, std::size_t event, std::span<const std::byte> record) {
  const SimRing::Handle h = begin(cpu, event, record);
  finish(cpu, h, record);
  return h.result;
}

// The size of a sample: the first event follows the size mix, the others
// (redirected into its ring) write small samples.
std::uint32_t Kernel::draw_size(DecisionSource& d, std::size_t event) {
  const std::uint64_t ring = config_.ring_bytes;
  auto sized = [&](std::uint64_t low, std::uint64_t high) {
    // Workload shaping, not input handling: ranges beyond what a u16 size
    // can hold are pulled back to the largest record.
    const std::uint64_t min = sample_bytes_min(attrs(0, event).identity.layout, config_.sampling.period_field);
    low = std::clamp<std::uint64_t>(low, std::max<std::uint64_t>(min, kSampleBytesMin), kSampleBytesMax);
    high = std::clamp<std::uint64_t>(high, low, kSampleBytesMax);
    const std::uint64_t steps = (high - low) / 8;
    return static_cast<std::uint32_t>(low + 8 * d.between(0, steps));
  };
  const std::uint64_t pick = d.draw(100);
  if (event > 0) return sized(48, 192);
  switch (config_.size_mix) {
    case SizeMix::small:
      return sized(48, 256);
    case SizeMix::mixed:
      if (pick < 85) return sized(48, 256);
      if (pick < 97) return sized(256, 2048);
      return sized(2048, 16384);
    case SizeMix::large:
      if (pick < 60) return sized(48, 512);
      if (pick < 85) return sized(512, ring / 2);
      return sized(ring / 2 + 8, ring);
    case SizeMix::huge:
      if (pick < 60) return sized(48, 512);
      if (pick < 80) return sized(512, ring / 2);
      if (pick < 92) return sized(ring / 2 + 8, ring);
      return sized(ring + 8, ring * 2);
  }
  VERIFY_MSG(false, "unknown size mix");
  return kSampleBytesMin;
}

// The next record of cpu's workload: its gap, its event and its size. The
// side-band event (if any) writes one record in eight.
Kernel::Planned Kernel::plan(std::size_t cpu, DecisionSource& d, std::uint32_t& burst_left) {
  Planned p;
  if (burst_left > 0) {
    burst_left--;
  } else {
    p.gap_ns = d.between(0, config_.gap_ns_max);
    if (d.chance(config_.burst_per_million)) burst_left = static_cast<std::uint32_t>(d.between(1, config_.burst_records_max));
  }
  const std::size_t sampling = config_.events_per_cpu;
  if (config_.sideband && d.draw(8) == 0) {
    static constexpr std::uint32_t kTypes[] = {PERF_RECORD_COMM,   PERF_RECORD_MMAP2,    PERF_RECORD_FORK,
                                               PERF_RECORD_SWITCH, PERF_RECORD_THROTTLE, PERF_RECORD_UNTHROTTLE};
    p.event = sampling;
    p.type = kTypes[d.draw(std::size(kTypes))];
    p.size = sideband_bytes(p.type, attrs(cpu, p.event).identity.layout);
    return p;
  }
  p.event = sampling > 1 ? d.draw(sampling) : 0;
  p.type = PERF_RECORD_SAMPLE;
  p.size = draw_size(d, p.event);
  return p;
}

void Kernel::build(std::size_t cpu, const Planned& p, std::vector<std::byte>& out) {
  SimEvent& e = events_[cpu][p.event];
  const EventIdentity& identity = attrs(cpu, p.event).identity;
  const std::span<std::byte> bytes(out.data(), p.size);
  PendingPayload& payload = payload_of(cpu, out.data());
  payload.pending = p.type == PERF_RECORD_SAMPLE;
  if (p.type == PERF_RECORD_SAMPLE) {
    build_sample_head(bytes, identity, scheduler_.now_ns(), e.sequence, p.period);
    payload.identity = identity;
    payload.sequence = e.sequence;
    log_.cpus[cpu].samples_attempted++;
  } else {
    build_sideband(bytes, p.type, identity, scheduler_.now_ns(), e.sequence, config_.foreign_build_id_misc);
    probes_.hit(Probe::sideband_record);
    if (p.type == PERF_RECORD_MMAP2 && config_.foreign_build_id_misc) probes_.hit(Probe::foreign_build_id_misc);
  }
  e.sequence++;
}

Kernel::PendingPayload& Kernel::payload_of(std::size_t cpu, const std::byte* buffer) {
  VERIFY(buffer == scratch_[cpu].data() || buffer == inner_[cpu].data());
  return payloads_[cpu][buffer == scratch_[cpu].data() ? 0 : 1];
}

// Records built elsewhere (the AUX area's PERF_RECORD_AUX) are whole.
void Kernel::fill_payload(std::size_t cpu, std::span<const std::byte> record) {
  if (record.data() != scratch_[cpu].data() && record.data() != inner_[cpu].data()) return;
  PendingPayload& payload = payload_of(cpu, record.data());
  if (!payload.pending) return;
  std::vector<std::byte>& buffer = record.data() == scratch_[cpu].data() ? scratch_[cpu] : inner_[cpu];
  fill_sample_payload(std::span<std::byte>(buffer.data(), record.size()), payload.identity, payload.sequence,
                      config_.payload_seed);
  payload.pending = false;
}

// A write whose writer may be held after its pause test (on another CPU,
// in an interrupt): the reader may pause the ring meanwhile, and the
// record still lands, reserved, copied and published at once.
void Kernel::write(std::size_t cpu, const Planned& p, std::span<const std::byte> record) {
  DecisionSource& decisions = scheduler_.decisions();
  bool past_check = false;
  if (!rings_[cpu]->paused() && decisions.chance(config_.late_write_per_million)) {
    writers_held_++;
    scheduler_.sleep_for(decisions.draw(16) == 0 ? decisions.between(kLateWriteNsMax, kPreemptedWriteNsMax)
                                                 : decisions.between(1, kLateWriteNsMax));
    writers_held_--;
    past_check = true;
    if (rings_[cpu]->paused()) probes_.hit(Probe::late_write_after_pause);
  }
  finish(cpu, begin(cpu, p.event, record, past_check), record);
}

// The gap before an occurrence, from the record gap drawn in [0,
// gap_ns_max]: period mode with N occurrences a sample, N times as close
// (the samples come as often as records did); frequency mode, rescaled
// onto [0, 2 / (kFrequencyOccurrences * sample_freq)] s (the period
// settles near kFrequencyOccurrences, the samples sample_freq a second:
// the campaign draws sample_freq near the records' rate, sim/params.cc).
// A burst's gaps stay 0.
std::uint64_t Kernel::occurrence_gap(std::uint64_t gap_ns, std::uint64_t divisor) const {
  if (!config_.sampling.freq()) return gap_ns / divisor;
  if (config_.gap_ns_max == 0) return 0;
  const unsigned __int128 span_ns = 2'000'000'000 / (kFrequencyOccurrences * config_.sampling.sample_freq);
  return static_cast<std::uint64_t>(gap_ns * span_ns / config_.gap_ns_max);
}

// perf_swevent_event for a planned sample: the event counts the
// occurrence; a sample only if its period rules say so.
bool Kernel::occur(std::size_t cpu, Planned& p, std::uint64_t ahead_ns) {
  if (p.type != PERF_RECORD_SAMPLE) return true;
  const SimEvent& e = events_[cpu][p.event];
  OpenedEvent& o = event(cpu, p.event);
  const std::uint64_t clock = perf_clock(scheduler_.now_ns() + owed_ns_[cpu] + ahead_ns);
  const std::uint64_t period_before = o.periods.sample_period();
  const PeriodState::Hit hit = o.periods.event(1, clock);
  if (o.periods.sample_period() != period_before) probes_.hit(Probe::frequency_adapted);
  VERIFY(hit.samples <= 1);  // weight 1: at most one overflow
  p.period = hit.period;
  occurrences_[cpu]++;
  std::uint64_t& unsampled = log_.cpus[cpu].unsampled_after[p.event];
  if (hit.samples == 0) {
    unsampled++;
    probes_.hit(Probe::occurrence_not_sampled);
    return false;
  }
  model::SampleHit h;
  h.event = static_cast<std::uint32_t>(p.event);
  h.id = o.writer.identity.id;
  h.unsampled = unsampled;
  h.clock_ns = clock;
  h.samples = static_cast<std::uint32_t>(hit.samples);
  h.period = hit.period;
  h.sequence = e.sequence;
  log_.cpus[cpu].hits.push_back(h);
  unsampled = 0;
  if (hit.period > 1) probes_.hit(Probe::sample_period_above_one);
  return true;
}

std::uint32_t Kernel::emit(std::size_t cpu, Planned p, DecisionSource& d, std::uint32_t& burst_left,
                           std::uint32_t left) {
  DecisionSource& decisions = scheduler_.decisions();
  const std::span<const std::byte> outer(scratch_[cpu].data(), p.size);
  if (left < 2 || !decisions.chance(config_.nest_per_million)) {
    if (!occur(cpu, p)) return 0;
    build(cpu, p, scratch_[cpu]);
    write(cpu, p, outer);
    return 1;
  }
  // Interrupted by the next record of the workload (its gap is the
  // interruption's): before the outer writer reserved (the inner record
  // lands first with a later timestamp), or after (nested: only the
  // outermost publishes data_head).
  Planned q = plan(cpu, d, burst_left);
  const std::span<const std::byte> inner(inner_[cpu].data(), q.size);
  // Occurrences that make no sample write nothing: the other record alone.
  if (!occur(cpu, p)) {
    if (!occur(cpu, q)) return 0;
    build(cpu, q, inner_[cpu]);
    write(cpu, q, inner);
    return 1;
  }
  build(cpu, p, scratch_[cpu]);
  if (decisions.draw(2) == 0) {
    // The writer is under way (a disable waits for it).
    writers_held_++;
    scheduler_.sleep_for(decisions.between(1, kInterruptNsMax));
    writers_held_--;
    if (!occur(cpu, q)) {
      finish(cpu, begin(cpu, p.event, outer), outer);
      return 1;
    }
    build(cpu, q, inner_[cpu]);
    const SimRing::Output written = output(cpu, q.event, inner);
    const SimRing::Handle h = begin(cpu, p.event, outer);
    if (written == SimRing::Output::written && h.result == SimRing::Output::written) probes_.hit(Probe::time_inversion);
    finish(cpu, h, outer);
    return 2;
  }
  // The interruption comes at once: nothing else runs between the outer
  // writer's reservation and its publication.
  const SimRing::Handle h = begin(cpu, p.event, outer);
  const bool inner_sample = occur(cpu, q);
  if (inner_sample) {
    build(cpu, q, inner_[cpu]);
    output(cpu, q.event, inner);
  }
  finish(cpu, h, outer);
  return inner_sample ? 2 : 1;
}

void Kernel::produce(std::size_t cpu) {
  // The workload (gaps, bursts, events, sizes) is a function of (seed, cpu)
  // alone, not of the schedule or the faults: the same seed gives the same
  // records under every output mode and disk, which is what makes
  // side-by-side comparisons exact. The schedule, faults and interruptions
  // come from the run's tape.
  DecisionSource d(config_.payload_seed * 0x9e3779b97f4a7c15ull + cpu + 1, false);
  std::uint32_t burst_left = 0;
  // Records made (samples and side-band); an occurrence that makes no
  // sample makes none. Occurrences are bounded: a period mode's sample
  // takes sample_period of them, a frequency's whatever its period became.
  const std::uint64_t occurrences_max = std::uint64_t{config_.records_per_cpu} * kOccurrencesPerRecordMax;
  // Period mode with a period N above 1 (and no PERIOD rule): occurrences
  // N times as close as records were, so the samples come as often.
  const std::uint64_t gap_divisor =
      !config_.sampling.freq() && !config_.sampling.period_field && config_.sampling.sample_period > 1
          ? config_.sampling.sample_period
          : 1;
  // The gaps of occurrences that make no sample, slept at once before the
  // next record (they write nothing, and only a sample reads the clock).
  std::uint64_t pending_ns = 0;
  std::uint32_t in_batch = 0;  // records since the producer last slept
  for (std::uint32_t made = 0; made < config_.records_per_cpu;) {
    if (scheduler_.cancelled() || disabled_) break;
    if (occurrences_[cpu] >= occurrences_max) {
      probes_.hit(Probe::occurrences_bounded);
      break;
    }
    Planned p = plan(cpu, d, burst_left);
    if (p.type == PERF_RECORD_SAMPLE) {
      p.gap_ns = occurrence_gap(p.gap_ns, gap_divisor);
      if (!event(cpu, p.event).periods.samples_next()) {
        pending_ns += p.gap_ns;
        occur(cpu, p, pending_ns);
        continue;
      }
    }
    // The gaps of a batch are slept at once, before its last record; the
    // records before it are written early (batch 1: each record's gap
    // before it).
    owed_ns_[cpu] += p.gap_ns + std::exchange(pending_ns, 0);
    if (++in_batch >= config_.producer_batch && !pay_owed(cpu, in_batch)) break;
    if (disabled_) break;
    made += emit(cpu, p, d, burst_left, config_.records_per_cpu - made);
    scheduler_.maybe_yield();
  }
  // A batch cut short by the end of the workload: its time still passes.
  if (!scheduler_.cancelled() && !disabled_) pay_owed(cpu, in_batch);
  finish_workload(cpu);
}

// Sleeps the gaps the batch owes; false when the run was cancelled.
bool Kernel::pay_owed(std::size_t cpu, std::uint32_t& in_batch) {
  in_batch = 0;
  const std::uint64_t owed_ns = std::exchange(owed_ns_[cpu], 0);
  return owed_ns == 0 || scheduler_.sleep_for(owed_ns) != Wake::cancelled;
}

// The workload of cpu is over. Per-task events exit with their task: the
// side-band event writes PERF_RECORD_EXIT (which may carry a LOST record
// if it fits; nothing waits for room), the events' state becomes EXIT and
// poll returns POLLHUP. System-wide events stay: only a stop ends them.
void Kernel::finish_workload(std::size_t cpu) {
  for (int i = 0; i < 1'000'000 && !aux_done_[cpu] && !scheduler_.cancelled(); i++) {
    if (aux_done_queue_.wait() == Wake::cancelled) break;
  }
  if (config_.per_task && !disabled_ && !scheduler_.cancelled()) {
    if (has_aux()) aux_stop_output(cpu);
    if (config_.sideband) {
      Planned exit;
      exit.event = config_.events_per_cpu;
      exit.type = PERF_RECORD_EXIT;
      exit.size = sideband_bytes(exit.type, attrs(cpu, exit.event).identity.layout);
      build(cpu, exit, scratch_[cpu]);
      output(cpu, exit.event, std::span<const std::byte>(scratch_[cpu].data(), exit.size));
    }
    // The task exits (perf_event_exit_task): its events are in EXIT state.
    // The call kernel writes no EXIT record here: the campaign's events
    // ask for no side-band from it (the dummy event's EXIT is the
    // workload's, above).
    calls_.exit_task(static_cast<int>(4000 + cpu), 1);
    scheduler_.trace(TraceKind::hangup, cpu);
  }
  done_++;
  last_exit_ns_ = scheduler_.now_ns();
  poll_queue_.notify_all();
  exit_queue_.notify_all();
}

}  // namespace ringsim::sim
