// The seam between the production core and its two backends.
//
// The core is written once, as templates over the concepts below, and is
// explicitly instantiated with the simulated backend (sim/) and the real one
// (real/). The contracts live here, in comments, because the compiler only
// checks the signatures.
//
// Scheduling: in the simulator every call below is a scheduling point (the
// calling fiber may yield to the simulated kernel before or after the
// call); in the real backend they are system calls or plain memory accesses
// on the mapping. The core must therefore never assume that the ring is
// unchanged between two calls.
//
// The ring protocol (non-overwrite mode). The kernel writes records and
// publishes data_head; the reader copies records out and publishes
// data_tail. Four ordering points make it safe:
//
//      kernel (producer)                      reader (consumer)
//      -----------------                      -----------------
//      t = data_tail                          h = data_head
//      (A) full barrier                       (C) acquire: h before data
//      write record bytes at head             copy bytes [tail, h)
//      (B) release: bytes before head         (D) release: copies before tail
//      data_head = head + size                data_tail = h
//
//   A pairs with D: the kernel sees the new tail only after the reader has
//     finished copying, so it never overwrites bytes still being read.
//   B pairs with C: the reader sees the new head only after the bytes it
//     covers are in memory, so it never copies bytes not yet written.
//
// Every site in the core and the backends that implements one of these
// ordering points carries its label: "(C)" on a head load, "(D)" on a tail
// store.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>

