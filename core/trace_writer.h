// The trace writer: a ChunkSink (core/record_loop.h) that writes what the
// record loop reads into a perf.data file, serially or asynchronously.
//
// Asynchronous mode (the algorithm of the perf AIO series, without its
// weaknesses):
//   - each mapping has `cblocks` control blocks (1..4), each with a buffer
//     as large as the ring, allocated at start;
//   - acquire(): a free control block of that mapping; when all are busy,
//     reap completions and wait (aio_suspend) for one, with a bound;
//   - the loop copies the chunk in, releases the ring space at once, then
//     commit(): reserve the file offset here (a counter of our own, never
//     lseek on a shared descriptor), take a reference on the mapping, submit;
//   - completion: a short write is resubmitted with the remainder at
//     offset + written from buffer + written; EINTR is resubmitted; a hard
//     error (EIO, ENOSPC, ...) is recorded once and stops the recording (no
//     resubmission); when the write is complete the reference is dropped and
//     the control block is free again;
//   - EAGAIN on submit: reap, back off (doubling, bounded) and retry, a
//     bounded number of times, then write that chunk synchronously: no busy
//     loop, no livelock, nothing dropped;
//   - before an output switch and at the end every write in flight
//     completes.
// Serial mode: one buffer per mapping, written with write_at (pwrite) at
// the reserved offset before commit() returns.
//
// The file stays valid: the header is fixed up at the end with the size of
// the longest prefix of the data section whose writes all completed, and
// the file is cut there. After a hard error, chunks beyond that prefix
// (completed or not) are counted as lost to the error, records and bytes,
// and so is what lies past the data size the header on disk states if the
// header fix-up itself fails (all of the prefix if none of its size was
// written; none if the write stopped after the size). One event per file
// cut, however many chunks it lost.
//
// Feature sections (core/perf_data_features.h), when a FeatureSource is
// set: when a file is finished (every write complete), the source says
// what to write; the sections go right after the valid prefix, then the
// header is fixed up with their bits set. Until that last header write the
// bitmap on disk is zero, so a file cut at any point is read without them.
// A file whose feature sections cannot be written keeps none (its header
// says none; the error is the writer's error); after an earlier hard error
// none are written.
#pragma once

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/drops.h"
#include "core/perf_data.h"
#include "core/perf_data_features.h"
#include "core/records.h"
#include "core/ring_reader.h"
#include "core/verify.h"

