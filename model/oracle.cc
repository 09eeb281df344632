#include "model/oracle.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <unordered_map>

#include "model/aux_content.h"

namespace ringsim::model {
namespace {

constexpr std::uint32_t kTypeLost = 2;  // PERF_RECORD_LOST
constexpr std::uint64_t kHeaderBytes = 8;
constexpr std::uint64_t kLostFieldOffset = 16;

std::uint32_t read_u32(const std::byte* at) {
  std::uint32_t v;
  std::memcpy(&v, at, sizeof v);
  return v;
}
std::uint16_t read_u16(const std::byte* at) {
  std::uint16_t v;
  std::memcpy(&v, at, sizeof v);
  return v;
}
std::uint64_t read_u64(const std::byte* at) {
  std::uint64_t v;
  std::memcpy(&v, at, sizeof v);
  return v;
}

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

  // Marks the written records inside the reported gaps; checks each gap.
  std::vector<bool> covered_by_gaps(std::uint64_t& lost_in_gaps) {
    std::vector<bool> covered(cpu_log.written.size(), false);
    if (out.gaps.empty()) return covered;
    if (log.mode == Mode::normal) {
      violate(kGapsGenuine, "an overwrite gap was reported for a non-overwrite ring");
      return covered;
    }
    std::unordered_map<std::uint64_t, std::size_t> by_position;
    by_position.reserve(cpu_log.written.size());
    for (std::size_t i = 0; i < cpu_log.written.size(); i++) by_position[cpu_log.written[i].position] = i;
    for (const Gap& gap : out.gaps) {
      const auto first = by_position.find(gap.begin);
      if (first == by_position.end()) {
        violate(kGapsGenuine, "gap [" + std::to_string(gap.begin) + ", " + std::to_string(gap.end) +
                                  ") does not start at a record");
        continue;
      }
      const WrittenRecord& head_record = cpu_log.written[first->second];
      if ((gap.begin - gap.head) + head_record.size <= log.ring_bytes) {
        violate(kGapsGenuine, "gap starting at " + std::to_string(gap.begin) +
                                  " skips a record that was intact at snapshot head " +
                                  std::to_string(gap.head) + ": " + describe(head_record));
      }
      // Older records sit at higher positions: walk toward the gap's end.
      std::uint64_t position = gap.begin;
      std::size_t index = first->second;
      bool reached = false;
      for (std::size_t steps = 0; steps <= cpu_log.written.size(); steps++) {
        if (position == gap.end) {
          reached = true;
          break;
        }
        if (index == SIZE_MAX) break;
        const WrittenRecord& r = cpu_log.written[index];
        if (r.position != position) break;
        if (covered[index]) {
          violate(kGapsGenuine, "two gaps cover " + describe(r));
          break;
        }
        covered[index] = true;
        report.records_overwritten++;
        if (r.type == kTypeLost) lost_in_gaps += r.lost;
        position += r.size;
        index = index == 0 ? SIZE_MAX : index - 1;
      }
      if (!reached) {
        violate(kGapsGenuine, "gap [" + std::to_string(gap.begin) + ", " + std::to_string(gap.end) +
                                  ") does not end on a record boundary");
      }
    }
    return covered;
  }

