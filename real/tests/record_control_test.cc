// --control and -D -1 against perf's own (Debian's linux-perf): the same
// commands through the same FIFOs, the same answers ("ack\n" and its NUL),
// the same effect on the file (no sample before "enable"; "stop" ends the
// recording, the command getting SIGTERM, as perf). And the command
// reading and answering alone (real/control.h), over pipes (fd:).
//
// No check depends on timing: each command is written once the previous
// one is answered, the samples are waited for by the command's CPU time
// (children_cpu_ms), and the deadlines only turn a hang into a failure.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "real/control.h"
#include "real/process.h"
#include "real/tests/model_view.h"
#include "real/tests/perf_tools.h"
#include "real/testing/record_testing.h"

namespace ringsim::real {
namespace {

using testing::concat;
using testing::RunResult;

std::vector<std::string> burn(int ms) {
  return {testing::self_path(), "--burn-ms", std::to_string(ms)};
}

// Reads the 5 bytes of an ack from `fd` (non-blocking), waiting at most the
// tests' deadline. "" if none came.
std::string read_ack(int fd) {
  std::string got;
  testing::wait_until([&] {
    char buffer[16];
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) got.append(buffer, static_cast<std::size_t>(n));
    return got.size() >= 5;
  });
  return got;
}

struct Controlled {
  RunResult result;
  std::vector<std::string> acks;  // per command
};

// Runs `argv` (a recorder with --control fifo:dir/ctl,dir/ack -D -1 and
// the burn workload), then sends `commands` in turn, each once the one
// before is answered; `before` runs before each (its index), to wait for
// the workload.
Controlled run_controlled(const std::vector<std::string>& argv, const std::string& dir,
                          const std::vector<std::string>& commands, const std::function<void(Process&, std::size_t)>& before) {
  Controlled c;
  const std::string ctl = dir + "/ctl", ack = dir + "/ack";
  std::filesystem::remove(ctl);
  std::filesystem::remove(ack);
  EXPECT_EQ(::mkfifo(ctl.c_str(), 0600), 0);
  EXPECT_EQ(::mkfifo(ack.c_str(), 0600), 0);
  Process p;
  const Error started = testing::start(p, argv);
  EXPECT_TRUE(started.ok()) << started.message;
  if (!started.ok()) return c;
  // O_RDWR: neither open waits for the recorder to open its end.
  const int ctl_fd = ::open(ctl.c_str(), O_RDWR | O_CLOEXEC);
  const int ack_fd = ::open(ack.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  EXPECT_GE(ctl_fd, 0);
  EXPECT_GE(ack_fd, 0);
  for (std::size_t i = 0; i < commands.size() && ctl_fd >= 0 && ack_fd >= 0; i++) {
    before(p, i);
    const std::string line = commands[i] + "\n";
    EXPECT_EQ(::write(ctl_fd, line.data(), line.size()), static_cast<ssize_t>(line.size()));
    c.acks.push_back(read_ack(ack_fd));
  }
  c.result = testing::finish(p);
  if (ctl_fd >= 0) ::close(ctl_fd);
  if (ack_fd >= 0) ::close(ack_fd);
  return c;
}

// -D -1: nothing sampled while the command burns 150 ms; "enable": samples
// while it burns 200 ms more; "stop": the recording ends (the command gets
// SIGTERM: the recorder ends by it too, as perf). Every command answered
// "ack\n\0" by both.
TEST(RecordControl, EnableAndStopThroughAFifoAsPerf) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("control");
  const std::vector<std::string> commands = {"ping", "evlist", "enable", "stop"};
  std::uint64_t enabled_at_ms = 0;
  const auto before = [&](Process& p, std::size_t i) {
    if (commands[i] == "enable") {
      // Burnt while disabled: none of it may be sampled.
      testing::wait_until([&] { return testing::children_cpu_ms(p.pid()) >= 150 || p.has_exited(); });
      enabled_at_ms = testing::children_cpu_ms(p.pid());
    }
    if (commands[i] == "stop") {
      testing::wait_until([&] { return testing::children_cpu_ms(p.pid()) >= enabled_at_ms + 200 || p.has_exited(); });
    }
  };
  for (const char* who : {"ours", "perf"}) {
    SCOPED_TRACE(who);
    const std::string out = dir + "/" + who + ".data";
    const std::vector<std::string> options = {"-e", "cpu-clock", "-F", "1000", "-D", "-1", "--control",
                                              "fifo:" + dir + "/ctl," + dir + "/ack", "-o", out, "--"};
    const std::vector<std::string> argv =
        std::string(who) == "ours" ? concat(concat({testing::record_path()}, options), burn(30000))
                                   : concat(concat({testing::perf_path(), "record", "-q"}, options), burn(30000));
    Controlled c;
    const auto once = [&] {
      c = run_controlled(argv, dir, commands, before);
      return c.result;
    };
    const RunResult r = std::string(who) == "ours" ? once() : testing::retry_perf_record(once);
    ASSERT_EQ(c.acks.size(), commands.size()) << r.text();
    for (std::size_t i = 0; i < commands.size(); i++) {
      EXPECT_EQ(c.acks[i], std::string("ack\n\0", 5)) << commands[i];
    }
    EXPECT_TRUE(!r.exited && WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGTERM)
        << "the command got SIGTERM and the recorder ended by it: " << r.text();
    const testing::ModelView view = testing::model_view({out});
    EXPECT_EQ(view.problem, "");
    const std::uint64_t samples = view.loss.samples;
    EXPECT_GT(samples, 100u) << "200 ms of CPU at 1 kHz after enable";
    EXPECT_LT(samples, 2000u) << "none of the time before enable";
    std::printf("%s: -D -1 --control: %llu samples after enable\n", who, static_cast<unsigned long long>(samples));
    if (std::string(who) == "ours") {
      EXPECT_EQ(testing::lines_with(r.err, "control: 4 command(s): 1 enable, 0 disable").size(), 1u) << r.err;
      EXPECT_EQ(testing::lines_with(r.err, "control: events: dummy:HG, cpu-clock").size(), 1u) << r.err;
    }
  }
}

// -D -1 and never "enable": no sample at all, the side-band there, as
// perf's file.
TEST(RecordControl, NeverEnabledRecordsNoSampleAsPerf) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("control-never");
  for (const char* who : {"ours", "perf"}) {
    SCOPED_TRACE(who);
    const std::string out = dir + "/" + who + ".data";
    const std::vector<std::string> options = {"-e", "cpu-clock", "-D", "-1", "--control", "fifo:" + dir + "/ctl",
                                              "-o", out, "--"};
    const std::vector<std::string> argv =
        std::string(who) == "ours" ? concat(concat({testing::record_path()}, options), burn(100))
                                   : concat(concat({testing::perf_path(), "record", "-q"}, options), burn(100));
    Controlled c;
    const auto once = [&] {
      c = run_controlled(argv, dir, {}, [](Process&, std::size_t) {});
      return c.result;
    };
    const RunResult r = std::string(who) == "ours" ? once() : testing::retry_perf_record(once);
    ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
    const testing::ModelView view = testing::model_view({out});
    EXPECT_EQ(view.problem, "");
    EXPECT_EQ(view.loss.samples, 0u);
    const RunResult s = testing::run({testing::perf_path(), "script", "-i", out, "--show-task-events"});
    EXPECT_NE(s.out.find("PERF_RECORD_COMM exec"), std::string::npos) << s.text();
  }
}