namespace ringsim::core {

enum class WriteMode : std::uint8_t { serial, aio };
const char* to_string(WriteMode mode);

inline constexpr std::uint32_t kCblocksMin = 1;
inline constexpr std::uint32_t kCblocksMax = 4;

struct WriterOptions {
  WriteMode mode = WriteMode::aio;
  std::uint32_t cblocks = 1;          // per mapping, 1..4 (aio mode)
  std::uint32_t mappings = 1;
  std::uint64_t buffer_bytes = 0;     // at least the largest ring
  std::uint64_t rotate_bytes = 0;     // switch files after this many data bytes; 0: never
  std::uint64_t backoff_min_ns = 10'000;
  std::uint64_t backoff_max_ns = 10'000'000;
  std::uint32_t eagain_attempts_max = 16;  // then write the chunk synchronously
  std::uint32_t retries_max = 1'000;       // per write: EINTR, zero-progress completions
  std::uint64_t suspend_ns = 10'000'000;   // one aio_suspend
  std::uint32_t suspends_max = 1'000;      // waiting for one control block / a flush
  bool operator==(const WriterOptions&) const = default;
};

// "" or "<field>: <problem>". Out-of-range values are errors, never clamped.
std::string validate(const WriterOptions& options);

struct WriterStats {
  std::uint64_t files = 0;
  std::uint64_t chunks = 0;
  std::uint64_t bytes_committed = 0;     // data bytes handed to the writer
  std::uint64_t bytes_completed = 0;     // data bytes whose writes completed
  std::uint64_t writes_submitted = 0;    // aio submissions (including resubmissions)
  std::uint64_t writes_completed = 0;    // chunks fully written
  std::uint64_t short_writes_restarted = 0;
  std::uint64_t eagain_retries = 0;
  std::uint64_t eagain_sync_fallbacks = 0;
  std::uint64_t eintr_retries = 0;
  std::uint64_t suspend_interrupted = 0;
  std::uint64_t waits_for_cblock = 0;
  std::uint64_t in_flight_max = 0;
  std::uint64_t rounds_marked = 0;
  std::uint64_t files_with_features = 0;  // files finished with feature sections
  std::uint64_t feature_bytes = 0;        // their tables and sections
  std::uint64_t fix_ups_failed = 0;       // header fix-ups that failed (the file's header kept some of its old bytes)
  std::uint64_t fix_ups_partial = 0;      // of those, fix-ups that wrote part of the header first
  RecordCounts records;                   // committed (and appended)
  // Committed, then cut off by a hard error (DropCause::output_error, one
  // event per file cut): records - drops[output_error] reached the file.
  Drops drops;
  int error = 0;                          // the first hard error (errno), 0 if none
  std::string error_context;              // what was being done
};

// The file being finished: every write of it is complete.
struct FinishedFile {
  std::uint32_t index = 0;
  std::uint64_t data_offset = 0;
  std::uint64_t data_bytes = 0;  // the valid prefix
};
// Fills the features of a finished file; false: none for it.
using FeatureSource = std::function<bool(const FinishedFile&, PerfFeatures&)>;

template <TraceDisk Disk>
class TraceWriter {
 public:
  TraceWriter(Disk& disk, const WriterOptions& options, PerfDataHead head)
      : disk_(disk), options_(options), head_(std::move(head)) {
    const std::string problem = validate(options_);
    VERIFY_MSG(problem.empty(), problem.c_str());
    const std::uint32_t per_mapping = options_.mode == WriteMode::aio ? options_.cblocks : 1;
    cblocks_.resize(std::size_t{options_.mappings} * per_mapping);
    for (std::size_t i = 0; i < cblocks_.size(); i++) {
      Cblock& cb = cblocks_[i];
      cb.buffer.resize(options_.buffer_bytes);  // allocated now, not on the push path
      cb.slot = static_cast<std::uint32_t>(i);
      cb.mapping = static_cast<std::uint32_t>(i / per_mapping);
    }
    per_mapping_ = per_mapping;
    references_.assign(options_.mappings, 0);
    slots_.reserve(cblocks_.size());
  }

  // Opens the first file and writes everything before the data section.
  int start() {
    VERIFY(stats_.files == 0);
    return open_file(0);
  }

  // Feature sections for every file finished from now on.
  void set_feature_source(FeatureSource source) { features_ = std::move(source); }

  std::uint32_t slots() const { return static_cast<std::uint32_t>(cblocks_.size()); }
  const WriterStats& stats() const { return stats_; }
  std::uint32_t file_index() const { return file_index_; }
  bool failed() const { return stats_.error != 0; }

  // The open file's header now covers its data up to file offset `end`
  // (a checkpoint its owner wrote: all of head.header(end - data_offset),
  // no feature bits): if the final fix-up fails, only what lies past it is
  // lost.
  void header_covers(std::uint64_t end) {
    VERIFY(end >= head_.data_offset());
    header_data_bytes_ = end - head_.data_offset();
    while (!unfixed_.empty() && unfixed_.front().end <= end) unfixed_.pop_front();
  }

  // --- ChunkSink -----------------------------------------------------------

  std::span<std::byte> acquire(std::size_t mapping) {
    VERIFY(mapping < references_.size());
    if (failed()) return {};
    for (std::uint32_t wait = 0; wait <= options_.suspends_max; wait++) {
      if (Cblock* cb = free_cblock(mapping)) {
        cb->state = State::filling;
        return cb->buffer;
      }
      reap();
      if (failed()) return {};
      if (free_cblock(mapping) != nullptr) continue;
      if (wait == 0) stats_.waits_for_cblock++;
      if (wait == options_.suspends_max) break;
      const int rc = suspend_on(mapping);
      if (rc == -EINTR) stats_.suspend_interrupted++;
      if (rc != 0 && rc != -EINTR && rc != -EAGAIN) {
        fail(-rc, "waiting for a control block of mapping " + std::to_string(mapping));
        return {};
      }
    }
    fail(ETIMEDOUT, "no control block of mapping " + std::to_string(mapping) + " completed in " +
                        std::to_string(options_.suspends_max) + " waits");
    return {};
  }

