// RealDisk: core::TraceDisk (core/backend.h) over real output files, with
// pwrite(2) for synchronous writes and POSIX AIO (glibc's aio_* functions)
// for asynchronous ones.
//
// Contract mapping (core::TraceDisk -> this machine):
//   open_output(index)  open(2) of output_path(path, index) with O_CREAT |
//                       O_TRUNC | O_WRONLY | O_CLOEXEC, mode 0644 (less the
//                       umask); the previous file is closed first. 0 or
//                       -errno: -ENOENT (the directory does not exist),
//                       -EACCES, -EROFS, -EISDIR, -ENOSPC, -EDQUOT, ...
//   close_output()      close(2). No write may be in flight (VERIFY).
//                       With timestamp names, then renamed (see below).
//   remove_output()     close(2), then unlink(2) of the current file.
//   write_at            pwrite(2) at the writer's offset: the bytes written
//                       (1..size; fewer is a short write), or -errno
//                       (-EINTR, -EAGAIN, -ENOSPC, -EIO, -EFBIG, ...). A
//                       pwrite that returns 0 for a non-empty write is
//                       reported as 0 (the writer retries, bounded).
//   truncate            ftruncate(2).
//   aio_submit(slot)    aio_write(3) with the slot's own struct aiocb:
//                       aio_fildes = the current file, aio_offset = the
//                       writer's offset, SIGEV_NONE (completions are polled
//                       with aio_error). 0, -EAGAIN (glibc could not queue
//                       it: out of resources), or -errno.
//   aio_error(slot)     aio_error(3): EINPROGRESS, 0, or the write's errno
//                       (ECANCELED is reported as such: a failed write).
//   aio_return(slot)    aio_return(3), once per write: the bytes written, or
//                       -1 after an error. Frees the slot.
//   aio_suspend(slots)  aio_suspend(3) over the slots' control blocks with a
//                       relative timeout: 0 (one of them is no longer in
//                       progress), -EAGAIN (timed out), -EINTR (a signal).
//   sleep_ns            nanosleep(2) (a signal may cut it short).
//
// Offsets always come from the writer: the descriptor's file position is
// never used or moved (no write(2), no lseek(2)), so synchronous and
// asynchronous writes can go to the same descriptor in any order.
//
// glibc runs asynchronous writes on helper threads of this process (their
// CPU time counts as the recorder's); writes on one descriptor are carried
// out one after another by one helper, in submission order, so an aio
// submission never blocks the caller but the writes themselves do not run
// in parallel.
//
// Output naming (rotation): file 0 is `path` itself, file N > 0 is
// "<path>.<N>" (perf.data, perf.data.1, perf.data.2, ...).
//
// The complete prefix: RealDisk also tracks which whole writes of the
// current file have completed, so that the recorder can publish, while it
// records, a header whose data size covers only bytes that are on the file
// and end on a record boundary (see complete_prefix_bytes()). A write is
// identified by the range the writer asked for; the writer's retries of a
// short write (the same range's end, starting where the written part ends)
// continue it.
//
// Threads: every method is called from one thread (the record loop's). The
// destructor waits, bounded, for asynchronous writes still in flight and
// closes the file.
#pragma once

#include <aio.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/backend.h"
#include "real/error.h"

namespace ringsim::real {

// "<path>" for index 0, "<path>.<index>" after.
std::string output_path(const std::string& path, std::uint32_t index);

// One line: what went wrong with output file `path` (errno `error`) while
// doing `what`, and what to do about it.
std::string output_error_message(int error, const std::string& path, const std::string& what);

// glibc runs POSIX AIO on helper threads it starts at the first requests
// and ends after a second idle: their ids are not known beforehand (a
// tracepoint filter naming the recorder's threads, --exclude-perf, misses
// them). This starts `count` helpers now (one request blocked on a pipe of
// its own each, then let go) and keeps them: glibc's aio_init with at most
// `count` helper threads, idle for ever, so every later request runs on
// one of these. Call it before any other AIO request of the process.
// Error (one line) if a pipe, a request or the wait fails.
Error start_aio_helpers(std::uint32_t count);

struct DiskCounters {
  std::uint64_t files_opened = 0;
  std::uint64_t files_kept_as_old = 0;  // a non-empty file of the name renamed NAME.old first
  std::uint64_t sync_writes = 0;
  std::uint64_t sync_short_writes = 0;
  std::uint64_t aio_submitted = 0;
  std::uint64_t aio_submit_eagain = 0;
  std::uint64_t aio_completed = 0;  // including failed and short ones
  std::uint64_t aio_short_writes = 0;
  std::uint64_t aio_failed = 0;
  std::uint64_t suspends = 0;
  std::uint64_t suspend_timeouts = 0;
  std::uint64_t suspend_interrupted = 0;
  std::uint64_t bytes_written = 0;  // reported written, all files
};

class RealDisk {
 public:
  // slots: the writer's control blocks (mappings x cblocks; mappings in
  // serial mode, where none is used). At least 1.
  RealDisk(std::string path, std::uint32_t slots);
  ~RealDisk();
  RealDisk(const RealDisk&) = delete;
  RealDisk& operator=(const RealDisk&) = delete;

