#include "sim/chrome_trace.h"

#include <linux/perf_event.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "core/verify.h"
#include "sim/params.h"

namespace ringsim::sim {
namespace {

constexpr int kPid = 1;
constexpr int kConsumerTid = 100;
constexpr int kDiskTid = 300;
int producer_tid(std::uint64_t cpu) { return 1 + static_cast<int>(cpu); }
int cblock_tid(std::uint64_t slot) { return 200 + static_cast<int>(slot); }

double us(std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; }

nlohmann::json instant(const std::string& name, int tid, std::uint64_t ns, nlohmann::json args = nullptr) {
  nlohmann::json e = {{"name", name}, {"ph", "i"}, {"s", "t"}, {"pid", kPid}, {"tid", tid}, {"ts", us(ns)}};
  if (!args.is_null()) e["args"] = std::move(args);
  return e;
}

nlohmann::json slice(const std::string& name, int tid, std::uint64_t begin_ns, std::uint64_t end_ns,
                     nlohmann::json args) {
  return {{"name", name}, {"ph", "X"},          {"pid", kPid}, {"tid", tid},
          {"ts", us(begin_ns)}, {"dur", us(end_ns - begin_ns)}, {"args", std::move(args)}};
}

nlohmann::json counter(const std::string& name, std::uint64_t ns, std::uint64_t value) {
  return {{"name", name}, {"ph", "C"}, {"pid", kPid}, {"ts", us(ns)}, {"args", {{"value", value}}}};
}

nlohmann::json thread_name(int tid, const std::string& name) {
  return {{"name", "thread_name"}, {"ph", "M"}, {"pid", kPid}, {"tid", tid}, {"args", {{"name", name}}}};
}

// Turns the run's trace events into Chrome trace events, keeping what a
// picture needs: ring fill levels, writes in flight, and the rest as
// instants.
class Converter {
 public:
  explicit Converter(const RunConfig& config)
      : config_(config), head_(config.cpus, 0), tail_(config.cpus, 0) {}

  void metadata() {
    out_.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", kPid},
                    {"args", {{"name", "ringsim run seed " + std::to_string(config_.seed)}}}});
    for (std::uint32_t cpu = 0; cpu < config_.cpus; cpu++) {
      out_.push_back(thread_name(producer_tid(cpu), "producer " + std::to_string(cpu)));
    }
    out_.push_back(thread_name(kConsumerTid, "consumer"));
    out_.push_back(thread_name(kDiskTid, "disk"));
    const std::uint32_t slots = config_.output == Output::aio ? config_.cpus * config_.cblocks : 0;
    for (std::uint32_t s = 0; s < slots; s++) {
      out_.push_back(thread_name(cblock_tid(s), "cblock " + std::to_string(s) + " (cpu " +
                                                     std::to_string(s / config_.cblocks) + ")"));
    }
  }

  // Scheduling details (switches, timers, decisions) are in the hash, not
  // in the picture.
  void add(const TraceEvent& e) {
    if (!ring_event(e) && !consumer_event(e) && !disk_event(e)) aux_event(e);
  }

  nlohmann::json finish() && {
    return nlohmann::json{{"traceEvents", std::move(out_)}, {"displayTimeUnit", "ns"},
                          {"otherData", {{"config", describe(config_)}}}};
  }

 private:
  void fill(std::uint64_t cpu, std::uint64_t time_ns) {
    out_.push_back(counter("ring fill cpu " + std::to_string(cpu), time_ns, head_[cpu] - tail_[cpu]));
  }

  bool ring_event(const TraceEvent& e) {
    switch (e.kind) {
      case TraceKind::record_written:
        VERIFY(e.a < config_.cpus);
        head_[e.a] = e.c;
        if (config_.mode == core::RingMode::normal) fill(e.a, e.time_ns);
        return true;
      case TraceKind::record_dropped:
        out_.push_back(instant("drop", producer_tid(e.a), e.time_ns, {{"size", e.b}}));
        return true;
      case TraceKind::lost_emitted:
        out_.push_back(instant("PERF_RECORD_LOST", producer_tid(e.a), e.time_ns, {{"lost", e.b}}));
        return true;
      case TraceKind::wakeup:
        out_.push_back(instant("wakeup", producer_tid(e.a), e.time_ns));
        return true;
      case TraceKind::hangup:
        out_.push_back(instant("event exits (POLLHUP)", producer_tid(e.a), e.time_ns));
        return true;
      case TraceKind::tail_stored:
        if (e.a < config_.cpus) {
          tail_[e.a] = e.b;
          fill(e.a, e.time_ns);
        }
        return true;
      default:
        return false;
    }
  }