  int commit(std::size_t mapping, std::uint64_t bytes, const RecordCounts& counts) {
    Cblock& cb = filling_cblock(mapping);
    VERIFY(bytes > 0);
    VERIFY(bytes <= cb.buffer.size());
    VERIFY(counts.bytes == bytes);
    if (failed()) {
      cb.state = State::free;
      return -stats_.error;
    }
    cb.chunk = reserve_chunk(bytes, counts);
    cb.bytes = bytes;
    cb.written = 0;
    cb.retries = 0;
    if (options_.mode == WriteMode::serial) {
      const int rc = write_sync(std::span<const std::byte>(cb.buffer.data(), bytes), chunk(cb.chunk).offset,
                                "write");
      cb.state = State::free;
      if (rc == 0) complete_chunk(cb.chunk);
      return rc;
    }
    references_[mapping]++;  // dropped when the write is complete
    return submit(cb);
  }

  void abandon(std::size_t mapping) { filling_cblock(mapping).state = State::free; }

  // The record loop counts gaps and corrupt rings (LoopResult::drops); a
  // file has no place for them: perf's readers see gaps as missing records.
  void note_gap(std::size_t, PositionRange, std::uint64_t) {}
  void note_corrupt(std::size_t, PositionRange, ReadStatus) {}

  std::uint32_t references(std::size_t mapping) const {
    VERIFY(mapping < references_.size());
    return references_[mapping];
  }

  // Between poll rounds: completions, the finished-round marker, rotation.
  // The marker is written only after a round that read every ring up to
  // its head (`all_drained`, see ChunkSink); until then the bytes since the
  // last marker add up.
  int end_round(bool all_drained = true) {
    reap();
    if (failed()) return -stats_.error;
    if (round_bytes_ > 0 && all_drained) {
      round_bytes_ = 0;
      const auto& marker = finished_round_record();
      const std::uint64_t id = reserve(marker.size(), RecordCounts{});
      const int rc = write_sync(marker, chunk(id).offset, "finished-round marker");
      if (rc != 0) return rc;
      complete_chunk(id);
      stats_.rounds_marked++;
    }
    if (options_.rotate_bytes > 0 && next_offset_ - head_.data_offset() >= options_.rotate_bytes) {
      return switch_output();
    }
    return 0;
  }

  // Waits until no write is in flight. 0 or -errno.
  int flush() {
    for (std::uint32_t wait = 0; wait <= options_.suspends_max; wait++) {
      reap();
      if (in_flight_ == 0) return failed() ? -stats_.error : 0;
      if (wait == options_.suspends_max) break;
      slots_.clear();
      for (const Cblock& cb : cblocks_) {
        if (cb.state == State::in_flight) slots_.push_back(cb.slot);
      }
      const int rc = disk_.aio_suspend(slots_, options_.suspend_ns);
      if (rc == -EINTR) stats_.suspend_interrupted++;
      if (rc != 0 && rc != -EINTR && rc != -EAGAIN) {
        fail(-rc, "waiting for writes to complete");
        break;
      }
    }
    if (in_flight_ > 0) {
      fail(ETIMEDOUT, std::to_string(in_flight_) + " writes did not complete");
      return -stats_.error;
    }
    return failed() ? -stats_.error : 0;
  }

  // After the record loop: waits for every write, fixes the header up to
  // the valid prefix, cuts the file there, closes it. Returns the first
  // error (0 if none).
  int finish() {
    flush();
    if (in_flight_ == 0 && file_open_) finish_file();
    return failed() ? -stats_.error : 0;
  }

  // A batch from the staging buffer (core/staging.h): whole records of any
  // rings, in memory the writer does not own, freed when this returns.
  // Serial: written from there (no copy). AIO: copied into a control block
  // of "mapping" 0 (a staged writer has options.mappings == 1: its buffers
  // belong to no ring). A batch the writer cannot take after a hard error
  // is counted as committed and cut off (drops[output_error]).
  int write_staged(std::span<const std::byte> data, const RecordCounts& counts) {
    VERIFY(!data.empty());
    VERIFY(counts.bytes == data.size());
    if (options_.mode == WriteMode::aio) {
      VERIFY_MSG(options_.mappings == 1, "a staged writer has one set of control blocks");
      const std::span<std::byte> buffer = acquire(0);
      if (!buffer.empty()) {
        VERIFY(data.size() <= buffer.size());
        std::memcpy(buffer.data(), data.data(), data.size());
        return commit(0, data.size(), counts);
      }
      VERIFY(failed());  // acquire() returns nothing only then
    }
    if (failed()) {
      stats_.records.add(counts);
      count_cut(counts);  // with the file the error cut, not as one more
      return -stats_.error;
    }
    const std::uint64_t id = reserve_chunk(data.size(), counts);
    const int rc = write_sync(data, chunk(id).offset, "write");
    if (rc == 0) complete_chunk(id);
    return rc;
  }

