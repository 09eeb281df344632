#include "sim/disk.h"

#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/verify.h"

namespace ringsim::sim {

SimDisk::SimDisk(Scheduler& scheduler, const DiskConfig& config, Probes& probes)
    : scheduler_(scheduler), config_(config), probes_(probes), slots_(config.slots) {
  VERIFY(config_.slots >= 1);
  VERIFY(config_.slots_per_mapping >= 1);
  VERIFY(config_.queue_depth >= 1);
  VERIFY(config_.latency_ns_min <= config_.latency_ns_max);
}

SimDisk::~SimDisk() = default;

void SimDisk::violate(const char* property, const std::string& detail) {
  if (violations_.size() < 100) violations_.push_back(model::Violation{property, "disk: " + detail});
}

SimFile& SimDisk::current() {
  VERIFY(current_ < files_.size());
  return files_[current_];
}

std::uint64_t SimDisk::latency_ns(std::uint64_t bytes) {
  DecisionSource& d = scheduler_.decisions();
  std::uint64_t ns = d.between(config_.latency_ns_min, config_.latency_ns_max) + bytes * config_.ns_per_kib / 1024;
  if (faults_ && d.chance(config_.stall_per_million)) {
    stats_.stalls++;
    probes_.hit(Probe::disk_stall);
    scheduler_.trace(TraceKind::fault, static_cast<std::uint64_t>(FaultCode::disk_stall), config_.stall_ns);
    ns += config_.stall_ns;
  }
  return ns;
}

std::uint32_t SimDisk::in_flight() const {
  std::uint32_t n = 0;
  for (const Slot& s : slots_) n += s.state == SlotState::in_flight;
  return n;
}

std::uint32_t SimDisk::in_flight_for_mapping(std::size_t mapping) const {
  if (config_.slots_of_no_ring) return 0;
  std::uint32_t n = 0;
  for (std::size_t i = 0; i < slots_.size(); i++) {
    const Slot& s = slots_[i];
    const bool held = s.state == SlotState::in_flight || (s.state == SlotState::done && !s.returned);
    if (held && i / config_.slots_per_mapping == mapping) n++;
  }
  return n;
}

int SimDisk::open_output(std::uint32_t index) {
  scheduler_.maybe_yield();
  if (in_flight() > 0) {
    violate("flush_before_switch", "output file " + std::to_string(index) + " opened with " +
                                       std::to_string(in_flight()) + " writes in flight");
  }
  if (config_.open_fails) {
    stats_.open_failures++;
    return -EACCES;
  }
  VERIFY(index < 100'000);
  if (files_.size() <= index) files_.resize(index + 1);
  files_[index] = SimFile{};
  current_ = index;
  scheduler_.trace(TraceKind::file_opened, index);
  return 0;
}

int SimDisk::close_output() {
  scheduler_.maybe_yield();
  if (current_ == UINT32_MAX) return -EBADF;
  if (in_flight() > 0) {
    violate("flush_before_switch", "output file " + std::to_string(current_) + " closed with " +
                                       std::to_string(in_flight()) + " writes in flight");
  }
  current().closed = true;
  scheduler_.trace(TraceKind::file_closed, current_);
  current_ = UINT32_MAX;
  return 0;
}

int SimDisk::remove_output() {
  scheduler_.maybe_yield();
  if (current_ == UINT32_MAX) return -EBADF;
  if (in_flight() > 0) {
    violate("flush_before_switch", "output file " + std::to_string(current_) + " removed with writes in flight");
  }
  current() = SimFile{};
  current().closed = true;
  current().removed = true;
  current_ = UINT32_MAX;
  return 0;
}

int SimDisk::truncate(std::uint64_t size) {
  scheduler_.maybe_yield();
  if (current_ == UINT32_MAX) return -EBADF;
  current().bytes.resize(size);
  return 0;
}

// The page of Linux's page cache, in which a file write is copied.
constexpr std::uint64_t kPage = 4096;

std::uint64_t SimDisk::written_length(std::uint64_t size, std::uint64_t offset) {
  DecisionSource& d = scheduler_.decisions();
  if (!faults_ || size <= 1 || !d.chance(config_.short_per_million)) return size;
  // The drawn length, then (on a page-cache file) back to the last page
  // boundary of the file within it; none there: the write is whole.
  const std::uint64_t drawn = d.between(1, size - 1);
  const std::uint64_t cut = config_.short_any_byte ? offset + drawn : (offset + drawn) / kPage * kPage;
  if (cut <= offset) {
    stats_.short_inside_a_page++;
    probes_.hit(Probe::disk_short_inside_a_page);
    return size;
  }
  stats_.short_writes++;
  probes_.hit(Probe::disk_short_write);
  scheduler_.trace(TraceKind::fault, static_cast<std::uint64_t>(FaultCode::disk_short_write), cut - offset, offset);
  return cut - offset;
}

std::int64_t SimDisk::perform(std::uint32_t file_index, const std::byte* data, std::uint64_t size,
                              std::uint64_t offset) {
  VERIFY(file_index < files_.size());
  VERIFY(size > 0);
  DecisionSource& d = scheduler_.decisions();
  if (faults_ && d.chance(config_.eio_per_million)) {
    stats_.eio++;
    probes_.hit(Probe::disk_eio);
    if (stats_.first_hard_error == 0) stats_.first_hard_error = EIO;
    scheduler_.trace(TraceKind::fault, static_cast<std::uint64_t>(FaultCode::disk_eio), file_index, offset);
    return -EIO;
  }
  if (faults_ && d.chance(config_.eintr_per_million)) {
    stats_.eintr_writes++;
    probes_.hit(Probe::disk_eintr);
    scheduler_.trace(TraceKind::fault, static_cast<std::uint64_t>(FaultCode::disk_eintr_write), file_index, offset);
    return -EINTR;
  }
  std::uint64_t n = written_length(size, offset);
  if (config_.capacity_bytes > 0 && offset + n > config_.capacity_bytes) {
    if (offset >= config_.capacity_bytes) {
      stats_.enospc++;
      probes_.hit(Probe::disk_enospc);
      if (stats_.first_hard_error == 0) stats_.first_hard_error = ENOSPC;
      scheduler_.trace(TraceKind::fault, static_cast<std::uint64_t>(FaultCode::disk_enospc), file_index, offset);
      return -ENOSPC;
    }
    n = config_.capacity_bytes - offset;
  }
  SimFile& file = files_[file_index];
  if (file.bytes.size() < offset + n) file.bytes.resize(offset + n);
  std::memcpy(file.bytes.data() + offset, data, n);
  // The data section: no byte written twice.
  const std::uint64_t begin = std::max(offset, config_.data_offset);
  const std::uint64_t end = offset + n;
  if (begin < end) {
    auto& ranges = file.data_written;
    auto next = ranges.upper_bound(begin);
    if (next != ranges.begin()) {
      const auto previous = std::prev(next);
      if (previous->second > begin) {
        violate("no_overlap", "bytes [" + std::to_string(begin) + ", " + std::to_string(std::min(end, previous->second)) +
                                  ") of file " + std::to_string(file_index) + " written twice");
      }
    }
    if (next != ranges.end() && next->first < end) {
      violate("no_overlap", "bytes from " + std::to_string(next->first) + " of file " + std::to_string(file_index) +
                                " written twice");
    }
    // Insert and merge with neighbours.
    std::uint64_t merged_begin = begin, merged_end = end;
    auto it = ranges.upper_bound(begin);
    if (it != ranges.begin() && std::prev(it)->second >= begin) {
      --it;
      merged_begin = std::min(merged_begin, it->first);
    }
    while (it != ranges.end() && it->first <= merged_end) {
      merged_end = std::max(merged_end, it->second);
      it = ranges.erase(it);
    }
    ranges[merged_begin] = merged_end;
  }
  stats_.writes++;
  stats_.bytes += n;
  return static_cast<std::int64_t>(n);
}

std::int64_t SimDisk::write_at(std::span<const std::byte> data, std::uint64_t offset) {
  scheduler_.maybe_yield();
  if (current_ == UINT32_MAX) return -EBADF;
  VERIFY(!data.empty());
  DecisionSource& d = scheduler_.decisions();
  if (faults_ && d.chance(config_.suspend_eintr_per_million)) {
    stats_.eintr_suspends++;
    probes_.hit(Probe::disk_eintr);
    scheduler_.trace(TraceKind::fault, static_cast<std::uint64_t>(FaultCode::disk_eintr_wait));
    return -EINTR;
  }
  for (std::size_t i = 0; i < slots_.size(); i++) {
    const Slot& s = slots_[i];
    if (s.state == SlotState::in_flight && s.file == current_ && s.offset < offset + data.size() &&
        offset < s.offset + s.size) {
      violate("no_overlap", "a write at offset " + std::to_string(offset) + " overlaps the write in flight in slot " +
                                std::to_string(i));
    }
  }
  const std::uint32_t file = current_;
  const std::uint64_t hash = XXH3_64bits(data.data(), data.size());
  const std::uint64_t latency = latency_ns(data.size());
  scheduler_.sleep_for(latency);
  if (XXH3_64bits(data.data(), data.size()) != hash) {
    violate("buffer_stable", "the buffer of a synchronous write changed while it was being written");
  }
  const std::int64_t n = perform(file, data.data(), data.size(), offset);
  scheduler_.trace(TraceKind::sync_write, offset, data.size(), latency);
  return n;
}

std::uint64_t SimDisk::current_size() const {
  return current_ < files_.size() ? files_[current_].bytes.size() : 0;
}

void SimDisk::force_complete(std::uint32_t slot_index) {
  VERIFY(slot_index < slots_.size());
  Slot& slot = slots_[slot_index];
  if (slot.state != SlotState::in_flight) return;
  slot.complete_at_ns = scheduler_.now_ns();
  complete_due(slot, slot_index);
}

int SimDisk::aio_submit(std::uint32_t slot_index, std::span<const std::byte> data, std::uint64_t offset) {
  scheduler_.maybe_yield();
  VERIFY(slot_index < slots_.size());
  VERIFY(!data.empty());
  if (current_ == UINT32_MAX) return -EBADF;
  if (scheduler_.cancelled()) return -ECANCELED;
  // Livelock: a caller that retries refused submits without letting any
  // virtual time pass can never see the queue drain.
  if (scheduler_.now_ns() != eagain_streak_at_ns_) {
    eagain_streak_ = 0;
    eagain_streak_at_ns_ = scheduler_.now_ns();
  }
  if (eagain_streak_ >= kEagainStreakMax) {
    scheduler_.cancel("liveness: livelock: " + std::to_string(kEagainStreakMax) +
                      " submits refused with EAGAIN and no virtual time passing (busy retry without back-off)");
    return -ECANCELED;
  }
  Slot& slot = slots_[slot_index];
  if (slot.state == SlotState::in_flight || !slot.returned) {
    violate("buffer_stable", "slot " + std::to_string(slot_index) + " reused before its write was reaped");
    return -EINVAL;
  }
  const std::uint64_t now = scheduler_.now_ns();
  const int refused = refuse(slot_index, now);
  if (refused != 0) {
    eagain_streak_++;
    return refused;
  }
  eagain_streak_ = 0;
  for (std::size_t i = 0; i < slots_.size(); i++) {
    const Slot& other = slots_[i];
    if (other.state == SlotState::in_flight && other.file == current_ && other.offset < offset + data.size() &&
        offset < other.offset + other.size) {
      violate("no_overlap", "writes in flight in slots " + std::to_string(i) + " and " + std::to_string(slot_index) +
                                " overlap at offset " + std::to_string(std::max(offset, other.offset)));
    }
  }
  slot.state = SlotState::in_flight;
  slot.data = data.data();
  slot.size = data.size();
  slot.offset = offset;
  slot.file = current_;
  slot.complete_at_ns = now + latency_ns(data.size());
  slot.hash_at_submit = XXH3_64bits(data.data(), data.size());
  slot.returned = false;
  stats_.async_submitted++;
  stats_.in_flight_max = std::max<std::uint64_t>(stats_.in_flight_max, in_flight());
  scheduler_.trace(TraceKind::aio_submit, slot_index, offset, data.size());
  return 0;
}

int SimDisk::refuse(std::uint32_t slot_index, std::uint64_t now) {
  DecisionSource& d = scheduler_.decisions();
  if (faults_ && now < eagain_until_ns_) {
    stats_.eagain_burst++;
    probes_.hit(Probe::disk_eagain);
    scheduler_.trace(TraceKind::fault, static_cast<std::uint64_t>(FaultCode::disk_eagain_in_burst), slot_index);
    return -EAGAIN;
  }
  if (faults_ && d.chance(config_.eagain_burst_per_million)) {
    eagain_until_ns_ = now + config_.eagain_burst_ns;
    stats_.eagain_burst++;
    probes_.hit(Probe::disk_eagain_burst);
    scheduler_.trace(TraceKind::fault, static_cast<std::uint64_t>(FaultCode::disk_eagain_burst_start), slot_index);
    return -EAGAIN;
  }
  if (faults_ && d.chance(config_.eagain_per_million)) {
    stats_.eagain_single++;
    probes_.hit(Probe::disk_eagain);
    scheduler_.trace(TraceKind::fault, static_cast<std::uint64_t>(FaultCode::disk_eagain), slot_index);
    return -EAGAIN;
  }
  if (in_flight() >= config_.queue_depth) {
    stats_.eagain_queue_full++;
    probes_.hit(Probe::disk_queue_full);
    scheduler_.trace(TraceKind::fault, static_cast<std::uint64_t>(FaultCode::disk_queue_full), slot_index);
    return -EAGAIN;
  }
  return 0;
}

void SimDisk::complete_due(Slot& slot, std::uint32_t index) {
  VERIFY(slot.state == SlotState::in_flight);
  VERIFY(scheduler_.now_ns() >= slot.complete_at_ns);
  if (XXH3_64bits(slot.data, slot.size) != slot.hash_at_submit) {
    violate("buffer_stable", "the buffer of slot " + std::to_string(index) + " changed while its write of " +
                                 std::to_string(slot.size) + " bytes at offset " + std::to_string(slot.offset) +
                                 " was in flight");
  }
  const std::int64_t n = perform(slot.file, slot.data, slot.size, slot.offset);
  slot.state = SlotState::done;
  stats_.async_completed++;
  if (n > 0 && static_cast<std::uint64_t>(n) < slot.size) stats_.async_short++;
  slot.error = n < 0 ? static_cast<int>(-n) : 0;
  slot.result = n < 0 ? -1 : n;
  scheduler_.trace(TraceKind::aio_complete, index, static_cast<std::uint64_t>(n), slot.offset);
}

int SimDisk::aio_error(std::uint32_t slot_index) {
  scheduler_.maybe_yield();
  VERIFY(slot_index < slots_.size());
  Slot& slot = slots_[slot_index];
  if (slot.state == SlotState::idle) {
    violate("buffer_stable", "aio_error on slot " + std::to_string(slot_index) + " with no write");
    return EINVAL;
  }
  if (slot.state == SlotState::in_flight) {
    if (scheduler_.now_ns() < slot.complete_at_ns) return EINPROGRESS;
    complete_due(slot, slot_index);
  }
  return slot.error;
}

std::int64_t SimDisk::aio_return(std::uint32_t slot_index) {
  VERIFY(slot_index < slots_.size());
  Slot& slot = slots_[slot_index];
  if (slot.state != SlotState::done || slot.returned) {
    violate("buffer_stable", "aio_return on slot " + std::to_string(slot_index) + " without a completed write");
    return -1;
  }
  slot.returned = true;
  slot.state = SlotState::idle;
  return slot.result;
}

int SimDisk::aio_suspend(std::span<const std::uint32_t> slots, std::uint64_t timeout_ns) {
  scheduler_.maybe_yield();
  if (faults_ && scheduler_.decisions().chance(config_.suspend_eintr_per_million)) {
    stats_.eintr_suspends++;
    probes_.hit(Probe::disk_eintr);
    scheduler_.trace(TraceKind::fault, static_cast<std::uint64_t>(FaultCode::disk_eintr_wait));
    return -EINTR;
  }
  std::uint64_t earliest = UINT64_MAX;
  for (std::uint32_t index : slots) {
    VERIFY(index < slots_.size());
    const Slot& s = slots_[index];
    if (s.state == SlotState::done) return 0;
    if (s.state == SlotState::in_flight) earliest = std::min(earliest, s.complete_at_ns);
  }
  const std::uint64_t now = scheduler_.now_ns();
  if (earliest <= now) return 0;
  const std::uint64_t deadline = std::min(earliest, now + timeout_ns);
  if (scheduler_.sleep_until(deadline) == Wake::cancelled) return -ECANCELED;
  return earliest <= scheduler_.now_ns() ? 0 : -EAGAIN;
}

void SimDisk::sleep_ns(std::uint64_t duration_ns) { scheduler_.sleep_for(duration_ns); }

}  // namespace ringsim::sim
