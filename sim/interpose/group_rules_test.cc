// Event groups (perf_event_open's group_fd), the simulated kernel held
// against this machine's: a member must share its leader's CPU and context
// (the same task, or the same CPU for a CPU-wide leader), a member cannot
// lead, a member is never pinned or exclusive, a per-task member inherits
// as its leader does, and a member's clock (use_clockid, clockid) is its
// leader's (kernel/events/core.c, perf_event_open, perf_event_set_clock
// and perf_event_group_leader_check). Each case is opened on the real kernel
// and on CallKernel; both must give the table's result.
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <ctime>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/call_kernel.h"
#include "sim/decisions.h"

namespace ringsim::sim::interpose {
namespace {

enum class Task { self, self_by_pid, child, none };  // pid 0, getpid(), another process, -1 (CPU-wide)

struct Side {
  Task task = Task::self;
  int cpu = 0;
  bool inherit = false;
  bool pinned = false;
  bool exclusive = false;
  int clock = -1;  // -1: the default clock (no use_clockid), else use_clockid with this clockid
};

struct Case {
  const char* name;
  Side leader;
  Side member;
  bool member_of_member = false;  // the group_fd is a member of the leader's group
  int error = 0;                  // what Linux answers: 0 (opened) or the errno
};

perf_event_attr attr_of(const Side& s) {
  perf_event_attr a{};
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_CPU_CLOCK;
  a.sample_period = 1'000'000;
  a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
  a.disabled = 1;
  a.inherit = s.inherit;
  a.pinned = s.pinned;
  a.exclusive = s.exclusive;
  a.use_clockid = s.clock >= 0;
  a.clockid = s.clock >= 0 ? s.clock : 0;
  return a;
}

int pid_of(Task t, int self, int child) {
  switch (t) {
    case Task::self: return 0;
    case Task::self_by_pid: return self;
    case Task::child: return child;
    case Task::none: return -1;
  }
  return 0;
}

// What a backend needs: open(attr, pid, cpu, group) -> fd/index or -errno.
template <class Open>
int outcome(const Case& c, int self, int child, Open&& open, std::vector<long>& opened) {
  const perf_event_attr leader_attr = attr_of(c.leader);
  const long leader = open(leader_attr, pid_of(c.leader.task, self, child), c.leader.cpu, -1);
  if (leader < 0) return static_cast<int>(-leader) + 1000;  // the leader itself failed: never expected
  opened.push_back(leader);
  long group = leader;
  if (c.member_of_member) {
    const long first = open(leader_attr, pid_of(c.leader.task, self, child), c.leader.cpu, static_cast<int>(leader));
    if (first < 0) return static_cast<int>(-first) + 2000;
    opened.push_back(first);
    group = first;
  }
  const long member = open(attr_of(c.member), pid_of(c.member.task, self, child), c.member.cpu, static_cast<int>(group));
  if (member < 0) return static_cast<int>(-member);
  opened.push_back(member);
  return 0;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"same task, same CPU", {Task::self, 0}, {Task::self, 0}, false, 0},
      {"same task named by pid 0 and by its pid", {Task::self, 0}, {Task::self_by_pid, 0}, false, 0},
      {"same task, any CPU", {Task::self, -1}, {Task::self, -1}, false, 0},
      {"same CPU-wide context", {Task::none, 0}, {Task::none, 0}, false, 0},
      {"same task, another CPU", {Task::self, 0}, {Task::self, 1}, false, EINVAL},
      {"a CPU's member of an any-CPU leader", {Task::self, -1}, {Task::self, 0}, false, EINVAL},
      {"another task", {Task::self, 0}, {Task::child, 0}, false, EINVAL},
      {"a task's member of a CPU-wide leader", {Task::none, 0}, {Task::self, 0}, false, EINVAL},
      {"a member as group_fd", {Task::self, 0}, {Task::self, 0}, true, EINVAL},
      {"a pinned member", {Task::self, 0}, {Task::self, 0, false, true}, false, EINVAL},
      {"an exclusive member", {Task::self, 0}, {Task::self, 0, false, false, true}, false, EINVAL},
      {"inherit differs (per task)", {Task::self, 0, true}, {Task::self, 0, false}, false, EINVAL},
      {"inherit differs (CPU-wide: not checked)", {Task::none, 0, true}, {Task::none, 0, false}, false, 0},
      {"both inherit", {Task::self, 0, true}, {Task::self, 0, true}, false, 0},
      {"the default clock and CLOCK_MONOTONIC", {Task::self, 0}, {Task::self, 0, false, false, false, CLOCK_MONOTONIC}, false,
       EINVAL},
      {"CLOCK_MONOTONIC and the default clock", {Task::self, 0, false, false, false, CLOCK_MONOTONIC}, {Task::self, 0}, false,
       EINVAL},
      {"both CLOCK_MONOTONIC", {Task::self, 0, false, false, false, CLOCK_MONOTONIC},
       {Task::self, 0, false, false, false, CLOCK_MONOTONIC}, false, 0},
      {"CLOCK_MONOTONIC and CLOCK_MONOTONIC_RAW", {Task::self, 0, false, false, false, CLOCK_MONOTONIC},
       {Task::self, 0, false, false, false, CLOCK_MONOTONIC_RAW}, false, EINVAL},
      {"both CLOCK_TAI (CPU-wide)", {Task::none, 0, false, false, false, CLOCK_TAI},
       {Task::none, 0, false, false, false, CLOCK_TAI}, false, 0},
  };
  return all;
}

