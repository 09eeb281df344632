// What the simulated kernel inside a target hands to ringsim-run when the
// target exits: every record it wrote into each ring (the bytes, in ring
// order), what it dropped and why, the consumer's final data_tail, what the
// simulated disk did, the findings (a tail it could not take, a call it
// does not simulate) and the decisions taken (the tape that replays the
// run). A small binary file: a magic, a version, then fields in order;
// read back with every length checked.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/decisions.h"

namespace ringsim::sim::interpose {

inline constexpr std::uint32_t kRunLogVersion = 4;

struct LoggedRecord {
  std::uint32_t type = 0;
  std::uint64_t time_ns = 0;
  std::uint64_t event = 0;  // the id of the writer
  std::uint64_t lost = 0;   // PERF_RECORD_LOST: its count
  std::uint64_t position = 0;
  std::vector<std::byte> bytes;
};

struct LoggedRing {
  std::uint64_t owner_id = 0;
  bool writable = true;
  bool backward = false;  // write_backward: positions go down from 0
  std::uint64_t size_bytes = 0;
  std::uint64_t head = 0;        // final data_head
  std::uint64_t tail = 0;        // the consumer's last data_tail the kernel took
  std::uint64_t dropped = 0;     // full, paused, too big
  std::uint64_t dropped_unreported = 0;
  std::uint64_t lost_reported = 0;
  std::string bad_tail;
  // data_head at each PERF_EVENT_IOC_PAUSE_OUTPUT that paused the ring (a
  // reader of a read-only ring pauses it, reads, resumes: perf --overwrite).
  std::vector<std::uint64_t> pauses;
  std::vector<LoggedRecord> records;
  // Its AUX area (CallKernel::map_aux), if one was mapped: the bytes at
  // position p are model::aux_byte(RunLog::seed, aux_owner_id, p).
  struct Aux {
    std::uint64_t size_bytes = 0;  // 0: none
    std::uint64_t owner_id = 0;
    std::uint64_t head = 0;         // final aux_head: bytes [0, head) were written
    std::uint64_t tail = 0;         // the consumer's last aux_tail the kernel took
    std::uint64_t transactions = 0;
    std::uint64_t truncated = 0;    // transactions cut short (TRUNCATED)
    std::uint64_t truncated_bytes = 0;
    std::uint64_t full_disables = 0;
    std::string bad_tail;
  } aux;
};

struct LoggedEvent {
  std::uint64_t id = 0;
  std::uint32_t type = 0;
  std::uint64_t config = 0;
  std::uint64_t sample_type = 0;
  std::int32_t pid = 0;
  std::int32_t cpu = 0;
  std::uint64_t lost_samples = 0;
};

struct DiskStats {
  std::uint64_t writes = 0;       // write calls to the output
  std::uint64_t bytes = 0;        // bytes they wrote
  std::uint64_t short_writes = 0;
  std::uint64_t eintr = 0;
  std::uint64_t eagain = 0;
  std::uint64_t eio = 0;
  std::uint64_t enospc = 0;
  std::uint64_t aio_submitted = 0;
  std::uint64_t aio_short = 0;
  std::uint64_t aio_errors = 0;
  std::uint64_t hard_errors() const { return eio + enospc + aio_errors; }
};

struct RunLog {
  std::uint64_t seed = 0;
  std::uint64_t steps = 0;
  std::uint64_t virtual_ns = 0;   // of the workload: start to the last step
  std::uint64_t samples = 0;
  std::uint64_t sideband = 0;
  std::uint64_t bursts = 0;
  bool started = false;
  bool ended = false;             // the workload's drawn end was reached
  bool sigint = false;            // a SIGINT was delivered at a drawn time
  bool sigchld = false;           // the workload's SIGCHLD was delivered
  bool sigint_handled = false;    // the target had a handler for that SIGINT
  std::uint64_t sigusr2 = 0;      // SIGUSR2s delivered at drawn times (to a target with a handler)
  // --interleave: the target's accesses to its control pages that faulted,
  // and the kernel steps taken inside them.
  std::uint64_t control_traps = 0;
  std::uint64_t interleaved_steps = 0;
  std::vector<std::string> findings;  // the kernel's, one line each
  std::vector<std::string> refused;   // calls it does not simulate
  std::vector<LoggedEvent> events;
  std::vector<LoggedRing> rings;
  // The names the target renamed its output to, in order (perf record
  // --switch-output: out.data -> out.data.<timestamp>, then a new out.data).
  std::vector<std::string> renamed;
  // The files the target opened as OUTPUT.N (N = 1, 2, ...: ringsim-record
  // --switch-output writes FILE, FILE.1, FILE.2, ...), in the order first
  // opened; a name the file was renamed to since in its place
  // (ringsim-record --timestamp-filename).
  std::vector<std::string> numbered;
  // The target's files it removed (perf record and ringsim-record
  // --switch-max-files), in order: each name and where the shim kept it
  // (a hard link made before the unlink, <output>.removed.K), judged there
  // in its place.
  struct Removed {
    std::string path;
    std::string kept;
  };
  std::vector<Removed> removed;
  DiskStats disk;
  std::vector<Decision> tape;
};

// "" or the problem.
std::string write_run_log(const std::string& path, const RunLog& log);
std::string read_run_log(const std::string& path, RunLog& log);

}  // namespace ringsim::sim::interpose
