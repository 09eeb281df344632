#include "tests/conformance/generator.h"

#include <linux/perf_event.h>
#include <rapidcheck.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <sstream>

#include "core/verify.h"
#include "tests/conformance/builders.h"
#include "tests/conformance/layout.h"
#include "tests/conformance/runner.h"
#include "tests/conformance/suite.h"

namespace ringsim::conformance {
namespace {

using namespace builders;

// ---------------------------------------------------------------------------
// What is drawn: plain choices, each shrinking toward 0, its simplest value
// (the first source, target and sample_type; no attribute; not opened
// before the steps; the first kind of step, which is an action; count 1).

struct EventDraw {
  int source = 0;  // kSources
  int target = 0;  // kTargets
  int sample = 0;  // kSampleTypes, or kSampleTypesWithIdAll with sample_id_all
  int stack = 0;   // kStackBytes, with PERF_SAMPLE_STACK_USER
  int wakeup = 0;  // kWakeups
  bool id_all = false;
  bool comm = false;
  bool task = false;
  bool mmap2 = false;
  bool backward = false;
  // Before the steps: opened, then mapped (ring 1) or SET_OUTPUT to an
  // earlier event (ring 2, `pick`), then enabled.
  bool opened = false;
  int ring = 0;
  int pick = 0;
  int pages = 0;  // kPages
  bool read_only = false;
  bool enabled = false;
  int read_format = 0;  // the read_format bits left out (kReadFormatBits), none for 0
};

// One step: `kind` and the choices it reads. The event is `a` among the
// events the step is legal for (b: the other one); a step legal for none is
// left out.
struct Intent {
  int kind = 0;
  int a = 0;
  int b = 0;
  int variant = 0;  // the action, the pages, the name
  int count = 0;    // the action's count (count_of)
  bool flag = false;   // act: by the child; map: read-only; read: time order
  bool watch = false;  // act: poll after each action (and consume above kConsumeAbove[b])
};

struct Draft {
  std::vector<EventDraw> events;  // one at least
  std::vector<Intent> steps;
  bool poll_after_each_step = true;
};

constexpr Source kSources[] = {Source::getpid, Source::getppid, Source::getuid, Source::page_faults,
                               Source::dummy};
constexpr Target kTargets[] = {Target::self, Target::self_cpu0, Target::child, Target::child_cpu0,
                               Target::system_cpu0};
constexpr std::uint64_t kId = PERF_SAMPLE_IDENTIFIER;
constexpr std::uint64_t kTid = PERF_SAMPLE_TID;
constexpr std::uint64_t kTime = PERF_SAMPLE_TIME;
// The kinds the hand-written scenarios use. With sample_id_all, only those
// whose trailer the simulated ring builds (layout.h's trailer_layout).
constexpr std::uint64_t kSampleTypes[] = {
    kId | kTid,
    0,
    kId,
    kId | kTid | kTime,
    kId | kTid | kTime | PERF_SAMPLE_CPU,
    kId | kTid | kTime | PERF_SAMPLE_RAW,
    kId | kTid | kTime | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD,
    PERF_SAMPLE_IP | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID,
    kTid | PERF_SAMPLE_ADDR,
    kId | PERF_SAMPLE_STACK_USER,
    PERF_SAMPLE_STACK_USER,
    kId | kTid | kTime | PERF_SAMPLE_READ,
    PERF_SAMPLE_READ,
};
constexpr std::uint64_t kSampleTypesWithIdAll[] = {
    kId | kTid | kTime,
    kId | kTid | kTime | PERF_SAMPLE_CPU,
    kId | kTid | kTime | PERF_SAMPLE_RAW,
    kId | kTid | kTime | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD,
    0,
    kId | kTid | kTime | PERF_SAMPLE_STACK_USER,
    kId | kTid | kTime | PERF_SAMPLE_READ,
};
// Samples of 32 + N bytes with IDENTIFIER: 40, 32, 1032, 2048, 4088, 4096
// (the whole area of one page) and 8192 (larger than it).
constexpr std::uint32_t kStackBytes[] = {8, 0, 1000, 2016, 4056, 4064, 8160};
struct Wakeup {
  std::uint32_t events = 0;
  bool watermark = false;
  std::uint32_t bytes = 0;
};
constexpr Wakeup kWakeups[] = {{0, false, 0},   {1, false, 0},   {2, false, 0},    {5, false, 0},
                               {0, true, 1},    {0, true, 100},  {0, true, 2048},  {0, true, 100000},
                               {0, true, 0}};
constexpr std::uint32_t kPages[] = {1, 2, 4, 0};
// read_format: any of these left out of kReadFormatAll (no PERF_FORMAT_GROUP:
// no groups in the vocabulary).
constexpr std::uint64_t kReadFormatBits[] = {PERF_FORMAT_TOTAL_TIME_ENABLED, PERF_FORMAT_TOTAL_TIME_RUNNING,
                                             PERF_FORMAT_ID, PERF_FORMAT_LOST};
constexpr Action kActions[] = {Action::getpid,    Action::getppid, Action::getuid, Action::comm,
                               Action::mmap_exec, Action::fault,   Action::fork};
const char* const kNames[] = {"a", "n1", "abcdefg", "name-of-15-char", "side"};
constexpr std::uint32_t kConsumeAbove[] = {1000, 100, 3000};

enum StepKind : int {
  k_act,
  k_read,
  k_enable,
  k_consume,
  k_poll,
  k_lost,
  k_disable,
  k_pause,
  k_resume,
  k_open,
  k_map,
  k_set_output,
  k_unmap,
  k_spawn,
  k_exit,
  k_control_page,
  k_exit_polling,
};

// Each field is drawn as an int in [0, kRaw), uniform whatever
// RapidCheck's size (which scales inRange down and here sets only the
// number of steps), and shrinks on its own toward 0: the fields of an
// event or a step are a fixed-length vector of them (gen::exec would draw
// the fields after a shrunk one anew), read by the functions below.
constexpr int kRaw = 1000;

rc::Gen<std::vector<int>> raw_fields(std::size_t n) {
  constexpr int kFullSize = 100;
  return rc::gen::container<std::vector<int>>(n, rc::gen::resize(kFullSize, rc::gen::inRange(0, kRaw)));
}

// A choice among weighted alternatives, the first for 0.
int choose(int raw, std::initializer_list<int> weights) {
  int total = 0;
  for (int w : weights) total += w;
  int r = raw * total / kRaw;
  int i = 0;
  for (int w : weights) {
    if (r < w) return i;
    r -= w;
    i++;
  }
  return i - 1;
}
// True with `percent` chance, false for 0.
bool chance(int raw, int percent) { return raw >= kRaw - percent * kRaw / 100; }

EventDraw to_event_draw(const std::vector<int>& f) {
  EventDraw d;
  d.source = choose(f[0], {40, 15, 15, 15, 15});
  d.target = choose(f[1], {50, 15, 15, 10, 10});
  d.id_all = chance(f[2], 30);
  d.sample = choose(f[3], {30, 8, 8, 15, 8, 8, 5, 5, 5, 6, 2, 6, 2});
  d.stack = f[4] % static_cast<int>(std::size(kStackBytes));
  d.wakeup = choose(f[5], {50, 10, 5, 5, 5, 10, 5, 5, 5});
  d.comm = chance(f[6], 25);
  d.task = chance(f[7], 25);
  d.mmap2 = chance(f[8], 20);
  d.backward = chance(f[9], 20);
  d.opened = chance(f[10], 90);
  d.ring = choose(f[11], {10, 70, 20});
  d.pick = f[12] % 8;
  d.pages = choose(f[13], {50, 20, 20, 10});
  d.read_only = chance(f[14], 30);
  d.enabled = chance(f[15], 80);
  d.read_format = f[16] % 16;
  return d;
}

Intent to_intent(const std::vector<int>& f) {
  Intent i;
  i.kind = choose(f[0], {30, 10, 6, 6, 5, 4, 4, 4, 4, 4, 4, 4, 3, 3, 3, 2, 2});
  i.a = f[1] % 8;
  i.b = f[2] % 8;
  i.variant = f[3] % 100;
  i.count = f[4];
  i.flag = chance(f[5], 40);
  i.watch = chance(f[6], 15);
  return i;
}

rc::Gen<EventDraw> gen_event() { return rc::gen::map(raw_fields(17), to_event_draw); }
rc::Gen<Intent> gen_intent() { return rc::gen::map(raw_fields(7), to_intent); }

// One event at least, four at most; as many drawn steps as the size.
rc::Gen<Draft> gen_draft() {
  return rc::gen::apply(
      [](const EventDraw& first, const std::vector<EventDraw>& more, const std::vector<Intent>& steps, int raw) {
        Draft d;
        d.events.push_back(first);
        d.events.insert(d.events.end(), more.begin(), more.end());
        d.steps = steps;
        d.poll_after_each_step = !chance(raw, 20);
        return d;
      },
      gen_event(), rc::gen::resize(3, rc::gen::container<std::vector<EventDraw>>(gen_event())),
      rc::gen::container<std::vector<Intent>>(gen_intent()),
      rc::gen::resize(100, rc::gen::inRange(0, kRaw)));
}

// Mostly 1, often a few, sometimes enough to fill a ring.
std::uint32_t count_of(int raw) {
  if (raw < 400) return 1;
  if (raw < 650) return 2 + static_cast<std::uint32_t>(raw - 400) % 4;
  if (raw < 850) return 6 + static_cast<std::uint32_t>(raw - 650) % 35;
  return 41 + static_cast<std::uint32_t>(raw - 850) * 2;
}

// Which of the weighted alternatives `raw` in [0, 100) falls on.
std::size_t pick_weighted(int raw, std::initializer_list<int> weights) {
  std::size_t i = 0;
  for (int w : weights) {
    if (raw < w) return i;
    raw -= w;
    i++;
  }
  return i - 1;
}

// ---------------------------------------------------------------------------
// The legaliser: a draft as a scenario every backend can run.

bool system_dummy(const EventSpec& e) { return e.target == Target::system_cpu0 && e.source == Source::dummy; }
bool child_task(const EventSpec& e) { return e.target == Target::child || e.target == Target::child_cpu0; }
// Opened on the child's pid: its own events and the CPU-wide tracepoints
// filtered on it.
bool needs_child(const EventSpec& e) {
  return child_task(e) || (e.target == Target::system_cpu0 && e.source != Source::dummy);
}
bool sideband(const EventSpec& e) { return e.comm || e.task || e.mmap2; }

EventSpec to_spec(const EventDraw& d) {
  EventSpec e;
  e.source = kSources[d.source];
  e.target = kTargets[d.target];
  // A page-fault event only on this thread: the child's COW faults vary and
  // a CPU-wide software event cannot be filtered.
  if (e.source == Source::page_faults && e.target != Target::self_cpu0) e.target = Target::self;
  e.sample_id_all = d.id_all;
  e.sample_type = d.id_all ? kSampleTypesWithIdAll[d.sample % std::size(kSampleTypesWithIdAll)]
                           : kSampleTypes[d.sample % std::size(kSampleTypes)];
  if (!tracepoint(e.source)) e.sample_type &= ~static_cast<std::uint64_t>(PERF_SAMPLE_RAW);
  if (e.sample_type & PERF_SAMPLE_STACK_USER) e.stack_user = kStackBytes[d.stack];
  // The filter of a CPU-wide tracepoint passes the child's samples only;
  // its side-band would be the whole CPU's.
  const bool filtered = e.target == Target::system_cpu0 && e.source != Source::dummy;
  e.comm = d.comm && !filtered;
  e.task = d.task && !filtered;
  e.mmap2 = d.mmap2 && !filtered;
  e.backward = d.backward;
  const Wakeup& w = kWakeups[d.wakeup];
  e.wakeup_events = w.events;
  e.watermark = w.watermark;
  e.wakeup_watermark = w.bytes;
  for (std::size_t b = 0; b < std::size(kReadFormatBits); b++) {
    if (d.read_format & (1 << b)) e.read_format &= ~kReadFormatBits[b];
  }
  return e;
}

constexpr std::size_t kStepsMax = 40;
// Each read logs at most a ring's worth of records and their bodies: the
// log holds 131072 observables.
constexpr int kReadsMax = 8;
constexpr std::uint32_t kFaultsMax = 1000;  // fresh pages of the real backend: 1024
constexpr int kSpawnsMax = 3;

class Legaliser {
 public:
  explicit Legaliser(const Draft& d) : d_(d) {
    for (const EventDraw& e : d.events) s_.events.push_back(to_spec(e));
    state_.resize(s_.events.size());
    for (const EventSpec& e : s_.events) faults_ = faults_ || e.source == Source::page_faults;
    s_.poll_after_each_step = d.poll_after_each_step;
  }