// Bad values: one line naming --control, exit 64, no file.
TEST(RecordControl, BadControlValuesAreOneLineErrors) {
  const std::string dir = testing::temp_dir("control-bad");
  for (const std::string& value : {std::string("fifo:") + dir + "/missing", std::string("fd:77"),
                                   std::string("fifo:"), std::string("pipe:x"), std::string("fd:1,x")}) {
    SCOPED_TRACE(value);
    const std::string out = dir + "/never.data";
    const RunResult r = testing::run_record({"-o", out, "--control", value, "--", "true"});
    EXPECT_TRUE(r.exited && r.exit_code == 64) << r.text();
    const std::vector<std::string> errors = testing::lines_with(r.err, "ringsim-record: error:");
    ASSERT_EQ(errors.size(), 1u) << r.text();
    EXPECT_NE(errors[0].find("--control"), std::string::npos) << errors[0];
    EXPECT_FALSE(std::filesystem::exists(out));
  }
}

// The commands alone, over pipes (fd:CTL,ACK): perf's recognition by the
// start of the line, the answers, and the writer's hang-up.
TEST(RecordControl, CommandsAndAcksOverPipes) {
  int ctl[2], ack[2];
  ASSERT_EQ(::pipe(ctl), 0);
  ASSERT_EQ(::pipe2(ack, O_NONBLOCK), 0);
  ControlFds fds;
  ASSERT_TRUE(open_control("fd:" + std::to_string(ctl[0]) + "," + std::to_string(ack[1]), fds).ok());
  std::vector<std::string> enabled;
  bool stopped = false;
  ControlServer::Actions actions;
  actions.enable = [&](bool on, const std::string& name, bool* found) {
    *found = name.empty() || name == "cpu-clock";
    if (*found) enabled.push_back((on ? "+" : "-") + name);
    return Error{};
  };
  actions.event_names = [] { return std::string("cpu-clock"); };
  actions.stop = [&] { stopped = true; };
  ControlServer server(fds, actions, /*quiet=*/true);
  static const char kInput[] = "enable\ndisable cpu-clock\nenable nope\nenablex\nsnapshot\nbogus\0ping\nstop\n";
  const std::string input(kInput, sizeof kInput - 1);
  ASSERT_EQ(::write(ctl[1], input.data(), input.size()), static_cast<ssize_t>(input.size()));
  ::close(ctl[1]);
  int served = 0;
  while (server.serve() && served < 20) served++;
  EXPECT_EQ(enabled, (std::vector<std::string>{"+", "-cpu-clock"}));
  EXPECT_TRUE(stopped);
  const ControlStats& s = server.stats();
  EXPECT_EQ(s.commands, 8u);
  EXPECT_EQ(s.unknown, 2u) << "enablex (malformed), bogus";
  EXPECT_EQ(s.acks, 7u) << "all but bogus";
  EXPECT_TRUE(s.hung_up);
  char buffer[64] = {};
  EXPECT_EQ(::read(ack[0], buffer, sizeof buffer), 35) << "seven acks of 5 bytes";
  EXPECT_EQ(std::string(buffer, 5), std::string("ack\n\0", 5));
  ::close(ctl[0]);
  ::close(ack[0]);
  ::close(ack[1]);
}

}  // namespace
}  // namespace ringsim::real
