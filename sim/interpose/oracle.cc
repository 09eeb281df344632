#include "sim/interpose/oracle.h"

#include <linux/perf_event.h>
#include <signal.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/aux_content.h"
#include "model/perf_data_file.h"
#include "model/records.h"
#include "sim/interpose/compressed_stream.h"

namespace ringsim::sim::interpose {
namespace {

constexpr std::uint32_t kUserTypesFrom = 64;  // perf's own record types (PERF_RECORD_USER_TYPE_START)

std::string_view key(std::span<const std::byte> b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

// The records of the target's files, in order, as one stream.
struct FileRecords {
  std::vector<std::unique_ptr<std::vector<std::byte>>> raw;  // each file's bytes (raw format)
  std::vector<std::unique_ptr<model::PerfDataFile>> perf;    // each file (perf format)
  std::vector<std::span<const std::byte>> records;
  std::vector<bool> candidate;   // carries a kernel id and a time (could be ours)
  std::vector<std::size_t> file;  // the file each record is in
  // Files from this index on are numbered ones (OUTPUT.N: ringsim-record
  // --switch-output), which start with copies of the side-band records
  // (COMM, MMAP, MMAP2, FORK) of earlier files so that each is read on its
  // own (real/recorder.cc, keep_side_band).
  std::size_t carries_from = SIZE_MAX;
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

// The files a run wrote, in order: the names the target renamed its output
// to (perf record --switch-output), then the output itself if it is still
// there, then the numbered files it opened (ringsim-record --switch-output:
// OUTPUT.1, OUTPUT.2, ..., or the names --timestamp-filename gave them);
// a name the output was renamed to twice is one file, at its last place
// (the earlier file is gone).
std::vector<std::string> output_files(const RunLog& log, const std::string& output) {
  std::vector<std::string> files;
  for (std::size_t i = 0; i < log.renamed.size(); i++) {
    bool again = false;
    for (std::size_t k = i + 1; k < log.renamed.size(); k++) again |= log.renamed[k] == log.renamed[i];
    if (!again) files.push_back(log.renamed[i]);
  }
  std::error_code ec;
  if (files.empty() || std::filesystem::exists(output, ec)) files.push_back(output);
  files.insert(files.end(), log.numbered.begin(), log.numbered.end());
  // A file the target removed (--switch-max-files) is judged in its place
  // from the copy the shim kept.
  for (const RunLog::Removed& r : log.removed) {
    const auto at = std::find(files.begin(), files.end(), r.path);
    if (at != files.end()) *at = r.kept;
  }
  return files;
}

// The records of one of the target's files ("" or the problem), appended
// to `file`; `ids` are the kernel's event ids.
std::string read_one(const std::string& path, std::size_t index, const std::set<std::uint64_t>& ids,
                     OutputFormat format, FileRecords& file) {
  if (format == OutputFormat::perf) {
    file.perf.push_back(std::make_unique<model::PerfDataFile>());
    const model::PerfDataFile& f = *file.perf.back();
    const std::string problem = model::read_perf_data(path, *file.perf.back());
    if (!problem.empty()) return problem;
    const auto take = [&](const model::PerfRecord& rec) {
      file.records.push_back(rec.bytes);
      file.file.push_back(index);
      std::uint64_t id = 0, time = 0;
      const bool ours = rec.type < kUserTypesFrom && f.id_of(rec, id) && ids.count(id) > 0 && f.time_of(rec, time) &&
                        time != 0;
      file.candidate.push_back(ours);
    };
    CompressedStream compressed;  // perf record -z
    std::string inside;
    const std::string walk = f.for_each_record([&](const model::PerfRecord& rec) {
      if (!inside.empty()) return;
      if (rec.type == model::kTypeCompressed) {
        inside = compressed.add(rec, file.raw, take);
      } else {
        take(rec);
      }
    });
    if (!walk.empty()) return path + ": " + walk;
    if (inside.empty()) inside = compressed.finish();
    return inside.empty() ? "" : path + ": data section: " + inside;
  }
  file.raw.push_back(std::make_unique<std::vector<std::byte>>());
  const std::string problem = read_file(path, *file.raw.back());
  if (!problem.empty()) return problem;
  const std::string walk = model::walk_records(*file.raw.back(), [&](const model::PerfRecord& rec) {
    file.records.push_back(rec.bytes);
    file.file.push_back(index);
    file.candidate.push_back(true);
  });
  return walk.empty() ? "" : path + ": " + walk;
}

// The records of the target's files, in order, as one stream ("" or the
// first problem: each file must be valid on its own, so a record cut at a
// file boundary makes both invalid).
std::string read_records(const RunLog& log, const std::vector<std::string>& files, OutputFormat format,
                         FileRecords& file) {
  std::set<std::uint64_t> ids;
  for (const LoggedEvent& e : log.events) ids.insert(e.id);
  for (std::size_t i = 0; i < files.size(); i++) {
    const std::string problem = read_one(files[i], i, ids, format, file);
    if (!problem.empty()) return problem;
  }
  return "";
}

namespace {

using Where = std::unordered_map<std::string_view, std::vector<std::size_t>>;  // bytes -> stream indices

// The first violation of each kind, noted as the rings are matched.
struct Notes {
  Verdict missing, order, overwrite;
  void note(const std::string& property, const std::string& detail) {
    Verdict& v = property == "order" ? order : property == "overwrite" ? overwrite : missing;
    if (v.property.empty()) v = {property, detail};
  }
};

std::string at(std::size_t ri, const LoggedRecord& rec) {
  return "ring " + std::to_string(ri) + ": the record at position " + std::to_string(rec.position) + " (type " +
         std::to_string(rec.type) + ", " + std::to_string(rec.bytes.size()) + " bytes)";
}

// A writable ring: every record once, in ring order.
void match_writable(std::size_t ri, const LoggedRing& r, const Where& where, std::set<std::size_t>& matched,
                    OracleStats& stats, Notes& notes) {
  std::size_t last_index = 0;
  bool any = false;
  for (const LoggedRecord& rec : r.records) {
    const auto it = where.find(key(rec.bytes));
    const std::size_t copies = it == where.end() ? 0 : it->second.size();
    if (copies > 1) notes.note("exactly_once", at(ri, rec) + " is in the files " + std::to_string(copies) + " times");
    if (copies == 0) {
      const bool consumed = rec.position + rec.bytes.size() <= r.tail;
      notes.note("exactly_once", at(ri, rec) + " is " +
                                     (consumed ? "consumed (below the final data_tail " + std::to_string(r.tail) +
                                                     ") but in no file"
                                               : "never read (data_tail stayed at " + std::to_string(r.tail) +
                                                     ", data_head " + std::to_string(r.head) + ")"));
      continue;
    }
    stats.found++;
    const std::size_t index = it->second.front();
    matched.insert(it->second.begin(), it->second.end());  // a second copy is a duplicate, not torn
    if (any && index < last_index) {
      notes.note("order", "ring " + std::to_string(ri) + ": the record at position " + std::to_string(rec.position) +
                              " is in the files before one written ahead of it");
    }
    last_index = index;
    any = true;
  }
}

// Which pause's read each record of a read-only backward ring belongs to
// (-1: none). At each pause the reader reads, from data_head, the whole
// records written since its previous read that fit in the ring (perf:
// perf_mmap__read_init, overwrite_rb_find_range); older ones the kernel
// overwrote are lost with no LOST record, as in Linux.
std::vector<int> pause_windows(const LoggedRing& r) {
  std::vector<int> window(r.records.size(), -1);
  std::uint64_t prev = 0;  // a backward ring's data_head starts at 0 and goes down
  for (std::size_t k = 0; k < r.pauses.size(); k++) {
    const std::uint64_t head = r.pauses[k];
    const std::uint64_t limit = std::min<std::uint64_t>(prev - head, r.size_bytes);
    for (std::size_t i = 0; i < r.records.size(); i++) {
      const std::uint64_t from = r.records[i].position - head;
      if (from <= limit && r.records[i].bytes.size() <= limit - from) window[i] = static_cast<int>(k);
    }
    prev = head;
  }
  return window;
}

// A read-only backward ring its reader paused (perf --overwrite): what
// each pause's read must hold is there once, nothing else of the ring is,
// and the reads are in pause order (within one read, any order: perf
// copies it newest first).
void match_paused(std::size_t ri, const LoggedRing& r, const Where& where, std::set<std::size_t>& matched,
                  OracleStats& stats, Notes& notes) {
  const std::vector<int> window = pause_windows(r);
  std::vector<std::size_t> first(r.pauses.size(), SIZE_MAX), last(r.pauses.size(), 0);
  const std::uint64_t last_head = r.pauses.back();
  for (std::size_t i = 0; i < r.records.size(); i++) {
    const LoggedRecord& rec = r.records[i];
    const auto it = where.find(key(rec.bytes));
    const std::size_t copies = it == where.end() ? 0 : it->second.size();
    if (copies > 1) notes.note("exactly_once", at(ri, rec) + " is in the files " + std::to_string(copies) + " times");
    const int k = window[i];
    if (k < 0 && copies > 0) {
      notes.note("overwrite", at(ri, rec) + " is in the files, but was not among the newest records at any pause " +
                                  "(read while the ring ran, or after it was overwritten)");
    } else if (k >= 0 && copies == 0) {
      notes.note("exactly_once", at(ri, rec) + " was in the ring at pause " + std::to_string(k + 1) +
                                     " (data_head " + std::to_string(r.pauses[k]) + "), and is in no file");
    } else if (k < 0 && copies == 0 && rec.position < last_head) {
      // Positions of a backward ring go down: this one is newer.
      notes.note("exactly_once", at(ri, rec) + " was written after the last pause (data_head " +
                                     std::to_string(last_head) + ") and never read");
    } else if (k < 0) {
      stats.overwritten++;
    }
    if (copies == 0) continue;
    stats.found++;
    matched.insert(it->second.begin(), it->second.end());  // a second copy is a duplicate, not torn
    if (k >= 0) {
      first[k] = std::min(first[k], it->second.front());
      last[k] = std::max(last[k], it->second.front());
    }
  }
  std::size_t prev_last = 0;
  for (std::size_t k = 0; k < r.pauses.size(); k++) {
    if (first[k] == SIZE_MAX) continue;
    if (first[k] < prev_last) {
      notes.note("order", "ring " + std::to_string(ri) + ": the read at pause " + std::to_string(k + 1) +
                              " is in the files before the read of an earlier pause");
    }
    prev_last = last[k];
  }
}

// An AUX area's bytes the files hold: [from, to) of the AUX stream, from
// the AUXTRACE record at stream index `record`.
struct AuxPiece {
  std::uint64_t from = 0;
  std::uint64_t to = 0;
  std::size_t record = 0;
};

// The AUX areas' bytes: every AUXTRACE record's data is what the AUX PMU
// wrote at its offset in one of the areas (else torn), and the records of
// each area cover its bytes [0, aux_head) once each (else exactly_once).
Verdict match_aux(const RunLog& log, const FileRecords& file, std::set<std::size_t>& matched, OracleStats& stats) {
  std::vector<std::vector<AuxPiece>> pieces(log.rings.size());
  for (std::size_t i = 0; i < file.records.size(); i++) {
    const std::span<const std::byte> rec = file.records[i];
    perf_event_header h{};
    std::memcpy(&h, rec.data(), sizeof h);
    if (h.type != model::kTypeAuxtrace) continue;
    matched.insert(i);
    std::uint64_t size = 0, offset = 0;
    std::memcpy(&size, rec.data() + 8, 8);
    std::memcpy(&offset, rec.data() + 16, 8);
    const std::byte* data = rec.data() + model::kAuxtraceHeaderBytes;
    std::size_t best_ring = SIZE_MAX, best = 0;
    std::uint64_t length = size;  // of AUX bytes: the last record may end in zeros up to 8 bytes
    for (std::size_t ri = 0; ri < log.rings.size(); ri++) {
      const LoggedRing::Aux& a = log.rings[ri].aux;
      if (a.size_bytes == 0 || offset > a.head) continue;
      // A read at the end takes the last bytes and pads them with zeros
      // to a multiple of 8 (perf's PERF_AUXTRACE_RECORD_ALIGNMENT).
      const std::uint64_t real = std::min(size, a.head - offset);
      if (size - real >= 8 || std::any_of(data + real, data + size, [](std::byte b) { return b != std::byte{0}; })) {
        continue;
      }
      const std::size_t same = model::aux_mismatch(log.seed, static_cast<std::uint32_t>(a.owner_id), offset, data, real);
      if (best_ring == SIZE_MAX || same > best) {
        best_ring = ri;
        best = same;
        length = real;
      }
    }
    if (best_ring == SIZE_MAX || best < length) {
      return {"torn", "AUXTRACE record " + std::to_string(i) + " of the files (in file " +
                          std::to_string(file.file[i] + 1) + ", AUX offset " + std::to_string(offset) + ", " +
                          std::to_string(size) + " bytes): " +
                          (best_ring == SIZE_MAX ? std::string("no AUX area had written those bytes")
                                                 : "byte " + std::to_string(best) + " is not what the AUX PMU wrote " +
                                                       "at position " + std::to_string(offset + best) + " of ring " +
                                                       std::to_string(best_ring) + "'s area")};
    }
    stats.aux_found += length;
    if (length > 0) pieces[best_ring].push_back({offset, offset + length, i});
  }
  for (std::size_t ri = 0; ri < log.rings.size(); ri++) {
    const LoggedRing::Aux& a = log.rings[ri].aux;
    if (a.size_bytes == 0) continue;
    std::vector<AuxPiece>& p = pieces[ri];
    std::sort(p.begin(), p.end(), [](const AuxPiece& x, const AuxPiece& y) { return x.from < y.from; });
    std::uint64_t covered = 0;
    for (const AuxPiece& piece : p) {
      if (piece.from > covered) break;
      if (piece.from < covered) {
        return {"exactly_once", "ring " + std::to_string(ri) + ": AUX bytes [" + std::to_string(piece.from) + ", " +
                                    std::to_string(std::min(covered, piece.to)) + ") are in the files twice"};
      }
      covered = piece.to;
    }
    if (covered < a.head) {
      const std::uint64_t gap_to = std::min(a.head, [&] {
        for (const AuxPiece& piece : p) {
          if (piece.from > covered) return piece.from;
        }
        return a.head;
      }());
      return {"exactly_once", "ring " + std::to_string(ri) + ": AUX bytes [" + std::to_string(covered) + ", " +
                                  std::to_string(gap_to) + ") are in no AUXTRACE record (aux_tail ended at " +
                                  std::to_string(a.tail) + ", aux_head " + std::to_string(a.head) + ")"};
    }
  }
  return {};
}

}  // namespace

// Every kernel record once in the files, in ring order (a paused
// read-only ring: each pause's read, in order); nothing else that claims
// to be the kernel's.
Verdict match_records(const RunLog& log, const FileRecords& file, OracleStats& stats) {
  Where where;
  for (std::size_t i = 0; i < file.records.size(); i++) where[key(file.records[i])].push_back(i);
  std::set<std::size_t> matched;
  // A side-band record's copies carried into later numbered files, at most
  // one per file: not the kernel's record twice. Two copies in one file, or
  // a copy in an earlier file or in a file not numbered, still are.
  for (auto& [bytes, indices] : where) {
    if (indices.size() < 2) continue;
    perf_event_header h{};
    std::memcpy(&h, bytes.data(), sizeof h);
    if (h.type != PERF_RECORD_COMM && h.type != PERF_RECORD_MMAP && h.type != PERF_RECORD_MMAP2 &&
        h.type != PERF_RECORD_FORK) {
      continue;
    }
    std::vector<std::size_t> kept{indices.front()};
    std::set<std::size_t> files_with_a_copy;
    for (std::size_t k = 1; k < indices.size(); k++) {
      const std::size_t f = file.file[indices[k]];
      if (f >= file.carries_from && f > file.file[indices.front()] && files_with_a_copy.insert(f).second) {
        matched.insert(indices[k]);
        stats.carried++;
      } else {
        kept.push_back(indices[k]);
      }
    }
    indices = std::move(kept);
  }
  const Verdict aux = match_aux(log, file, matched, stats);
  if (aux.property == "torn") return aux;
  Notes notes;
  for (std::size_t ri = 0; ri < log.rings.size(); ri++) {
    const LoggedRing& r = log.rings[ri];
    if (r.writable) {
      match_writable(ri, r, where, matched, stats, notes);
    } else if (r.backward && !r.pauses.empty()) {
      match_paused(ri, r, where, matched, stats, notes);
    } else {
      // Read-only, never paused (or forward): what it overwrote cannot be
      // told from what was read unpaused; only duplicates count.
      for (const LoggedRecord& rec : r.records) {
        const auto it = where.find(key(rec.bytes));
        if (it == where.end()) continue;
        if (it->second.size() > 1) {
          notes.note("exactly_once", at(ri, rec) + " is in the files " + std::to_string(it->second.size()) + " times");
        }
        stats.found++;
        matched.insert(it->second.begin(), it->second.end());  // a second copy is a duplicate, not torn
      }
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
    return {"torn", "record " + std::to_string(i) + " of the files (in file " + std::to_string(file.file[i] + 1) +
                        ", type " + std::to_string(h.type) + ", " + std::to_string(h.size) +
                        " bytes) is none of the records the kernel wrote"};
  }
  if (!notes.missing.property.empty()) return notes.missing;
  if (!aux.property.empty()) return aux;
  if (!notes.overwrite.property.empty()) return notes.overwrite;
  return notes.order;
}

Verdict judge(const RunLog& log, const std::string& output, OutputFormat format, const TargetEnd& end,
              OracleStats& stats) {
  for (const LoggedRing& r : log.rings) {
    stats.aux_written += r.aux.head;
    stats.kernel_records += r.records.size();
    stats.dropped += r.dropped;
    stats.lost_reported += r.lost_reported;
    stats.unreported += r.dropped_unreported;
  }
  if (const std::optional<Verdict> v = judge_end(log, end)) return *v;
  const std::vector<std::string> files = output_files(log, output);
  stats.files = files.size();
  FileRecords file;
  // A target that did not fail after a hard error is judged all the same;
  // the verdict says so (docs/interpose.md, finding 1).
  const std::uint64_t hard = log.disk.hard_errors();
  const std::string after_hard =
      hard == 0 ? "" : " (the target did not fail after " + std::to_string(hard) + " hard write errors: EIO, ENOSPC)";
  if (const std::string problem = read_records(log, files, format, file); !problem.empty()) {
    return {"file_valid", problem + after_hard};
  }
  stats.file_records = file.records.size();
  file.carries_from = files.size() - log.numbered.size();
  Verdict v = match_records(log, file, stats);
  if (!v.property.empty()) v.detail += after_hard;
  const std::set<std::string> names(log.renamed.begin(), log.renamed.end());
  if (v.property == "exactly_once" && names.size() < log.renamed.size()) {
    v.detail += " (the output was renamed onto a name it had been renamed to before: the earlier file is gone)";
  }
  return v;
}

}  // namespace ringsim::sim::interpose
