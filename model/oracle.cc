#include "model/oracle.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <unordered_map>

#include "model/aux_content.h"
#include "model/records.h"

namespace ringsim::model {
namespace {

std::string describe(const WrittenRecord& r) {
  std::ostringstream s;
  s << "type " << r.type << " size " << r.size << " at position " << r.position << " written at "
    << r.time_ns << " ns";
  return s.str();
}

struct CpuChecker {
  const KernelLog& log;
  const CpuLog& cpu_log;
  const CpuOutput& out;
  std::size_t cpu;
  OracleReport& report;
  const CheckOptions& options;

  void violate(const char* property, const std::string& detail) {
    report.violations.push_back(Violation{property, "cpu " + std::to_string(cpu) + ": " + detail});
  }

  // Whether a record published by `head` (at or above it going backward,
  // below it going forward) copied its bytes after `r` over some of r's
  // bytes: a writer that reserved before r and copied after it (r
  // interrupted it), with a record reaching around the area.
  bool copied_over(const WrittenRecord& r, std::uint64_t head, bool backward) const {
    const std::uint64_t ring = log.ring_bytes;
    for (const WrittenRecord& w : cpu_log.written) {
      if (w.copy_seq <= r.copy_seq) continue;
      const bool published = backward ? w.position - head < (std::uint64_t{1} << 62)
                                      : head - w.position - 1 < (std::uint64_t{1} << 62);
      if (!published) continue;
      // Overlap modulo the area: some byte of w lands on some byte of r.
      const std::uint64_t from = (r.position - w.position) & (ring - 1);
      if (w.size >= ring || from < w.size || ((w.position - r.position) & (ring - 1)) < r.size) return true;
    }
    return false;
  }

  // Backward: a gap that begins inside a record, explained by nesting. A
  // writer reserved W, was interrupted by writers whose records (from R at
  // `begin` up to W) add up to whole areas, and copied W after them: W's
  // bytes landed on R's, header on header, and a reader walking up from
  // head meets W at R's position (the ring holds the same bytes as if W
  // were at R's place; no reader can tell). The reader delivers W there and
  // reports the gap from where W ends there. Returns W's index (begin: R's
  // position), or SIZE_MAX.
  std::size_t aliased_record(const Gap& gap, const std::unordered_map<std::uint64_t, std::size_t>& by_position,
                             const std::vector<bool>& covered, std::uint64_t& begin) const {
    const std::uint64_t ring = log.ring_bytes;
    for (std::size_t i = 0; i < cpu_log.written.size(); i++) {
      const WrittenRecord& w = cpu_log.written[i];
      const std::uint64_t at = gap.begin - w.size;
      const std::uint64_t above = w.position - at;
      if (covered[i] || above == 0 || (above & (ring - 1)) != 0 || above >= gap.end - at) continue;
      const auto r = by_position.find(at);
      if (r == by_position.end() || cpu_log.written[r->second].copy_seq >= w.copy_seq) continue;
      begin = at;
      return i;
    }
    return SIZE_MAX;
  }

  // Walks a gap from `begin` (the record at `index`) to its end, toward
  // older records going backward, newer going forward, marking each record
  // covered but `skip` (the record the reader delivered at begin).
  void cover_gap(const Gap& gap, std::uint64_t begin, std::size_t index, std::size_t skip,
                 std::vector<bool>& covered, std::uint64_t& lost_in_gaps) {
    const bool backward = is_backward(log.mode);
    std::uint64_t position = begin;
    bool reached = false;
    for (std::size_t steps = 0; steps <= cpu_log.written.size(); steps++) {
      if (position == gap.end) {
        reached = true;
        break;
      }
      if (index == SIZE_MAX) break;
      const WrittenRecord& r = cpu_log.written[index];
      if (r.position != position) break;
      if (index != skip) {
        if (covered[index]) {
          violate(kGapsGenuine, "two gaps cover " + describe(r));
          break;
        }
        covered[index] = true;
        report.records_overwritten++;
        report.bytes_overwritten += r.size;
        if (r.type == kTypeLost) lost_in_gaps += r.lost;
      }
      position += r.size;
      if (backward) {
        index = index == 0 ? SIZE_MAX : index - 1;
      } else {
        index = index + 1 == cpu_log.written.size() ? SIZE_MAX : index + 1;
      }
    }
    if (!reached) {
      violate(kGapsGenuine, "gap [" + std::to_string(gap.begin) + ", " + std::to_string(gap.end) +
                                ") does not end on a record boundary");
    }
  }

