// The simulated kernel's own rules, checked from its log (property
// kernel_rules). The model replays every step the simulated kernel logged
// on every ring (model/log.h, RingOp) against Linux's rules as written
// here, in code of its own (nothing shared with sim/), so a simulator that
// drifts from Linux fails every campaign, even on a machine where
// perf_event_open cannot run to compare it with the real kernel. The rules
// (kernel/events/ring_buffer.c: __perf_output_begin, perf_output_put_handle;
// core.c: perf_output_sample, perf_poll):
//   pause      while paused a record is dropped and counted, with no handle;
//              a writer that tested the flag before the pause goes on.
//   capacity   a writable ring takes a record (and the LOST record that must
//              go before it when drops are pending) only if
//              CIRC_SPACE(head, tail, size) >= the bytes needed: at most
//              size - 1 bytes in use, so a record of the data size or larger
//              never fits ("too big"). A read-only ring takes everything,
//              even a record larger than the area.
//   LOST       the drops counted since the last LOST record are written in
//              the same reservation as the next record that fits, of any
//              type, just before it: at the old head going forward, at the
//              new (lower) head going backward; 24 bytes plus the writer's
//              sample_id trailer.
//   publish    only the outermost writer publishes data_head (= rb->head).
//   wakeups    after a reservation, if the bytes written exceed the wakeup
//              mark by more than the watermark, the mark moves up one
//              watermark (once); a sample of an event with wakeup_events
//              (and no attr.watermark) counts on the ring, and each time the
//              count reaches wakeup_events the mark moves by one byte; the
//              outermost writer wakes the reader if the mark moved since its
//              handle began (a dropped write's handle too). POLLIN is edge:
//              a poll takes the pending wakeup.
//   hangup     poll returns POLLHUP only when the ring's events follow a
//              task and have all exited, and then POLLIN never with it.
#pragma once

#include <vector>

#include "model/log.h"
#include "model/properties.h"

namespace ringsim::model {

std::vector<Violation> check_kernel_rules(const KernelLog& log);

}  // namespace ringsim::model