  void check_aux() {
    const AuxLog& a = cpu_log.aux;
    if (!a.present) {
      if (!out.aux.empty()) violate(kAuxDelivery, "AUX data delivered for a CPU without an AUX area");
      return;
    }
    constexpr std::uint64_t kTruncated = 0x1, kOverwrite = 0x2;
    // The PMU's own accounting.
    std::uint64_t reported = 0;
    for (const AuxEnd& e : a.ends) reported += e.size;
    if (reported != a.head) {
      violate(kAuxDelivery, "PERF_RECORD_AUX sizes add up to " + std::to_string(reported) + ", aux_head is " +
                                std::to_string(a.head));
    }
    if (a.head + a.truncated_bytes != a.attempted_bytes) {
      violate(kAuxDelivery, "the PMU attempted " + std::to_string(a.attempted_bytes) + " bytes, wrote " +
                                std::to_string(a.head) + " and truncated " + std::to_string(a.truncated_bytes));
    }
    report.aux_written += a.head;
    report.aux_truncated += a.truncated_bytes;
    // Wakeups, replayed from the rules.
    std::uint64_t wakeup = 0;
    for (std::size_t k = 0; k < a.ends.size(); k++) {
      const AuxEnd& e = a.ends[k];
      const bool truncated = (e.flags & kTruncated) != 0;
      bool expected = truncated;
      if (a.overwrite) {
        if ((e.flags & kOverwrite) == 0) violate(kAuxWakeup, "a snapshot-mode AUX record without OVERWRITE");
        if (e.wakeup_after != 0) violate(kAuxWakeup, "overwrite mode kept wakeup bookkeeping");
      } else {
        if (a.watermark_bytes == 0) {
          violate(kAuxWakeup, "non-overwrite AUX with a zero watermark");
          return;
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
                                  " is behind the last watermark boundary below aux_head " +
                                  std::to_string(e.head_after));
        }
      }
      if (e.woke != expected) {
        violate(kAuxWakeup, std::string("the AUX end at head ") + std::to_string(e.head_after) +
                                (e.woke ? " woke the consumer, the rules say it should not"
                                        : " did not wake the consumer, the rules say it should"));
      }
      if (truncated && k + 1 != a.ends.size()) {
        violate(kAuxTruncation, "an AUX record after a TRUNCATED one: the event was not disabled");
      }
    }
    const bool any_truncated_record =
        !a.ends.empty() && (a.ends.back().flags & kTruncated) != 0;
    if (a.truncated_bytes > 0 && !any_truncated_record && a.full_disables == 0) {
      violate(kAuxTruncation, std::to_string(a.truncated_bytes) +
                                  " AUX bytes truncated without a TRUNCATED record or a full-area disable");
    }
    // Delivery.
    std::uint64_t expected_offset = 0;
    std::uint64_t delivered = 0;
    std::uint64_t overwritten = 0;
    for (const AuxChunk& chunk : out.aux) {
      if (chunk.data.size() % 8 != 0) {
        violate(kAuxDelivery, "an AUXTRACE record with " + std::to_string(chunk.data.size()) + " bytes of data");
        return;
      }
      if (chunk.offset != expected_offset) {
        const bool gap = a.overwrite && chunk.offset > expected_offset && chunk.data.size() >= a.size_bytes;
        if (!gap) {
          violate(kAuxDelivery, "AUX data delivered at offset " + std::to_string(chunk.offset) + ", expected " +
                                    std::to_string(expected_offset) +
                                    (a.overwrite ? " (a gap not followed by a whole-area snapshot)" : ""));
          return;
        }
        overwritten += chunk.offset - expected_offset;
      }
      // Bytes past the final head can only be padding.
      const std::uint64_t real = std::min<std::uint64_t>(chunk.data.size(), a.head > chunk.offset ? a.head - chunk.offset : 0);
      std::uint64_t word_index = UINT64_MAX, word = 0;
      for (std::uint64_t i = 0; i < chunk.data.size(); i++) {
        const std::uint64_t p = chunk.offset + i;
        if (i < real && (p >> 3) != word_index) {
          word_index = p >> 3;
          word = aux_word(log.seed, static_cast<std::uint32_t>(cpu), word_index);
        }
        const std::byte want = i < real ? static_cast<std::byte>(word >> (8 * (p & 7))) : std::byte{0};
        if (chunk.data[i] != want) {
          violate(kAuxDelivery, "AUX byte at position " + std::to_string(chunk.offset + i) + " differs from what the PMU wrote");
          return;
        }
      }
      delivered += real;
      expected_offset = chunk.offset + real;
      if (real < chunk.data.size() && real % 8 == 0 && chunk.data.size() - real >= 8) {
        violate(kAuxDelivery, "an AUXTRACE record reaches past the AUX data written");
        return;
      }
    }
    report.aux_delivered += delivered;
    report.aux_overwritten += overwritten;
    const bool complete = delivered + overwritten == a.head;
    if (!complete && !(options.allow_truncation && delivered + overwritten < a.head)) {
      violate(kAuxDelivery, std::to_string(delivered) + " AUX bytes delivered and " + std::to_string(overwritten) +
                                " overwritten, the PMU wrote " + std::to_string(a.head));
    }
  }