  // Writes records the recorder synthesizes itself (not from a ring),
  // synchronously, at the next offset.
  int append(std::span<const std::byte> records, const RecordCounts& counts) {
    if (failed()) return -stats_.error;
    const std::uint64_t id = reserve(records.size(), counts);
    stats_.records.add(counts);
    stats_.bytes_committed += records.size();
    const int rc = write_sync(records, chunk(id).offset, "write");
    if (rc == 0) complete_chunk(id);
    return rc;
  }

 private:
  enum class State : std::uint8_t { free, filling, in_flight };
  static constexpr std::size_t kChunksTrackedMax = std::size_t{1} << 22;

  struct Cblock {
    std::vector<std::byte> buffer;
    State state = State::free;
    std::uint32_t slot = 0;
    std::uint32_t mapping = 0;
    std::uint64_t chunk = 0;  // id of its reservation
    std::uint64_t bytes = 0;
    std::uint64_t written = 0;
    std::uint32_t retries = 0;
  };

  // A reserved range of the data section, until the prefix before it is
  // complete.
  struct Chunk {
    std::uint64_t offset = 0;
    std::uint64_t bytes = 0;
    RecordCounts counts;
    bool complete = false;
  };

  Cblock* free_cblock(std::size_t mapping) {
    for (std::uint32_t k = 0; k < per_mapping_; k++) {
      Cblock& cb = cblocks_[mapping * per_mapping_ + k];
      if (cb.state == State::free) return &cb;
    }
    return nullptr;
  }

  Cblock& filling_cblock(std::size_t mapping) {
    VERIFY(mapping < references_.size());
    for (std::uint32_t k = 0; k < per_mapping_; k++) {
      Cblock& cb = cblocks_[mapping * per_mapping_ + k];
      if (cb.state == State::filling) return cb;
    }
    VERIFY_MSG(false, "commit or abandon without acquire");
    return cblocks_[0];
  }

  int suspend_on(std::size_t mapping) {
    slots_.clear();
    for (std::uint32_t k = 0; k < per_mapping_; k++) {
      const Cblock& cb = cblocks_[mapping * per_mapping_ + k];
      if (cb.state == State::in_flight) slots_.push_back(cb.slot);
    }
    VERIFY(!slots_.empty());
    return disk_.aio_suspend(slots_, options_.suspend_ns);
  }

  std::uint64_t reserve(std::uint64_t bytes, const RecordCounts& counts) {
    VERIFY(bytes > 0);
    const std::uint64_t id = first_chunk_id_ + chunks_.size();
    chunks_.push_back(Chunk{next_offset_, bytes, counts, false});
    next_offset_ += bytes;
    // Reservations are dropped once everything before them is written; a
    // write that never completes ends the run (flush's bound) long before.
    VERIFY(chunks_.size() <= kChunksTrackedMax);
    return id;
  }

  // A chunk read from the rings (not a marker, not synthesized records):
  // reserved and counted. Returns its id.
  std::uint64_t reserve_chunk(std::uint64_t bytes, const RecordCounts& counts) {
    const std::uint64_t id = reserve(bytes, counts);
    stats_.chunks++;
    stats_.bytes_committed += bytes;
    stats_.records.add(counts);
    round_bytes_ += bytes;
    return id;
  }

  Chunk& chunk(std::uint64_t id) {
    VERIFY(id >= first_chunk_id_);
    VERIFY(id - first_chunk_id_ < chunks_.size());
    return chunks_[id - first_chunk_id_];
  }

  // Marks a reservation complete; drops the complete prefix.
  void complete_chunk(std::uint64_t id) {
    Chunk& c = chunk(id);
    VERIFY(!c.complete);
    c.complete = true;
    stats_.bytes_completed += c.bytes;
    while (!chunks_.empty() && chunks_.front().complete) {
      note_unfixed(chunks_.front().offset + chunks_.front().bytes, chunks_.front().counts);
      chunks_.pop_front();
      first_chunk_id_++;
    }
  }

