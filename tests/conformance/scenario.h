// The conformance suite's scenarios: each a small table of events and steps,
// written once and run against the real kernel (perf_event_open) and the
// simulated one (sim/ring.h), which must log the same observables
// (tests/conformance/observation.h). docs/conformance.md lists them with
// the row of ../shared/fidelity.md each one covers.
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ringsim::conformance {

// What makes an event's samples. The syscall tracepoints
// (syscalls:sys_enter_<name>) give exactly one sample per syscall of the
// traced task and nothing else calls them here; page faults give one per
// first touch of a fresh anonymous page; a dummy event only side-band.
enum class Source : std::uint8_t { getpid, getppid, getuid, page_faults, dummy };
const char* to_string(Source source);

// Whose actions an event follows: this thread (pid 0, cpu -1), this thread
// on CPU 0 only (pid 0, cpu 0), the scenario's child (pid child, cpu -1 or
// cpu 0), or CPU 0 system-wide (pid -1, cpu 0) with a tracepoint filter on
// the child's pid, so that the rest of the machine adds nothing (a dummy
// event cannot be filtered: it sees the side-band of all of CPU 0, this
// thread's included; a scenario does not read its ring).
enum class Target : std::uint8_t { self, self_cpu0, child, child_cpu0, system_cpu0 };

inline constexpr std::uint64_t kReadFormatAll = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
                                                PERF_FORMAT_ID | PERF_FORMAT_LOST;

struct EventSpec {
  Source source = Source::getpid;
  Target target = Target::self;
  std::uint64_t sample_type = 0;
  std::uint32_t stack_user = 0;  // sample_stack_user (with PERF_SAMPLE_STACK_USER)
  bool sample_id_all = false;
  bool comm = false;
  bool task = false;
  bool mmap2 = false;  // attr.mmap2 (and attr.mmap): executable mappings
  bool build_id = false;  // attr.build_id: MMAP2 records carry the file's build-id
  std::uint64_t period = 1;  // attr.sample_period (period mode)
  // attr.freq with this attr.sample_freq (Hz): frequency mode (0: period
  // mode). Its samples' PERIOD adapts to the machine's timing: the log
  // shows it as 1 or as "adapted" (more than 1).
  std::uint64_t freq = 0;
  bool backward = false;  // attr.write_backward
  std::uint32_t wakeup_events = 0;
  bool watermark = false;  // attr.watermark: wakeup_watermark counts, wakeup_events is ignored
  std::uint32_t wakeup_watermark = 0;
  // attr.read_format: what read() gives (Op::read_values). No
  // PERF_FORMAT_GROUP: the vocabulary has no groups.
  std::uint64_t read_format = kReadFormatAll;
  // attr.precise_ip and attr.exclude_guest: what perf's default cycles:P
  // asks (perf sets exclude_guest with any precise modifier), and keeps
  // when it falls back to cpu-clock without a PMU.
  std::uint8_t precise_ip = 0;
  bool exclude_guest = false;
};

// Something the traced task does.
enum class Action : std::uint8_t {
  getpid,    // syscall(SYS_getpid)
  getppid,
  getuid,
  comm,      // prctl(PR_SET_NAME, name)
  fork,      // fork() of a child that exits at once, then waitpid
  mmap_exec, // mmap(PROT_READ | PROT_EXEC) of a file
  fault,     // the first store to a fresh anonymous page
};
const char* to_string(Action action);

enum class Op : std::uint8_t {
  open,           // perf_event_open of `event` (disabled)
  map,            // mmap of `event`: `pages` data pages, `writable` or read-only
  unmap,
  set_output,     // PERF_EVENT_IOC_SET_OUTPUT of `event` to `other`
  enable,         // PERF_EVENT_IOC_ENABLE
  disable,        // PERF_EVENT_IOC_DISABLE
  pause,          // PERF_EVENT_IOC_PAUSE_OUTPUT 1
  resume,         // PERF_EVENT_IOC_PAUSE_OUTPUT 0
  act,            // `action` `count` times by this thread (or the child: `by_child`)
  spawn_child,    // a child process, pinned to CPU 0, waiting for orders
  child_exit,     // the child exits; waitpid
  child_exit_polling,  // a blocking poll of `event` while the child exits
  poll,           // poll (timeout 0) of `event`, then `other` if set
  read,           // the records the reader of `event`'s ring can read now
  consume,        // store data_tail: all read (`count` 0) or `count` bytes more
  read_values,    // read() of the event: what its read_format gives (count, times, id, lost)
  control_page,   // the control page's fields (data_offset, data_size, version, ...)
  map_aux,        // mmap of `event`'s AUX area as `aux` asks (`writable` or read-only); unmapped at once
};

// map_aux: the control page's aux_offset and aux_size (stored first, when
// the event has a mapping), then an mmap of `map_pages` pages at page
// offset `map_offset` (perf_mmap's AUX branch).
struct AuxAsk {
  std::uint32_t offset = 0;
  std::uint32_t size = 0;
  std::uint32_t map_offset = 0;
  std::uint32_t map_pages = 0;
};

inline constexpr std::size_t kNoEvent = 255;

struct Step {
  Op op = Op::act;
  std::size_t event = 0;
  std::size_t other = kNoEvent;
  std::uint32_t pages = 1;
  bool writable = true;
  Action action = Action::getpid;
  std::uint32_t count = 1;
  bool by_child = false;
  // act: poll `event` after each action and log the ones after which it
  // was readable; consume everything whenever more than `consume_above`
  // bytes are unread (0: never).
  bool poll_each = false;
  std::uint32_t consume_above = 0;
  // read of a forward read-only ring that wrapped: the first whole record
  // (a reader of such a ring cannot find it by itself).
  std::uint64_t from = 0;
  // read: also log whether the records' times follow ring order.
  bool time_order = false;
  std::string name;  // comm: the new name
  AuxAsk aux;        // map_aux
};

struct Scenario {
  std::string name;
  std::string rows;     // the rows of fidelity.md it covers
  std::string summary;  // one line: what it checks
  std::vector<EventSpec> events;
  std::vector<Step> steps;
  // After every step, poll every open event and log the result (POLLIN is
  // edge-triggered: a scenario about who sees it polls explicitly).
  bool poll_after_each_step = true;
  // Not empty: a known divergence of the simulated kernel (why), reported
  // as "known" instead of failing while it lasts.
  std::string known;
  // Not empty: why the real kernel's log can depend on the machine's timing
  // in a rare run (frequency mode: the period adapts to the nanoseconds
  // between samples). Each real run is compared with the simulated log; a
  // single run is tried up to 3 times and matches if one attempt does (a
  // wrong simulation differs every time); with --repeat, every run must
  // match, or the scenario is unstable, with how many did not
  // (suite.cc: run_scenario).
  std::string timing;
};

const std::vector<Scenario>& scenarios();

// A row of fidelity.md that cannot be produced on this machine.
struct Unproducible {
  const char* row;
  const char* behaviour;
  const char* why;
  const char* simulated;  // what the simulated kernel does about it
};
const std::vector<Unproducible>& unproducible();

// "A", "B", ... for event indices in the logs.
std::string event_name(std::size_t event);
// One line describing a step, as a mismatch report prints it.
std::string describe(const Step& step);

}  // namespace ringsim::conformance
