// The recorder: perf events on every online CPU (for a command, inherited
// by its children; or system-wide with -a), read by the production core
// (core::RecordLoop) and written by core::TraceWriter<RealDisk> into a
// perf.data file that perf's tools read.
//
// Sequence (record(): one function per step in recorder.cc):
//   1. signal handlers (SIGINT/SIGTERM stop, SIGUSR2 snapshot);
//   2. the command is forked, held before exec (real/process.h);
//   3. the events are opened and mapped (disabled; for a command with
//      enable_on_exec, so counting starts at its exec);
//   4. the output file is created: header, attributes and event ids;
//   5. synthesized records (synthesize.h) are appended: the kernel's
//      mapping, and with -a every process in /proc;
//   6. -a: the events are enabled; a command is let go (exec);
//   7. the record loop runs until the command exits, every ring hangs up,
//      or a stop signal; every write in flight completes, the header is
//      fixed up (TraceWriter::finish);
//   8. the file(s) are read back (core/perf_data_reader.h) for the summary.
//
// While recording, RecorderSink rewrites the header every
// --header-interval-ms with a data size that covers only completed whole
// writes (RealDisk::complete_prefix_bytes()), so a file cut short by
// kill -9 is readable up to that point (docs/recorder.md).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/perf_data.h"
#include "core/record_loop.h"
#include "core/records.h"
#include "core/ring_reader.h"
#include "core/staging.h"
#include "core/trace_writer.h"
#include "real/real_backend.h"
#include "real/real_disk.h"
#include "real/record_options.h"
#include "real/zstd_records.h"

namespace ringsim::real {

// Exit statuses (sysexits.h where one fits).
inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 64;          // bad option or value
inline constexpr int kExitUnavailable = 69;    // the event is not supported here
inline constexpr int kExitSoftware = 70;       // the loop's round budget ran out (a bug)
inline constexpr int kExitOsError = 71;        // fork, poll, eventfd, ... failed
inline constexpr int kExitCantCreate = 73;     // the output file cannot be created
inline constexpr int kExitIoError = 74;        // writing the output failed (ENOSPC, EIO, ...)
inline constexpr int kExitNoPermission = 77;   // perf_event_paranoid, locked-memory limit
inline constexpr int kExitCommandFailed = 127; // COMMAND could not be run

using Writer = core::TraceWriter<RealDisk>;

struct SinkCounters {
  std::uint64_t header_checkpoints = 0;
  std::uint64_t header_checkpoint_failures = 0;
  std::uint64_t files_synthesized = 0;  // rotated files that got synthesized records
  std::uint64_t snapshot_files = 0;     // --overwrite: snapshots read into files
  std::uint64_t files_removed = 0;      // --switch-max-files
  std::uint64_t side_band_records_kept = 0;
  std::uint64_t side_band_records_dropped = 0;  // over kSideBandBytesMax
};

// The most side-band bytes RecorderSink keeps for rotated files.
inline constexpr std::uint64_t kSideBandBytesMax = std::uint64_t{16} << 20;

// How the output is split into files (RecorderSink).
struct Rotation {
  bool keep_side_band = false;  // copy COMM/MMAP/MMAP2/FORK for later files
  bool per_snapshot = false;    // --overwrite: each requested snapshot in a file of its own
  bool on_signal = false;       // --switch-output=signal: a new file at SIGUSR2 (take_switch_request)
  std::uint64_t every_ns = 0;   // --switch-output=TIME (with per_snapshot: a snapshot every TIME)
  // --switch-output=SIZE: a new file once the open one holds this many
  // data bytes, at the end of a round that read every ring up to its head
  // (or at twice the size): records an unread ring still holds can be
  // older than the file's last samples (a task's COMM and MMAP on the CPU
  // it exec'd on, its samples on another), and belong in it.
  std::uint64_t every_bytes = 0;
  // Finishes the open file and opens the next with a writer of its own
  // (0 or -errno).
  std::function<int()> switch_file;
  // (file index, first_of_file): appends what the file needs; false: more
  // for a file that has its start already (a snapshot's tasks). 0 or -errno.
  std::function<int(std::uint32_t, bool)> on_new_file;
  std::function<std::uint32_t()> file_index;        // the open file's, over every writer
  std::function<std::uint64_t()> snapshots_taken;  // per_snapshot
  std::function<void()> request_snapshot;          // per_snapshot with every_ns
  // --max-size: once the open file holds this many data bytes, at the end
  // of a round, on_max_size(bytes) is called, once (it stops the
  // recording: perf's record__output_max_size_exceeded).
  std::uint64_t max_bytes = 0;
  std::function<void(std::uint64_t)> on_max_size;
};

// core::ChunkSink: the trace writer, plus the header checkpoints and, after
// an output switch, the synthesized records the new file needs.
//
// With keep_side_band (output rotation), it also keeps a copy of the
// kernel's COMM, MMAP and MMAP2 records as they pass (up to
// kSideBandBytesMax), so that a new file can name and map the tasks that
// ran before it, including those that have exited since (which /proc no
// longer shows).
//
// Files switch by size (the writer's own rotation), or, through
// Rotation::switch_file (a new writer), at SIGUSR2, every TIME, or (with
// --overwrite) after each requested snapshot: each snapshot is a file of
// its own, with the tasks of /proc when it was opened and when the
// snapshot was read, and the side-band kept so far.
class RecorderSink {
 public:
  // compressor (-z, staged only): write_staged() hands the writer
  // COMPRESSED records of each batch (a new zstd frame for each file);
  // nullptr: the records as they are. `writer` is replaced by
  // rotation.switch_file.
  RecorderSink(std::unique_ptr<Writer>& writer, RealDisk& disk, const core::PerfDataHead& head,
               std::uint64_t header_interval_ns, Rotation rotation, ZstdRecordCompressor* compressor = nullptr);