TEST(GroupRules, TheSimulatedKernelAnswersAsLinux) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  const int self = static_cast<int>(::getpid());
  bool permitted = true;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    std::vector<long> real_fds;
    const int real = outcome(
        c, self, child,
        [](const perf_event_attr& a, int pid, int cpu, int group) -> long {
          perf_event_attr copy = a;
          const long fd = ::syscall(SYS_perf_event_open, &copy, pid, cpu, group, PERF_FLAG_FD_CLOEXEC);
          return fd < 0 ? -errno : fd;
        },
        real_fds);
    for (const long fd : real_fds) ::close(static_cast<int>(fd));
    if (real == EACCES + 1000 || real == EPERM + 1000) {
      permitted = false;
      break;
    }
    EXPECT_EQ(real, c.error) << "this kernel answers otherwise than the table (Linux changed?)";
    DecisionSource d(1, false);
    CallKernel k(d, KernelParams{});
    std::vector<long> sim_events;
    const int simulated = outcome(
        c, self, child,
        [&](const perf_event_attr& a, int pid, int cpu, int group) -> long { return k.open(a, pid, cpu, group, 0, self); },
        sim_events);
    EXPECT_EQ(simulated, real) << "the simulated kernel answers otherwise than Linux";
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  if (!permitted) GTEST_SKIP() << "perf_event_open is not permitted here (needs root or perf_event_paranoid <= 0)";
}

// use_clockid alone (perf_event_set_clock): five clocks open, every other
// clockid (CPU-time clocks, coarse clocks, alarms, dynamic clocks: negative)
// is EINVAL; without use_clockid the clockid is not read.
TEST(GroupRules, TheClocksAnEventMayUseAreLinuxs) {
  const int self = static_cast<int>(::getpid());
  int opened_real = 0;
  for (int clock = -3; clock <= 16; clock++) {
    for (const bool use : {true, false}) {
      SCOPED_TRACE("clockid " + std::to_string(clock) + (use ? " with" : " without") + " use_clockid");
      perf_event_attr a = attr_of(Side{});
      a.use_clockid = use;
      a.clockid = clock;
      const long fd = ::syscall(SYS_perf_event_open, &a, 0, 0, -1, PERF_FLAG_FD_CLOEXEC);
      const int real = fd < 0 ? errno : 0;
      if (fd >= 0) ::close(static_cast<int>(fd));
      if (real == EACCES || real == EPERM) GTEST_SKIP() << "perf_event_open is not permitted here";
      opened_real += real == 0;
      DecisionSource d(1, false);
      CallKernel k(d, KernelParams{});
      const long event = k.open(a, 0, 0, -1, 0, self);
      EXPECT_EQ(event < 0 ? static_cast<int>(-event) : 0, real) << "the simulated kernel answers otherwise than Linux";
    }
  }
  EXPECT_EQ(opened_real, 20 + 5) << "every clockid without use_clockid, five with it";
}

}  // namespace
}  // namespace ringsim::sim::interpose
