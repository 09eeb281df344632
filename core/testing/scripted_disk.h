// Test double: a core::TraceDisk whose every outcome the test decides.
// Asynchronous writes stay in progress until the test completes them
// (complete()), with the result it chooses (full, short, an errno);
// submits and synchronous writes take their results from queues (default:
// success). aio_suspend runs a hook (which may complete writes) and never
// blocks. The file is a byte vector; every completed byte range is
// recorded, so a test can check holes and overlaps.
#pragma once

#include <cerrno>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <span>
#include <vector>

#include "core/backend.h"
#include "core/verify.h"

namespace ringsim::core::testing {

class ScriptedDisk {
 public:
  struct InFlight {
    const std::byte* data = nullptr;
    std::uint64_t size = 0;
    std::uint64_t offset = 0;
    std::vector<std::byte> snapshot;  // the bytes at submit
  };

  explicit ScriptedDisk(std::uint32_t slots) : done_(slots), results_(slots) {}

  // --- core::TraceDisk ---
  int open_output(std::uint32_t index) {
    if (open_error) return -open_error;
    VERIFY(in_flight.empty());
    files.resize(std::max<std::size_t>(files.size(), index + 1));
    files[index].clear();
    current = index;
    opened++;
    return 0;
  }
  int close_output() {
    VERIFY(in_flight.empty());
    closed++;
    return 0;
  }
  int remove_output() {
    files[current].clear();
    removed++;
    return 0;
  }
  std::int64_t write_at(std::span<const std::byte> data, std::uint64_t offset) {
    sync_writes++;
    std::int64_t n = static_cast<std::int64_t>(data.size());
    if (!sync_results.empty()) {
      n = sync_results.front();
      sync_results.pop_front();
      if (n > static_cast<std::int64_t>(data.size())) n = static_cast<std::int64_t>(data.size());
    }
    if (n > 0) put(data.data(), static_cast<std::uint64_t>(n), offset);
    return n;
  }
  int truncate(std::uint64_t size) {
    truncates++;
    if (!truncate_results.empty()) {
      const int rc = truncate_results.front();
      truncate_results.pop_front();
      if (rc != 0) return rc;
    }
    files[current].resize(size);
    truncated_to = size;
    return 0;
  }
  int aio_submit(std::uint32_t slot, std::span<const std::byte> data, std::uint64_t offset) {
    VERIFY(slot < done_.size());
    VERIFY_MSG(in_flight.count(slot) == 0, "slot reused while in flight");
    submits++;
    if (!submit_results.empty()) {
      const int rc = submit_results.front();
      submit_results.pop_front();
      if (rc != 0) return rc;
    }
    for (const auto& [other, w] : in_flight) {
      VERIFY_MSG(!(w.offset < offset + data.size() && offset < w.offset + w.size), "overlapping writes in flight");
    }
    in_flight[slot] = InFlight{data.data(), data.size(), offset, std::vector<std::byte>(data.begin(), data.end())};
    done_[slot] = false;
    return 0;
  }
  int aio_error(std::uint32_t slot) {
    if (in_flight.count(slot)) return EINPROGRESS;
    VERIFY_MSG(done_[slot], "aio_error on a slot with no write");
    return results_[slot] < 0 ? static_cast<int>(-results_[slot]) : 0;
  }
  std::int64_t aio_return(std::uint32_t slot) {
    VERIFY(done_[slot]);
    done_[slot] = false;
    return results_[slot] < 0 ? -1 : results_[slot];
  }
  int aio_suspend(std::span<const std::uint32_t> slots, std::uint64_t) {
    suspends++;
    if (on_suspend) on_suspend(slots);
    for (std::uint32_t s : slots) {
      if (done_[s]) return 0;
    }
    return -EAGAIN;
  }
  void sleep_ns(std::uint64_t ns) { slept_ns += ns; }

  // --- the test's side ---
  // Completes slot's write: result = bytes written (may be short) or -errno.
  void complete(std::uint32_t slot, std::int64_t result) {
    const auto it = in_flight.find(slot);
    VERIFY(it != in_flight.end());
    const InFlight& w = it->second;
    VERIFY_MSG(std::memcmp(w.data, w.snapshot.data(), w.size) == 0, "buffer changed while its write was in flight");
    if (result > 0) put(w.data, static_cast<std::uint64_t>(result), w.offset);
    results_[slot] = result;
    done_[slot] = true;
    in_flight.erase(it);
  }
  void complete_all_full() {
    while (!in_flight.empty()) complete(in_flight.begin()->first, static_cast<std::int64_t>(in_flight.begin()->second.size));
  }

  std::vector<std::vector<std::byte>> files;
  std::uint32_t current = 0;
  std::map<std::uint32_t, InFlight> in_flight;
  std::deque<int> submit_results;            // next aio_submit results (0, -EAGAIN, -errno)
  std::deque<std::int64_t> sync_results;     // next write_at results (n or -errno)
  std::function<void(std::span<const std::uint32_t>)> on_suspend;
  int open_error = 0;
  std::map<std::uint64_t, std::uint64_t> written;  // offset -> bytes, every put (overlaps show as doubles)
  std::uint64_t truncated_to = UINT64_MAX;
  int truncates = 0;
  std::deque<int> truncate_results;  // scripted results of truncate(), in order (0 or -errno); then 0
  int opened = 0, closed = 0, removed = 0, submits = 0, suspends = 0, sync_writes = 0;
  std::uint64_t slept_ns = 0;
  std::uint64_t bytes_put_twice = 0;

 private:
  void put(const std::byte* data, std::uint64_t n, std::uint64_t offset) {
    std::vector<std::byte>& f = files[current];
    if (f.size() < offset + n) f.resize(offset + n);
    std::memcpy(f.data() + offset, data, n);
    // Data written twice (the header fix-up at offset 0 aside).
    if (offset > 0) {
      for (const auto& [o, size] : written) {
        if (o > 0 && o < offset + n && offset < o + size) bytes_put_twice += std::min(o + size, offset + n) - std::max(o, offset);
      }
    }
    written[offset] = std::max(written[offset], n);
  }
  std::vector<bool> done_;
  std::vector<std::int64_t> results_;
};

static_assert(TraceDisk<ScriptedDisk>);

}  // namespace ringsim::core::testing