  bool consumer_event(const TraceEvent& e) {
    const std::string cpu = std::to_string(e.a);
    switch (e.kind) {
      case TraceKind::committed:
        out_.push_back(instant("commit cpu " + cpu, kConsumerTid, e.time_ns, {{"bytes", e.b}, {"records", e.c}}));
        return true;
      case TraceKind::gap:
        out_.push_back(instant("overwrite gap cpu " + cpu, kConsumerTid, e.time_ns, {{"begin", e.b}, {"end", e.c}}));
        return true;
      case TraceKind::corrupt:
        out_.push_back(instant("corrupt ring cpu " + cpu, kConsumerTid, e.time_ns, {{"at", e.b}}));
        return true;
      case TraceKind::released:
        out_.push_back(instant("release cpu " + cpu, kConsumerTid, e.time_ns));
        return true;
      case TraceKind::cancelled:
        out_.push_back(instant("run cancelled", kConsumerTid, e.time_ns));
        return true;
      default:
        return false;
    }
  }

  void aio_complete(const TraceEvent& e) {
    const auto it = submitted_.find(e.a);
    VERIFY_MSG(it != submitted_.end(), "completion without a submit in the trace");
    const std::int64_t result = static_cast<std::int64_t>(e.b);
    out_.push_back(slice("write", cblock_tid(e.a), it->second.time_ns, e.time_ns,
                         {{"offset", it->second.b}, {"bytes", it->second.c}, {"result", result}}));
    submitted_.erase(it);
    VERIFY(in_flight_ > 0);
    out_.push_back(counter("writes in flight", e.time_ns, --in_flight_));
  }

  bool disk_event(const TraceEvent& e) {
    switch (e.kind) {
      case TraceKind::aio_submit:
        submitted_[e.a] = e;
        out_.push_back(counter("writes in flight", e.time_ns, ++in_flight_));
        return true;
      case TraceKind::aio_complete:
        aio_complete(e);
        return true;
      case TraceKind::sync_write:
        out_.push_back(slice("pwrite", kDiskTid, e.time_ns - e.c, e.time_ns, {{"offset", e.a}, {"bytes", e.b}}));
        return true;
      case TraceKind::fault: {
        const int tid = static_cast<FaultCode>(e.a) == FaultCode::poll_eintr ? kConsumerTid : kDiskTid;
        out_.push_back(instant(std::string("fault: ") + to_string(static_cast<FaultCode>(e.a)), tid, e.time_ns,
                               {{"code", e.a}, {"arg1", e.b}, {"arg2", e.c}}));
        return true;
      }
      case TraceKind::file_opened:
        out_.push_back(instant("open output " + std::to_string(e.a), kDiskTid, e.time_ns));
        return true;
      case TraceKind::file_closed:
        out_.push_back(instant("close output " + std::to_string(e.a), kDiskTid, e.time_ns));
        return true;
      default:
        return false;
    }
  }

  void aux_event(const TraceEvent& e) {
    switch (e.kind) {
      case TraceKind::aux_end: {
        std::string name = "PERF_RECORD_AUX";
        if (e.c & PERF_AUX_FLAG_TRUNCATED) name += " TRUNCATED";
        if (e.c & PERF_AUX_FLAG_PARTIAL) name += " PARTIAL";
        out_.push_back(instant(name, producer_tid(e.a), e.time_ns, {{"aux_head", e.b}, {"flags", e.c}}));
        out_.push_back(counter("aux_head cpu " + std::to_string(e.a), e.time_ns, e.b));
        break;
      }
      case TraceKind::aux_wakeup:
        out_.push_back(instant("AUX wakeup", producer_tid(e.a), e.time_ns, {{"aux_head", e.b}}));
        break;
      case TraceKind::aux_copied:
        out_.push_back(instant("AUX copy cpu " + std::to_string(e.a), kConsumerTid, e.time_ns,
                               {{"position", e.b}, {"bytes", e.c}}));
        break;
      default:
        break;
    }
  }

  const RunConfig& config_;
  nlohmann::json out_ = nlohmann::json::array();
  std::vector<std::uint64_t> head_, tail_;
  std::map<std::uint64_t, TraceEvent> submitted_;  // by slot
  std::uint64_t in_flight_ = 0;
};

}  // namespace

nlohmann::json chrome_trace(const std::vector<TraceEvent>& events, const RunConfig& config) {
  Converter converter(config);
  converter.metadata();
  for (const TraceEvent& e : events) converter.add(e);
  return std::move(converter).finish();
}

}  // namespace ringsim::sim