  // Queues the rest of cb's chunk. cb is ours (filling) on entry; on
  // return it is in flight, or done (written synchronously), or given up.
  int submit(Cblock& cb) {
    VERIFY(cb.state == State::filling);
    VERIFY(cb.written < cb.bytes);
    std::uint64_t backoff_ns = options_.backoff_min_ns;
    const std::uint64_t offset = chunk(cb.chunk).offset;
    for (std::uint32_t attempt = 0; attempt < options_.eagain_attempts_max; attempt++) {
      const std::span<const std::byte> rest(cb.buffer.data() + cb.written, cb.bytes - cb.written);
      const int rc = disk_.aio_submit(cb.slot, rest, offset + cb.written);
      if (rc == 0) {
        cb.state = State::in_flight;
        in_flight_++;
        stats_.writes_submitted++;
        if (in_flight_ > stats_.in_flight_max) stats_.in_flight_max = in_flight_;
        return 0;
      }
      if (rc != -EAGAIN) return give_up(cb, -rc, "queueing a write");
      stats_.eagain_retries++;
      reap();  // a completion frees room in the queue
      if (failed()) return give_up(cb, stats_.error, "queueing a write");
      disk_.sleep_ns(backoff_ns);
      backoff_ns = std::min(backoff_ns * 2, options_.backoff_max_ns);
    }
    // The queue stayed full: write this one ourselves.
    stats_.eagain_sync_fallbacks++;
    const int rc = write_sync(std::span<const std::byte>(cb.buffer.data() + cb.written, cb.bytes - cb.written),
                              offset + cb.written, "write (queue full)");
    if (rc != 0) return give_up(cb, -rc, "write (queue full)");
    done(cb);
    return 0;
  }

  // cb's write will not happen: its chunk stays incomplete (the valid prefix
  // ends before it); the control block and the mapping reference are freed.
  int give_up(Cblock& cb, int error, const std::string& what) {
    VERIFY(cb.state == State::filling);
    if (!failed()) {
      fail(error, what + " of " + std::to_string(cb.bytes - cb.written) + " bytes at offset " +
                      std::to_string(chunk(cb.chunk).offset + cb.written));
    }
    release(cb);
    return -stats_.error;
  }

  // cb's chunk is entirely written.
  void done(Cblock& cb) {
    VERIFY(cb.state == State::filling);
    VERIFY(cb.written <= cb.bytes);
    stats_.writes_completed++;
    complete_chunk(cb.chunk);
    release(cb);
  }

  void release(Cblock& cb) {
    cb.state = State::free;
    VERIFY(references_[cb.mapping] > 0);
    references_[cb.mapping]--;
  }

  // Checks every write in flight once; never blocks.
  void reap() {
    for (Cblock& cb : cblocks_) {
      if (cb.state != State::in_flight) continue;
      const int error = disk_.aio_error(cb.slot);
      if (error == EINPROGRESS) continue;
      const std::int64_t result = disk_.aio_return(cb.slot);
      VERIFY(in_flight_ > 0);
      in_flight_--;
      cb.state = State::filling;  // ours again until done, resubmitted or given up
      if (error == EINTR) {
        stats_.eintr_retries++;
        resubmit(cb, "interrupted write");
        continue;
      }
      if (error != 0) {
        give_up(cb, error, "write");
        continue;
      }
      const std::uint64_t remaining = cb.bytes - cb.written;
      if (result < 0 || static_cast<std::uint64_t>(result) > remaining) {
        give_up(cb, EIO, "write (completion reported " + std::to_string(result) + " bytes)");
        continue;
      }
      cb.written += static_cast<std::uint64_t>(result);
      if (cb.written == cb.bytes) {
        done(cb);
        continue;
      }
      stats_.short_writes_restarted++;
      resubmit(cb, "short write");
    }
  }

  void resubmit(Cblock& cb, const char* why) {
    if (failed()) {
      give_up(cb, stats_.error, why);
      return;
    }
    if (++cb.retries > options_.retries_max) {
      give_up(cb, EIO, std::string(why) + " repeated " + std::to_string(options_.retries_max) + " times:");
      return;
    }
    submit(cb);
  }

