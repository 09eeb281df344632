// The real side of the suite: the scenario's events through
// perf_event_open on this machine's kernel, as root. The calling thread and
// the scenario's child are pinned to CPU 0; events are opened disabled and
// with exclude_kernel (their samples come from user space: syscall
// tracepoints take the user registers, page faults are the user's own).
// Records on demand: syscall(SYS_getpid/getppid/getuid) under
// syscalls:sys_enter_* tracepoints (one sample each; nothing else in the
// process makes these calls), prctl(PR_SET_NAME) for COMM, fork() for FORK,
// an executable file mapping for MMAP2, the first store to a fresh
// anonymous page for a page-fault sample. docs/conformance.md says more.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/conformance/backend.h"

namespace ringsim::conformance {

class RealKernel final : public Backend {
 public:
  // Mounts tracefs at /sys/kernel/tracing if it is missing. Returns false
  // with one line in `why` if perf_event_open or the tracepoints cannot be
  // used here (not root, a user namespace, no tracefs).
  static bool available(std::string& why);

  explicit RealKernel(const SuiteFiles& files);
  ~RealKernel() override;
  RealKernel(const RealKernel&) = delete;
  RealKernel& operator=(const RealKernel&) = delete;

  void begin(const Scenario& scenario) override;
  const SuiteFiles& files() const override { return files_; }
  void end() override;
  int open(std::size_t event) override;
  std::uint64_t id(std::size_t event) override;
  int map(std::size_t event, std::uint32_t data_pages, bool writable) override;
  void unmap(std::size_t event) override;
  int map_aux(std::size_t event, const AuxAsk& ask, bool writable) override;
  int set_output(std::size_t event, std::size_t target) override;
  int control(std::size_t event, Op op) override;
  void act(Action action, bool by_child, const std::string& name) override;
  void spawn_child() override;
  void child_exit() override;
  short child_exit_polling(std::size_t event) override;
  short poll(std::size_t event) override;
  std::uint64_t head(std::size_t owner) override;
  std::span<const std::byte> data(std::size_t owner) override;
  void store_tail(std::size_t owner, std::uint64_t tail) override;
  ReadValues read_values(std::size_t event) override;
  ControlPage control_page(std::size_t owner) override;
  Who who(std::uint32_t pid) override;
  bool scenario_mapping(std::uint64_t address) override;

 private:
  static constexpr std::size_t kEventsMax = 8;
  struct Event {
    int fd = -1;
    std::uint64_t id = 0;
    void* mapping = nullptr;
    std::size_t mapping_bytes = 0;
    std::uint32_t pages = 0;
  };
  static constexpr std::size_t kChildrenMax = kWhoForked - kWhoChild;
  static constexpr std::size_t kForkedMax = kWhoOther - kWhoForked;
  static constexpr std::size_t kMappingsMax = 256;
  void order_child(char op, std::uint32_t count);
  void wait_until_child_sleeps();
  void reap_child();
  void touch_fresh_page();

  const SuiteFiles& files_;
  const Scenario* scenario_ = nullptr;
  std::array<Event, kEventsMax> events_{};
  std::array<std::uint64_t, 3> tracepoint_ids_{};  // getpid, getppid, getuid
  pid_t child_ = -1;
  pid_t pid_ = 0;  // getpid() is a system call: a getpid tracepoint would see who() call it
  // Whose pids the records may carry: the children of spawn_child, those
  // of fork actions; the addresses of the executable mappings.
  std::array<pid_t, kChildrenMax> children_{};
  std::size_t spawned_ = 0;
  std::array<pid_t, kForkedMax> forked_{};
  std::size_t forks_ = 0;
  std::array<std::uint64_t, kMappingsMax> mappings_{};
  std::size_t mapped_ = 0;
  int to_child_ = -1;
  int from_child_ = -1;
  char* fresh_pages_ = nullptr;
  std::size_t fresh_pages_used_ = 0;
  char name_[16] = {};  // the thread's name before the scenario
};

}  // namespace ringsim::conformance
