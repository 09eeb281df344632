// The simulated side of the suite: the scenario's events over the
// simulated kernel's rings (sim/ring.h's SimRing, one per mapping, written
// exactly as sim/kernel.cc writes them: SimRing::output with the writer's
// attributes; sim::poll_event for poll). This file adds the event layer of
// kernel/events/core.c that a step-by-step scenario needs and sim/kernel.cc
// drives from its configuration instead: which events an action reaches
// (enabled, following the acting task, with the attribute that asks for
// the record), records of events without a ring vanish, SET_OUTPUT's
// rules, the child's exit (PERF_RECORD_EXIT into its enabled events, then
// EXIT state: POLLHUP), PAUSE_OUTPUT on the ring, read()'s values per
// event (count, enabled time, id, PERF_FORMAT_LOST), the tasks' pids and
// the side-band bodies (COMM, FORK, EXIT, MMAP2), the control page, the
// order side-band reaches events (perf_iterate_sb: CPU-wide
// events first, then the task's, each list newest first) and the MMAP2
// misc that one event's attr.build_id leaves to the events after it
// (fidelity row 20). It never looks at the real kernel's log.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "model/log.h"
#include "sim/probes.h"
#include "sim/ring.h"
#include "sim/sampling.h"
#include "tests/conformance/backend.h"
#include "tests/conformance/layout.h"

namespace ringsim::conformance {

class SharedSampleData;

class SimKernel final : public Backend {
 public:
  explicit SimKernel(const SuiteFiles& files);

  void begin(const Scenario& scenario) override;
  const SuiteFiles& files() const override { return files_; }
  void end() override;
  int open(std::size_t event) override;
  std::uint64_t id(std::size_t event) override;
  int map(std::size_t event, std::uint32_t data_pages, bool writable) override;
  void unmap(std::size_t event) override;
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

  // The logs of the last scenario's rings (one KernelLog per mapping with
  // data pages), for the model's check of the kernel's rules
  // (model/kernel_rules.h).
  const std::vector<model::KernelLog>& ring_logs() const { return finished_; }

 private:
  static constexpr int kNoRing = -1;
  struct Event {
    bool open = false;
    bool enabled = false;
    bool exited = false;
    bool mapped = false;  // its own mapping
    std::uint64_t opened = 0;  // open order: the kernel's lists put the newest first
    int child = -1;            // the child it was opened on (its own events, the CPU-wide filtered ones)
    int ring = kNoRing;   // index in rings_ (its own or SET_OUTPUT's)
    std::uint64_t lost_samples = 0;
    // Its sampling state (sim/sampling.h): period_left, the adapted
    // period of frequency mode.
    std::optional<sim::PeriodState> periods;
    std::uint64_t count = 0;        // read()'s value
    std::uint64_t time_ns = 0;      // enabled while its context ran (time_enabled = time_running)
    sim::EventAttrs attrs;
  };
  // One mapping: a ring buffer (none without data pages) and its log.
  struct Ring {
    model::CpuLog log;
    sim::Probes probes;
    std::unique_ptr<sim::SimRing> ring;
    sim::RingLayout layout;
    std::uint32_t pages = 0;
  };

  bool follows(std::size_t event, bool by_child) const;
  bool reached(const EventSpec& spec, Action action) const;
  sim::PeriodState::Hit period_fires(std::size_t event);
  std::vector<std::size_t> order(bool sideband) const;
  std::vector<std::size_t> sideband_order() const;
  void sideband(std::size_t event, Action action, const std::string& name, bool& misc_build_id);
  void sample(std::size_t event, Action action, SharedSampleData& shared, std::uint64_t period);
  // `sample_id`: the id the record's id fields carry, if not the event's.
  // `body`: the side-band body (build_record); the TID and CPU fields are
  // the current task's (`current_`) and CPU 0's.
  bool output(std::size_t event, std::uint32_t type, std::uint16_t misc, std::uint32_t size,
              std::optional<std::uint64_t> sample_id = std::nullopt, RecordBody body = {});
  RecordBody sideband_body(Action action, const std::string& name) const;
  void run_events(int child);
  sim::SimRing& ring_of(std::size_t owner);
  void exit_child_events();

  const SuiteFiles& files_;
  const Scenario* scenario_ = nullptr;
  std::vector<Event> events_;
  std::vector<std::unique_ptr<Ring>> rings_;
  std::vector<model::KernelLog> finished_;
  std::vector<std::byte> scratch_;
  std::uint64_t now_ns_ = 0;
  std::uint64_t opens_ = 0;
  bool child_alive_ = false;
  int child_ = -1;  // the children spawned so far, less one
  std::uint32_t forks_ = 0;         // fork actions so far
  std::uint32_t current_ = 0;       // the pid of the task acting now
  std::uint32_t new_child_ = 0;     // FORK: the pid of the task forked
  std::uint64_t mappings_ = 0;      // executable mappings made so far
};

}  // namespace ringsim::conformance