  // pwrite until all is written. 0 or -errno (and the writer has failed);
  // `written` (if given): the bytes that reached the file, all or a prefix.
  int write_sync(std::span<const std::byte> data, std::uint64_t offset, const char* what,
                 std::uint64_t* written = nullptr) {
    std::uint64_t written_here = 0;
    std::uint64_t& done = written != nullptr ? *written : written_here;
    done = 0;
    std::uint64_t backoff_ns = options_.backoff_min_ns;
    std::uint32_t retries = 0;
    while (done < data.size()) {
      const std::int64_t n = disk_.write_at(data.subspan(done), offset + done);
      if (n > 0) {
        VERIFY(static_cast<std::uint64_t>(n) <= data.size() - done);
        done += static_cast<std::uint64_t>(n);
        continue;
      }
      if (++retries > options_.retries_max) {
        return fail(n < 0 ? static_cast<int>(-n) : EIO,
                    std::string(what) + " made no progress in " + std::to_string(options_.retries_max) + " tries");
      }
      if (n == -EINTR) {
        stats_.eintr_retries++;
        continue;
      }
      if (n == -EAGAIN) {
        stats_.eagain_retries++;
        disk_.sleep_ns(backoff_ns);
        backoff_ns = std::min(backoff_ns * 2, options_.backoff_max_ns);
        continue;
      }
      if (n == 0) continue;
      return fail(static_cast<int>(-n), std::string(what) + " of " + std::to_string(data.size() - done) +
                                            " bytes at offset " + std::to_string(offset + done));
    }
    return 0;
  }

  // ftruncate(2) may be interrupted (EINTR) while it waits: tried again,
  // as a write is, at most retries_max times (counted in eintr_retries).
  int truncate_retrying(std::uint64_t file_end) {
    for (std::uint32_t tries = 0;; tries++) {
      const int rc = disk_.truncate(file_end);
      if (rc != -EINTR || tries >= options_.retries_max) return rc;
      stats_.eintr_retries++;
    }
  }

  int fail(int error, const std::string& what) {
    VERIFY(error > 0);
    if (!failed()) {
      stats_.error = error;
      stats_.error_context = what + " in output file " + std::to_string(file_index_);
    }
    return -stats_.error;
  }

  int open_file(std::uint32_t index) {
    file_cut_counted_ = false;
    header_data_bytes_ = 0;
    const int rc = disk_.open_output(index);
    if (rc != 0) return fail(-rc, "creating output file " + std::to_string(index));
    file_open_ = true;
    file_index_ = index;
    stats_.files++;
    next_offset_ = 0;
    const std::vector<std::byte> head = head_.bytes(0);
    const int written = write_sync(head, 0, "file header");
    if (written != 0) {
      // Nothing of value is in it: leave no unreadable file behind.
      disk_.remove_output();
      file_open_ = false;
      return written;
    }
    next_offset_ = head_.data_offset();
    return 0;
  }

  // The valid prefix, the header, the cut, the close.
  void finish_file() {
    VERIFY(in_flight_ == 0);
    VERIFY(file_open_);
    const std::uint64_t data_start = head_.data_offset();
    std::uint64_t valid_end = next_offset_;
    RecordCounts cut;  // this file's chunks out of perf's reach: one event
    bool any_cut = false;
    if (!chunks_.empty()) {
      valid_end = chunks_.front().offset;
      for (const Chunk& c : chunks_) {
        VERIFY(c.counts.bytes == 0 || c.counts.bytes == c.bytes);  // 0: a FINISHED_ROUND marker
        cut.add(c.counts);
      }
      any_cut = true;
      first_chunk_id_ += chunks_.size();
      chunks_.clear();
    }
    if (valid_end >= data_start) {
      FeatureBitmap bits{};
      const std::uint64_t file_end = write_features(valid_end, bits);
      const auto header = head_.header(valid_end - data_start, bits);
      std::uint64_t written = 0;
      if (write_sync(header, 0, "header fix-up", &written) != 0) {
        stats_.fix_ups_failed++;
        if (written > 0) stats_.fix_ups_partial++;
        // perf reads the data section the header on disk states: the
        // chunks past it are lost to the error.
        const std::uint64_t reach = data_start + data_bytes_after_fix_up(header, written);
        for (const Unfixed& u : unfixed_) {
          if (u.end <= reach) continue;
          cut.add(u.counts);
          any_cut = true;
        }
      }
      const int truncated = truncate_retrying(file_end);
      if (truncated != 0) fail(-truncated, "cutting the file to its valid prefix");
    }
    if (any_cut) count_cut(cut);
    unfixed_.clear();
    const int closed = disk_.close_output();
    if (closed != 0) fail(-closed, "closing the output file");
    file_open_ = false;
  }