  // Marks the written records inside the reported gaps; checks each gap.
  std::vector<bool> covered_by_gaps(std::uint64_t& lost_in_gaps) {
    std::vector<bool> covered(cpu_log.written.size(), false);
    report.gaps += out.gaps.size();
    if (out.gaps.empty()) return covered;
    if (is_writable(log.mode)) {
      violate(kGapsGenuine, "an overwrite gap was reported for a writable (non-overwrite) ring");
      return covered;
    }
    const bool backward = is_backward(log.mode);
    std::unordered_map<std::uint64_t, std::size_t> by_position;
    by_position.reserve(cpu_log.written.size());
    for (std::size_t i = 0; i < cpu_log.written.size(); i++) by_position[cpu_log.written[i].position] = i;
    for (const Gap& gap : out.gaps) {
      std::uint64_t begin = gap.begin;
      std::size_t skip = SIZE_MAX;
      auto first = by_position.find(gap.begin);
      if (first == by_position.end() && backward) {
        skip = aliased_record(gap, by_position, covered, begin);
        if (skip != SIZE_MAX) {
          first = by_position.find(begin);
          report.records_aliased++;
        }
      }
      if (first == by_position.end()) {
        violate(kGapsGenuine, "gap [" + std::to_string(gap.begin) + ", " + std::to_string(gap.end) +
                                  ") does not start at a record");
        continue;
      }
      // Overwritten: a later write reached the first byte (forward: head
      // passed it by more than an area) or the end (backward: it reaches
      // past one area above head) of the gap's first record.
      const WrittenRecord& head_record = cpu_log.written[first->second];
      const bool beyond = backward ? (begin - gap.head) + head_record.size > log.ring_bytes
                                   : gap.head - gap.begin > log.ring_bytes;
      if (!beyond && !copied_over(head_record, gap.head, backward)) {
        violate(kGapsGenuine, "gap starting at " + std::to_string(begin) +
                                  " skips a record that was intact at snapshot head " +
                                  std::to_string(gap.head) + ": " + describe(head_record));
      }
      cover_gap(gap, begin, first->second, skip, covered, lost_in_gaps);
    }
    return covered;
  }

  // The PMU's own accounting: what the ends reported adds up to aux_head,
  // written + truncated = attempted, and each PERF_RECORD_AUX says what
  // perf_aux_output_end says: {old head, bytes} in non-overwrite mode,
  // {new head, bytes} in overwrite mode, {new head's index, the whole
  // area} with offset heads; a record only for bytes or a flag other than
  // OVERWRITE.
  void check_aux_accounting(const AuxLog& a) {
    constexpr std::uint64_t kOverwrite = 0x2;
    std::uint64_t reported = 0;
    for (const AuxEnd& e : a.ends) {
      reported += e.written;
      const std::uint64_t offset = !a.overwrite ? e.head_after - e.written
                                   : a.offset_heads ? e.head_after % a.size_bytes
                                                    : e.head_after;
      const std::uint64_t size = a.offset_heads ? a.size_bytes : e.written;
      const bool record = e.written > 0 || (e.flags & ~kOverwrite) != 0;
      if (e.record != record || e.offset != offset || e.size != size) {
        violate(kAuxDelivery, "the AUX end at head " + std::to_string(e.head_after) + " wrote RECORD_AUX {" +
                                  std::to_string(e.offset) + ", " + std::to_string(e.size) + "}" +
                                  (e.record ? "" : " (none)") + ", the driver's rules give {" +
                                  std::to_string(offset) + ", " + std::to_string(size) + "}" +
                                  (record ? "" : " (none)"));
        return;
      }
    }
    if (reported != a.head) {
      violate(kAuxDelivery, "the AUX ends reported " + std::to_string(reported) + " bytes, aux_head is " +
                                std::to_string(a.head));
    }
    if (a.head + a.truncated_bytes != a.attempted_bytes) {
      violate(kAuxDelivery, "the PMU attempted " + std::to_string(a.attempted_bytes) + " bytes, wrote " +
                                std::to_string(a.head) + " and truncated " + std::to_string(a.truncated_bytes));
    }
    report.aux_written += a.head;
    report.aux_truncated += a.truncated_bytes;
  }

