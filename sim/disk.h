// The simulated disk: output files and a POSIX-AIO-like interface
// (core::TraceDisk) that attacks the trace writer.
//
// Fault model (each drawn from the run's decision source; the rates are
// RunConfig knobs; transient faults only during the fault phase):
//   - latency: every write takes latency_ns_min..latency_ns_max (uniform)
//     plus ns_per_kib per KiB, and with stall_per_million a stall of
//     stall_ns more (a heavy tail). Asynchronous writes complete when their
//     own time comes, so they complete out of submission order;
//   - a bounded queue: at most queue_depth asynchronous writes in flight;
//     aio_submit beyond that returns EAGAIN;
//   - EAGAIN on submit, single (eagain_per_million) and in bursts: with
//     eagain_burst_per_million a window of eagain_burst_ns opens during
//     which every submit fails;
//   - short writes (short_per_million), for aio_write and pwrite alike,
//     ending at a page boundary of the file, as on Linux: a write to a
//     page-cache file (ext4, xfs, btrfs, tmpfs, NFS) copies page by page
//     (mm/filemap.c generic_perform_write) and stops short only between
//     pages, so a write inside one page, such as a header's, is never
//     short; with short_any_byte, at any byte from 1 (POSIX's bound);
//   - EINTR: a write completes with EINTR having written nothing
//     (eintr_per_million); aio_suspend and pwrite are interrupted
//     (suspend_eintr_per_million);
//   - hard errors: EIO on a write (eio_per_million), and ENOSPC once a file
//     would grow past capacity_bytes (the bytes that fit are written first,
//     as a short write);
//   - open fails with EACCES (open_fails: an unwritable output path).
// Checks (violations, never crashes): at completion, the buffer still holds
// the bytes it held at submit (a buffer reused while its write is in flight
// is caught: buffer_stable); no two writes in flight overlap in a file
// (no_overlap); no write is in flight when a file is closed or another
// opened (flush_before_switch); no byte of a data section is written twice
// (no_overlap) and none is left unwritten (file_valid, checked by the run).
#pragma once

#include <cstddef>
#include <map>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/backend.h"
#include "model/properties.h"
#include "sim/probes.h"
#include "sim/scheduler.h"

namespace ringsim::sim {

struct DiskConfig {
  std::uint32_t slots = 1;
  std::uint32_t slots_per_mapping = 1;
  // Staged writing: the slots are the writer's own, no ring's
  // (in_flight_for_mapping is then always 0).
  bool slots_of_no_ring = false;
  std::uint32_t queue_depth = 8;
  std::uint64_t latency_ns_min = 20'000;
  std::uint64_t latency_ns_max = 200'000;
  std::uint64_t ns_per_kib = 500;
  std::uint32_t stall_per_million = 0;
  std::uint64_t stall_ns = 5'000'000;
  std::uint32_t short_per_million = 0;
  bool short_any_byte = false;
  std::uint32_t eagain_per_million = 0;
  std::uint32_t eagain_burst_per_million = 0;
  std::uint64_t eagain_burst_ns = 1'000'000;
  std::uint32_t eintr_per_million = 0;
  std::uint32_t suspend_eintr_per_million = 0;
  std::uint32_t eio_per_million = 0;
  std::uint64_t capacity_bytes = 0;  // 0: unlimited
  bool open_fails = false;
  // Data sections start here (the writer's header length): bytes below may
  // be written twice (the header fix-up).
  std::uint64_t data_offset = 0;
  bool operator==(const DiskConfig&) const = default;
};

struct SimFile {
  std::vector<std::byte> bytes;
  // Bytes of the data section written so far, as merged ranges
  // [begin, end) keyed by begin.
  std::map<std::uint64_t, std::uint64_t> data_written;
  bool closed = false;
  bool removed = false;
};

struct DiskStats {
  std::uint64_t writes = 0;         // completed (async and sync), including short ones
  std::uint64_t bytes = 0;          // written into files
  std::uint64_t async_submitted = 0;
  std::uint64_t async_completed = 0;  // including short and failed ones
  std::uint64_t async_short = 0;      // completed with fewer bytes than asked (a fault or a full disk)
  std::uint64_t in_flight_max = 0;
  std::uint64_t eagain_single = 0;
  std::uint64_t eagain_burst = 0;
  std::uint64_t eagain_queue_full = 0;
  std::uint64_t short_writes = 0;
  std::uint64_t short_inside_a_page = 0;  // drawn short, no page boundary inside: whole
  std::uint64_t eintr_writes = 0;
  std::uint64_t eintr_suspends = 0;
  std::uint64_t stalls = 0;
  std::uint64_t eio = 0;
  std::uint64_t enospc = 0;
  std::uint64_t open_failures = 0;
  int first_hard_error = 0;         // EIO or ENOSPC, the first one a write got
};

class SimDisk {
 public:
  SimDisk(Scheduler& scheduler, const DiskConfig& config, Probes& probes);
  ~SimDisk();

