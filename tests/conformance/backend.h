// A kernel the suite runs scenarios on: the real one (real_kernel.h) or the
// simulated one (sim_kernel.h). The runner (runner.h) interprets the steps,
// reads the rings and logs the observables the same way for both; a
// backend only does the calls. Calls that can fail return 0 or an errno.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "tests/conformance/scenario.h"

namespace ringsim::conformance {

// What both backends are given: the file whose executable mapping makes
// an MMAP2 record (its path decides the record's size).
struct SuiteFiles {
  std::string exec_file;
  // Whether mapping its first page gives the kernel a build-id
  // (build_id_parse: a GNU build-id note inside that page).
  bool exec_has_build_id = false;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // A scenario starts (nothing open) and ends (everything closed, the
  // child reaped).
  virtual void begin(const Scenario& scenario) = 0;
  virtual void end() = 0;

  virtual int open(std::size_t event) = 0;
  // The id the event's records carry (PERF_EVENT_IOC_ID).
  virtual std::uint64_t id(std::size_t event) = 0;
  virtual int map(std::size_t event, std::uint32_t data_pages, bool writable) = 0;
  virtual void unmap(std::size_t event) = 0;
  virtual int set_output(std::size_t event, std::size_t target) = 0;
  virtual int control(std::size_t event, Op op) = 0;  // enable, disable, pause, resume

  // One action of this thread or of the child.
  virtual void act(Action action, bool by_child, const std::string& name) = 0;
  virtual void spawn_child() = 0;
  virtual void child_exit() = 0;
  // A poll of `event` that blocks (5 s at most) while the child exits.
  virtual short child_exit_polling(std::size_t event) = 0;

  virtual short poll(std::size_t event) = 0;  // timeout 0
  // The ring `event` owns (mapped with data pages): its head and data.
  virtual std::uint64_t head(std::size_t owner) = 0;
  virtual std::span<const std::byte> data(std::size_t owner) = 0;
  virtual void store_tail(std::size_t owner, std::uint64_t tail) = 0;
  virtual std::uint64_t lost_samples(std::size_t event) = 0;
  // The control page's data_offset and data_size.
  virtual std::uint64_t data_offset(std::size_t owner) = 0;
  virtual std::uint64_t data_size(std::size_t owner) = 0;
};

}  // namespace ringsim::conformance