  std::span<std::byte> acquire(std::size_t mapping);
  int commit(std::size_t mapping, std::uint64_t bytes, const core::RecordCounts& counts);
  // core::StagedWriter: a batch from the staging buffer.
  int write_staged(std::span<const std::byte> data, const core::RecordCounts& counts);
  void abandon(std::size_t mapping) { writer_->abandon(mapping); }
  void note_gap(std::size_t mapping, core::PositionRange gap, std::uint64_t head) {
    writer_->note_gap(mapping, gap, head);
  }
  void note_corrupt(std::size_t mapping, core::PositionRange at, core::ReadStatus status) {
    writer_->note_corrupt(mapping, at, status);
  }
  std::uint32_t references(std::size_t mapping) const { return writer_->references(mapping); }
  int end_round(bool all_drained);
  int flush() { return writer_->flush(); }

  // Rewrites the header now if the complete prefix grew.
  void checkpoint();
  const SinkCounters& counters() const { return counters_; }
  // The first compression failure ("" if none): zstd's error.
  const std::string& compression_problem() const { return compression_problem_; }
  // The kept side-band records, whole, in the order they were read.
  std::span<const std::byte> side_band() const { return side_band_; }

 private:
  void keep_side_band(std::span<const std::byte> records);
  int begin_data();     // before a round's first data: a snapshot's own file
  int new_file();       // after any switch: what the file needs
  int switch_now();     // a switch the sink decided (signal, time, snapshot)

  std::unique_ptr<Writer>& writer_;
  RealDisk& disk_;
  const core::PerfDataHead& head_;
  const std::uint64_t interval_ns_;
  const bool keep_side_band_;
  std::vector<std::span<std::byte>> acquired_;  // per mapping, with keep_side_band
  std::vector<std::byte> side_band_;
  Rotation rotation_;
  bool round_has_data_ = false;
  bool file_has_data_ = false;           // per_snapshot: data read into the open file
  std::uint64_t snapshots_seen_ = 0;     // per_snapshot
  bool round_requested_ = false;         // per_snapshot: this round reads a requested snapshot
  bool max_size_reached_ = false;        // Rotation::on_max_size called
  std::uint64_t file_start_ns_ = 0;      // every_ns
  ZstdRecordCompressor* compressor_;
  std::string compression_problem_;
  std::uint32_t file_index_ = 0;
  std::uint64_t last_checkpoint_ns_ = 0;
  std::uint64_t checkpointed_bytes_ = 0;
  SinkCounters counters_;
};

static_assert(core::ChunkSink<RecorderSink>);

// Records as `options` say; prints errors (one line each) and the summary
// on stderr. Returns the exit status: an error's, else the command's exit
// code (as perf record). As perf record, once the file is complete: a
// command ended by signal N (also the SIGTERM sent to it when the recorder
// is stopped first) ends this process by N; else a stop signal the
// recorder received (SIGINT, SIGTERM) ends it by that signal.
int record(const RecordOptions& options);

}  // namespace ringsim::real

extern template class ringsim::core::TraceWriter<ringsim::real::RealDisk>;
extern template class ringsim::core::RecordLoop<ringsim::real::RealSession, ringsim::real::RecorderSink>;
