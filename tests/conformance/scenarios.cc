// The scenarios. Unless a scenario says otherwise: events on this thread
// (pid 0, cpu -1), sample_period 1, opened disabled, a 1-page ring
// (4096 bytes of data) mapped writable. docs/conformance.md lists them with
// what the real kernel does in each.
#include <linux/perf_event.h>

#include "tests/conformance/builders.h"
#include "tests/conformance/scenario.h"

namespace ringsim::conformance {
namespace {

using namespace builders;

constexpr std::size_t A = 0, B = 1, C = 2, D = 3, E = 4;

// sample_types and the sizes they give a syscall tracepoint's samples.
constexpr std::uint64_t kBare = 0;                                           // 8 bytes
constexpr std::uint64_t kId = PERF_SAMPLE_IDENTIFIER;                        // 16
constexpr std::uint64_t kIdTid = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID;   // 24
constexpr std::uint64_t kIdTidTime = kIdTid | PERF_SAMPLE_TIME;              // 32; trailer 24
constexpr std::uint64_t kIdTidTimeCpu = kIdTidTime | PERF_SAMPLE_CPU;        // 40; trailer 32
constexpr std::uint64_t kIdTidTimeRaw = kIdTidTime | PERF_SAMPLE_RAW;        // 56; trailer 24

// Records on demand, and their sizes.
void add_records(std::vector<Scenario>& out) {
  out.push_back({"one-sample-per-call", "on demand", "10 getpid calls under sys_enter_getpid: 10 samples of 32 bytes",
                 {tp(Source::getpid, kIdTidTime)}, concat({start(A), {getpid(10), read(A)}})});
  out.push_back({"sizes-from-sample-type", "on demand",
                 "one getpid into four rings: sample_type 0 (8 bytes), 5 u64 fields, RAW, IP/ADDR/ID/STREAM_ID",
                 {tp(Source::getpid, kBare),
                  tp(Source::getpid, kIdTidTimeCpu | PERF_SAMPLE_PERIOD),
                  tp(Source::getpid, kIdTid | PERF_SAMPLE_RAW),
                  tp(Source::getpid, PERF_SAMPLE_IP | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID)},
                 concat({start(A), start(B), start(C), start(D), {getpid(), read(A), read(B), read(C), read(D)}})});
  out.push_back({"sizes-from-user-stack", "on demand",
                 "PERF_SAMPLE_STACK_USER of 0, 8, 1000, 4056, 65496 bytes: samples of 16, 40, 1032, 4088, 65528 bytes",
                 {tp(Source::getpid, PERF_SAMPLE_STACK_USER), sized(40), sized(1032), sized(4088), sized(65528)},
                 concat({start(A), start(B), start(C), start(D), start(E, 16),
                         {getpid(), read(A), read(B), read(C), read(D), read(E)}})});
  out.push_back({"page-fault-samples", "on demand",
                 "a page-fault event: one 24-byte sample per first store to a fresh page",
                 {tp(Source::page_faults, PERF_SAMPLE_TID | PERF_SAMPLE_ADDR)},
                 {open(A), map(A), enable(A), act(Action::fault, 10), disable(A), read(A)}});
  EventSpec precise = tp(Source::page_faults, PERF_SAMPLE_TID | PERF_SAMPLE_IDENTIFIER);
  precise.precise_ip = 3;
  precise.exclude_guest = true;
  out.push_back({"a-precise-software-event-opens", "on demand",
                 "a page-fault event with precise_ip 3 and exclude_guest (what perf's cycles:P becomes without a PMU: "
                 "cpu-clock:pppH) opens and samples a fault as one without them",
                 {precise}, concat({start(A), {act(Action::fault), read(A)}})});
}

// Row 5 (capacity) and row 6 (a record larger than the area).
void add_capacity(std::vector<Scenario>& out) {
  out.push_back({"capacity-8-byte-records", "5",
                 "600 records of 8 bytes: 511 fit (4088, one byte always free); the next carries LOST 89",
                 {tp(Source::getpid, kBare)},
                 concat({start(A), {getpid(600), read_values(A), read(A), consume(A), getpid(), read(A), read_values(A)}})});
  out.push_back({"capacity-24-byte-records", "5",
                 "200 records of 24 bytes: 170 fit (4080); the next carries LOST 30",
                 {tp(Source::getpid, kIdTid)},
                 concat({start(A), {getpid(200), read(A), consume(A), getpid(), read(A), read_values(A)}})});
  out.push_back({"last-record-that-fits", "5",
                 "4088 bytes used; freeing 8 lets one 8-byte record in; LOST + record need 32 free bytes, 31 are not enough",
                 {tp(Source::getpid, kBare)},
                 concat({start(A),
                         {getpid(511), consume(A, 8), getpid(), getpid(), consume(A, 24), getpid(), consume(A, 8),
                          getpid(), read(A, 4088), read_values(A)}})});
  out.push_back({"record-of-the-data-size", "5",
                 "a 4096-byte record never fits a 4096-byte area, even empty; an 8-byte one then carries LOST 1",
                 {sized(4096), tp(Source::getppid, kId)},
                 concat({{open(A), map(A), open(B), set_output(B, A), enable(A), enable(B)},
                         {getpid(), read_values(A), getppid(), read(A)}})});
  out.push_back({"lost-must-fit-with-its-record", "5",
                 "after a drop, a 4088-byte record no longer fits an empty area: LOST (24) + 4088 > 4095",
                 {sized(4088), tp(Source::getppid, kId)},
                 concat({{open(A), map(A), open(B), set_output(B, A), enable(A), enable(B)},
                         {getpid(2), read(A), consume(A), getpid(2), getppid(), read(A), consume(A), getpid(),
                          read(A), read_values(A), read_values(B)}})});
  out.push_back({"larger-than-the-area-writable", "5, 6",
                 "an 8192-byte record into a 4096-byte writable ring: dropped even when empty, LOST with the next",
                 {sized(8192), tp(Source::getppid, kId)},
                 concat({{open(A), map(A), open(B), set_output(B, A), enable(A), enable(B)},
                         {getpid(), getpid(), getppid(), read(A), read_values(A)}})});
  out.push_back({"larger-than-the-area-forward-overwrite", "6",
                 "read-only forward: an 8192-byte record goes in, wrapping onto its own start; head moves by 8192",
                 {sized(8192)}, concat({start(A, 1, false), {getpid(), getpid(), read_values(A)}})});
  out.push_back({"larger-than-the-area-backward-overwrite", "6, 7",
                 "read-only backward: the same, head moving down by 8192",
                 {backward(sized(8192))}, concat({start(A, 1, false), {getpid(), getpid(), read_values(A)}})});
  out.push_back({"record-of-the-data-size-overwrite", "5, 6",
                 "read-only forward: a 4096-byte record fills the area exactly, the next replaces it",
                 {sized(4096)}, concat({start(A, 1, false), {getpid(), read(A), getpid(), read(A, 4096)}})});
}

// Row 4 (the four mappings) and row 7 (LOST in backward mode).
void add_modes(std::vector<Scenario>& out) {
  out.push_back({"forward-overwrite-is-silent", "4",
                 "read-only forward: 200 records of 24 bytes, head 4800, the last 170 readable, no LOST",
                 {tp(Source::getpid, kIdTid)},
                 concat({start(A, 1, false), {getpid(200), read(A, 720), read_values(A)}})});
  out.push_back({"backward-overwrite-walk", "4",
                 "read-only backward: head -4800; a walk up from head reads 170 whole records, no LOST",
                 {backward(tp(Source::getpid, kIdTid))},
                 concat({start(A, 1, false), {getpid(200), read(A), read_values(A)}})});
  out.push_back({"backward-writable-lost-below", "4, 7",
                 "writable backward honours data_tail: drops, then LOST at the lower address and the record above it",
                 {backward(tp(Source::getpid, kIdTid))},
                 concat({start(A), {getpid(200), read(A), consume(A), getpid(), read(A), read_values(A)}})});
  out.push_back({"forward-writable-lost-with-sample-id", "4, 11",
                 "writable forward, sample_id_all: the LOST record carries the writer's 24-byte trailer (48 bytes)",
                 {with_id_all(tp(Source::getpid, kIdTidTime))},
                 concat({start(A), {getpid(150), read(A), consume(A), getpid(), read(A), read_values(A)}})});
}

// Row 3: PAUSE_OUTPUT in the four modes and through a redirected event.
void add_pause(std::vector<Scenario>& out) {
  const EventSpec forward = with_id_all(tp(Source::getpid, kIdTidTime));
  const Steps paused = {getpid(2), pause(A), getpid(5), read_values(A), resume(A), getpid(), read(A), read_values(A)};
  out.push_back({"pause-forward-writable", "3, 4",
                 "2 records, PAUSE_OUTPUT, 5 dropped and counted, resume writes nothing, the next carries LOST 5",
                 {forward}, concat({start(A), paused})});
  out.push_back({"pause-forward-overwrite", "3, 4", "the same on a read-only forward ring", {forward},
                 concat({start(A, 1, false), paused})});
  out.push_back({"pause-backward-writable", "3, 4, 7", "the same on a writable backward ring: LOST below the record",
                 {backward(forward)}, concat({start(A), paused})});
  out.push_back({"pause-backward-overwrite", "3, 4, 7", "the same on a read-only backward ring",
                 {backward(forward)}, concat({start(A, 1, false), paused})});
  out.push_back({"pause-through-a-redirected-event", "3, 11",
                 "PAUSE_OUTPUT through B (SET_OUTPUT to A's ring) stops A's writes too; LOST counts both, with B's id",
                 {forward, with_id_all(tp(Source::getppid, kIdTidTime))},
                 {open(A), map(A), open(B), set_output(B, A), enable(A), enable(B), getpid(2), pause(B), getpid(2),
                  getppid(), resume(B), getppid(), read(A), read_values(A), read_values(B)}});
}

// Rows 11 and 12: LOST ids and counts on a shared ring, loss reports.
void add_lost(std::vector<Scenario>& out) {
  out.push_back({"lost-carries-the-writers-id", "11, 12",
                 "A fills the shared ring, A and B drop; C's record carries LOST {id C, lost A+B} with C's trailer",
                 {with_id_all(tp(Source::getpid, kIdTidTime)), with_id_all(tp(Source::getppid, kIdTidTimeRaw)),
                  with_id_all(tp(Source::getuid, kIdTidTimeCpu))},
                 {open(A), map(A), open(B), set_output(B, A), open(C), set_output(C, A), enable(A), enable(B),
                  enable(C), getpid(130), getppid(4), read(A), consume(A), getuid(), read(A), read_values(A), read_values(B),
                  read_values(C)}});
  EventSpec commed = with_id_all(tp(Source::getpid, kIdTidTime));
  commed.comm = true;
  out.push_back({"lost-carried-by-comm", "11, 12",
                 "drops are reported by the next record of any type: a COMM carries the LOST record",
                 {commed}, concat({start(A), {getpid(130), read(A), consume(A), comm("carrier"), read(A), read_values(A)}})});
  out.push_back({"no-lost-after-exit", "2, 1",
                 "the child's 300 calls into a 1-page ring and its EXIT: 170 records, no LOST ever, 131 lost counted",
                 {task(on(Target::child, tp(Source::getpid, kIdTid)))},
                 concat({{spawn_child()}, start(A), {child_getpid(300), child_exit(), read(A), read_values(A)}})});
  out.push_back({"records-without-a-ring-vanish", "1, 12",
                 "records of an event without a mapping (before mmap, after munmap) vanish uncounted; poll says HUP",
                 {tp(Source::getpid, kIdTid)},
                 {open(A), enable(A), getpid(5), map(A), getpid(3), read(A), read_values(A), unmap(A), getpid(2), read_values(A)}});
  out.push_back({"control-page", "14, 1",
                 "data_offset and data_size of 0, 1, 8 data pages; 3 is refused; a control page alone polls 0",
                 {tp(Source::getpid, kIdTid), tp(Source::getppid, kIdTid), tp(Source::getuid, kIdTid)},
                 {open(A), map(A, 0), control_page(A), enable(A), pause(A), getpid(3), read_values(A), open(B), map(B, 8),
                  control_page(B), open(C), map(C, 3)}});
  out.push_back({"aux-mapping-rules", "23, 14",
                 "perf_mmap's AUX checks in Linux's order (no ring; aux_offset inside the data pages, not the "
                 "mapping's offset; aux_size not its length; 3 pages), then EOPNOTSUPP: a tracepoint has no AUX PMU",
                 {tp(Source::getpid, kIdTid)},
                 {open(A), map_aux(A, 3, 4, 4), map(A, 2), map_aux(A, 2, 4, 4), map_aux(A, 3, 4, 4, 4),
                  map_aux(A, 3, 4, 2), map_aux(A, 3, 3, 3), map_aux(A, 3, 4, 4), map_aux(A, 8, 8, 8)}});
}

// Rows 8 and 9: wakeups.
void add_wakeups(std::vector<Scenario>& out) {
  const EventSpec small = tp(Source::getpid, kIdTid);  // 24 bytes
  out.push_back({"wakeup-half-the-area", "8", "default watermark, half the area: POLLIN after records 86 and 171 (head 2064, 4104), not 85 (2040)",
                 {small}, concat({start(A), {watch(getpid(260), A, 3000)}})});
  out.push_back({"wakeup-backward-overwrite", "8, 4",
                 "the byte watermark counts bytes written going down too: POLLIN after records 86, 171, 257",
                 {backward(small)}, concat({start(A, 1, false), {watch(getpid(260), A)}})});
  out.push_back({"wakeup-every-event", "8", "wakeup_events 1: POLLIN after every sample", {wakeups(1, small)},
                 concat({start(A), {watch(getpid(20), A)}})});
  out.push_back({"wakeup-events-share-the-byte-mark", "8",
                 "wakeup_events 5 and the half-area mark share rb->wakeup: the byte wakeups come one byte late per event wakeup",
                 {wakeups(5, small)}, concat({start(A), {watch(getpid(180), A, 3000)}})});
  out.push_back({"wakeup-watermark-bytes", "8", "watermark 1, wakeup_watermark 100: POLLIN each time 100 bytes are passed",
                 {watermark(100, wakeups(1, small))}, concat({start(A), {watch(getpid(30), A)}})});
  EventSpec second = watermark(100000, small);
  second.source = Source::getppid;
  out.push_back({"wakeup-watermark-beyond-the-area", "8",
                 "wakeup_watermark 100000 is clamped to the area; a reader that waits for POLLIN first never wakes",
                 {watermark(100000, small), second},
                 concat({start(A), start(B), {watch(getpid(350), A, 3000), watch(getppid(200), B)}})});
  EventSpec commed = wakeups(1, small);
  commed.comm = true;
  out.push_back({"wakeup-events-count-samples-only", "9",
                 "wakeup_events 1: 24-byte COMM records wake only at the byte mark; one sample wakes at once",
                 {commed}, concat({start(A), {watch(comm("abcdefg", 200), A, 3000), watch(getpid(1), A)}})});
  Scenario edge{"pollin-is-edge-triggered", "1, 8", "wakeup_events 1: one sample, then three polls: IN, 0, 0",
                {wakeups(1, small)}, concat({start(A), {getpid(), poll(A), poll(A), poll(A)}})};
  edge.poll_after_each_step = false;
  out.push_back(edge);
  Scenario shared{"pollin-belongs-to-the-ring", "11, 8",
                  "A and B share a ring: whichever is polled first takes the wakeup, the other sees 0",
                  {wakeups(1, small), wakeups(1, tp(Source::getppid, kIdTid))},
                  {open(A), map(A), open(B), set_output(B, A), enable(A), enable(B), getpid(), poll(A, B), poll(B),
                   getppid(), poll(B, A), read(A)}};
  shared.poll_after_each_step = false;
  out.push_back(shared);
}

// Row 1: POLLHUP.
void add_hangups(std::vector<Scenario>& out) {
  const EventSpec child = wakeups(1, task(on(Target::child, tp(Source::getpid, kIdTid))));
  Scenario left{"hup-alone-with-data-left", "1",
                "the child's event: 3 samples unread and a wakeup pending, the child exits: poll says HUP alone",
                {child}, concat({{spawn_child()}, start(A), {child_getpid(3), child_exit(), poll(A), poll(A), read(A)}})};
  left.poll_after_each_step = false;
  out.push_back(left);
  out.push_back({"hup-wakes-a-blocked-poll", "1",
                 "everything read, a poll blocks; the child's exit wakes it with HUP",
                 {child}, concat({{spawn_child()}, start(A),
                                  {child_getpid(3), read(A), consume(A), child_exit_polling(A), read(A)}})});
  out.push_back({"no-hup-system-wide", "1",
                 "a CPU-0 system-wide event (filtered to the child) after the child exits: never HUP",
                 {wakeups(1, on(Target::system_cpu0, tp(Source::getpid, kIdTid)))},
                 concat({{spawn_child()}, start(A), {child_getpid(2), child_exit(), read(A)}})});
  out.push_back({"no-hup-after-disable", "1",
                 "PERF_EVENT_IOC_DISABLE: no records, no HUP; enable again and records come",
                 {wakeups(1, tp(Source::getpid, kIdTid))},
                 concat({start(A), {getpid(), disable(A), getpid(2), enable(A), getpid(), read(A)}})});
  const EventSpec sid = with_id_all(tp(Source::getpid, kIdTidTime));
  out.push_back({"hup-per-event-on-a-shared-ring", "1, 11",
                 "S (this thread, CPU 0) owns the ring, C (the child, CPU 0) writes into it: C hangs up, S does not",
                 {on(Target::self_cpu0, sid), task(on(Target::child_cpu0, sid))},
                 {spawn_child(), open(A), map(A, 4), open(B), set_output(B, A), enable(A), enable(B), getpid(),
                  child_getpid(3), child_exit(), getpid(2), read(A)}});
}

// Row 11: SET_OUTPUT rules, side-band interleaved with samples; row 10.
void add_shared(std::vector<Scenario>& out) {
  const EventSpec plain = tp(Source::getpid, kIdTid);
  out.push_back({"set-output-rules", "11",
                 "SET_OUTPUT: to itself, across CPUs, across directions, from a mapped event, to an unmapped one, "
                 "across tasks: refused; same task and CPU: accepted",
                 {plain, tp(Source::getppid, kIdTid), on(Target::self_cpu0, plain), backward(plain), plain, plain,
                  on(Target::child, plain)},
                 {spawn_child(), open(A), map(A), open(B), set_output(B, B), open(C), set_output(C, A), open(D),
                  set_output(D, A), open(E), map(E), set_output(E, A), open(5), set_output(B, 5), open(6),
                  set_output(6, A), set_output(B, A), enable(A), enable(B), getpid(), getppid(), read(A)}});
  EventSpec side = with_id_all(tp(Source::getpid, kIdTidTime));
  side.comm = side.task = side.mmap2 = true;
  out.push_back({"sideband-interleaved", "11, 10",
                 "samples, COMM, MMAP2 (an executable mapping) and FORK in one ring, in ring order = time order",
                 {side},
                 concat({start(A, 4), {getpid(), comm("side"), act(Action::mmap_exec), getpid(), act(Action::fork),
                                       getpid(), read_checking_time(A)}})});
  out.push_back({"lost-record-time", "10, 11",
                 "a LOST record's trailer carries the time of the record it comes with (the same perf_sample_data)",
                 {with_id_all(tp(Source::getpid, kIdTidTime))},
                 concat({start(A), {getpid(130), read(A), consume(A), getpid(2), read_checking_time(A)}})});
  EventSpec dummy = tp(Source::dummy, kBare);
  dummy.comm = true;
  out.push_back({"comm-records", "11",
                 "a dummy event with comm: one COMM per prctl(PR_SET_NAME), 24 or 32 bytes by the name; none while "
                 "disabled",
                 {dummy}, concat({start(A), {comm("n1"), comm("name-of-15-char"), disable(A), comm("off"), read(A)}})});
  out.push_back({"several-events-ring-order", "11, 10",
                 "three tracepoints with different sample_types in one ring: interleaved, ids, times in ring order",
                 {with_id_all(tp(Source::getpid, kIdTidTime)), with_id_all(tp(Source::getppid, kIdTidTimeRaw)),
                  with_id_all(tp(Source::getuid, kIdTidTimeCpu))},
                 {open(A), map(A), open(B), set_output(B, A), open(C), set_output(C, A), enable(A), enable(B),
                  enable(C), getppid(), getuid(), getpid(), getuid(2), getppid(), read_checking_time(A)}});
}

// Row 20: perf_event_mmap_output leaves PERF_RECORD_MISC_MMAP_BUILD_ID in
// the mmap event all events share. B, CPU-wide with attr.build_id (another
// session, as `perf record -a --buildid-mmap` would open), is iterated
// before A (this task's, no build_id): A's MMAP2 says build-id over a
// device/inode body. B's ring (all of CPU 0's side-band) is never read.
void add_build_id_misc(std::vector<Scenario>& out) {
  EventSpec task_side = tp(Source::dummy, kBare);
  task_side.mmap2 = true;
  EventSpec session = on(Target::system_cpu0, tp(Source::dummy, kBare));
  session.mmap2 = session.build_id = true;
  Scenario leak{"mmap2-misc-from-another-session", "20",
                "a CPU-wide event with attr.build_id writes the MMAP2 first; this task's event without build_id gets "
                "misc 0x4002 (user, build-id) over a device/inode body",
                {task_side, session},
                {open(A), map(A), open(B), map(B, 16), enable(A), enable(B), act(Action::mmap_exec), read(A), poll(A)}};
  leak.poll_after_each_step = false;
  out.push_back(leak);
  Scenario no_ring{"mmap2-misc-session-without-ring", "20",
                   "the same build-id event with no ring writes nothing and leaves misc alone: this task's MMAP2 says "
                   "USER only",
                   {task_side, session},
                   {open(A), map(A), open(B), enable(A), enable(B), act(Action::mmap_exec), read(A), poll(A)}};
  no_ring.poll_after_each_step = false;
  out.push_back(no_ring);
  EventSpec own = task_side;
  own.build_id = true;
  Scenario asked{"mmap2-build-id-asked", "20",
                 "an event that asked for build-ids: its MMAP2 carries the file's build-id (misc 0x4002), of the "
                 "same size as a device/inode body",
                 {own}, concat({start(A), {act(Action::mmap_exec), read(A)}})};
  out.push_back(asked);
}

// Found by the generator (generator.h; docs/conformance.md, "Generated
// scenarios"), pasted as it printed them, shrunk; named and described.
void add_generated(std::vector<Scenario>& out) {
  out.push_back({.name = "spawning-the-child-is-a-fork",
                 .rows = "11, on demand",
                 .summary = "the child is a fork of this thread: an enabled event with mmap2 (or comm, task) gets its "
                            "FORK record (32 bytes)",
                 .events = {EventSpec{.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_IDENTIFIER, .mmap2 = true}},
                 .steps = {open(A), map(A), enable(A), spawn_child(), read(A)}});
  out.push_back({.name = "a-writable-mapping-faults-once",
                 .rows = "14, on demand",
                 .summary = "the reader's first data_tail store (made at mmap) is a page fault: an enabled "
                            "page-fault event samples it (24 bytes), a read-only mapping makes none",
                 .events = {EventSpec{.source = Source::page_faults,
                                      .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_IDENTIFIER},
                            EventSpec{.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_IDENTIFIER},
                            EventSpec{.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_IDENTIFIER}},
                 .steps = {open(A), map(A), enable(A), open(B), map(B), open(C), map_read_only(C), read(A)}});
  out.push_back({.name = "software-event-sample-data-shared",
                 .rows = "21",
                 .summary = "two page-fault events, B newer: one fault's sample in A's ring carries B's id "
                            "(___perf_sw_event prepares one perf_sample_data for both)",
                 .events = {EventSpec{.source = Source::page_faults,
                                      .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_IDENTIFIER},
                            EventSpec{.source = Source::page_faults,
                                      .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_IDENTIFIER}},
                 .steps = {open(A), enable(A), open(B), enable(B), map(A), read(A)}});
  out.push_back({.name = "software-event-stack-size-shared",
                 .rows = "21",
                 .summary = "the same with B asking for an 8-byte user stack: A's sample (24 bytes of fields) is "
                            "48 bytes long, B's stack part counted in (data->dyn_size)",
                 .events = {EventSpec{.source = Source::page_faults,
                                      .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_IDENTIFIER},
                            EventSpec{.source = Source::page_faults,
                                      .sample_type = PERF_SAMPLE_STACK_USER | PERF_SAMPLE_IDENTIFIER,
                                      .stack_user = 8}},
                 .steps = {open(A), enable(A), open(B), enable(B), map(A), read(A)}});
}

// Found by the long run (--generate 20000 --seed 17).
void add_generated_long_run(std::vector<Scenario>& out) {
  out.push_back({.name = "an-empty-user-stack-writes-past-its-record",
                 .rows = "22",
                 .summary = "a user stack of 0 bytes in a backward ring: the sample writes its dyn_size 8 bytes above its "
                            "end, over the header of the record written before it; the reader stops there",
                 .events = {EventSpec{.sample_type = PERF_SAMPLE_STACK_USER | PERF_SAMPLE_IDENTIFIER, .backward = true}},
                 .steps = {open(A), map(A), enable(A), getpid(2), read(A)}});
  out.push_back({.name = "one-exit-per-child",
                 .rows = "1, 2",
                 .summary = "an event of the first child exited with it: the second child's exit writes no second EXIT into "
                            "it",
                 .events = {EventSpec{.target = Target::child, .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_IDENTIFIER, .comm = true}},
                 .steps = {spawn_child(), open(A), enable(A), child_exit(), spawn_child(), map(A), child_exit()}});
  out.push_back({.name = "a-lost-record-prepares-the-ids-again",
                 .rows = "21, 11",
                 .summary = "after a paused drop, the LOST record before A's page-fault sample prepares the shared sample "
                            "data's ids again with A's (sample_id_all): the sample says A, not B",
                 .events = {EventSpec{.source = Source::page_faults, .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_IDENTIFIER, .sample_id_all = true, .mmap2 = true},
                            EventSpec{.source = Source::page_faults, .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_IDENTIFIER}},
                 .steps = {open(A), map(A), enable(A), open(B), enable(B), pause(A), act(Action::mmap_exec),
                           resume(A), act(Action::fault), read(A)}});
  out.push_back({.name = "a-filter-follows-the-first-child",
                 .rows = "1",
                 .summary = "a CPU-wide tracepoint filtered on the first child's pid takes nothing from a second child",
                 .events = {EventSpec{.target = Target::system_cpu0, .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_IDENTIFIER}},
                 .steps = {spawn_child(), open(A), enable(A), child_exit(), map(A), spawn_child(), by_child(getpid())}});
  out.push_back({.name = "exit-records-newest-event-first",
                 .rows = "11, 2",
                 .summary = "two events of the child share a ring: their EXIT records come newest event first (the context's"
                            " order)",
                 .events = {EventSpec{.target = Target::child_cpu0, .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_IDENTIFIER, .comm = true},
                            EventSpec{.target = Target::child_cpu0, .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_IDENTIFIER, .sample_id_all = true, .comm = true}},
                 .steps = {spawn_child(), open(A), map(A), enable(A), open(B), set_output(B, A), enable(B),
                           child_exit(), read(A)}});
}

// Found by the second long run (--generate 20000 --seed 18).
void add_generated_second_run(std::vector<Scenario>& out) {
  out.push_back({.name = "task-events-sample-before-cpu-wide",
                 .rows = "11",
                 .summary = "the child's getpid into one ring from its own event A and a CPU-wide one B: A's sample "
                            "first (the tracepoint's list has the task's events ahead of the CPU's)",
                 .events = {EventSpec{.target = Target::child_cpu0,
                                      .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_IDENTIFIER},
                            EventSpec{.target = Target::system_cpu0,
                                      .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_IDENTIFIER}},
                 .steps = {spawn_child(), open(A), map(A), enable(A), open(B), set_output(B, A), enable(B),
                           by_child(getpid()), read(A)}});
}

// Row 19: sampling periods (perf_swevent_event), on events whose counts
// the scenario makes: page faults and a syscall tracepoint.
void add_periods(std::vector<Scenario> & out) {
  const EventSpec faults = every(3, tp(Source::page_faults, kIdTid));
  out.push_back({"period-3-page-faults", "19", "sample_period 3 on page faults: 10 faults give the 3rd, 6th and 9th",
                 {faults}, concat({start(A), {act(Action::fault, 10), read(A)}})});
  EventSpec with_field = faults;
  with_field.sample_type |= PERF_SAMPLE_PERIOD;
  out.push_back({"period-field-samples-every-occurrence", "19",
                 "sample_period 3 with PERF_SAMPLE_PERIOD in sample_type: every one of 10 faults is sampled (the "
                 "count as the period)",
                 {with_field}, concat({start(A), {act(Action::fault, 10), read(A)}})});
  out.push_back({"period-4-across-a-disable", "19",
                 "sample_period 4 on getpid: 3 calls, disabled for 5, enabled: the 4th counted call samples, and "
                 "the 8th",
                 {every(4, tp(Source::getpid, kIdTid))},
                 concat({start(A), {getpid(3), disable(A), getpid(5), enable(A), getpid(1), read(A), getpid(4),
                                    read(A)}})});
  // Frequency mode (sim/sampling.h): the period starts at 1 and adapts at
  // each sample to the time since the previous one, one sample late
  // (perf_swevent_set_period reloads period_left with the period before
  // the adjustment). With occurrences delta ns apart and 250 Hz, the 2nd
  // sample sets the period to 1 + (4 * 10^6 / delta + 6) / 8 (hundreds for
  // microseconds: the timing's, logged as "adapted"), which the 4th sample
  // reports and the 5th waits for: the 1st to 4th occurrences are
  // sampled, the first three with period 1, then none of the next few
  // (unless the 1st and 2nd were more than ~100 us apart).
  // 250 Hz: the tick's own adjustment (perf_adjust_freq_unthr_context,
  // counts over 4 ms) targets 10^9 / (4 ms * 250) = 1 for one occurrence
  // and leaves a period of 1 alone wherever the tick falls (at 100 Hz it
  // made it 2 in 1 run in 50 here: the 4th sample a fault late); and the
  // faster the frequency, the smaller the delta that keeps the period
  // above the scenario's count (at 1000 Hz 1 run in 100 took a 5th
  // sample). The PERF_SAMPLE_PERIOD rule of period mode does not apply.
  const EventSpec freq_faults = at_frequency(250, wakeups(1, tp(Source::page_faults, kIdTid | PERF_SAMPLE_PERIOD)));
  out.push_back({"freq-first-samples-period-1", "19",
                 "250 Hz on page faults with PERF_SAMPLE_PERIOD: of 6 faults microseconds apart the first 4 are "
                 "sampled, periods 1, 1, 1 and the adapted one",
                 {freq_faults},
                 concat({start(A), {watch(act(Action::fault, 6), A), read(A), read_values(A)}})});
  out.push_back({"freq-a-new-event-starts-at-period-1", "19",
                 "250 Hz on page faults: A samples each of 4 faults; B, opened then, starts over at period 1 and "
                 "samples each of the next 4 (and of B's mapping's fault, A none)",
                 {freq_faults, freq_faults},
                 concat({start(A), {act(Action::fault, 4)}, start(B), {act(Action::fault, 4), read(A), read(B)}})});
  out.push_back({"freq-getpid-tracepoint", "19",
                 "250 Hz on a syscall tracepoint (perf_tp_event takes the same path): 6 calls, 4 samples",
                 {at_frequency(250, tp(Source::getpid, kIdTid | PERF_SAMPLE_PERIOD))},
                 concat({start(A), {getpid(6), read(A), read_values(A)}})});
  // Measured with --repeat=200 each: about 1 run in 200 differs (the 1st
  // and 2nd occurrence more than 2 ms apart: a preemption; the task
  // scheduled out and in between two samples: last_period resynchronised).
  for (std::size_t i = out.size() - 3; i < out.size(); i++) {
    out[i].timing =
        "frequency mode: a preemption of milliseconds between the first samples, or a context switch between two, "
        "changes the adapted period or which occurrence is sampled";
  }
}

// The wider observables (issue 17): read()'s read_format, the control
// page's fields, the bodies of side-band records and their trailers.
void add_observables(std::vector<Scenario>& out) {
  EventSpec count_only = tp(Source::getpid, kIdTid), id_only = count_only, times_only = count_only;
  count_only.read_format = 0;
  id_only.read_format = PERF_FORMAT_ID;
  times_only.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  out.push_back({"read-format-values", "12",
                 "read() of 8, 16, 24 and 40 bytes by read_format: the count of calls while enabled, the times zero "
                 "until enabled and equal, the id as the event's letter; a dummy event counts nothing",
                 {count_only, id_only, times_only, tp(Source::getpid, kIdTid), tp(Source::dummy, kIdTid)},
                 {open(A), open(B), open(C), open(D), open(E), read_values(C), read_values(E), getpid(2), enable(A),
                  enable(B), enable(C), enable(D), getpid(3), read_values(A), read_values(B), read_values(C),
                  read_values(D), disable(D), getpid(2), read_values(D), read_values(E)}});
  // PERF_SAMPLE_READ (perf_output_read_one): at each sample, the words a
  // read() would give then.
  EventSpec reading = tp(Source::getpid, kIdTidTime | PERF_SAMPLE_READ);
  EventSpec second = every(2, tp(Source::getppid, kIdTid | PERF_SAMPLE_READ));
  second.read_format = PERF_FORMAT_ID;
  out.push_back({"sample-read-values", "12, 19",
                 "PERF_SAMPLE_READ: a sample's count includes its own occurrence and not those while disabled; "
                 "every 2nd: 2, 4, 6; times as read() gives them; the id as the event's letter",
                 {reading, second},
                 concat({start(A), start(B), {getpid(3), getppid(6), disable(A), getpid(2), enable(A), getpid(2),
                                              read(A), read(B), read_values(A), read_values(B)}})});
  EventSpec lossy = reading;
  lossy.read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST;
  out.push_back({"sample-read-lost", "11, 12, 19",
                 "PERF_SAMPLE_READ with PERF_FORMAT_LOST: after a full ring, the next sample counts the samples its "
                 "event lost (the LOST record before it says as many) and every occurrence",
                 {lossy}, concat({start(A), {getpid(130), read(A), consume(A), getpid(2), read(A), read_values(A)}})});
  out.push_back({"child-event-times", "12",
                 "an event of the child, enabled while the child sleeps: no time until the child runs; its count is "
                 "its calls; after its exit the values stay",
                 {on(Target::child, tp(Source::getpid, kIdTid))},
                 {spawn_child(), open(A), enable(A), read_values(A), child_getpid(2), read_values(A), child_exit(),
                  read_values(A)}});
  out.push_back({"control-page-fields", "14",
                 "version, compat_version, capabilities (cap_bit0_is_deprecated and the machine's bits), pmc_width, "
                 "index, size, no AUX area, data_tail as the reader stored it; writable and read-only",
                 {tp(Source::getpid, kIdTid), tp(Source::getppid, kIdTid)},
                 concat({start(A, 2), {getpid(5), read(A), consume(A), control_page(A), open(B), map_read_only(B),
                                       control_page(B)}})});
  out.push_back({"sideband-bodies", "11",
                 "COMM, MMAP2, FORK (the child and a forked task) and the child's EXIT: pids as whose, the name, the "
                 "mapping, the file, the parent; trailers with TID and CPU; samples' TID and CPU",
                 {EventSpec{.source = Source::dummy, .sample_type = kIdTidTimeCpu, .sample_id_all = true, .comm = true,
                            .task = true, .mmap2 = true},
                  EventSpec{.target = Target::child, .sample_type = kIdTidTimeCpu, .sample_id_all = true,
                            .task = true}},
                 {open(A), map(A, 2), enable(A), spawn_child(), open(B), map(B), enable(B), comm("bodies"),
                  act(Action::mmap_exec), act(Action::fork), child_getpid(2), child_exit(), read_checking_time(A),
                  read_checking_time(B)}});
}

std::vector<Scenario> make_scenarios() {
  std::vector<Scenario> out;
  add_records(out);
  add_capacity(out);
  add_modes(out);
  add_pause(out);
  add_lost(out);
  add_wakeups(out);
  add_hangups(out);
  add_shared(out);
  add_build_id_misc(out);
  add_periods(out);
  add_generated(out);
  add_generated_long_run(out);
  add_generated_second_run(out);
  add_observables(out);
  return out;
}

}  // namespace

const std::vector<Scenario>& scenarios() {
  static const std::vector<Scenario> all = make_scenarios();
  return all;
}

const std::vector<Unproducible>& unproducible() {
  static const std::vector<Unproducible> rows = {
      {"3", "a write already past its pause check lands after PAUSE_OUTPUT returned",
       "needs a writer inside __perf_output_begin on the other CPU at the moment of the ioctl: no deterministic "
       "trigger on 2 vCPUs (pause is checked as immediate, in all four modes)",
       "late_write_per_million: a writer held between its checks and its copy (sim/kernel.h)"},
      {"10", "nested writers: ring order != time order, head published by the outermost",
       "no NMI writers without a hardware PMU; hrtimer, hardirq and syscall tracepoints sharing a ring gave 0 "
       "inversions in ~6 million samples (software-event output runs with interrupts off)",
       "nest_per_million: a writer interrupted before or after its reservation (sim/kernel.h)"},
      {"12", "PERF_RECORD_LOST_SAMPLES", "only PMU drivers emit it (x86 PEBS); this VM has no hardware PMU",
       "nothing"},
      {"12", "THROTTLE / UNTHROTTLE",
       "producible (sched:sched_stat_runtime, period 1) but paced by HZ and perf_event_max_sample_rate, which the "
       "kernel lowers by itself",
       "side-band records at random, no max_samples_per_tick"},
      {"13", "memory ordering (smp_wmb before data_head, the reader's barriers)",
       "x86-64 is TSO: a missing barrier is not observable here", "nothing (one thread)"},
      {"15-18", "AUX areas: snapshot heads, TRUNCATED, RECORD_AUX vs aux_head, COLLISION, byte-granular heads",
       "no AUX-capable PMU (intel_pt, arm_spe, cs_etm): mapping an AUX area fails for every event here",
       "sim/aux.h (docs/aux.md)"},
      {"1", "EPOLLERR",
       "needs an event in ERROR (a pinned event that cannot be scheduled) or REVOKED state; software and "
       "tracepoint events always schedule",
       "nothing: simulated events always schedule"},
      {"11", "ITRACE_START, SWITCH",
       "ITRACE_START needs a PMU with PERF_PMU_CAP_ITRACE; SWITCH records are producible, but preemption by the "
       "machine's other tasks adds some at random",
       "SWITCH as side-band records; no ITRACE_START"},
  };
  return rows;
}

const char* to_string(Source source) {
  switch (source) {
    case Source::getpid: return "syscalls:sys_enter_getpid";
    case Source::getppid: return "syscalls:sys_enter_getppid";
    case Source::getuid: return "syscalls:sys_enter_getuid";
    case Source::page_faults: return "page-faults";
    case Source::dummy: return "dummy";
  }
  return "?";
}

const char* to_string(Action action) {
  switch (action) {
    case Action::getpid: return "getpid";
    case Action::getppid: return "getppid";
    case Action::getuid: return "getuid";
    case Action::comm: return "prctl(PR_SET_NAME)";
    case Action::fork: return "fork";
    case Action::mmap_exec: return "mmap(PROT_EXEC)";
    case Action::fault: return "page fault";
  }
  return "?";
}

std::string event_name(std::size_t event) { return std::string(1, static_cast<char>('A' + event)); }

std::string describe(const Step& s) {
  const std::string e = event_name(s.event);
  switch (s.op) {
    case Op::open: return "open " + e;
    case Op::map:
      return "mmap " + e + " (" + std::to_string(s.pages) + " data pages, " + (s.writable ? "writable" : "read-only") +
             ")";
    case Op::unmap: return "munmap " + e;
    case Op::set_output: return "SET_OUTPUT " + e + " -> " + event_name(s.other);
    case Op::enable: return "ENABLE " + e;
    case Op::disable: return "DISABLE " + e;
    case Op::pause: return "PAUSE_OUTPUT " + e;
    case Op::resume: return "resume " + e;
    case Op::act: {
      std::string d = std::string(s.by_child ? "child: " : "") + to_string(s.action) + " x" + std::to_string(s.count);
      if (s.poll_each) d += ", polling " + e + " after each";
      if (s.consume_above > 0) d += ", consuming above " + std::to_string(s.consume_above) + " bytes";
      return d;
    }
    case Op::spawn_child: return "spawn the child";
    case Op::child_exit: return "the child exits";
    case Op::child_exit_polling: return "poll " + e + " (blocking) while the child exits";
    case Op::poll: return "poll " + e + (s.other != kNoEvent ? ", then " + event_name(s.other) : "");
    case Op::read: return "read " + e + "'s ring" + (s.from != 0 ? " from " + std::to_string(s.from) : "");
    case Op::consume: return "store data_tail of " + e + (s.count > 0 ? " (+" + std::to_string(s.count) + ")" : "");
    case Op::read_values: return "read() " + e;
    case Op::control_page: return "control page of " + e;
    case Op::map_aux:
      return "mmap " + e + "'s AUX area: aux_offset " + std::to_string(s.aux.offset) + " pages, aux_size " +
             std::to_string(s.aux.size) + ", " + std::to_string(s.aux.map_pages) + " pages at page " +
             std::to_string(s.aux.map_offset);
  }
  return "?";
}

}  // namespace ringsim::conformance