  std::optional<Scenario> scenario() {
    for (std::size_t i = 0; i < s_.events.size(); i++) setup(i);
    for (const Intent& in : d_.steps) {
      if (s_.steps.size() >= kStepsMax) break;
      apply(in);
    }
    return prune();
  }

 private:
  struct State {
    bool open = false;
    bool own = false;    // a mapping of its own
    bool data = false;   // ... with data pages
    bool writable = true;
    bool redirect = false;  // a SET_OUTPUT that may have given it the ring of `redirect_owner`
    std::size_t redirect_owner = 0;
    int child = -1;  // the child it follows
  };

  template <typename Pred>
  std::vector<std::size_t> where(Pred pred) const {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < state_.size(); i++) {
      if (pred(i)) out.push_back(i);
    }
    return out;
  }
  static std::optional<std::size_t> pick(const std::vector<std::size_t>& among, int k) {
    if (among.empty()) return std::nullopt;
    return among[static_cast<std::size_t>(k) % among.size()];
  }
  void emit(const Step& st) { s_.steps.push_back(st); }

  bool can_spawn() const { return !child_alive_ && !faults_ && spawns_ < kSpawnsMax; }
  void spawn() {
    emit(spawn_child());
    child_alive_ = true;
    child_gen_++;
    spawns_++;
  }
  bool openable(std::size_t i) const {
    return !state_[i].open && (!needs_child(s_.events[i]) || child_alive_);
  }
  bool mappable(std::size_t i) const {
    const State& st = state_[i];
    return st.open && !st.own && !st.redirect && !system_dummy(s_.events[i]);
  }
  bool owns_data(std::size_t i) const { return state_[i].own && state_[i].data; }
  bool redirectable(std::size_t i) const {
    return state_[i].open && !state_[i].redirect && !system_dummy(s_.events[i]);
  }