  // One end's wakeup bookkeeping, replayed from the rules; `wakeup` is the
  // rules' aux_wakeup before it. Returns whether the rules say it woke, or
  // false after a violation that makes the rest meaningless (`stop`).
  bool expected_wakeup(const AuxLog& a, const AuxEnd& e, std::uint64_t& wakeup, bool& stop) {
    constexpr std::uint64_t kTruncated = 0x1, kOverwrite = 0x2;
    bool expected = (e.flags & kTruncated) != 0;
    if (a.overwrite) {
      if ((e.flags & kOverwrite) == 0) violate(kAuxWakeup, "a snapshot-mode AUX record without OVERWRITE");
      if (e.wakeup_after != 0) violate(kAuxWakeup, "overwrite mode kept wakeup bookkeeping");
      return expected;
    }
    if (a.watermark_bytes == 0) {
      violate(kAuxWakeup, "non-overwrite AUX with a zero watermark");
      stop = true;
      return false;
    }
    if (e.head_after - wakeup >= a.watermark_bytes) {
      expected = true;
      wakeup = e.head_after - e.head_after % a.watermark_bytes;
    }
    if (e.wakeup_after != wakeup) {
      violate(kAuxWakeup, "after the AUX end at head " + std::to_string(e.head_after) + " aux_wakeup is " +
                              std::to_string(e.wakeup_after) + ", the rules give " + std::to_string(wakeup));
    }
    if (e.head_after - e.wakeup_after >= a.watermark_bytes) {
      violate(kAuxWakeup, "aux_wakeup " + std::to_string(e.wakeup_after) +
                              " is behind the last watermark boundary below aux_head " + std::to_string(e.head_after));
    }
    return expected;
  }

  // aux_wakeup and aux_truncation, from the PMU's log.
  void check_aux_wakeups(const AuxLog& a) {
    constexpr std::uint64_t kTruncated = 0x1;
    std::uint64_t wakeup = 0;
    bool any_truncated_record = false;
    for (std::size_t k = 0; k < a.ends.size(); k++) {
      const AuxEnd& e = a.ends[k];
      bool stop = false;
      const bool expected = expected_wakeup(a, e, wakeup, stop);
      if (stop) return;
      if (e.woke != expected) {
        violate(kAuxWakeup, std::string("the AUX end at head ") + std::to_string(e.head_after) +
                                (e.woke ? " woke the consumer, the rules say it should not"
                                        : " did not wake the consumer, the rules say it should"));
      }
      if ((e.flags & kTruncated) != 0) {
        any_truncated_record = true;
        if (k + 1 < a.ends.size() && !reenabled_between(a, k + 1, k + 1)) {
          violate(kAuxTruncation, "an AUX record after a TRUNCATED one before the consumer re-enabled the event");
        }
      }
    }
    if (a.truncated_bytes > 0 && !any_truncated_record && a.full_disables == 0) {
      violate(kAuxTruncation, std::to_string(a.truncated_bytes) +
                                  " AUX bytes truncated without a TRUNCATED record or a full-area disable");
    }
  }

  // Whether the consumer re-enabled the event when `from` <= ends.size() <= `to`.
  static bool reenabled_between(const AuxLog& a, std::size_t from, std::size_t to) {
    return std::any_of(a.reenables.begin(), a.reenables.end(), [&](std::size_t r) { return r >= from && r <= to; });
  }