  void run() {
    check_aux();
    report.records_written += cpu_log.written.size();
    report.dropped += cpu_log.dropped();
    if (cpu_log.lost_reported + cpu_log.dropped_unreported != cpu_log.dropped()) {
      violate(kLostAccounting, "the kernel dropped " + std::to_string(cpu_log.dropped()) +
                                   " records but its LOST records report " +
                                   std::to_string(cpu_log.lost_reported) + " (and " +
                                   std::to_string(cpu_log.dropped_unreported) +
                                   " were never reported: pending at disable or cancel)");
    }
    std::uint64_t lost_in_gaps = 0;
    const std::vector<bool> covered = covered_by_gaps(lost_in_gaps);
    std::vector<std::size_t> expected;
    expected.reserve(cpu_log.written.size());
    for (std::size_t i = 0; i < cpu_log.written.size(); i++) {
      if (!covered[i]) expected.push_back(i);
    }
    report.records_expected += expected.size();

    // Walk the delivered records against the expected ones.
    const std::byte* data = out.bytes.data();
    const std::uint64_t size = out.bytes.size();
    std::uint64_t offset = 0;
    std::size_t k = 0;
    std::uint64_t lost_delivered = 0;
    bool order_ok = true;
    for (std::uint64_t steps = 0; steps <= size / kHeaderBytes && offset < size; steps++) {
      if (size - offset < kHeaderBytes) {
        violate(kExactlyOnce, "delivered bytes end in a partial header at offset " + std::to_string(offset));
        order_ok = false;
        break;
      }
      const std::uint32_t type = read_u32(data + offset);
      const std::uint16_t record_size = read_u16(data + offset + 6);
      if (record_size < kHeaderBytes || record_size % 8 != 0 || record_size > size - offset) {
        violate(kExactlyOnce, "delivered record at offset " + std::to_string(offset) +
                                  " has an invalid size " + std::to_string(record_size));
        order_ok = false;
        break;
      }
      report.records_delivered++;
      if (type == kTypeLost && record_size >= kLostFieldOffset + 8) {
        lost_delivered += read_u64(data + offset + kLostFieldOffset);
      }
      if (order_ok) {
        if (k >= expected.size()) {
          violate(kExactlyOnce, "delivered record " + std::to_string(k) + " (type " + std::to_string(type) +
                                    " size " + std::to_string(record_size) +
                                    ") is one more than the kernel wrote (duplicate or invented)");
          order_ok = false;
        } else {
          const WrittenRecord& want = cpu_log.written[expected[k]];
          const bool same_size = want.size == record_size;
          const bool same_bytes =
              same_size && std::memcmp(cpu_log.bytes.data() + want.offset, data + offset, record_size) == 0;
          if (!same_bytes) {
            const bool same_header =
                same_size && std::memcmp(cpu_log.bytes.data() + want.offset, data + offset, kHeaderBytes) == 0;
            const char* property = (log.mode == Mode::backward && same_header) ? kNoTornRecords : kExactlyOnce;
            violate(property, "delivered record " + std::to_string(k) + " (type " + std::to_string(type) +
                                  " size " + std::to_string(record_size) + ") differs from the expected " +
                                  describe(want) + (same_header ? " (same header, different bytes)" : ""));
            order_ok = false;
          }
        }
        k++;
      }
      offset += record_size;
    }
    if (order_ok && k < expected.size() && options.allow_truncation) {
      report.records_cut += expected.size() - k;
    } else if (order_ok && k < expected.size()) {
      const WrittenRecord& missing = cpu_log.written[expected[k]];
      violate(kExactlyOnce, std::to_string(expected.size() - k) +
                                " written records were neither delivered nor reported lost; the first: " +
                                describe(missing));
    }
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
  if (mode == Mode::backward) {
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