namespace ringsim::core {

// One mapped perf data ring: the control page and a data area of
// data_size_bytes(), a power of two. Positions are free-running u64 byte
// counts; the index of a position is position & (data_size_bytes() - 1).
template <class M>
concept RingMapping = requires(M& mapping, const M& const_mapping, std::uint64_t position,
                               std::span<std::byte> destination, bool paused) {
  // Constant for the life of the mapping; a power of two, at least 8.
  { const_mapping.data_size_bytes() } -> std::same_as<std::uint64_t>;

  // Loads data_head with acquire ordering (C). Never blocks. In overwrite
  // (write_backward) mode the head moves down and is the position of the
  // newest record.
  { mapping.load_head() } -> std::same_as<std::uint64_t>;

  // Stores data_tail with release ordering (D): every copy_out() the reader
  // made before it is complete. Only for writable (non-overwrite) mappings.
  { mapping.store_tail(position) } -> std::same_as<void>;

  // Copies destination.size() bytes of the data area starting at the index
  // of `position` into `destination`. The caller guarantees the range does
  // not cross the end of the data area (it splits at the end itself). The
  // bytes are only as stable as the protocol makes them: in overwrite mode
  // without PAUSE_OUTPUT the kernel may rewrite them during the copy.
  { mapping.copy_out(position, destination) } -> std::same_as<void>;

  // PERF_EVENT_IOC_PAUSE_OUTPUT: while paused the kernel writes nothing to
  // this ring (it counts what it drops and reports it with PERF_RECORD_LOST
  // after resume). Returns 0 or -errno. Never blocks.
  { mapping.pause_output(paused) } -> std::same_as<int>;
};

// A ring whose event also has an AUX area (aux_offset/aux_size in the same
// control page; aux_head written by the kernel, aux_tail by the reader).
// Optional: the record loop reads an AUX area only when the mapping type
// provides these and aux_size_bytes() is not 0. The AUX protocol is the
// data ring's, with its own labels: (C') load aux_head with acquire, pairing
// with the PMU driver's release of aux_head after the data; (D') store
// aux_tail with release, pairing with the driver's read of aux_tail before
// it reuses the space.
template <class M>
concept AuxMapping = requires(M& mapping, const M& const_mapping, std::uint64_t position,
                              std::span<std::byte> destination, bool enabled) {
  // 0: no AUX area. Else a power of two. Constant while mapped.
  { const_mapping.aux_size_bytes() } -> std::same_as<std::uint64_t>;
  // Overwrite (snapshot) mode: the AUX area is mapped read-only and the
  // driver ignores aux_tail.
  { const_mapping.aux_overwrite() } -> std::same_as<bool>;
  // Overwrite mode only: aux_head is an offset inside the area (Intel PT's
  // snapshot mode), not a free-running position. Constant while mapped.
  { const_mapping.aux_offset_heads() } -> std::same_as<bool>;
  // The CPU of the area's event: the AUXTRACE records' idx and cpu (not the
  // loop's index of the mapping: a reading thread's loop sees only some).
  { const_mapping.aux_cpu() } -> std::same_as<std::uint32_t>;
  // (C'): aux_head, acquire. Never blocks.
  { mapping.load_aux_head() } -> std::same_as<std::uint64_t>;
  // (D'): aux_tail, release. Non-overwrite mode only.
  { mapping.store_aux_tail(position) } -> std::same_as<void>;
  // Copies destination.size() bytes of the AUX area from the index of
  // `position`; the range does not cross the end of the area.
  { mapping.copy_aux(position, destination) } -> std::same_as<void>;
  // PERF_EVENT_IOC_DISABLE (false) / ENABLE (true): in snapshot mode
  // around a snapshot; in non-overwrite mode ENABLE after a read made room
  // (the PMU disables the event when the area fills up or a transaction is
  // TRUNCATED, and only the consumer turns it back on). 0 or -errno.
  { mapping.set_aux_enabled(enabled) } -> std::same_as<int>;
};

// Poll results per mapping, as the record loop sees them.
struct PollEvents {
  bool wanted = false;    // in: poll this mapping (hung-up ones are not)
  bool readable = false;  // out, POLLIN: a wakeup happened (wakeup_events/watermark)
  bool hangup = false;    // out, POLLHUP: the event is gone; drain what is left
};

// The set of mapped rings the record loop reads, and the clock and signals
// around it.
template <class S>
concept RingSession = requires(S& session, const S& const_session, std::size_t index,
                               std::span<PollEvents> events, std::uint64_t timeout_ns) {
  typename S::Mapping;
  requires RingMapping<typename S::Mapping>;

  // Fixed for the life of the session.
  { const_session.mapping_count() } -> std::same_as<std::size_t>;

  // The mapping at index; valid until release(index).
  { session.mapping(index) } -> std::same_as<typename S::Mapping&>;

  // Waits until some wanted mapping is readable or hung up, or timeout_ns
  // passed. events.size() == mapping_count(); fills readable/hangup of the
  // wanted ones. Returns the number of mappings with an event, 0 on timeout,
  // -EINTR when interrupted (the caller retries), or another -errno. A
  // return with no readable/hangup bit on a wanted mapping is served like a
  // timeout, so a backend must not report a ready count for other bits
  // (POLLERR is reported as hangup). May block (the simulator advances
  // virtual time).
  { session.poll(events, timeout_ns) } -> std::same_as<int>;

  // Unmaps mapping index and closes its event. The caller guarantees the
  // ring is drained and nothing refers to it any more.
  { session.release(index) } -> std::same_as<void>;

  // Monotonic nanoseconds (virtual in the simulator).
  { const_session.now_ns() } -> std::same_as<std::uint64_t>;

  // Set by a stop request (SIGINT/SIGTERM, end of the simulated run): the
  // loop drains every ring once more and stops.
  { session.stop_requested() } -> std::same_as<bool>;

  // The recording ends early (an output error): stop every event producing
  // (PERF_EVENT_IOC_DISABLE), so the kernel stops filling rings nobody will
  // read. Never blocks.
  { session.disable_events() } -> std::same_as<void>;

  // Overwrite mode: a snapshot was requested (SIGUSR2, a scheduled request in
  // the simulator). Reading the request clears it.
  { session.take_snapshot_request() } -> std::same_as<bool>;
};

// The output file and its writes: synchronous (write_at) and asynchronous
// (POSIX AIO in the real backend: aio_write / aio_error / aio_return /
// aio_suspend). Asynchronous writes are identified by control-block slot,
// 0 <= slot < the number of slots the writer was built for; a slot has at
// most one write in flight.
template <class D>
concept TraceDisk = requires(D& disk, std::uint32_t index, std::uint32_t slot,
                             std::span<const std::byte> data, std::uint64_t offset,
                             std::span<const std::uint32_t> slots, std::uint64_t duration_ns) {
  // Creates (truncating) output file number `index` (0 first; rotation opens
  // 1, 2, ...) and makes it current. The previous file is closed. Returns 0
  // or -errno (-EACCES, -ENOENT, -EROFS, ...).
  { disk.open_output(index) } -> std::same_as<int>;

  // Closes the current file; no write on it may be in flight. 0 or -errno.
  { disk.close_output() } -> std::same_as<int>;

  // Closes the current file and removes it: used when not even its header
  // could be written, so no unreadable file is left behind. 0 or -errno.
  { disk.remove_output() } -> std::same_as<int>;

  // Writes data at offset of the current file and waits for it (pwrite).
  // Returns the bytes written, 1..data.size() (fewer is a short write), or
  // -errno: -EINTR and -EAGAIN (try again), -ENOSPC, -EIO, ... May block.
  { disk.write_at(data, offset) } -> std::same_as<std::int64_t>;

  // Cuts the current file to `offset` bytes. 0 or -errno.
  { disk.truncate(offset) } -> std::same_as<int>;

  // Starts an asynchronous write of data at offset on the current file in
  // `slot`. Ownership: the bytes must stay unchanged, and the slot unused,
  // until aio_error() says the write is no longer in progress. Returns 0
  // (queued), -EAGAIN (the queue is full now: try again later), or -errno.
  // Never blocks.
  { disk.aio_submit(slot, data, offset) } -> std::same_as<int>;

  // The slot's write: EINPROGRESS, 0 (complete: call aio_return once), or
  // an errno (EINTR: interrupted, nothing known to be written; EIO, ENOSPC,
  // ...: failed; call aio_return once too). Never blocks.
  { disk.aio_error(slot) } -> std::same_as<int>;

  // After aio_error() returned 0: the bytes written (0..size; fewer is a
  // short write). After an error: -1. Exactly once per write.
  { disk.aio_return(slot) } -> std::same_as<std::int64_t>;

  // Waits until a write in one of `slots` is no longer in progress, or
  // duration_ns passes. Returns 0, -EAGAIN (timed out), -EINTR, or another
  // -errno (the simulator: -ECANCELED when the run is being cancelled).
  // May block.
  { disk.aio_suspend(slots, duration_ns) } -> std::same_as<int>;

  // Sleeps for duration_ns (back-off; virtual time in the simulator).
  { disk.sleep_ns(duration_ns) } -> std::same_as<void>;
};

}  // namespace ringsim::core