  // core::TraceDisk
  int open_output(std::uint32_t index);
  int close_output();
  int remove_output();
  std::int64_t write_at(std::span<const std::byte> data, std::uint64_t offset);
  int truncate(std::uint64_t size);
  int aio_submit(std::uint32_t slot, std::span<const std::byte> data, std::uint64_t offset);
  int aio_error(std::uint32_t slot);
  std::int64_t aio_return(std::uint32_t slot);
  int aio_suspend(std::span<const std::uint32_t> slots, std::uint64_t timeout_ns);
  void sleep_ns(std::uint64_t duration_ns);

  void set_faults(bool enabled) { faults_ = enabled; }
  // For the mutants only: the current file's size, and completing a write
  // in flight at once.
  std::uint64_t current_size() const;
  void force_complete(std::uint32_t slot);
  // Writes in flight whose slot belongs to mapping m.
  std::uint32_t in_flight_for_mapping(std::size_t mapping) const;
  std::uint32_t in_flight() const;

  const std::vector<SimFile>& files() const { return files_; }
  const DiskStats& stats() const { return stats_; }
  const std::vector<model::Violation>& violations() const { return violations_; }
  const DiskConfig& config() const { return config_; }

 private:
  enum class SlotState : std::uint8_t { idle, in_flight, done };
  struct Slot {
    SlotState state = SlotState::idle;
    const std::byte* data = nullptr;
    std::uint64_t size = 0;
    std::uint64_t offset = 0;
    std::uint32_t file = 0;
    std::uint64_t complete_at_ns = 0;
    std::uint64_t hash_at_submit = 0;
    int error = 0;
    std::int64_t result = 0;
    bool returned = true;
  };

  static constexpr std::uint64_t kEagainStreakMax = 100'000;

  std::uint64_t latency_ns(std::uint64_t bytes);
  // EAGAIN (burst, single, queue full) or 0.
  int refuse(std::uint32_t slot, std::uint64_t now);
  // Performs a write's effect on the file: the outcome drawn now. Returns
  // bytes written or -errno.
  std::int64_t perform(std::uint32_t file, const std::byte* data, std::uint64_t size, std::uint64_t offset);
  // How much of a write of `size` bytes at `offset` lands: all, or a short
  // write's length (drawn).
  std::uint64_t written_length(std::uint64_t size, std::uint64_t offset);
  void complete_due(Slot& slot, std::uint32_t index);
  void violate(const char* property, const std::string& detail);
  SimFile& current();

  Scheduler& scheduler_;
  const DiskConfig config_;
  Probes& probes_;
  std::vector<Slot> slots_;
  std::vector<SimFile> files_;
  std::uint32_t current_ = UINT32_MAX;
  std::uint64_t eagain_until_ns_ = 0;
  std::uint64_t eagain_streak_ = 0;  // refusals with no virtual time passing
  std::uint64_t eagain_streak_at_ns_ = 0;
  bool faults_ = true;
  DiskStats stats_;
  std::vector<model::Violation> violations_;
};

static_assert(core::TraceDisk<SimDisk>);

}  // namespace ringsim::sim
