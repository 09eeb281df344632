// --control as perf 6.1's: a file descriptor (or FIFO) the recorder polls
// with its rings for one-line commands, and an optional one it answers
// on (util/evlist.c: evlist__parse_control, evlist__ctlfd_recv,
// evlist__ctlfd_process, evlist__ctlfd_ack; builtin-record.c's loop).
//
//   --control fifo:CTL[,ACK]  both opened O_RDWR | O_NONBLOCK (the other
//                             end need not be open, and a writer that
//                             closes and opens it again is no hang-up)
//   --control fd:CTL[,ACK]    descriptors the recorder inherited
//
// A command is the bytes up to '\n' or '\0' (at most kControlCommandMax
// - 1), recognised by its start, as perf's strncmp: enable [NAME],
// disable [NAME] (every event, or those named NAME: -e's text), snapshot,
// evlist, stop, ping. After each but snapshot and the unknown ones the
// answer "ack\n" and its NUL (5 bytes, perf's sizeof) goes to ACK; the
// recorder answers snapshot itself (perf's record loop does), which has
// nothing to snapshot here (no AUX area). stop ends the recording as
// SIGINT would (the command, if still running, gets SIGTERM, as perf).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "real/error.h"

namespace ringsim::real {

inline constexpr std::size_t kControlCommandMax = 100;  // perf's EVLIST_CTL_CMD_MAX_LEN

// The descriptors of --control; opened ones (fifo:) are closed by the
// owner (close_control).
struct ControlFds {
  int ctl = -1;
  int ack = -1;
  bool owned = false;  // fifo: opened here
};

// Checks the syntax of --control's value as perf's evlist__parse_control
// (fifo:PATH[,PATH] with a non-empty first path; fd:N[,M] numbers). "" or
// the problem, one line naming the option.
std::string check_control(std::string_view text);

// Opens fifo: paths (O_RDWR | O_NONBLOCK | O_CLOEXEC) or checks that fd:
// numbers are open descriptors (and makes CTL non-blocking).
Error open_control(std::string_view text, ControlFds& out);
void close_control(ControlFds& fds);

enum class ControlCommand : std::uint8_t { none, enable, disable, snapshot, evlist, stop, ping, unsupported };
const char* control_command_name(ControlCommand c);

// One command read from `fd` (non-blocking): `command` and the text after
// "enable "/"disable "/"evlist " in `argument` ("" when none). none when
// nothing was there (EAGAIN, or the writer hung up: *hung_up). Bounded: at
// most kControlCommandMax - 1 bytes.
ControlCommand read_control_command(int fd, std::string& argument, bool* hung_up);

// Whether a command of this kind is answered "ack" (perf's
// evlist__ctlfd_process; snapshot is answered by the record loop).
bool control_acks(ControlCommand c);
// Writes perf's "ack\n" and its NUL to `fd` (no-op for -1).
Error write_control_ack(int fd);

// What the commands did, for the summary.
struct ControlStats {
  std::uint64_t commands = 0;  // read, of any kind
  std::uint64_t enables = 0;
  std::uint64_t disables = 0;
  std::uint64_t acks = 0;      // answers written
  std::uint64_t unknown = 0;   // unsupported or malformed
  std::uint64_t errors = 0;    // an enable/disable or an ack that failed
  bool stopped = false;        // a stop command ended the recording
  bool hung_up = false;        // the writer closed its end (fd:)
};

// Serves --control's commands on the thread that polls (RealSession::
// watch_control), through the recorder's actions.
class ControlServer {
 public:
  struct Actions {
    // Enables (or disables) every event (name "") or those named so;
    // *found: whether any has that name.
    std::function<Error(bool enable, const std::string& name, bool* found)> enable;
    std::function<std::string()> event_names;  // "a, b" for evlist
    std::function<void()> stop;
  };
  ControlServer(const ControlFds& fds, Actions actions, bool quiet)
      : fds_(fds), actions_(std::move(actions)), quiet_(quiet) {}
  // One command, as perf's evlist__ctlfd_process and its record loop: false
  // once the writer hung up (not polled again).
  bool serve();
  const ControlStats& stats() const { return stats_; }

 private:
  void say(const std::string& line) const;
  void enable(bool on, const std::string& argument);
  ControlFds fds_;
  Actions actions_;
  bool quiet_;
  ControlStats stats_;
};

}  // namespace ringsim::real
