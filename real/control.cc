#include "real/control.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>

namespace ringsim::real {
namespace {

const std::string kUsage = "expected fifo:CTL[,ACK] or fd:CTL[,ACK] (as perf)";

bool parse_fd(std::string_view text, int& fd_out) {
  int fd = -1;
  const auto parsed = std::from_chars(text.data(), text.data() + text.size(), fd);
  if (text.empty() || parsed.ec != std::errc{} || parsed.ptr != text.data() + text.size() || fd < 0) return false;
  fd_out = fd;
  return true;
}

Error open_fifo(const std::string& path, int& fd_out) {
  // O_RDWR: no POLLHUP when a writer closes (perf's comment), and the
  // open does not wait for the other end.
  const int fd = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    return Error{error, "--control: cannot open " + path + ": " + errno_text(error) +
                            (error == ENOENT ? ": create the FIFO first (mkfifo " + path + ")" : "")};
  }
  fd_out = fd;
  return Error{};
}

Error check_fd(int fd, const char* which) {
  if (::fcntl(fd, F_GETFD) < 0) {
    return Error{EBADF, std::string("--control fd: ") + which + " " + std::to_string(fd) +
                            " is not an open file descriptor of the recorder"};
  }
  return Error{};
}

}  // namespace

std::string check_control(std::string_view text) {
  const std::string what = "--control " + std::string(text) + ": ";
  const std::size_t comma = text.find(',');
  if (text.rfind("fifo:", 0) == 0) {
    const std::string_view ctl = text.substr(5, comma == std::string_view::npos ? comma : comma - 5);
    if (ctl.empty()) return what + "no control FIFO path; " + kUsage;
    return "";
  }
  if (text.rfind("fd:", 0) != 0) return what + kUsage;
  int fd = -1;
  if (!parse_fd(text.substr(3, comma == std::string_view::npos ? comma : comma - 3), fd)) {
    return what + "the control descriptor is not a number; " + kUsage;
  }
  if (comma != std::string_view::npos && !parse_fd(text.substr(comma + 1), fd)) {
    return what + "the ack descriptor is not a number; " + kUsage;
  }
  return "";
}

Error open_control(std::string_view text, ControlFds& out) {
  if (const std::string problem = check_control(text); !problem.empty()) return Error{EINVAL, problem};
  const std::size_t comma = text.find(',');
  ControlFds fds;
  if (text.rfind("fifo:", 0) == 0) {
    fds.owned = true;
    const std::string ctl(text.substr(5, comma == std::string_view::npos ? comma : comma - 5));
    if (Error e = open_fifo(ctl, fds.ctl); !e.ok()) return e;
    // perf: an empty ACK after the comma is no ACK.
    if (comma != std::string_view::npos && comma + 1 < text.size()) {
      if (Error e = open_fifo(std::string(text.substr(comma + 1)), fds.ack); !e.ok()) {
        close_control(fds);
        return e;
      }
    }
  } else {
    (void)parse_fd(text.substr(3, comma == std::string_view::npos ? comma : comma - 3), fds.ctl);
    if (Error e = check_fd(fds.ctl, "CTL"); !e.ok()) return e;
    if (comma != std::string_view::npos) {
      (void)parse_fd(text.substr(comma + 1), fds.ack);
      if (Error e = check_fd(fds.ack, "ACK"); !e.ok()) return e;
    }
    // Read as perf reads it: a byte at a time until EAGAIN.
    const int flags = ::fcntl(fds.ctl, F_GETFL);
    if (flags < 0 || ::fcntl(fds.ctl, F_SETFL, flags | O_NONBLOCK) < 0) {
      const int error = errno;
      return Error{error, "--control fd: cannot make " + std::to_string(fds.ctl) + " non-blocking: " + errno_text(error)};
    }
  }
  out = fds;
  return Error{};
}

void close_control(ControlFds& fds) {
  if (fds.owned) {
    if (fds.ctl >= 0) ::close(fds.ctl);
    if (fds.ack >= 0) ::close(fds.ack);
  }
  fds = ControlFds{};
}

const char* control_command_name(ControlCommand c) {
  switch (c) {
    case ControlCommand::none: return "none";
    case ControlCommand::enable: return "enable";
    case ControlCommand::disable: return "disable";
    case ControlCommand::snapshot: return "snapshot";
    case ControlCommand::evlist: return "evlist";
    case ControlCommand::stop: return "stop";
    case ControlCommand::ping: return "ping";
    case ControlCommand::unsupported: return "unsupported";
  }
  return "?";
}

