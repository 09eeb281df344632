// The interposer's kernel (sim/call_kernel.h: CallKernel, what
// ringsim-run puts under perf record and any other consumer) under the
// conformance suite: the scenarios' calls go through its system-call
// surface (perf_event_open with the scenario's perf_event_attr, mmap of real
// pages, ioctl, read, poll), their actions through its driven workload, and
// the rings are read as a consumer reads them, from the mapped pages. Its
// log is compared with the real kernel's as the suite's own simulated side
// is (docs/conformance.md, "The call kernel"): the first step towards one
// simulated kernel behind the campaign, the suite and the interposer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "model/log.h"
#include "sim/decisions.h"
#include "sim/call_kernel.h"
#include "tests/conformance/backend.h"

namespace ringsim::conformance {

class CallBackend final : public Backend {
 public:
  explicit CallBackend(const SuiteFiles& files);
  ~CallBackend() override;

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

  // The logs of the last scenario's rings (one KernelLog per mapping with
  // data pages), for the model's check of the kernel's rules
  // (model/kernel_rules.h).
  const std::vector<model::KernelLog>& ring_logs() const { return finished_; }

 private:
  struct Mapping {
    void* memory = nullptr;
    std::size_t bytes = 0;
    int ring = -1;  // the kernel's
  };
  perf_event_mmap_page* page(std::size_t owner) const;
  void tick();

  const SuiteFiles& files_;
  const Scenario* scenario_ = nullptr;
  std::unique_ptr<sim::DecisionSource> decisions_;
  std::unique_ptr<sim::CallKernel> kernel_;
  std::vector<int> handles_;          // the kernel's event index per scenario event (-1: not open)
  std::vector<Mapping> mappings_;     // per scenario event: its own mapping
  std::vector<model::KernelLog> finished_;
  std::vector<Mapping> retired_;      // unmapped, kept until end() (the kernel's rings point there)
  int child_ = -1;                    // the children spawned so far, less one
  bool child_alive_ = false;
  std::uint32_t forks_ = 0;
  std::uint64_t exec_mappings_ = 0;
};

}  // namespace ringsim::conformance