  bool open_event(std::size_t i) {
    if (state_[i].open) return false;
    if (needs_child(s_.events[i]) && !child_alive_) {
      if (!can_spawn()) return false;
      spawn();
    }
    emit(open(i));
    state_[i].open = true;
    state_[i].child = needs_child(s_.events[i]) ? child_gen_ : -1;
    return true;
  }

  void map_event(std::size_t i, std::uint32_t pages, bool read_only) {
    emit(read_only ? map_read_only(i, pages) : map(i, pages));
    State& st = state_[i];
    st.own = true;
    st.data = pages > 0;
    st.writable = !read_only;
  }

  // Both kernels refuse a SET_OUTPUT from a mapped event, to itself or to
  // an event without a ring; otherwise it may be accepted, and the event
  // is never redirected again while that ring lives (the reader would no
  // longer know who wrote what is in it).
  void redirect(std::size_t from, std::size_t to) {
    emit(set_output(from, to));
    const State& t = state_[to];
    State& f = state_[from];
    if (from == to || f.own || !(t.own || t.redirect)) return;
    f.redirect = true;
    f.redirect_owner = t.own ? to : t.redirect_owner;
  }

  void unmap_event(std::size_t i) {
    emit(unmap(i));
    state_[i].own = state_[i].data = false;
    for (State& st : state_) st.redirect = st.redirect && st.redirect_owner != i;
  }