  // core::TraceDisk
  int open_output(std::uint32_t index);
  int close_output();
  int remove_output();
  std::int64_t write_at(std::span<const std::byte> data, std::uint64_t offset);
  int truncate(std::uint64_t offset);
  int aio_submit(std::uint32_t slot, std::span<const std::byte> data, std::uint64_t offset);
  int aio_error(std::uint32_t slot);
  std::int64_t aio_return(std::uint32_t slot);
  int aio_suspend(std::span<const std::uint32_t> slots, std::uint64_t duration_ns);
  void sleep_ns(std::uint64_t duration_ns);

  // Stream mode (perf's pipe format, -o -): before the first open_output,
  // says that the output is descriptor `fd` (standard output), written
  // front to back. open_output(0) writes `prefix` (core::pipe_prefix);
  // then write_at of the file's bytes below data_offset (its header,
  // written and rewritten at offset 0) is dropped, as is truncate, and
  // write_at at or past data_offset must continue the stream where it
  // stands (the writer's serial mode: every range in order; VERIFY).
  // close_output closes fd, so the reader sees the end. No other index,
  // no aio, no file to remove or keep as .old.
  void set_stream(int fd, std::uint64_t data_offset, std::vector<std::byte> prefix);
  bool streaming() const { return stream_fd_ >= 0; }
  // Bytes written to the stream, its prefix included.
  std::uint64_t stream_bytes() const { return stream_bytes_; }

  // From now on open_output(index) opens file base + index (a new writer
  // for each file: --switch-output=signal|TIME, --overwrite snapshots).
  void set_index_base(std::uint32_t base) { index_base_ = base; }
  std::uint32_t index_base() const { return index_base_; }
  // Removes the oldest file written (not the open one): unlink(2). 0 or
  // -errno; the file leaves paths() either way.
  int remove_oldest();

  // --timestamp-filename (perf's record__switch_output): each file, once
  // closed, is renamed PATH.<local time YYYYmmddHHMMSS><centiseconds>, the
  // name perf gives it. Never over another file: perf's rename would
  // replace one finished in the same centisecond; here the later one gets
  // "-2", "-3", ... (bounded). paths() and current_path() follow.
  void set_timestamp_names(bool on) { timestamp_names_ = on; }
  // Renames the closed file to its timestamp name; 0 or -errno.
  int rename_to_timestamp();
  // The first rename that failed (the file kept its name), or "".
  const std::string& rename_problem() const { return rename_problem_; }

  // The current file's name ("" before the first open_output).
  const std::string& current_path() const { return current_path_; }
  bool file_open() const { return fd_ >= 0; }
  // Files created and not removed, in order.
  const std::vector<std::string>& paths() const { return paths_; }
  const DiskCounters& counters() const { return counters_; }
  std::uint32_t in_flight() const { return in_flight_; }

  // Bytes [0, complete_prefix_bytes()) of the current file were all written
  // by whole writes that completed (the last one ends where the writer's
  // next range begins). 0 before the first write completes.
  std::uint64_t complete_prefix_bytes() const { return prefix_end_; }

 private:
  struct Slot {
    aiocb cb{};
    bool in_flight = false;
    bool returned = true;  // aio_return called since the last submit
    std::uint64_t begin = 0;  // the range asked for
    std::uint64_t end = 0;
  };
  // A write of [begin, end) not yet complete, keyed by end.
  struct Pending {
    std::uint64_t begin = 0;
    std::uint64_t written_end = 0;
  };

  void reset_tracking();
  void note_rename(int rc);
  void note_request(std::uint64_t begin, std::uint64_t end);
  void note_written(std::uint64_t begin, std::uint64_t end, std::uint64_t bytes);
  void wait_for_in_flight();

  const std::string path_;
  std::uint32_t index_base_ = 0;
  bool timestamp_names_ = false;
  std::string rename_problem_;
  std::vector<Slot> slots_;
  std::vector<const aiocb*> suspend_list_;
  int fd_ = -1;
  std::string current_path_;
  std::vector<std::string> paths_;
  std::uint32_t in_flight_ = 0;
  DiskCounters counters_;
  std::map<std::uint64_t, Pending> pending_;              // by end
  std::map<std::uint64_t, std::uint64_t> complete_;        // [begin, end) beyond the prefix, by begin
  std::uint64_t prefix_end_ = 0;
  int stream_fd_ = -1;
  std::uint64_t stream_data_offset_ = 0;
  std::vector<std::byte> stream_prefix_;
  std::uint64_t stream_next_ = 0;   // the file offset the next data write must start at
  std::uint64_t stream_bytes_ = 0;
};

static_assert(core::TraceDisk<RealDisk>);

}  // namespace ringsim::real
