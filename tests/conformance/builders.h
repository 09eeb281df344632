// The builders the scenarios are written with (scenarios.cc) and the
// generated scenarios are built and printed with (generator.cc): events
// (`tp(Source::getpid, sample_type)`, `on(Target::child, e)`, ...) and
// steps that read as the scenario's table (`open(A)`, `map(A, 4)`,
// `getpid(10)`, `read(A)`, ...). In their own namespace: `open`, `read`,
// `poll` would hide the system calls of the same names.
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "tests/conformance/scenario.h"

namespace ringsim::conformance::builders {

inline EventSpec tp(Source source, std::uint64_t sample_type) {
  EventSpec e;
  e.source = source;
  e.sample_type = sample_type;
  return e;
}
inline EventSpec with_id_all(EventSpec e) {
  e.sample_id_all = true;
  return e;
}
inline EventSpec backward(EventSpec e) {
  e.backward = true;
  return e;
}
inline EventSpec on(Target target, EventSpec e) {
  e.target = target;
  return e;
}
inline EventSpec task(EventSpec e) {
  e.task = true;
  return e;
}
inline EventSpec wakeups(std::uint32_t events, EventSpec e) {
  e.wakeup_events = events;
  return e;
}
inline EventSpec watermark(std::uint32_t bytes, EventSpec e) {
  e.watermark = true;
  e.wakeup_watermark = bytes;
  return e;
}
// A sample of exactly `bytes` (>= 32): IDENTIFIER and a user stack.
inline EventSpec every(std::uint64_t period, EventSpec e) {
  e.period = period;
  return e;
}
// Frequency mode: attr.freq, `hz` samples a second.
inline EventSpec at_frequency(std::uint64_t hz, EventSpec e) {
  e.freq = hz;
  return e;
}
inline EventSpec sized(std::uint32_t bytes) {
  EventSpec e = tp(Source::getpid, PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_STACK_USER);
  e.stack_user = bytes - 32;
  return e;
}

inline Step op(Op o, std::size_t event) {
  Step s;
  s.op = o;
  s.event = event;
  return s;
}
inline Step open(std::size_t e) { return op(Op::open, e); }
inline Step map(std::size_t e, std::uint32_t pages = 1) {
  Step s = op(Op::map, e);
  s.pages = pages;
  return s;
}
inline Step map_read_only(std::size_t e, std::uint32_t pages = 1) {
  Step s = map(e, pages);
  s.writable = false;
  return s;
}
inline Step unmap(std::size_t e) { return op(Op::unmap, e); }
// mmap of e's AUX area: aux_offset, aux_size, then `map_pages` pages at
// page offset `map_offset` (the same as aux_offset unless given).
inline Step map_aux(std::size_t e, std::uint32_t offset, std::uint32_t size, std::uint32_t map_pages,
                    std::uint32_t map_offset = UINT32_MAX) {
  Step s = op(Op::map_aux, e);
  s.aux = AuxAsk{offset, size, map_offset == UINT32_MAX ? offset : map_offset, map_pages};
  return s;
}
inline Step set_output(std::size_t e, std::size_t target) {
  Step s = op(Op::set_output, e);
  s.other = target;
  return s;
}
inline Step enable(std::size_t e) { return op(Op::enable, e); }
inline Step disable(std::size_t e) { return op(Op::disable, e); }
inline Step pause(std::size_t e) { return op(Op::pause, e); }
inline Step resume(std::size_t e) { return op(Op::resume, e); }
inline Step act(Action a, std::uint32_t count = 1) {
  Step s = op(Op::act, 0);
  s.action = a;
  s.count = count;
  return s;
}
inline Step getpid(std::uint32_t count = 1) { return act(Action::getpid, count); }
inline Step getppid(std::uint32_t count = 1) { return act(Action::getppid, count); }
inline Step getuid(std::uint32_t count = 1) { return act(Action::getuid, count); }
inline Step comm(const char* name, std::uint32_t count = 1) {
  Step s = act(Action::comm, count);
  s.name = name;
  return s;
}
inline Step child_getpid(std::uint32_t count) {
  Step s = getpid(count);
  s.by_child = true;
  return s;
}
// The same action by the child (getpid, getppid, getuid).
inline Step by_child(Step s) {
  s.by_child = true;
  return s;
}
// `count` actions, polling `e` after each; the reader consumes everything
// whenever more than `consume_above` bytes are unread (0: never).
inline Step watch(Step action, std::size_t e, std::uint32_t consume_above = 0) {
  action.event = e;
  action.poll_each = true;
  action.consume_above = consume_above;
  return action;
}
inline Step spawn_child() { return op(Op::spawn_child, 0); }
inline Step child_exit() { return op(Op::child_exit, 0); }
inline Step child_exit_polling(std::size_t e) { return op(Op::child_exit_polling, e); }
inline Step poll(std::size_t e, std::size_t other = kNoEvent) {
  Step s = op(Op::poll, e);
  s.other = other;
  return s;
}
inline Step read(std::size_t e, std::uint64_t from = 0) {
  Step s = op(Op::read, e);
  s.from = from;
  return s;
}
inline Step read_checking_time(std::size_t e) {
  Step s = read(e);
  s.time_order = true;
  return s;
}
inline Step consume(std::size_t e, std::uint32_t bytes = 0) {
  Step s = op(Op::consume, e);
  s.count = bytes;
  return s;
}
inline Step read_values(std::size_t e) { return op(Op::read_values, e); }
inline Step control_page(std::size_t e) { return op(Op::control_page, e); }

using Steps = std::vector<Step>;

inline Steps concat(std::initializer_list<Steps> parts) {
  Steps out;
  for (const Steps& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
// open, map (writable or not), enable: one event on its own ring.
inline Steps start(std::size_t e, std::uint32_t pages = 1, bool writable = true) {
  return {open(e), writable ? map(e, pages) : map_read_only(e, pages), enable(e)};
}

}  // namespace ringsim::conformance::builders