ControlCommand read_control_command(int fd, std::string& argument, bool* hung_up) {
  std::string text;
  argument.clear();
  // Bounded: at most kControlCommandMax - 1 bytes, EINTR retried as many times.
  for (std::size_t tries = 0; text.size() < kControlCommandMax - 1 && tries < 2 * kControlCommandMax; tries++) {
    char c = 0;
    const ssize_t got = ::read(fd, &c, 1);
    if (got < 0 && errno == EINTR) continue;
    if (got == 0 && hung_up != nullptr) *hung_up = true;
    if (got <= 0 || c == '\n' || c == '\0') break;
    text.push_back(c);
  }
  if (text.empty()) return ControlCommand::none;
  struct Tag {
    std::string_view tag;
    ControlCommand command;
  };
  static constexpr Tag kTags[] = {{"enable", ControlCommand::enable}, {"disable", ControlCommand::disable},
                                  {"snapshot", ControlCommand::snapshot}, {"evlist", ControlCommand::evlist},
                                  {"stop", ControlCommand::stop}, {"ping", ControlCommand::ping}};
  for (const Tag& t : kTags) {
    if (text.rfind(t.tag, 0) != 0) continue;
    argument = text.substr(t.tag.size());  // "" or " NAME" (perf: anything else is malformed)
    return t.command;
  }
  argument = text;
  return ControlCommand::unsupported;
}

bool control_acks(ControlCommand c) {
  return c != ControlCommand::none && c != ControlCommand::unsupported && c != ControlCommand::snapshot;
}

Error write_control_ack(int fd) {
  if (fd < 0) return Error{};
  static constexpr char kAck[] = "ack\n";  // with its NUL: sizeof, as perf writes it
  const ssize_t wrote = ::write(fd, kAck, sizeof kAck);
  if (wrote != static_cast<ssize_t>(sizeof kAck)) {
    const int error = wrote < 0 ? errno : EIO;
    return Error{error, "--control: writing the ack: " + errno_text(error)};
  }
  return Error{};
}

void ControlServer::say(const std::string& line) const {
  if (!quiet_) std::fprintf(stderr, "ringsim-record: control: %s\n", line.c_str());
}

// perf's evlist__ctlfd_enable: "enable", or "enable NAME" (one space);
// anything else after the word is "failed: wrong command".
void ControlServer::enable(bool on, const std::string& argument) {
  const char* done = on ? "enabled" : "disabled";
  if (!argument.empty() && (argument[0] != ' ' || argument.size() == 1)) {
    stats_.unknown++;
    say("failed: wrong command");
    return;
  }
  const std::string name = argument.empty() ? "" : argument.substr(1);
  bool found = true;
  const Error e = actions_.enable(on, name, &found);
  if (!e.ok()) {
    stats_.errors++;
    say("failed: " + e.message);
    return;
  }
  if (!found) {
    say("failed: can't find '" + name + "' event");
    return;
  }
  (on ? stats_.enables : stats_.disables)++;
  say(name.empty() ? std::string("events ") + done : "event " + name + " " + done);
}

bool ControlServer::serve() {
  std::string argument;
  bool hung_up = false;
  const ControlCommand c = read_control_command(fds_.ctl, argument, &hung_up);
  if (hung_up) stats_.hung_up = true;
  if (c == ControlCommand::none) return !hung_up;
  stats_.commands++;
  switch (c) {
    case ControlCommand::enable:
    case ControlCommand::disable:
      enable(c == ControlCommand::enable, argument);
      break;
    case ControlCommand::evlist:
      say("events: " + actions_.event_names());
      break;
    case ControlCommand::stop:
      stats_.stopped = true;
      actions_.stop();
      break;
    case ControlCommand::unsupported:
      stats_.unknown++;
      say("unknown command \"" + argument + "\" (enable, disable, snapshot, evlist, stop, ping)");
      break;
    case ControlCommand::snapshot:  // perf: an AUX snapshot; no AUX area here
    case ControlCommand::ping:
    case ControlCommand::none:
      break;
  }
  // perf acks snapshot in its record loop, after the AUX snapshot trigger.
  if (control_acks(c) || c == ControlCommand::snapshot) {
    if (const Error e = write_control_ack(fds_.ack); !e.ok()) {
      stats_.errors++;
      say(e.message);
    } else if (fds_.ack >= 0) {
      stats_.acks++;
    }
  }
  return !hung_up;
}

}  // namespace ringsim::real