  void setup(std::size_t i) {
    const EventDraw& d = d_.events[i];
    if (!d.opened || !open_event(i)) return;
    if (d.ring == 1 && mappable(i)) map_event(i, kPages[d.pages], d.read_only);
    if (d.ring == 2 && redirectable(i)) {
      const auto to = pick(where([&](std::size_t j) { return j < i && redirectable(j); }), d.pick);
      if (to) redirect(i, *to);
    }
    if (d.enabled) emit(enable(i));
  }

  void apply(const Intent& in);
  void act(const Intent& in);
  void reader_step(const Intent& in);
  void event_step(const Intent& in);
  void child_step(const Intent& in);
  bool exit_polling_quiet() const;
  std::optional<Scenario> prune() const;

  const Draft& d_;
  Scenario s_;
  std::vector<State> state_;
  bool faults_ = false;  // a page-fault event: no fork, no child (their COW faults would count)
  bool child_alive_ = false;
  int child_gen_ = -1;
  int spawns_ = 0;
  int reads_ = 0;
  std::uint32_t faults_used_ = 0;
};

void Legaliser::act(const Intent& in) {
  Action action = kActions[pick_weighted(in.variant, {30, 10, 10, 10, 12, 18, 10})];
  if (action == Action::fork && faults_) action = Action::getpid;
  std::uint32_t count = count_of(in.count);
  if (action == Action::fork) count = std::min<std::uint32_t>(count, 2);
  if (action == Action::mmap_exec) count = std::min<std::uint32_t>(count, 4);
  if (action == Action::comm) count = std::min<std::uint32_t>(count, 40);
  if (action == Action::fault) {
    if (faults_used_ >= kFaultsMax) return;
    count = std::min(count, kFaultsMax - faults_used_);
    faults_used_ += count;
  }
  Step st = builders::act(action, count);
  if (action == Action::comm) st = comm(kNames[static_cast<std::size_t>(in.b) % std::size(kNames)], count);
  const bool syscall = action == Action::getpid || action == Action::getppid || action == Action::getuid;
  if (in.flag && syscall && child_alive_) st = by_child(st);
  const auto watched = pick(where([&](std::size_t j) { return owns_data(j); }), in.a);
  if (in.watch && watched) {
    const std::uint32_t above = state_[*watched].writable ? kConsumeAbove[in.b % std::size(kConsumeAbove)] : 0;
    st = watch(st, *watched, in.count % 2 == 0 ? above : 0);
  }
  emit(st);
}

// A blocking poll while the child exits wakes only with the hang-up when
// no event of the child asks for its EXIT record (else the record's
// wakeup may come first, and the poll returns before the exit is done).
bool Legaliser::exit_polling_quiet() const {
  for (std::size_t i = 0; i < state_.size(); i++) {
    if (state_[i].open && state_[i].child == child_gen_ && sideband(s_.events[i])) return false;
  }
  return s_.poll_after_each_step;
}

// The reader's steps: of an event with a mapping of its own with data
// pages (a writable one to store data_tail), or of any open event.
void Legaliser::reader_step(const Intent& in) {
  const auto own_data = [&](std::size_t j) { return owns_data(j); };
  const auto any_open = [&](std::size_t j) { return state_[j].open; };
  std::optional<std::size_t> e;
  switch (in.kind) {
    case k_read:
      if (reads_ >= kReadsMax || !(e = pick(where(own_data), in.a))) return;
      emit(in.flag ? read_checking_time(*e) : read(*e));
      reads_++;
      return;
    case k_consume:
      if ((e = pick(where([&](std::size_t j) { return owns_data(j) && state_[j].writable; }), in.a))) emit(consume(*e));
      return;
    case k_control_page:
      if ((e = pick(where(own_data), in.a))) emit(control_page(*e));
      return;
    case k_lost:
      if ((e = pick(where(any_open), in.a))) emit(read_values(*e));
      return;
    case k_poll:
      if (!(e = pick(where(any_open), in.a))) return;
      if (const auto other = in.b == 0 ? std::nullopt : pick(where(any_open), in.b)) {
        emit(poll(*e, *other));
      } else {
        emit(poll(*e));
      }
      return;
  }
}

// open, mmap, SET_OUTPUT, munmap, and the four ioctls of an open event.
void Legaliser::event_step(const Intent& in) {
  std::optional<std::size_t> e;
  switch (in.kind) {
    case k_open:
      if ((e = pick(where([&](std::size_t j) { return openable(j); }), in.a))) open_event(*e);
      return;
    case k_map:
      if ((e = pick(where([&](std::size_t j) { return mappable(j); }), in.a))) {
        map_event(*e, kPages[pick_weighted(in.variant, {50, 20, 20, 10})], in.flag);
      }
      return;
    case k_set_output: {
      const auto from = pick(where([&](std::size_t j) { return redirectable(j); }), in.a);
      const auto to = pick(where([&](std::size_t j) { return state_[j].open && !system_dummy(s_.events[j]); }), in.b);
      if (from && to) redirect(*from, *to);
      return;
    }
    case k_unmap:
      if ((e = pick(where([&](std::size_t j) { return state_[j].own; }), in.a))) unmap_event(*e);
      return;
  }
  const Op ioctl = in.kind == k_enable ? Op::enable : in.kind == k_disable ? Op::disable
                   : in.kind == k_pause ? Op::pause : Op::resume;
  if ((e = pick(where([&](std::size_t j) { return state_[j].open; }), in.a))) emit(op(ioctl, *e));
}

void Legaliser::child_step(const Intent& in) {
  if (in.kind == k_spawn) {
    if (can_spawn()) spawn();
    return;
  }
  if (!child_alive_) return;
  if (in.kind == k_exit) {
    emit(child_exit());
  } else {
    const auto e = pick(where([&](std::size_t j) { return state_[j].open && child_task(s_.events[j]); }), in.a);
    if (!exit_polling_quiet() || !e) return;
    emit(child_exit_polling(*e));
  }
  child_alive_ = false;
}

void Legaliser::apply(const Intent& in) {
  switch (static_cast<StepKind>(in.kind)) {
    case k_act: act(in); return;
    case k_read:
    case k_consume:
    case k_control_page:
    case k_lost:
    case k_poll: reader_step(in); return;
    case k_open:
    case k_map:
    case k_set_output:
    case k_unmap:
    case k_enable:
    case k_disable:
    case k_pause:
    case k_resume: event_step(in); return;
    case k_spawn:
    case k_exit:
    case k_exit_polling: child_step(in); return;
  }
}

// Events never opened are left out, the others renumbered.
std::optional<Scenario> Legaliser::prune() const {
  std::vector<std::size_t> index(state_.size(), kNoEvent);
  Scenario out = s_;
  out.events.clear();
  for (std::size_t i = 0; i < state_.size(); i++) {
    if (!state_[i].open) continue;
    index[i] = out.events.size();
    out.events.push_back(s_.events[i]);
  }
  if (out.events.empty()) return std::nullopt;
  for (Step& st : out.steps) {
    const bool names_event =
        st.op == Op::act ? st.poll_each : st.op != Op::spawn_child && st.op != Op::child_exit;
    st.event = names_event ? index[st.event] : 0;
    if (st.other != kNoEvent) st.other = index[st.other];
    VERIFY(st.event != kNoEvent);
  }
  return out;
}

rc::Shrinkable<Draft> draw(std::uint64_t seed, std::uint64_t sequence) {
  const rc::Random random(rc::Random::Key{seed, sequence, 0x636f6e666f726d, 1});
  const int size = 4 + static_cast<int>(sequence % 21);  // up to 24 drawn steps
  return gen_draft()(random, size);
}

std::optional<Scenario> legalise(const Draft& draft, std::uint64_t seed, std::uint64_t sequence) {
  std::optional<Scenario> s = Legaliser(draft).scenario();
  if (s) {
    s->name = "generated-" + std::to_string(seed) + "-" + std::to_string(sequence);
    s->rows = "generated";
    s->summary = "drawn by --generate (seed " + std::to_string(seed) + ", sequence " + std::to_string(sequence) + ")";
  }
  return s;
}

// ---------------------------------------------------------------------------
// The scenario as C++.

const char* source_name(Source s) {
  switch (s) {
    case Source::getpid: return "getpid";
    case Source::getppid: return "getppid";
    case Source::getuid: return "getuid";
    case Source::page_faults: return "page_faults";
    case Source::dummy: return "dummy";
  }
  return "?";
}

const char* target_name(Target t) {
  switch (t) {
    case Target::self: return "self";
    case Target::self_cpu0: return "self_cpu0";
    case Target::child: return "child";
    case Target::child_cpu0: return "child_cpu0";
    case Target::system_cpu0: return "system_cpu0";
  }
  return "?";
}

std::string sample_type_source(std::uint64_t t) {
  static const std::pair<std::uint64_t, const char*> kBits[] = {
      {PERF_SAMPLE_IP, "PERF_SAMPLE_IP"},           {PERF_SAMPLE_TID, "PERF_SAMPLE_TID"},
      {PERF_SAMPLE_TIME, "PERF_SAMPLE_TIME"},       {PERF_SAMPLE_ADDR, "PERF_SAMPLE_ADDR"},
      {PERF_SAMPLE_ID, "PERF_SAMPLE_ID"},           {PERF_SAMPLE_CPU, "PERF_SAMPLE_CPU"},
      {PERF_SAMPLE_PERIOD, "PERF_SAMPLE_PERIOD"},   {PERF_SAMPLE_STREAM_ID, "PERF_SAMPLE_STREAM_ID"},
      {PERF_SAMPLE_RAW, "PERF_SAMPLE_RAW"},         {PERF_SAMPLE_STACK_USER, "PERF_SAMPLE_STACK_USER"},
      {PERF_SAMPLE_IDENTIFIER, "PERF_SAMPLE_IDENTIFIER"}, {PERF_SAMPLE_READ, "PERF_SAMPLE_READ"}};
  std::string out;
  for (const auto& [bit, name] : kBits) {
    if (t & bit) out += (out.empty() ? "" : " | ") + std::string(name);
    t &= ~bit;
  }
  VERIFY_MSG(t == 0, "a sample_type bit the printer does not name");
  return out.empty() ? "0" : out;
}

std::string read_format_source(std::uint64_t f) {
  static const std::pair<std::uint64_t, const char*> kBits[] = {
      {PERF_FORMAT_TOTAL_TIME_ENABLED, "PERF_FORMAT_TOTAL_TIME_ENABLED"},
      {PERF_FORMAT_TOTAL_TIME_RUNNING, "PERF_FORMAT_TOTAL_TIME_RUNNING"},
      {PERF_FORMAT_ID, "PERF_FORMAT_ID"},
      {PERF_FORMAT_LOST, "PERF_FORMAT_LOST"}};
  std::string out;
  for (const auto& [bit, name] : kBits) {
    if (f & bit) out += (out.empty() ? "" : " | ") + std::string(name);
    f &= ~bit;
  }
  VERIFY_MSG(f == 0, "a read_format bit the printer does not name");
  return out.empty() ? "0" : out;
}

std::string event_source(const EventSpec& e) {
  const EventSpec d;
  std::vector<std::string> f;
  const auto flag = [&f](bool on, const char* name) {
    if (on) f.push_back(std::string(".") + name + " = true");
  };
  if (e.source != d.source) f.push_back(std::string(".source = Source::") + source_name(e.source));
  if (e.target != d.target) f.push_back(std::string(".target = Target::") + target_name(e.target));
  if (e.sample_type != d.sample_type) f.push_back(".sample_type = " + sample_type_source(e.sample_type));
  if (e.stack_user != d.stack_user) f.push_back(".stack_user = " + std::to_string(e.stack_user));
  flag(e.sample_id_all, "sample_id_all");
  flag(e.comm, "comm");
  flag(e.task, "task");
  flag(e.mmap2, "mmap2");
  flag(e.build_id, "build_id");
  flag(e.backward, "backward");
  if (e.wakeup_events != d.wakeup_events) f.push_back(".wakeup_events = " + std::to_string(e.wakeup_events));
  flag(e.watermark, "watermark");
  if (e.wakeup_watermark != d.wakeup_watermark) {
    f.push_back(".wakeup_watermark = " + std::to_string(e.wakeup_watermark));
  }
  if (e.read_format != d.read_format) f.push_back(".read_format = " + read_format_source(e.read_format));
  std::string out = "EventSpec{";
  for (std::size_t i = 0; i < f.size(); i++) out += (i == 0 ? "" : ", ") + f[i];
  return out + "}";
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

// ", n" when n is not the builder's default.
std::string more(std::uint64_t n, std::uint64_t default_value) {
  return n == default_value ? "" : ", " + std::to_string(n);
}

std::string act_source(const Step& s) {
  const std::string n = s.count == 1 ? "" : std::to_string(s.count);
  std::string out;
  switch (s.action) {
    case Action::getpid: out = "getpid(" + n + ")"; break;
    case Action::getppid: out = "getppid(" + n + ")"; break;
    case Action::getuid: out = "getuid(" + n + ")"; break;
    case Action::comm: out = "comm(" + quoted(s.name) + more(s.count, 1) + ")"; break;
    case Action::fork: out = "act(Action::fork" + more(s.count, 1) + ")"; break;
    case Action::mmap_exec: out = "act(Action::mmap_exec" + more(s.count, 1) + ")"; break;
    case Action::fault: out = "act(Action::fault" + more(s.count, 1) + ")"; break;
  }
  if (s.by_child) out = "by_child(" + out + ")";
  if (s.poll_each) out = "watch(" + out + ", " + event_name(s.event) + more(s.consume_above, 0) + ")";
  return out;
}

std::string step_source(const Step& s) {
  const std::string e = event_name(s.event);
  switch (s.op) {
    case Op::open: return "open(" + e + ")";
    case Op::map: return std::string(s.writable ? "map(" : "map_read_only(") + e + more(s.pages, 1) + ")";
    case Op::unmap: return "unmap(" + e + ")";
    case Op::set_output: return "set_output(" + e + ", " + event_name(s.other) + ")";
    case Op::enable: return "enable(" + e + ")";
    case Op::disable: return "disable(" + e + ")";
    case Op::pause: return "pause(" + e + ")";
    case Op::resume: return "resume(" + e + ")";
    case Op::act: return act_source(s);
    case Op::spawn_child: return "spawn_child()";
    case Op::child_exit: return "child_exit()";
    case Op::child_exit_polling: return "child_exit_polling(" + e + ")";
    case Op::poll: return "poll(" + e + (s.other == kNoEvent ? "" : ", " + event_name(s.other)) + ")";
    case Op::read: return (s.time_order ? "read_checking_time(" : "read(") + e + more(s.from, 0) + ")";
    case Op::consume: return "consume(" + e + more(s.count, 0) + ")";
    case Op::read_values: return "read_values(" + e + ")";
    case Op::control_page: return "control_page(" + e + ")";
    case Op::map_aux:
      return "map_aux(" + e + ", " + std::to_string(s.aux.offset) + ", " + std::to_string(s.aux.size) + ", " +
             std::to_string(s.aux.map_pages) + (s.aux.map_offset == s.aux.offset ? "" : ", " + std::to_string(s.aux.map_offset)) +
             ")";
  }
  return "?";
}

// `items` joined by ", ", wrapped before `width` columns, continuation
// lines indented by `indent`.
std::string wrapped(const std::vector<std::string>& items, std::size_t indent, std::size_t width) {
  std::string out, line;
  for (std::size_t i = 0; i < items.size(); i++) {
    const std::string item = items[i] + (i + 1 < items.size() ? "," : "");
    if (!line.empty() && indent + line.size() + 1 + item.size() > width) {
      out += line + "\n" + std::string(indent, ' ');
      line.clear();
    }
    line += (line.empty() ? "" : " ") + item;
  }
  return out + line;
}

// ---------------------------------------------------------------------------
// Running and shrinking.

enum class Verdict { match, differ, foreign, not_permitted, unstable };

struct Judgement {
  Verdict verdict = Verdict::match;
  std::size_t observables = 0;
  std::string difference;
};

class Judge {
 public:
  Judge(Backend& real, Backend& sim) : real_(real), sim_(sim) {}

  // `repeat` real runs that must log the same. A scenario with a page-fault
  // event runs once more before: after an earlier fork the runner's own
  // pages are copy-on-write and its first stores would fault.
  Judgement run(const Scenario& s, int repeat) {
    for (const EventSpec& e : s.events) {
      if (e.source == Source::page_faults) {
        conformance::run(s, real_, real_log_);
        break;
      }
    }
    const Outcome o = run_scenario(s, real_, sim_, repeat, real_log_, sim_log_);
    Judgement j;
    j.observables = o.observables;
    j.difference = o.difference;
    switch (o.status) {
      case Status::match: j.verdict = Verdict::match; break;
      case Status::differ:
      case Status::known: j.verdict = Verdict::differ; break;
      case Status::unstable: j.verdict = Verdict::unstable; break;
      case Status::skipped: j.verdict = Verdict::not_permitted; break;
      case Status::foreign: j.verdict = Verdict::foreign; break;
    }
    return j;
  }

 private:
  Backend& real_;
  Backend& sim_;
  Log real_log_, sim_log_;
};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Shrunk {
  Scenario scenario;
  std::string difference;
  std::size_t runs = 0;
};

constexpr int kShrinkRoundsMax = 10000;

// RapidCheck's local search down the draft's shrink tree: take the first
// shrink whose scenario is no longer and still differs (twice on the real
// kernel), until none does or the budget is spent.
Shrunk shrink(rc::Shrinkable<Draft> current, Shrunk best, std::uint64_t seed, std::uint64_t sequence, Judge& judge,
              const GenerateOptions& options) {
  const Clock::time_point start = Clock::now();
  std::map<std::string, std::optional<std::string>> tried;  // source -> its difference
  for (int round = 0; round < kShrinkRoundsMax; round++) {
    bool moved = false;
    rc::Seq<rc::Shrinkable<Draft>> shrinks = current.shrinks();
    for (rc::Maybe<rc::Shrinkable<Draft>> next = shrinks.next(); next && !moved; next = shrinks.next()) {
      if (best.runs >= options.shrink_runs_max || seconds_since(start) > options.shrink_seconds) return best;
      const std::optional<Scenario> candidate = legalise(next->value(), seed, sequence);
      if (!candidate || candidate->steps.size() > best.scenario.steps.size()) continue;
      const std::string key = scenario_source(*candidate);
      auto it = tried.find(key);
      if (it == tried.end()) {
        best.runs++;
        const Judgement j = judge.run(*candidate, 2);
        it = tried.emplace(key, j.verdict == Verdict::differ ? std::optional(j.difference) : std::nullopt).first;
      }
      if (!it->second) continue;
      current = *next;
      best.scenario = *candidate;
      best.difference = *it->second;
      moved = true;
    }
    if (!moved) break;
  }
  return best;
}

void record_difference(const rc::Shrinkable<Draft>& root, const Scenario& drawn, const Judgement& first,
                       std::uint64_t sequence, Judge& judge, const GenerateOptions& options, GenerateReport& report) {
  Shrunk shrunk = shrink(root, Shrunk{drawn, first.difference, 0}, report.seed, sequence, judge, options);
  const Judgement again = judge.run(shrunk.scenario, options.confirm_runs);
  GeneratedDifference d;
  d.sequence = sequence;
  d.steps = drawn.steps.size();
  d.shrunk_steps = shrunk.scenario.steps.size();
  d.shrink_runs = shrunk.runs;
  d.confirmed = again.verdict == Verdict::differ;
  d.first_difference = d.confirmed ? again.difference : shrunk.difference;
  d.source = scenario_source(shrunk.scenario);
  report.differences.push_back(d);
}

void run_sequence(std::uint64_t sequence, Judge& judge, const GenerateOptions& options, GenerateReport& report) {
  const rc::Shrinkable<Draft> root = draw(report.seed, sequence);
  const std::optional<Scenario> s = legalise(root.value(), report.seed, sequence);
  if (!s) {
    report.empty++;
    return;
  }
  Judgement j = judge.run(*s, 1);
  report.sequences++;
  report.steps += s->steps.size();
  report.observables += j.observables;
  // A difference counts only if the real kernel logs the same every time.
  if (j.verdict == Verdict::differ) {
    j = judge.run(*s, options.confirm_runs);
    if (j.verdict == Verdict::match) j.verdict = Verdict::unstable;
  }
  switch (j.verdict) {
    case Verdict::match: report.matched++; break;
    case Verdict::foreign: report.foreign++; break;
    case Verdict::not_permitted: report.not_permitted++; break;
    case Verdict::unstable: report.unstable++; break;
    case Verdict::differ: record_difference(root, *s, j, sequence, judge, options, report); break;
  }
}

}  // namespace

std::optional<Scenario> generated_scenario(std::uint64_t seed, std::uint64_t sequence) {
  return legalise(draw(seed, sequence).value(), seed, sequence);
}

}  // namespace ringsim::conformance

