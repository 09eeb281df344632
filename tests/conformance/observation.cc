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

constexpr std::size_t kLogCapacity = 1 << 16;

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

}  // namespace

Log::Log() {
  // Touch the whole capacity now, so that adding never faults a page in.
  entries_.resize(kLogCapacity);
  entries_.clear();
}

void Log::add(const Observation& o) {
  VERIFY_MSG(entries_.size() < kLogCapacity, "a scenario logged more than the log holds");
  entries_.push_back(o);
}

std::string observable(const Observation& o) {
  const std::string e = event_name(o.event);
  switch (o.kind) {
    case Kind::result: return "result";
    case Kind::head: return "data_head " + e;
    case Kind::poll: return "poll " + e;
    case Kind::record: return "record " + std::to_string(o.index) + " of " + e + "'s ring";
    case Kind::woke: return "POLLIN " + std::to_string(o.index) + " of " + e;
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
    case Kind::lost_samples:
    case Kind::data_offset:
    case Kind::data_size: return std::to_string(o.value);
    case Kind::time_order: return o.value == 0 ? "ring order" : "goes back at record " + std::to_string(o.value);
    case Kind::overrun: return std::to_string(o.value) + " bytes since the last read";
  }
  return "?";
}

Comparison compare(const Scenario& scenario, const Log& real, const Log& simulated) {
  const std::vector<Observation>& r = real.entries();
  const std::vector<Observation>& s = simulated.entries();
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