  // One delivered AUXTRACE chunk against the bytes the PMU wrote. Returns
  // the real (not padding) bytes it holds, or false on a violation.
  // `position`: the stream position of its first byte (its offset, unless
  // the heads are offsets inside the area).
  // A whole area taken before the first lap (offset heads: perf's
  // first-wrap test errs that way) starts before position 0, with the
  // zeros the driver never wrote over; `real` counts them.
  bool check_aux_chunk(const AuxLog& a, const AuxChunk& chunk, std::uint64_t position, std::uint64_t& real) {
    std::size_t lead = 0;
    if (position > UINT64_MAX - a.size_bytes) {
      lead = static_cast<std::size_t>(std::min<std::uint64_t>(0 - position, chunk.data.size()));
      const auto nonzero = std::find_if(chunk.data.begin(), chunk.data.begin() + static_cast<std::ptrdiff_t>(lead),
                                        [](std::byte b) { return b != std::byte{0}; });
      if (nonzero != chunk.data.begin() + static_cast<std::ptrdiff_t>(lead)) {
        violate(kAuxDelivery, "an AUXTRACE record of the whole area before the first lap has data where the "
                              "driver never wrote");
        return false;
      }
      position = 0;
    }
    const std::byte* data = chunk.data.data() + lead;
    const std::size_t size = chunk.data.size() - lead;
    real = std::min<std::uint64_t>(size, a.head > position ? a.head - position : 0);
    std::size_t bad = aux_mismatch(log.seed, static_cast<std::uint32_t>(cpu), position, data, real);
    if (bad == real) {  // past what the PMU wrote: padding, zeros
      while (bad < size && data[bad] == std::byte{0}) bad++;
    }
    if (bad < size) {
      violate(kAuxDelivery, "AUX byte at position " + std::to_string(position + bad) + " differs from what the PMU wrote");
      return false;
    }
    real += lead;
    if (real < chunk.data.size() && real % 8 == 0 && chunk.data.size() - real >= 8) {
      violate(kAuxDelivery, "an AUXTRACE record reaches past the AUX data written");
      return false;
    }
    return true;
  }

  // aux_delivery: each byte once, in order; snapshot gaps only before a
  // whole-area snapshot; delivered + overwritten = written.
  void check_aux_delivery(const AuxLog& a) {
    if (a.offset_heads) return check_aux_delivery_in_area(a);
    std::uint64_t expected_offset = 0, delivered = 0, overwritten = 0;
    for (const AuxChunk& chunk : out.aux) {
      if (chunk.data.size() % 8 != 0) {
        violate(kAuxDelivery, "an AUXTRACE record with " + std::to_string(chunk.data.size()) + " bytes of data");
        return;
      }
      if (chunk.offset != expected_offset) {
        // A gap is followed by the whole area (give or take its last word).
        const bool gap = a.overwrite && chunk.offset > expected_offset && chunk.data.size() + 8 >= a.size_bytes;
        if (!gap) {
          violate(kAuxDelivery, "AUX data delivered at offset " + std::to_string(chunk.offset) + ", expected " +
                                    std::to_string(expected_offset) +
                                    (a.overwrite ? " (a gap not followed by a whole-area snapshot)" : ""));
          return;
        }
        overwritten += chunk.offset - expected_offset;
        report.aux_gaps++;
      }
      std::uint64_t real = 0;
      if (!check_aux_chunk(a, chunk, chunk.offset, real)) return;
      delivered += real;
      expected_offset = chunk.offset + real;
    }
    report.aux_delivered += delivered;
    report.aux_overwritten += overwritten;
    const bool complete = delivered + overwritten == a.head;
    if (!complete && !(options.allow_truncation && delivered + overwritten < a.head)) {
      violate(kAuxDelivery, std::to_string(delivered) + " AUX bytes delivered and " + std::to_string(overwritten) +
                                " overwritten, the PMU wrote " + std::to_string(a.head));
    }
  }