  // The data size the file's header states after a fix-up that wrote only
  // its first `written` bytes (pwrite may stop at any byte, then fail):
  // the fix-up's bytes there, the header on disk before it elsewhere. All
  // of the fix-up's size, or none of it (the header before it: 0, or the
  // last checkpoint), unless the write stopped inside the size field: a
  // torn size, no larger than the fix-up's, that may end inside a chunk
  // (counted whole) or even before the checkpoint (the chunks a checkpoint
  // covered are no longer tracked: not counted). perf then finds the file's
  // last record cut.
  std::uint64_t data_bytes_after_fix_up(const std::array<std::byte, kPerfFileHeaderBytes>& fix_up,
                                        std::uint64_t written) const {
    std::array<std::byte, kPerfFileHeaderBytes> on_disk = head_.header(header_data_bytes_);
    std::memcpy(on_disk.data(), fix_up.data(), std::min<std::uint64_t>(written, on_disk.size()));
    PerfFileHeader h;
    std::memcpy(&h, on_disk.data(), sizeof h);
    return h.data.size;
  }

  // Records of the current file (or the one being created) cut off by the
  // error: one event per file, however many chunks and batches it lost.
  void count_cut(const RecordCounts& counts) {
    if (file_cut_counted_) {
      stats_.drops.add_records(DropCause::output_error, counts);
    } else {
      stats_.drops.add(DropCause::output_error, counts);
      file_cut_counted_ = true;
    }
  }

  // The feature sections of the file being finished, at valid_end; sets
  // their bits. Returns where the file ends (valid_end when there are none).
  std::uint64_t write_features(std::uint64_t valid_end, FeatureBitmap& bits) {
    if (!features_ || failed()) return valid_end;
    const FinishedFile file{file_index_, head_.data_offset(), valid_end - head_.data_offset()};
    PerfFeatures features;
    if (!features_(file, features)) return valid_end;
    const FeatureSections sections = feature_sections(features, head_.events(), valid_end);
    if (write_sync(sections.bytes, valid_end, "feature sections") != 0) return valid_end;
    bits = sections.bitmap;
    stats_.files_with_features++;
    stats_.feature_bytes += sections.bytes.size();
    return valid_end + sections.bytes.size();
  }

  int switch_output() {
    const int flushed = flush();
    if (flushed != 0) return flushed;
    finish_file();
    if (failed()) return -stats_.error;
    return open_file(file_index_ + 1);
  }

  Disk& disk_;
  const WriterOptions options_;
  const PerfDataHead head_;
  FeatureSource features_;
  std::vector<Cblock> cblocks_;
  std::uint32_t per_mapping_ = 1;
  std::vector<std::uint32_t> references_;
  std::vector<std::uint32_t> slots_;
  std::deque<Chunk> chunks_;
  std::uint64_t first_chunk_id_ = 0;
  // The open file's complete chunks that no header covers yet, in file
  // order, a few thousand at most: past that the oldest two merge (a
  // checkpoint then frees them a little later).
  struct Unfixed {
    std::uint64_t end = 0;  // file offset where the chunk (or merged run) ends
    RecordCounts counts;
  };
  static constexpr std::size_t kUnfixedMax = 4096;
  std::deque<Unfixed> unfixed_;
  void note_unfixed(std::uint64_t end, const RecordCounts& counts) {
    if (unfixed_.size() == kUnfixedMax) {
      unfixed_[1].counts.add(unfixed_[0].counts);
      unfixed_.pop_front();
    }
    unfixed_.push_back(Unfixed{end, counts});
  }
  std::uint64_t next_offset_ = 0;
  std::uint64_t header_data_bytes_ = 0;  // the data size the open file's header on disk states
  bool file_cut_counted_ = false;        // the file's output_error event is counted
  std::uint64_t round_bytes_ = 0;
  std::uint64_t in_flight_ = 0;
  std::uint32_t file_index_ = 0;
  bool file_open_ = false;
  WriterStats stats_;
};

}  // namespace ringsim::core
