#include "tests/conformance/observation.h"

#include <linux/perf_event.h>
#include <poll.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "core/verify.h"

namespace ringsim::conformance {
namespace {

constexpr std::size_t kLogCapacity = 1 << 17;

const char* record_name(std::uint32_t type) {
  switch (type) {
    case PERF_RECORD_SAMPLE: return "SAMPLE";
    case PERF_RECORD_LOST: return "LOST";
    case PERF_RECORD_COMM: return "COMM";
    case PERF_RECORD_EXIT: return "EXIT";
    case PERF_RECORD_FORK: return "FORK";
    case PERF_RECORD_MMAP: return "MMAP";
    case PERF_RECORD_MMAP2: return "MMAP2";
    case PERF_RECORD_SWITCH: return "SWITCH";
    case PERF_RECORD_THROTTLE: return "THROTTLE";
    case PERF_RECORD_UNTHROTTLE: return "UNTHROTTLE";
    default: return nullptr;
  }
}

std::string errno_name(std::uint64_t e) {
  switch (e) {
    case 0: return "ok";
    case EINVAL: return "EINVAL";
    case EBUSY: return "EBUSY";
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case ENOENT: return "ENOENT";
    case ESRCH: return "ESRCH";
    case ENOTSUP: return "ENOTSUP";
    default: return "errno " + std::to_string(e);
  }
}

std::string revents(std::uint64_t r) {
  std::string s;
  if (r & POLLIN) s += "IN|";
  if (r & POLLHUP) s += "HUP|";
  if (r & POLLERR) s += "ERR|";
  if (s.empty()) return "0";
  s.pop_back();
  return s;
}

std::string signed_position(std::uint64_t p) { return std::to_string(static_cast<std::int64_t>(p)); }

std::string record(const Observation& o) {
  char misc[16];
  std::snprintf(misc, sizeof misc, "0x%x", o.misc);
  std::string s = "@" + signed_position(o.value) + " ";
  const char* name = record_name(o.type);
  s += name != nullptr ? name : "type " + std::to_string(o.type);
  s += std::string(" misc=") + misc + " size=" + std::to_string(o.size);
  s += " event=" + (o.writer == kUnknownEvent ? std::string("?") : event_name(o.writer));
  if (o.type == PERF_RECORD_LOST) s += " lost=" + std::to_string(o.lost);
  return s;
}

std::string who(std::uint8_t w) {
  if (w == kWhoZero) return "0";
  if (w == kWhoThis) return "this thread";
  if (w >= kWhoChild && w < kWhoForked) return "child " + std::to_string(w - kWhoChild + 1);
  if (w >= kWhoForked && w < kWhoOther) return "forked " + std::to_string(w - kWhoForked + 1);
  return "other";
}

std::string hex(std::uint64_t v) {
  char s[24];
  std::snprintf(s, sizeof s, "0x%llx", static_cast<unsigned long long>(v));
  return s;
}

// An MMAP2's body after pid and tid.
std::string mmap2_body(const Observation& o) {
  std::string s = std::string(" addr=") + (o.addr ? "the scenario's mapping" : "another") +
                  " len=" + std::to_string(o.len) + " pgoff=" + std::to_string(o.pgoff);
  if (o.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
    s += " build_id_size=" + std::to_string(o.build_id_size) +
         ((o.file & kFileBuildId) ? " build-id=the file's" : " build-id=not the file's");
  } else {
    const auto mark = [&o](std::uint8_t bit, const char* name) {
      return std::string(" ") + name + ((o.file & bit) ? "=the file's" : "=not the file's");
    };
    s += mark(kFileMajor, "maj") + mark(kFileMinor, "min") + mark(kFileIno, "ino") +
         mark(kFileGeneration, "ino_generation");
  }
  s += " prot=" + hex(o.prot) + " flags=" + hex(o.flags);
  const std::string name(o.text.data(), strnlen(o.text.data(), o.text.size()));
  return s + " filename=" + (name == "=" ? std::string("the suite's executable") : "...\"" + name + "\"");
}

std::string times(std::uint64_t t);

// A sample's PERF_SAMPLE_READ after its value: times, id, lost as asked.
std::string read_rest(const Observation& o) {
  std::string s;
  if (o.read_times & (kTimeEnabledAsked | kTimeRunningAsked)) s += " " + times(o.read_times);
  if (o.read_id != kNoLetter) s += " id=" + (o.read_id == kUnknownEvent ? std::string("?") : event_name(o.read_id));
  if (o.read_lost != kNoRead) s += " lost=" + std::to_string(o.read_lost);
  return s;
}

std::string body(const Observation& o) {
  static const char* const kNames[] = {"pid", "tid", "ppid", "ptid"};
  std::string s;
  for (std::size_t i = 0; i < 4; i++) {
    if (o.who[i] != kWhoAbsent) s += std::string(" ") + kNames[i] + "=" + who(o.who[i]);
  }
  if (o.type == PERF_RECORD_COMM) {
    s += " comm=\"" + std::string(o.text.data(), strnlen(o.text.data(), o.text.size())) + "\"";
  }
  if (o.type == PERF_RECORD_MMAP2) s += mmap2_body(o);
  // A sample's TID and CPU are its own fields; other records' are their
  // sample_id trailer's.
  std::string id;
  if (o.who[4] != kWhoAbsent) id += " pid=" + who(o.who[4]) + " tid=" + who(o.who[5]);
  if (o.cpu != kNoCpu) id += " cpu=" + std::to_string(o.cpu);
  static const char* const kIds[] = {"id", "stream_id"};
  for (std::size_t i = 0; i < 2; i++) {
    if (o.ids[i] == kNoLetter) continue;
    id += std::string(" ") + kIds[i] + "=" + (o.ids[i] == kUnknownEvent ? std::string("?") : event_name(o.ids[i]));
  }
  if (o.period == kAdaptedPeriod) id += " period=adapted(>1)";
  if (o.period != kNoPeriod && o.period != kAdaptedPeriod) id += " period=" + std::to_string(o.period);
  if (o.read_value != kNoRead) id += " read: value=" + std::to_string(o.read_value) + read_rest(o);
  if (!id.empty() && o.type != PERF_RECORD_SAMPLE) id = (s.empty() ? " sample_id" : " | sample_id") + id;
  s += id;
  return s.empty() ? s : s.substr(1);
}

std::string times(std::uint64_t t) {
  std::string s;
  if (t & kTimeEnabledAsked) s += (t & kTimeEnabled) ? " enabled>0" : " enabled=0";
  if (t & kTimeRunningAsked) s += (t & kTimeRunning) ? " running>0" : " running=0";
  if ((t & kTimeEnabledAsked) && (t & kTimeRunningAsked)) s += (t & kTimesEqual) ? " equal" : " not equal";
  return s.substr(1);
}

const char* page_field_name(std::uint32_t f) {
  static const char* const kNames[kPageFields] = {"version",  "compat_version", "capabilities", "pmc_width",
                                                  "index",    "size",           "data_tail",    "aux_head",
                                                  "aux_tail", "aux_offset",     "aux_size"};
  return f < kPageFields ? kNames[f] : "?";
}

// The capabilities word: its bits by name (the machine's marked).
std::string capabilities(std::uint64_t c) {
  static const char* const kBits[] = {"cap_bit0", "cap_bit0_is_deprecated", "cap_user_rdpmc (machine)",
                                      "cap_user_time (machine)", "cap_user_time_zero (machine)",
                                      "cap_user_time_short (machine)"};
  std::string s = hex(c);
  for (std::size_t b = 0; b < std::size(kBits); b++) {
    if (c & (1ull << b)) s += std::string(" ") + kBits[b];
  }
  return s;
}

}  // namespace

std::uint64_t time_bits(std::uint64_t read_format, std::uint64_t enabled, std::uint64_t running) {
  const bool asks_enabled = (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) != 0;
  const bool asks_running = (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) != 0;
  std::uint64_t bits = (asks_enabled ? kTimeEnabledAsked : 0) | (asks_running ? kTimeRunningAsked : 0);
  if (asks_enabled && enabled != 0) bits |= kTimeEnabled;
  if (asks_running && running != 0) bits |= kTimeRunning;
  if (asks_enabled && asks_running && enabled == running) bits |= kTimesEqual;
  return bits;
}

// The whole capacity is written now, so that adding never faults a page in.
Log::Log() : storage_(kLogCapacity) {}

void Log::add(const Observation& o) {
  VERIFY_MSG(size_ < storage_.size(), "a scenario logged more than the log holds");
  storage_[size_++] = o;
}

void Log::touch() {
  auto* const bytes = reinterpret_cast<volatile unsigned char*>(storage_.data());
  const std::size_t size = storage_.size() * sizeof(Observation);
  for (std::size_t at = 0; at < size; at += 4096) bytes[at] = bytes[at];
}

std::string observable(const Observation& o) {
  const std::string e = event_name(o.event);
  switch (o.kind) {
    case Kind::result: return "result";
    case Kind::head: return "data_head " + e;
    case Kind::poll: return "poll " + e;
    case Kind::record: return "record " + std::to_string(o.index) + " of " + e + "'s ring";
    case Kind::woke: return "POLLIN " + std::to_string(o.index) + " of " + e;
    case Kind::body: return "body of record " + std::to_string(o.index) + " of " + e + "'s ring";
    case Kind::read_bytes: return "read() bytes of " + e;
    case Kind::count: return "count of " + e;
    case Kind::times: return "times of " + e;
    case Kind::read_id: return "read() id of " + e;
    case Kind::page_field: return std::string(page_field_name(o.index)) + " " + e;
    case Kind::lost_samples: return "lost samples of " + e;
    case Kind::data_offset: return "data_offset " + e;
    case Kind::data_size: return "data_size " + e;
    case Kind::time_order: return "time order in " + e + "'s ring";
    case Kind::overrun: return "overrun of " + e + "'s ring";
  }
  return "?";
}

std::string value(const Observation& o) {
  switch (o.kind) {
    case Kind::result: return errno_name(o.value);
    case Kind::head: return signed_position(o.value);
    case Kind::poll: return revents(o.value);
    case Kind::record: return record(o);
    case Kind::woke: return "after action " + std::to_string(o.value) + ", data_head " + signed_position(o.lost);
    case Kind::body: return body(o);
    case Kind::times: return times(o.value);
    case Kind::read_id: return o.writer == kUnknownEvent ? std::string("?") : event_name(o.writer);
    case Kind::page_field: {
      const auto field = static_cast<PageField>(o.index);
      if (field == PageField::capabilities) return capabilities(o.value);
      return std::to_string(o.value) + (field == PageField::pmc_width ? " (machine)" : "");
    }
    case Kind::read_bytes:
    case Kind::count:
    case Kind::lost_samples:
    case Kind::data_offset:
    case Kind::data_size: return std::to_string(o.value);
    case Kind::time_order: return o.value == 0 ? "ring order" : "goes back at record " + std::to_string(o.value);
    case Kind::overrun: return std::to_string(o.value) + " bytes since the last read";
  }
  return "?";
}

Comparison compare(const Scenario& scenario, const Log& real, const Log& simulated) {
  const std::span<const Observation> r = real.entries();
  const std::span<const Observation> s = simulated.entries();
  Comparison c;
  c.compared = std::max(r.size(), s.size());
  for (std::size_t i = 0; i < c.compared; i++) {
    if (i < r.size() && i < s.size() && r[i] == s[i]) continue;
    const Observation& at = i < r.size() ? r[i] : s[i];
    VERIFY(at.step < scenario.steps.size());
    std::ostringstream out;
    out << "step " << at.step + 1 << " (" << describe(scenario.steps[at.step]) << "): " << observable(at)
        << ": real " << (i < r.size() ? value(r[i]) : "(nothing)");
    if (i < s.size() && i < r.size() && observable(s[i]) != observable(r[i])) {
      out << "; simulated " << observable(s[i]) << " (step " << s[i].step + 1 << "): " << value(s[i]);
    } else {
      out << ", simulated " << (i < s.size() ? value(s[i]) : "(nothing)");
    }
    c.match = false;
    c.first_difference = out.str();
    return c;
  }
  return c;
}

std::string format(const Scenario& scenario, const Log& log) {
  std::ostringstream out;
  std::size_t step = SIZE_MAX;
  for (const Observation& o : log.entries()) {
    if (o.step != step) {
      step = o.step;
      out << "  step " << step + 1 << ": " << describe(scenario.steps[step]) << "\n";
    }
    out << "    " << observable(o) << " = " << value(o) << "\n";
  }
  return out.str();
}

}  // namespace ringsim::conformance
