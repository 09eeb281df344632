#include "sim/chrome_trace.h"

#include <linux/perf_event.h>

#include <map>
#include <string>

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

}  // namespace

nlohmann::json chrome_trace(const std::vector<TraceEvent>& events, const RunConfig& config) {
  nlohmann::json out = nlohmann::json::array();
  out.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", kPid}, {"args", {{"name", "ringsim run seed " + std::to_string(config.seed)}}}});
  for (std::uint32_t cpu = 0; cpu < config.cpus; cpu++) out.push_back(thread_name(producer_tid(cpu), "producer " + std::to_string(cpu)));
  out.push_back(thread_name(kConsumerTid, "consumer"));
  out.push_back(thread_name(kDiskTid, "disk"));
  const std::uint32_t slots = config.output == Output::aio ? config.cpus * config.cblocks : 0;
  for (std::uint32_t s = 0; s < slots; s++) {
    out.push_back(thread_name(cblock_tid(s), "cblock " + std::to_string(s) + " (cpu " +
                                                 std::to_string(s / config.cblocks) + ")"));
  }
  std::vector<std::uint64_t> head(config.cpus, 0), tail(config.cpus, 0);
  std::map<std::uint64_t, TraceEvent> submitted;  // by slot
  std::uint64_t in_flight = 0;
  for (const TraceEvent& e : events) {
    switch (e.kind) {
      case TraceKind::record_written:
        VERIFY(e.a < config.cpus);
        head[e.a] = e.c;
        if (config.mode == core::RingMode::normal) {
          out.push_back(counter("ring fill cpu " + std::to_string(e.a), e.time_ns, head[e.a] - tail[e.a]));
        }
        break;
      case TraceKind::record_dropped:
        out.push_back(instant("drop", producer_tid(e.a), e.time_ns, {{"size", e.b}}));
        break;
      case TraceKind::lost_emitted:
        out.push_back(instant("PERF_RECORD_LOST", producer_tid(e.a), e.time_ns, {{"lost", e.b}}));
        break;
      case TraceKind::wakeup:
        out.push_back(instant("wakeup", producer_tid(e.a), e.time_ns));
        break;
      case TraceKind::hangup:
        out.push_back(instant("event exits (POLLHUP)", producer_tid(e.a), e.time_ns));
        break;
      case TraceKind::tail_stored:
        if (e.a < config.cpus) {
          tail[e.a] = e.b;
          out.push_back(counter("ring fill cpu " + std::to_string(e.a), e.time_ns, head[e.a] - tail[e.a]));
        }
        break;
      case TraceKind::committed:
        out.push_back(instant("commit cpu " + std::to_string(e.a), kConsumerTid, e.time_ns,
                              {{"bytes", e.b}, {"records", e.c}}));
        break;
      case TraceKind::gap:
        out.push_back(instant("overwrite gap cpu " + std::to_string(e.a), kConsumerTid, e.time_ns,
                              {{"begin", e.b}, {"end", e.c}}));
        break;
      case TraceKind::corrupt:
        out.push_back(instant("corrupt ring cpu " + std::to_string(e.a), kConsumerTid, e.time_ns, {{"at", e.b}}));
        break;
      case TraceKind::released:
        out.push_back(instant("release cpu " + std::to_string(e.a), kConsumerTid, e.time_ns));
        break;
      case TraceKind::aio_submit:
        submitted[e.a] = e;
        out.push_back(counter("writes in flight", e.time_ns, ++in_flight));
        break;
      case TraceKind::aio_complete: {
        const auto it = submitted.find(e.a);
        VERIFY_MSG(it != submitted.end(), "completion without a submit in the trace");
        const std::int64_t result = static_cast<std::int64_t>(e.b);
        out.push_back(slice("write", cblock_tid(e.a), it->second.time_ns, e.time_ns,
                            {{"offset", it->second.b}, {"bytes", it->second.c}, {"result", result}}));
        submitted.erase(it);
        VERIFY(in_flight > 0);
        out.push_back(counter("writes in flight", e.time_ns, --in_flight));
        break;
      }
      case TraceKind::sync_write:
        out.push_back(slice("pwrite", kDiskTid, e.time_ns - e.c, e.time_ns, {{"offset", e.a}, {"bytes", e.b}}));
        break;
      case TraceKind::fault: {
        const int tid = static_cast<FaultCode>(e.a) == FaultCode::poll_eintr ? kConsumerTid : kDiskTid;
        out.push_back(instant(std::string("fault: ") + to_string(static_cast<FaultCode>(e.a)), tid, e.time_ns,
                              {{"code", e.a}, {"arg1", e.b}, {"arg2", e.c}}));
        break;
      }
      case TraceKind::file_opened:
        out.push_back(instant("open output " + std::to_string(e.a), kDiskTid, e.time_ns));
        break;
      case TraceKind::file_closed:
        out.push_back(instant("close output " + std::to_string(e.a), kDiskTid, e.time_ns));
        break;
      case TraceKind::aux_end: {
        std::string name = "PERF_RECORD_AUX";
        if (e.c & PERF_AUX_FLAG_TRUNCATED) name += " TRUNCATED";
        if (e.c & PERF_AUX_FLAG_PARTIAL) name += " PARTIAL";
        out.push_back(instant(name, producer_tid(e.a), e.time_ns, {{"aux_head", e.b}, {"flags", e.c}}));
        out.push_back(counter("aux_head cpu " + std::to_string(e.a), e.time_ns, e.b));
        break;
      }
      case TraceKind::aux_wakeup:
        out.push_back(instant("AUX wakeup", producer_tid(e.a), e.time_ns, {{"aux_head", e.b}}));
        break;
      case TraceKind::aux_copied:
        out.push_back(instant("AUX copy cpu " + std::to_string(e.a), kConsumerTid, e.time_ns,
                              {{"position", e.b}, {"bytes", e.c}}));
        break;
      case TraceKind::cancelled:
        out.push_back(instant("run cancelled", kConsumerTid, e.time_ns));
        break;
      default:
        break;  // scheduling details: in the hash, not in the picture
    }
  }
  return nlohmann::json{{"traceEvents", std::move(out)}, {"displayTimeUnit", "ns"},
                        {"otherData", {{"config", describe(config)}}}};
}

}  // namespace ringsim::sim
