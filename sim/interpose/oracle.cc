#include "sim/interpose/oracle.h"

#include <linux/perf_event.h>
#include <signal.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/perf_data_file.h"
#include "model/records.h"

namespace ringsim::sim::interpose {
namespace {

constexpr std::uint32_t kUserTypesFrom = 64;  // perf's own record types (PERF_RECORD_USER_TYPE_START)

std::string_view key(std::span<const std::byte> b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

struct FileRecords {
  std::vector<std::byte> raw;  // the bytes (raw format)
  model::PerfDataFile perf;    // the file (perf format)
  std::vector<std::span<const std::byte>> records;
  std::vector<bool> candidate;  // carries a kernel id and a time (could be ours)
};

std::string read_file(const std::string& path, std::vector<std::byte>& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot open " + path;
  const std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  out.resize(s.size());
  std::memcpy(out.data(), s.data(), s.size());
  return "";
}

}  // namespace

// The verdicts from how the target ended and what the kernel noted; none
// when its file is to be judged.
std::optional<Verdict> judge_end(const RunLog& log, const TargetEnd& end) {
  if (!log.refused.empty()) return Verdict{"refused", log.refused.front()};
  if (end.timed_out) return Verdict{"liveness", "the target did not exit before the real-time limit"};
  for (const std::string& f : log.findings) {
    if (f.rfind("liveness", 0) == 0) return Verdict{"liveness", f};
  }
  if (!end.exited) {
    const bool sent = (end.signal == SIGINT && log.sigint) || end.signal == SIGTERM;
    if (!sent) return Verdict{"crash", std::string("killed by signal ") + std::to_string(end.signal) + " (" +
                                    strsignal(end.signal) + ")"};
    // Killed by the SIGINT it had no handler for: nothing to judge in its
    // file. With a handler, it finished and re-raised it (perf does).
    if (end.signal != SIGINT || !log.sigint_handled) return Verdict{};
  }
  for (const std::string& f : log.findings) {
    if (f.rfind("tail", 0) == 0) return Verdict{"tail", f};
    if (f.rfind("replay diverged", 0) == 0) return Verdict{"replay", f};
  }
  const bool hard_error = log.disk.hard_errors() > 0;
  if (end.exited && end.code != 0) {
    if (!hard_error) {
      return Verdict{"failure", "exit status " + std::to_string(end.code) + " with no hard error injected (" +
                             std::to_string(log.disk.short_writes) + " short writes, " +
                             std::to_string(log.disk.eintr) + " EINTR, " + std::to_string(log.disk.eagain) +
                             " EAGAIN, " + std::to_string(log.disk.aio_short) + " short AIO writes)"};
    }
    return Verdict{};
  }
  // Exit 0 after a hard error: it says it succeeded, so the file must
  // hold everything all the same (judged below).

  return std::nullopt;
}

// The records of the target's file ("" or the problem); `candidate`
// marks those that carry a kernel event id and a time.
std::string read_records(const RunLog& log, const std::string& output, OutputFormat format, FileRecords& file) {
  std::set<std::uint64_t> ids;
  for (const LoggedEvent& e : log.events) ids.insert(e.id);
  if (format == OutputFormat::perf) {
    const std::string problem = model::read_perf_data(output, file.perf);
    if (!problem.empty()) return problem;
    const std::string walk = file.perf.for_each_record([&](const model::PerfRecord& rec) {
      file.records.push_back(rec.bytes);
      std::uint64_t id = 0, time = 0;
      const bool ours = rec.type < kUserTypesFrom && file.perf.id_of(rec, id) && ids.count(id) > 0 &&
                        file.perf.time_of(rec, time) && time != 0;
      file.candidate.push_back(ours);
    });
    if (!walk.empty()) return walk;
  } else {
    const std::string problem = read_file(output, file.raw);
    if (!problem.empty()) return problem;
    const std::string walk = model::walk_records(file.raw, [&](const model::PerfRecord& rec) {
      file.records.push_back(rec.bytes);
      file.candidate.push_back(true);
    });
    if (!walk.empty()) return walk;
  }
  return "";
}

// Every kernel record once in the file, in ring order; nothing else that
// claims to be the kernel's.
Verdict match_records(const RunLog& log, const FileRecords& file, OracleStats& stats) {
  std::unordered_map<std::string_view, std::vector<std::size_t>> where;  // bytes -> file indices
  for (std::size_t i = 0; i < file.records.size(); i++) where[key(file.records[i])].push_back(i);
  std::set<std::size_t> matched;
  Verdict missing, order, torn;
  const auto note = [&](const std::string& property, const std::string& detail) {
    Verdict& v = property == "order" ? order : missing;
    if (v.property.empty()) v = {property, detail};
  };
  for (std::size_t ri = 0; ri < log.rings.size(); ri++) {
    const LoggedRing& r = log.rings[ri];
    std::size_t last_index = 0;
    bool any = false;
    for (const LoggedRecord& rec : r.records) {
      const auto it = where.find(key(rec.bytes));
      const std::size_t copies = it == where.end() ? 0 : it->second.size();
      if (copies > 1) {
        note("exactly_once", "ring " + std::to_string(ri) + ": the record at position " +
                                 std::to_string(rec.position) + " (type " + std::to_string(rec.type) +
                                 ") is in the file " + std::to_string(copies) + " times");
      }
      if (copies == 0) {
        if (r.writable) {
          const bool consumed = rec.position + rec.bytes.size() <= r.tail;
          note("exactly_once",
               "ring " + std::to_string(ri) + ": the record at position " + std::to_string(rec.position) +
                   " (type " + std::to_string(rec.type) + ", " + std::to_string(rec.bytes.size()) + " bytes) is " +
                   (consumed ? "consumed (below the final data_tail " + std::to_string(r.tail) +
                                   ") but not in the file"
                             : "never read (data_tail stayed at " + std::to_string(r.tail) + ", data_head " +
                                   std::to_string(r.head) + ")"));
        }
        continue;
      }
      stats.found++;
      const std::size_t at = it->second.front();
      matched.insert(at);
      if (any && at < last_index) {
        note("order", "ring " + std::to_string(ri) + ": the record at position " + std::to_string(rec.position) +
                          " is in the file before one written ahead of it");
      }
      last_index = at;
      any = true;
    }
  }
  for (std::size_t i = 0; i < file.records.size(); i++) {
    if (matched.count(i) > 0) continue;
    if (!file.candidate[i]) {
      stats.synthesized++;
      continue;
    }
    perf_event_header h{};
    std::memcpy(&h, file.records[i].data(), sizeof h);
    // A candidate that matches nothing: a record torn by a reuse of its
    // space, or assembled from pieces.
    torn = {"torn", "file record " + std::to_string(i) + " (type " + std::to_string(h.type) + ", " +
                        std::to_string(h.size) + " bytes) is none of the records the kernel wrote"};
    break;
  }
  if (!torn.property.empty()) return torn;
  if (!missing.property.empty()) return missing;
  return order;
}

Verdict judge(const RunLog& log, const std::string& output, OutputFormat format, const TargetEnd& end,
              OracleStats& stats) {
  for (const LoggedRing& r : log.rings) {
    stats.kernel_records += r.records.size();
    stats.dropped += r.dropped;
    stats.lost_reported += r.lost_reported;
    stats.unreported += r.dropped_unreported;
  }
  if (const std::optional<Verdict> v = judge_end(log, end)) return *v;
  FileRecords file;
  if (const std::string problem = read_records(log, output, format, file); !problem.empty()) {
    return {"file_valid", problem};
  }
  stats.file_records = file.records.size();
  return match_records(log, file, stats);
}

}  // namespace ringsim::sim::interpose
