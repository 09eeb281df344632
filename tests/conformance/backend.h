// A kernel the suite runs scenarios on: the real one (real_kernel.h) or the
// simulated one (call_backend.h: the interposer's kernel). The runner (runner.h) interprets the steps,
// reads the rings and logs the observables the same way for both; a
// backend only does the calls. Calls that can fail return 0 or an errno.
#pragma once

#include <linux/perf_event.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "tests/conformance/scenario.h"

namespace ringsim::conformance {

// The machine's values of the control page (arch_perf_update_userpage:
// x86 sets cap_user_time and cap_user_time_zero only with a stable native
// sched_clock, pmc_width from the PMU's counter width, cap_user_rdpmc only
// for a hardware event that allows it): what this machine's kernel put in
// the control page of a software event, read once by suite_files() (zero
// where perf_event_open cannot be used). The simulated side reports them as
// they are; docs/conformance.md says so.
struct MachinePage {
  std::uint64_t capabilities = 0;  // the machine's bits: cap_user_rdpmc, cap_user_time, _zero, _short
  std::uint16_t pmc_width = 0;
};

// What both backends are given: the file whose executable mapping makes
// an MMAP2 record (its path decides the record's size).
struct SuiteFiles {
  std::string exec_file;
  // Whether mapping its first page gives the kernel a build-id
  // (build_id_parse: a GNU build-id note inside that page), and which.
  bool exec_has_build_id = false;
  std::array<std::uint8_t, 20> exec_build_id{};
  std::uint8_t exec_build_id_size = 0;
  // What an MMAP2 of it says without build-id: its inode's device
  // (MAJOR/MINOR of i_sb->s_dev), number and generation (i_generation;
  // FS_IOC_GETVERSION, 0 where the file system has none).
  std::uint32_t exec_major = 0, exec_minor = 0;
  std::uint64_t exec_ino = 0, exec_generation = 0;
  MachinePage machine;
};

// What read() gives: the bytes it returned and its u64s in read_format's
// order (value, time_enabled, time_running, id, lost; the ones asked for).
struct ReadValues {
  std::uint32_t bytes = 0;
  std::array<std::uint64_t, 5> words{};
};

// The control page's fields the log shows (never lock, offset, time_*:
// they change at the kernel's updates of the page, whose number and times
// depend on scheduling).
struct ControlPage {
  std::uint32_t version = 0, compat_version = 0, index = 0;
  std::uint64_t capabilities = 0;
  std::uint16_t pmc_width = 0;
  std::uint32_t size = 0;
  std::uint64_t data_offset = 0, data_size = 0, data_tail = 0;
  std::uint64_t aux_head = 0, aux_tail = 0, aux_offset = 0, aux_size = 0;
};

// The fields of a control page the log shows, as a reader loads them
// (data_tail with acquire: another thread may store it).
inline ControlPage read_control_page(const perf_event_mmap_page* page) {
  ControlPage p;
  p.version = page->version;
  p.compat_version = page->compat_version;
  p.index = page->index;
  p.capabilities = page->capabilities;
  p.pmc_width = page->pmc_width;
  p.size = page->size;
  p.data_offset = page->data_offset;
  p.data_size = page->data_size;
  p.data_tail = __atomic_load_n(&page->data_tail, __ATOMIC_ACQUIRE);
  p.aux_head = page->aux_head;
  p.aux_tail = page->aux_tail;
  p.aux_offset = page->aux_offset;
  p.aux_size = page->aux_size;
  return p;
}

// A pid or tid as the log shows it: whose it is, never its number.
enum Who : std::uint8_t {
  kWhoZero = 0,     // 0
  kWhoThis = 1,     // this thread (the runner: its process's main thread, so also its pid)
  kWhoChild = 2,    // + n - 1: the n-th child of spawn_child (up to 8)
  kWhoForked = 16,  // + k - 1: the child of the k-th fork action (up to 238)
  kWhoOther = 254,  // none of the scenario's tasks
  kWhoAbsent = 255, // the record has no such field
};

class Backend {
 public:
  virtual ~Backend() = default;

  // A scenario starts (nothing open) and ends (everything closed, the
  // child reaped).
  virtual void begin(const Scenario& scenario) = 0;
  virtual const SuiteFiles& files() const = 0;
  virtual void end() = 0;

  virtual int open(std::size_t event) = 0;
  // The id the event's records carry (PERF_EVENT_IOC_ID).
  virtual std::uint64_t id(std::size_t event) = 0;
  virtual int map(std::size_t event, std::uint32_t data_pages, bool writable) = 0;
  virtual void unmap(std::size_t event) = 0;
  // Op::map_aux: 0 or the errno; a mapping made is unmapped at once.
  virtual int map_aux(std::size_t event, const AuxAsk& ask, bool writable) = 0;
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
  // read() of the event with its read_format.
  virtual ReadValues read_values(std::size_t event) = 0;
  // The control page of the event's own mapping.
  virtual ControlPage control_page(std::size_t owner) = 0;
  // A pid or tid the records carry, as whose it is.
  virtual Who who(std::uint32_t pid) = 0;
  // Whether an MMAP2's address is one the scenario's executable mappings
  // (Action::mmap_exec) were given.
  virtual bool scenario_mapping(std::uint64_t address) = 0;
};

}  // namespace ringsim::conformance