  // Offset heads (Intel PT snapshots): AUXTRACE offsets are indexes. Until
  // the driver went round the area, index = stream position and each byte
  // comes once, in order; from then on each chunk is the whole area as it
  // stood at one of the snapshots (in order; repeats allowed: nobody can
  // tell what was overwritten between them), and the last one ends at the
  // final head.
  void check_aux_delivery_in_area(const AuxLog& a) {
    std::uint64_t expected = 0, end = 0, delivered = 0;
    std::size_t snapshot = 0;
    bool wrapped = false;
    for (const AuxChunk& chunk : out.aux) {
      // The snapshot that took it: before the first lap (head < size) the
      // next new bytes; after it, the whole area ending at that head.
      // (A whole area taken before the first lap starts at a "negative"
      // position, UINT64_MAX among them: no sentinel.)
      std::uint64_t position = 0;
      bool found = false;
      for (; snapshot < a.snapshot_heads.size() && !found; snapshot++) {
        const std::uint64_t head = a.snapshot_heads[snapshot];
        if (head < a.size_bytes && !wrapped && chunk.offset == expected && head > expected) {
          position = chunk.offset;
          found = true;
        } else if (head % a.size_bytes == chunk.offset && chunk.data.size() == a.size_bytes) {
          position = head - a.size_bytes;
          found = wrapped = true;
        }
      }
      if (!found) {
        violate(kAuxDelivery, "an AUXTRACE record at index " + std::to_string(chunk.offset) + " of " +
                                  std::to_string(chunk.data.size()) +
                                  " bytes is neither the next new bytes nor the whole area at a later snapshot");
        return;
      }
      std::uint64_t real = 0;
      if (!check_aux_chunk(a, chunk, position, real)) return;
      end = position + real;
      if (!wrapped) {
        expected = end;
        delivered += real;
      }
    }
    report.aux_delivered += wrapped ? a.head : delivered;
    const bool complete = wrapped ? end == a.head : delivered == a.head;
    if (!complete && !options.allow_truncation) {
      violate(kAuxDelivery, "the AUX data delivered ends at " + std::to_string(end) + ", the PMU wrote " +
                                std::to_string(a.head) + (wrapped ? " (offset heads, wrapped)" : " (offset heads)"));
    }
  }

  void check_aux() {
    const AuxLog& a = cpu_log.aux;
    if (!a.present) {
      if (!out.aux.empty()) violate(kAuxDelivery, "AUX data delivered for a CPU without an AUX area");
      return;
    }
    check_aux_accounting(a);
    check_aux_wakeups(a);
    check_aux_delivery(a);
  }

  // The records a correct consumer delivers, in order: every written
  // record not inside a reported gap.
  std::vector<std::size_t> expected_records(std::uint64_t& lost_in_gaps) {
    const std::vector<bool> covered = covered_by_gaps(lost_in_gaps);
    std::vector<std::size_t> expected;
    expected.reserve(cpu_log.written.size());
    for (std::size_t i = 0; i < cpu_log.written.size(); i++) {
      if (!covered[i]) expected.push_back(i);
    }
    report.records_expected += expected.size();
    return expected;
  }

  // Compares delivered record k with the expected one; false on a
  // violation (the comparison stops there).
  bool matches(const PerfRecord& r, std::size_t k, const std::vector<std::size_t>& expected) {
    if (k >= expected.size()) {
      violate(kExactlyOnce, "delivered record " + std::to_string(k) + " (type " + std::to_string(r.type) + " size " +
                                std::to_string(r.size) + ") is one more than the kernel wrote (duplicate or invented)");
      return false;
    }
    const WrittenRecord& want = cpu_log.written[expected[k]];
    const bool same_size = want.size == r.size;
    if (same_size && std::memcmp(cpu_log.bytes.data() + want.offset, r.bytes.data(), r.size) == 0) return true;
    const bool same_header =
        same_size && std::memcmp(cpu_log.bytes.data() + want.offset, r.bytes.data(), kHeaderBytes) == 0;
    const char* property = (!is_writable(log.mode) && same_header) ? kNoTornRecords : kExactlyOnce;
    violate(property, "delivered record " + std::to_string(k) + " (type " + std::to_string(r.type) + " size " +
                          std::to_string(r.size) + ") differs from the expected " + describe(want) +
                          (same_header ? " (same header, different bytes)" : ""));
    return false;
  }

