#include "real/thread_priority.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <thread>

namespace ringsim::real {
namespace {

bool parse_int(std::string_view text, int& out) {
  if (text.empty() || text.size() > 4) return false;
  const std::string s(text);
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (end == nullptr || *end != '\0') return false;
  out = static_cast<int>(v);
  return true;
}

Error set_fifo(int priority) {
  sched_param param{};
  param.sched_priority = priority;
  const int rc = ::pthread_setschedparam(::pthread_self(), SCHED_FIFO, &param);
  if (rc == 0) return Error{};
  return Error{rc, "SCHED_FIFO " + std::to_string(priority) + ": pthread_setschedparam: " + errno_text(rc) +
                       (rc == EPERM ? ": needs root or CAP_SYS_NICE (or RLIMIT_RTPRIO)" : "")};
}

Error set_nice(int value) {
  const pid_t tid = static_cast<pid_t>(::gettid());
  if (::setpriority(PRIO_PROCESS, static_cast<id_t>(tid), value) == 0) return Error{};
  const int e = errno;
  return Error{e, "nice " + std::to_string(value) + ": setpriority: " + errno_text(e) +
                      (e == EACCES || e == EPERM ? ": needs root or CAP_SYS_NICE (or RLIMIT_NICE)" : "")};
}

}  // namespace

std::string parse_thread_priority(std::string_view text, ThreadPriority& out) {
  ThreadPriority p;
  const std::size_t colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  const bool has_value = colon != std::string_view::npos;
  const std::string_view value = has_value ? text.substr(colon + 1) : std::string_view{};
  const std::string given(text);
  if (kind == "auto" || kind == "off") {
    if (has_value) return given + ": " + std::string(kind) + " takes no value";
    p.kind = kind == "auto" ? ThreadPriority::Kind::automatic : ThreadPriority::Kind::normal;
  } else if (kind == "fifo") {
    p.kind = ThreadPriority::Kind::fifo;
    p.value = 1;
    if (has_value && (!parse_int(value, p.value) || p.value < 1 || p.value > 99)) {
      return given + ": the SCHED_FIFO priority must be 1..99";
    }
  } else if (kind == "nice") {
    p.kind = ThreadPriority::Kind::nice;
    p.value = -20;
    if (has_value && (!parse_int(value, p.value) || p.value < -20 || p.value > 19)) {
      return given + ": the nice value must be -20..19";
    }
  } else {
    return given + ": expected auto, off, fifo[:N] or nice[:N]";
  }
  out = p;
  return "";
}

std::string to_string(const ThreadPriority& p) {
  switch (p.kind) {
    case ThreadPriority::Kind::automatic: return "auto";
    case ThreadPriority::Kind::normal: return "normal";
    case ThreadPriority::Kind::fifo: return "SCHED_FIFO " + std::to_string(p.value);
    case ThreadPriority::Kind::nice: return "nice " + std::to_string(p.value);
  }
  return "?";
}

PriorityOutcome apply_thread_priority(const ThreadPriority& wanted) {
  PriorityOutcome out;
  switch (wanted.kind) {
    case ThreadPriority::Kind::normal:
      out.got = wanted;
      return out;
    case ThreadPriority::Kind::fifo:
      out.error = set_fifo(wanted.value);
      out.got = out.error.ok() ? wanted : ThreadPriority{ThreadPriority::Kind::normal, 0};
      return out;
    case ThreadPriority::Kind::nice:
      out.error = set_nice(wanted.value);
      out.got = out.error.ok() ? wanted : ThreadPriority{ThreadPriority::Kind::normal, 0};
      return out;
    case ThreadPriority::Kind::automatic:
      break;
  }
  const int policy = ::sched_getscheduler(0);
  if (policy == SCHED_FIFO || policy == SCHED_RR) {
    sched_param param{};
    ::sched_getparam(0, &param);
    out.got = ThreadPriority{ThreadPriority::Kind::fifo, param.sched_priority};
    return out;  // -r: the whole recorder runs real-time already
  }
  const Error fifo = set_fifo(1);
  if (fifo.ok()) {
    out.got = ThreadPriority{ThreadPriority::Kind::fifo, 1};
    return out;
  }
  const Error nice = set_nice(-20);
  if (nice.ok()) {
    out.got = ThreadPriority{ThreadPriority::Kind::nice, -20};
    out.fallback = fifo.message;
    return out;
  }
  out.got = ThreadPriority{ThreadPriority::Kind::normal, 0};
  out.fallback = fifo.message + "; " + nice.message;
  return out;
}

PriorityOutcome probe_thread_priority(const ThreadPriority& wanted) {
  PriorityOutcome out;
  std::thread probe([&] { out = apply_thread_priority(wanted); });
  probe.join();
  return out;
}

}  // namespace ringsim::real
