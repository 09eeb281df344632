#include "model/sampling.h"

#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

namespace ringsim::model {
namespace {

// One sampling event as the model sees it.
struct ModelEvent {
  std::uint64_t period = 1;        // the period in force (hwc->sample_period)
  std::uint64_t reported = 1;      // what the next sample says (hwc->last_period)
  std::uint64_t countdown = 1;     // occurrences until the next sample
  std::optional<std::uint64_t> last_sample_ns;
};

struct Expected {
  bool sampled = false;
  std::uint64_t period = 0;
};

std::uint64_t read_u(const std::vector<std::byte>& bytes, std::uint64_t at, std::size_t n) {
  std::uint64_t v = 0;
  std::memcpy(&v, bytes.data() + at, n);
  return v;
}

class Replay {
 public:
  explicit Replay(const SamplingLog& s) : s_(s) {}

  ModelEvent armed() const {
    ModelEvent e;
    e.period = s_.sample_freq > 0 ? 1 : s_.sample_period;
    e.reported = e.period;
    e.countdown = e.period;
    return e;
  }

  Expected next(ModelEvent& e, std::uint64_t clock_ns) const {
    const bool freq = s_.sample_freq > 0;
    if (!freq && s_.period_field) return {true, 1};
    if (!freq && e.period == 1) return {true, e.reported};
    const std::uint64_t reported = e.reported;
    e.countdown--;
    if (e.countdown > 0) return {false, 0};
    e.countdown = e.reported;  // re-armed with the period of this sample
    e.reported = e.period;     // the period chosen since, from the next one
    if (freq) adapt(e, clock_ns);
    return {true, reported};
  }

 private:
  void adapt(ModelEvent& e, std::uint64_t clock_ns) const {
    const std::optional<std::uint64_t> previous = e.last_sample_ns;
    e.last_sample_ns = clock_ns;
    if (!previous || clock_ns <= *previous || clock_ns - *previous >= 2 * kModelTickNs) return;
    const unsigned __int128 ns = clock_ns - *previous;
    const unsigned __int128 target =
        static_cast<unsigned __int128>(e.reported) * 1'000'000'000u / (ns * s_.sample_freq);
    const __int128 diff = static_cast<__int128>(target) - static_cast<__int128>(e.period);
    const __int128 step = (diff >= 0 ? diff + 7 : diff - 7) / 8;
    const __int128 period = static_cast<__int128>(e.period) + step;
    e.period = period < 1 ? 1 : static_cast<std::uint64_t>(period);
  }

  const SamplingLog& s_;
};

// One CPU's log against the rules.
class CpuCheck {
 public:
  CpuCheck(const SamplingLog& s, const Replay& replay, const CpuLog& c, std::size_t cpu, std::vector<Violation>& out)
      : s_(s), replay_(replay), c_(c), cpu_(cpu), out_(out) {}

  void run() {
    replay_samples();
    for (std::size_t event = 0; event < c_.unsampled_after.size(); event++) {
      skip(model(static_cast<std::uint32_t>(event)), c_.unsampled_after[event],
           [&] { return "event " + std::to_string(event) + " after its last sample"; });
    }
    if (sampled_ != c_.samples_attempted) {
      fail(std::to_string(sampled_) + " occurrences sampled but " + std::to_string(c_.samples_attempted) +
           " samples made");
    }
    for (const WrittenRecord& r : c_.written) {
      if (r.type == 9 /* PERF_RECORD_SAMPLE */) check_record(r);
    }
  }

 private:
  void fail(const std::string& what) {
    if (out_.size() < 8) out_.push_back(Violation{kSamplingPeriods, "cpu " + std::to_string(cpu_) + ": " + what});
  }
  ModelEvent& model(std::uint32_t event) { return events_.try_emplace(event, replay_.armed()).first->second; }

  // The occurrences the kernel did not sample must not be samples by the
  // rules: `unsampled` of them (their times do not matter). `where` names
  // the place, built only for a failure (it runs once per sample).
  template <typename Where>
  bool skip(ModelEvent& e, std::uint64_t unsampled, const Where& where) {
    for (std::uint64_t n = 0; n < unsampled; n++) {
      if (replay_.next(e, 0).sampled) {
        fail(where() + ": the " + std::to_string(n + 1) + "-th unsampled occurrence before it should be sampled");
        return false;
      }
    }
    return true;
  }