namespace ringsim::conformance {

std::string scenario_source(const Scenario& s) {
  std::vector<std::string> events, steps;
  for (const EventSpec& e : s.events) events.push_back(event_source(e));
  for (const Step& st : s.steps) steps.push_back(step_source(st));
  constexpr std::size_t kIndent = 17, kWidth = 118;
  std::string out = "  out.push_back({.name = " + quoted(s.name) + ",\n";
  out += std::string(kIndent, ' ') + ".rows = " + quoted(s.rows) + ",\n";
  out += std::string(kIndent, ' ') + ".summary = " + quoted(s.summary) + ",\n";
  out += std::string(kIndent, ' ') + ".events = {" + wrapped(events, kIndent + 11, kWidth) + "},\n";
  out += std::string(kIndent, ' ') + ".steps = {" + wrapped(steps, kIndent + 10, kWidth) + "}";
  if (!s.poll_after_each_step) out += ",\n" + std::string(kIndent, ' ') + ".poll_after_each_step = false";
  return out + "});\n";
}

GenerateReport generate(std::uint64_t count, std::uint64_t seed, Backend& real, Backend& sim,
                        const GenerateOptions& options) {
  GenerateReport report;
  report.seed = seed;
  Judge judge(real, sim);
  const Clock::time_point start = Clock::now();
  for (std::uint64_t i = 0; i < count; i++) {
    run_sequence(options.first + i, judge, options, report);
    if (options.differences_max > 0 && report.differences.size() >= options.differences_max) break;
    if (options.progress_every > 0 && (i + 1) % options.progress_every == 0) {
      std::fprintf(stderr, "generate: %llu of %llu sequences, %zu differences, %.0f s\n",
                   static_cast<unsigned long long>(i + 1), static_cast<unsigned long long>(count),
                   report.differences.size(), seconds_since(start));
    }
  }
  report.seconds = seconds_since(start);
  return report;
}

std::string format(const GenerateReport& r) {
  std::ostringstream out;
  out << "seed " << r.seed << ": " << r.sequences << " sequences run, " << r.steps << " steps, " << r.observables
      << " observables compared\n";
  out << "  " << r.matched << " matched, " << r.differences.size() << " differed; discarded: " << r.foreign
      << " foreign, " << r.not_permitted << " not permitted, " << r.unstable << " unstable; " << r.empty
      << " drew no event that could be opened (not run)\n";
  char line[96];
  std::snprintf(line, sizeof line, "  %.1f s, %.1f sequences a second\n", r.seconds,
                r.seconds > 0 ? static_cast<double>(r.sequences) / r.seconds : 0.0);
  out << line;
  for (std::size_t i = 0; i < r.differences.size(); i++) {
    const GeneratedDifference& d = r.differences[i];
    out << "\ndifference " << i + 1 << " of " << r.differences.size() << ": sequence " << d.sequence
        << " (replay: --generate 1 --seed " << r.seed << " --first " << d.sequence << "), " << d.steps
        << " steps shrunk to " << d.shrunk_steps << " in " << d.shrink_runs << " runs"
        << (d.confirmed ? "" : " (the shrunk scenario did not differ in every confirming run)") << "\n";
    out << "  first difference: " << d.first_difference << "\n" << d.source;
  }
  return out.str();
}

}  // namespace ringsim::conformance