  // exactly_once / no_torn_records: the delivered records against the
  // expected ones. Returns the sum of the delivered LOST records' counts.
  std::uint64_t check_delivery(const std::vector<std::size_t>& expected) {
    std::size_t k = 0;
    std::uint64_t lost_delivered = 0;
    bool order_ok = true;
    const std::string problem = walk_records(out.bytes, [&](const PerfRecord& r) {
      report.records_delivered++;
      if (r.type == kTypeSample) report.samples_delivered++;
      if (r.type == kTypeLost && r.size >= kLostFieldOffset + 8) {
        lost_delivered += load<std::uint64_t>(r.bytes.data() + kLostFieldOffset);
      }
      if (!order_ok) return;
      order_ok = matches(r, k, expected);
      k++;
    });
    if (!problem.empty()) {
      violate(kExactlyOnce, "delivered bytes: " + problem);
      order_ok = false;
    }
    if (order_ok && k < expected.size() && options.allow_truncation) {
      report.records_cut += expected.size() - k;
      for (std::size_t i = k; i < expected.size(); i++) report.bytes_cut += cpu_log.written[expected[i]].size;
    } else if (order_ok && k < expected.size()) {
      violate(kExactlyOnce, std::to_string(expected.size() - k) +
                                " written records were neither delivered nor reported lost; the first: " +
                                describe(cpu_log.written[expected[k]]));
    }
    return lost_delivered;
  }

  // no_torn_records: a read-only ring is read only while its output is
  // paused. On Linux a writer publishes data_head after its copy, so a
  // reader copying an unpaused read-only ring can get bytes a writer is
  // overwriting and no head it loads shows it; the simulation writes each
  // record whole, so this rule is what catches a reader that skips the
  // pause.
  void check_reads_paused() {
    if (is_writable(log.mode)) return;
    for (const RingOp& op : cpu_log.ops) {
      if (op.kind != RingOp::Kind::read || op.output_paused) continue;
      violate(kNoTornRecords, "the reader copied " + std::to_string(op.size) + " bytes at ring position " +
                                  std::to_string(op.position) +
                                  " with output not paused (a Linux writer could be overwriting them)");
      return;
    }
  }

  void run() {
    check_aux();
    check_reads_paused();
    report.records_written += cpu_log.written.size();
    report.dropped += cpu_log.dropped();
    if (cpu_log.lost_reported + cpu_log.dropped_unreported != cpu_log.dropped()) {
      violate(kLostAccounting, "the kernel dropped " + std::to_string(cpu_log.dropped()) +
                                   " records but its LOST records report " + std::to_string(cpu_log.lost_reported) +
                                   " (and " + std::to_string(cpu_log.dropped_unreported) +
                                   " were never reported: pending at disable or cancel)");
    }
    std::uint64_t lost_in_gaps = 0;
    const std::vector<std::size_t> expected = expected_records(lost_in_gaps);
    const std::uint64_t lost_delivered = check_delivery(expected);
    report.lost_delivered += lost_delivered;
    const bool lost_ok = options.allow_truncation ? lost_delivered + lost_in_gaps <= cpu_log.lost_reported
                                                  : lost_delivered + lost_in_gaps == cpu_log.lost_reported;
    if (!lost_ok) {
      violate(kLostAccounting, "delivered LOST records report " + std::to_string(lost_delivered) +
                                   (lost_in_gaps ? " (+" + std::to_string(lost_in_gaps) + " in overwritten LOST records)"
                                                 : std::string()) +
                                   " lost, the kernel reported " + std::to_string(cpu_log.lost_reported));
    }
  }
};

}  // namespace

bool OracleReport::violated(const std::string& property) const {
  return std::any_of(violations.begin(), violations.end(),
                     [&](const Violation& v) { return v.property == property; });
}

std::vector<std::string> oracle_properties(Mode mode, bool aux) {
  std::vector<std::string> p = {kExactlyOnce, kLostAccounting};
  if (!is_writable(mode)) {
    p.push_back(kNoTornRecords);
    p.push_back(kGapsGenuine);
  }
  if (aux) {
    p.push_back(kAuxDelivery);
    p.push_back(kAuxWakeup);
    p.push_back(kAuxTruncation);
  }
  return p;
}

OracleReport check(const KernelLog& log, const RunOutput& output, const CheckOptions& options) {
  OracleReport report;
  if (output.cpus.size() != log.cpus.size()) {
    report.violations.push_back(Violation{kExactlyOnce, "the output has " + std::to_string(output.cpus.size()) +
                                                            " CPUs, the kernel " + std::to_string(log.cpus.size())});
    return report;
  }
  for (std::size_t cpu = 0; cpu < log.cpus.size(); cpu++) {
    CpuChecker{log, log.cpus[cpu], output.cpus[cpu], cpu, report, options}.run();
  }
  return report;
}

}  // namespace ringsim::model