  void replay_samples() {
    for (std::size_t k = 0; k < c_.hits.size(); k++) {
      const SampleHit& h = c_.hits[k];
      if (h.event >= s_.period_offsets.size()) {
        fail("sample " + std::to_string(k) + " of an unknown event " + std::to_string(h.event));
        continue;
      }
      ModelEvent& e = model(h.event);
      ids_of(h.id).event = h.event;
      const auto where = [&] { return "event " + std::to_string(h.event) + " sample " + std::to_string(k); };
      if (!skip(e, h.unsampled, where)) continue;
      const Expected want = replay_.next(e, h.clock_ns);
      if (!want.sampled || h.samples != 1) {
        fail(where() + ": " + (want.sampled ? "" : "should not be sampled, ") + "the kernel took " +
             std::to_string(h.samples) + " samples");
        continue;
      }
      if (want.period != h.period) {
        fail(where() + ": PERIOD " + std::to_string(h.period) + ", the rules say " + std::to_string(want.period));
      }
      const std::uint64_t sequence = sequences_[h.event]++;
      if (h.sequence != sequence) {
        fail(where() + ": the sample's sequence " + std::to_string(h.sequence) + ", expected " + std::to_string(sequence));
      }
      set_period(ids_of(h.id), h.sequence, want.period);
      sampled_++;
    }
  }

  // A sample the ring holds: one of those, its PERIOD field as the rules say.
  void check_record(const WrittenRecord& r) {
    const auto at = [&] { return "the sample at " + std::to_string(r.position); };
    const IdPeriods* idx = find_id(r.event);
    if (idx == nullptr) {
      fail(at() + " of event id " + std::to_string(r.event) + " that had no occurrence");
      return;
    }
    const std::uint32_t seq_at = s_.sequence_offsets[idx->event];
    const std::uint32_t period_at = s_.period_offsets[idx->event];
    if (seq_at + 4 > r.size || period_at + 8 > r.size) {
      fail(at() + " is too small for its fields");
      return;
    }
    const std::uint64_t sequence = read_u(c_.bytes, r.offset + seq_at, 4);
    std::uint64_t want = 0;
    if (!period_of(*idx, sequence, want)) {
      fail(at() + " (sequence " + std::to_string(sequence) + ") is no sampled occurrence's");
      return;
    }
    if (period_at == 0) return;
    const std::uint64_t period = read_u(c_.bytes, r.offset + period_at, 8);
    if (period != want) {
      fail(at() + " says PERIOD " + std::to_string(period) + ", the rules say " + std::to_string(want));
    }
  }

  // An event id's sampled occurrences: its event, and the PERIOD each
  // sequence's sample must carry. The kernel numbers an event's samples 0,
  // 1, 2, ...: a vector by sequence, any other sequence (a failing run's)
  // in a map.
  struct IdPeriods {
    std::uint64_t id = 0;
    std::uint32_t event = 0;
    std::vector<std::uint64_t> by_sequence;
    std::map<std::uint64_t, std::uint64_t> others;
  };
  // A list: a CPU's events have a few ids (at most one per hit).
  IdPeriods& ids_of(std::uint64_t id) {
    for (IdPeriods& p : periods_) {
      if (p.id == id) return p;
    }
    periods_.push_back(IdPeriods{.id = id});
    periods_.back().by_sequence.reserve(c_.hits.size());
    return periods_.back();
  }
  const IdPeriods* find_id(std::uint64_t id) const {
    for (const IdPeriods& p : periods_) {
      if (p.id == id) return &p;
    }
    return nullptr;
  }
  static void set_period(IdPeriods& p, std::uint64_t sequence, std::uint64_t period) {
    if (sequence < p.by_sequence.size()) {
      p.by_sequence[sequence] = period;
    } else if (sequence == p.by_sequence.size() && p.others.empty()) {
      p.by_sequence.push_back(period);
    } else {
      p.others[sequence] = period;
    }
  }
  static bool period_of(const IdPeriods& p, std::uint64_t sequence, std::uint64_t& period) {
    if (sequence < p.by_sequence.size()) {
      period = p.by_sequence[sequence];
      return true;
    }
    const auto it = p.others.find(sequence);
    if (it == p.others.end()) return false;
    period = it->second;
    return true;
  }

  const SamplingLog& s_;
  const Replay& replay_;
  const CpuLog& c_;
  const std::size_t cpu_;
  std::vector<Violation>& out_;
  std::map<std::uint32_t, ModelEvent> events_;
  // (event id, sequence) -> the PERIOD its sample must carry: one lookup
  // per sample in the ring, one entry per sampled occurrence.
  std::vector<IdPeriods> periods_;
  std::map<std::uint32_t, std::uint64_t> sequences_;
  std::uint64_t sampled_ = 0;
};

}  // namespace

std::vector<Violation> check_sampling(const KernelLog& log) {
  std::vector<Violation> out;
  const SamplingLog& s = log.sampling;
  if (s.sample_freq == 0 && s.sample_period == 0) return out;  // counting only: no samples
  const Replay replay(s);
  for (std::size_t cpu = 0; cpu < log.cpus.size(); cpu++) CpuCheck(s, replay, log.cpus[cpu], cpu, out).run();
  return out;
}

}  // namespace ringsim::model
