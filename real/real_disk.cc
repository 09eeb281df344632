#include "real/real_disk.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <utility>
#include <vector>

#include "core/verify.h"
#include "real/error.h"

namespace ringsim::real {
namespace {

constexpr std::uint64_t kNsPerSecond = 1'000'000'000;
// The destructor's wait for writes still in flight: 6000 x 10 ms.
constexpr std::uint32_t kDestructorWaitsMax = 6000;
constexpr std::uint64_t kDestructorWaitNs = 10'000'000;

timespec to_timespec(std::uint64_t duration_ns) {
  timespec t{};
  t.tv_sec = static_cast<time_t>(duration_ns / kNsPerSecond);
  t.tv_nsec = static_cast<long>(duration_ns % kNsPerSecond);
  return t;
}

std::string directory_of(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

}  // namespace

Error start_aio_helpers(std::uint32_t count) {
  VERIFY(count > 0 && count <= 64);
  aioinit init{};
  init.aio_threads = static_cast<int>(count);
  init.aio_num = 64;
  init.aio_idle_time = 1 << 30;  // seconds: about 34 years
  ::aio_init(&init);
  std::vector<int> fds(2 * count, -1);
  std::vector<aiocb> cbs(count);
  std::vector<char> bytes(count);
  // One byte into request i's pipe: its read completes.
  const auto wake = [&](std::uint32_t i) { return ::write(fds[2 * i + 1], "x", 1) == 1; };
  const auto close_all = [&] {
    for (const int fd : fds) {
      if (fd >= 0) ::close(fd);
    }
  };
  for (std::uint32_t i = 0; i < count; i++) {
    if (::pipe2(&fds[2 * i], O_CLOEXEC) != 0) {
      const int error = errno;
      close_all();
      return Error{error, std::string("--exclude-perf with --aio: pipe2: ") + std::strerror(error)};
    }
    cbs[i] = aiocb{};
    cbs[i].aio_fildes = fds[2 * i];
    cbs[i].aio_buf = &bytes[i];
    cbs[i].aio_nbytes = 1;
    // Each blocks in read(2) on a helper of its own: glibc starts one per
    // request while none is idle.
    if (::aio_read(&cbs[i]) != 0) {
      const int error = errno;
      for (std::uint32_t k = 0; k < i; k++) {
        if (wake(k)) (void)::aio_suspend(std::array<const aiocb*, 1>{&cbs[k]}.data(), 1, nullptr);
      }
      close_all();
      return Error{error, std::string("--exclude-perf with --aio: aio_read: ") + std::strerror(error)};
    }
  }
  Error result;
  for (std::uint32_t i = 0; i < count; i++) {
    if (!wake(i)) result = Error{errno, std::string("--exclude-perf with --aio: write to a pipe: ") + std::strerror(errno)};
  }
  for (std::uint32_t i = 0; i < count; i++) {
    const aiocb* wait[] = {&cbs[i]};
    // Bounded: each pass waits for the request, which the byte written
    // above completes.
    for (int tries = 0; ::aio_error(&cbs[i]) == EINPROGRESS && tries < 1000; tries++) {
      const timespec second{1, 0};
      (void)::aio_suspend(wait, 1, &second);
    }
    if (::aio_error(&cbs[i]) == EINPROGRESS || ::aio_return(&cbs[i]) != 1) {
      result = Error{EIO, "--exclude-perf with --aio: a helper thread's read did not complete"};
    }
  }
  close_all();
  return result;
}

std::string output_path(const std::string& path, std::uint32_t index) {
  if (index == 0) return path;
  return path + "." + std::to_string(index);
}

std::string output_error_message(int error, const std::string& path, const std::string& what) {
  const std::string head = "output " + path + ": " + what + ": " + errno_text(error);
  const std::string dir = directory_of(path);
  switch (error) {
    case ENOENT:
      if (what.starts_with("closing")) {
        return head + ": the file (or the directory " + dir +
               ") was removed while recording: what was written to it is lost; record again";
      }
      return head + ": the directory " + dir + " does not exist: create it or choose another path with -o";
    case ENOTDIR:
      return head + ": a component of the path is not a directory: choose another path with -o";
    case EACCES:
    case EPERM:
      return head + ": no permission to write in " + dir + ": choose a writable directory with -o";
    case EROFS:
      return head + ": the file system of " + dir + " is read-only: write to another file system with -o";
    case EISDIR:
      return head + ": the path is a directory: give a file name with -o";
    case ENOSPC:
      return head + ": the file system is full: free space or write elsewhere with -o (or limit the size with "
                    "--switch-output, a lower -F or a shorter recording)";
    case EDQUOT:
      return head + ": the disk quota is exhausted: free space or write elsewhere with -o";
    case EFBIG:
      return head + ": the file is larger than this file system or RLIMIT_FSIZE allows: use --switch-output";
    case EIO:
      return head + ": the device reported an I/O error: check the disk (dmesg) and write elsewhere with -o";
    case EMFILE:
    case ENFILE:
      return head + ": out of file descriptors: raise the limit (ulimit -n)";
    case ENAMETOOLONG:
      return head + ": the path is too long: choose a shorter one with -o";
    case ETIMEDOUT:
      return head + ": writes did not complete in time (a hung file system?): write elsewhere with -o";
    default:
      return head;
  }
}

RealDisk::RealDisk(std::string path, std::uint32_t slots) : path_(std::move(path)) {
  VERIFY(!path_.empty());
  VERIFY(slots >= 1);
  slots_.resize(slots);
  suspend_list_.reserve(slots);
}

RealDisk::~RealDisk() {
  wait_for_in_flight();
  // A write still in flight reads memory that is about to be freed (its
  // control block here, its buffer in the writer): stop rather than let it.
  VERIFY_MSG(in_flight_ == 0, "RealDisk destroyed with asynchronous writes in flight");
  if (fd_ >= 0) ::close(fd_);
}

void RealDisk::wait_for_in_flight() {
  for (std::uint32_t wait = 0; wait < kDestructorWaitsMax && in_flight_ > 0; wait++) {
    for (std::uint32_t slot = 0; slot < slots_.size(); slot++) {
      Slot& s = slots_[slot];
      if (!s.in_flight) continue;
      if (::aio_error(&s.cb) == EINPROGRESS) continue;
      aio_return(slot);
    }
    if (in_flight_ == 0) break;
    const timespec pause = to_timespec(kDestructorWaitNs);
    ::nanosleep(&pause, nullptr);
  }
}

void RealDisk::reset_tracking() {
  pending_.clear();
  complete_.clear();
  prefix_end_ = 0;
}

void RealDisk::set_stream(int fd, std::uint64_t data_offset, std::vector<std::byte> prefix) {
  VERIFY_MSG(fd >= 0 && fd_ < 0 && counters_.files_opened == 0, "set_stream after the output was opened");
  stream_fd_ = fd;
  stream_data_offset_ = data_offset;
  stream_prefix_ = std::move(prefix);
}

namespace {

// All of `data` to a pipe, EINTR and short writes retried (a bounded number
// of times). 0 or -errno (-EPIPE: the reader went away).
int write_all(int fd, std::span<const std::byte> data, std::uint64_t& written) {
  constexpr int kAttemptsMax = 1 << 20;
  std::size_t at = 0;
  for (int attempt = 0; attempt < kAttemptsMax && at < data.size(); attempt++) {
    const ssize_t n = ::write(fd, data.data() + at, data.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      VERIFY(error > 0);
      return -error;
    }
    at += static_cast<std::size_t>(n);
    written += static_cast<std::uint64_t>(n);
  }
  return at == data.size() ? 0 : -EIO;
}

}  // namespace

int RealDisk::open_output(std::uint32_t index) {
  VERIFY_MSG(in_flight_ == 0, "open_output with writes in flight");
  if (streaming()) {
    VERIFY_MSG(index == 0 && index_base_ == 0 && fd_ < 0 && counters_.files_opened == 0,
               "a stream has one output");
    fd_ = stream_fd_;
    current_path_ = "-";
    counters_.files_opened++;
    stream_next_ = stream_data_offset_;
    return write_all(fd_, stream_prefix_, stream_bytes_);
  }
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
    if (timestamp_names_) note_rename(rename_to_timestamp());
  }
  const std::string path = output_path(path_, index_base_ + index);
  // As perf record: a non-empty file of that name is kept as NAME.old (one
  // earlier recording, never truncated), and a new file is the user's own
  // (0600: a recording shows what every process on the machine ran).
  struct stat existing {};
  if (::stat(path.c_str(), &existing) == 0 && S_ISREG(existing.st_mode) && existing.st_size > 0) {
    if (::rename(path.c_str(), (path + ".old").c_str()) != 0) {
      const int error = errno;
      VERIFY(error > 0);
      return -error;
    }
    counters_.files_kept_as_old++;
  }
  const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int error = errno;
    VERIFY(error > 0);
    return -error;
  }
  fd_ = fd;
  current_path_ = path;
  paths_.push_back(path);
  counters_.files_opened++;
  reset_tracking();
  return 0;
}

int RealDisk::remove_oldest() {
  VERIFY_MSG(!paths_.empty(), "remove_oldest without a file");
  VERIFY_MSG(fd_ < 0 || paths_.size() > 1, "remove_oldest of the open file");
  const std::string oldest = paths_.front();
  paths_.erase(paths_.begin());
  return ::unlink(oldest.c_str()) == 0 ? 0 : -errno;
}

int RealDisk::close_output() {
  VERIFY_MSG(in_flight_ == 0, "close_output with writes in flight");
  VERIFY_MSG(fd_ >= 0, "close_output without an open file");
  const int fd = std::exchange(fd_, -1);
  if (streaming()) return ::close(fd) == 0 || errno == EINTR ? 0 : -errno;
  // A file removed while it was written (it, or its directory: rm -rf)
  // took everything written with it: that is an error, not a recording.
  struct stat st {};
  const bool removed = ::fstat(fd, &st) == 0 && st.st_nlink == 0;
  // Linux closes the descriptor even when close reports an error.
  if (::close(fd) != 0) {
    const int error = errno;
    if (error != EINTR) return -error;
  }
  if (removed) return -ENOENT;
  // A file that keeps its name is still whole: a warning, not an error
  // (perf's pr_warning "Failed to rename").
  if (timestamp_names_) note_rename(rename_to_timestamp());
  return 0;
}

void RealDisk::note_rename(int rc) {
  if (rc != 0 && rename_problem_.empty()) {
    rename_problem_ = "--timestamp-filename: renaming " + current_path_ + ": " + errno_text(-rc) + " (kept as is)";
  }
}

int RealDisk::rename_to_timestamp() {
  VERIFY_MSG(fd_ < 0 && !current_path_.empty() && !streaming(), "rename_to_timestamp of an open file or a stream");
  timeval now{};
  tm local{};
  char date[32] = {};
  if (::gettimeofday(&now, nullptr) != 0 || ::localtime_r(&now.tv_sec, &local) == nullptr ||
      std::strftime(date, sizeof date, "%Y%m%d%H%M%S", &local) == 0) {
    return -EINVAL;
  }
  char centiseconds[8];
  std::snprintf(centiseconds, sizeof centiseconds, "%02u", static_cast<unsigned>(now.tv_usec / 10000));
  const std::string base = path_ + "." + date + centiseconds;
  constexpr int kTries = 100;
  for (int k = 1; k <= kTries; k++) {
    const std::string name = k == 1 ? base : base + "-" + std::to_string(k);
    // renameat2(RENAME_NOREPLACE): EEXIST rather than replace a file; a
    // file system without it (EINVAL: some network and FUSE ones) gets
    // link(2) and unlink(2), which never replace either.
    int rc = ::renameat2(AT_FDCWD, current_path_.c_str(), AT_FDCWD, name.c_str(), RENAME_NOREPLACE) == 0 ? 0 : errno;
    if (rc == EINVAL) {
      rc = ::link(current_path_.c_str(), name.c_str()) == 0 ? 0 : errno;
      if (rc == 0 && ::unlink(current_path_.c_str()) != 0) rc = errno;
    }
    if (rc == 0) {
      std::replace(paths_.begin(), paths_.end(), current_path_, name);
      current_path_ = name;
      return 0;
    }
    if (rc != EEXIST) return -rc;
  }
  return -EEXIST;
}

int RealDisk::remove_output() {
  VERIFY_MSG(in_flight_ == 0, "remove_output with writes in flight");
  VERIFY_MSG(fd_ >= 0, "remove_output without an open file");
  if (streaming()) {
    ::close(std::exchange(fd_, -1));  // nothing to remove: the reader has what was sent
    return 0;
  }
  ::close(std::exchange(fd_, -1));
  if (!paths_.empty() && paths_.back() == current_path_) paths_.pop_back();
  reset_tracking();
  if (::unlink(current_path_.c_str()) != 0) {
    const int error = errno;
    VERIFY(error > 0);
    return -error;
  }
  return 0;
}

void RealDisk::note_request(std::uint64_t begin, std::uint64_t end) {
  VERIFY(begin < end);
  // A rewrite of bytes already complete (the header): nothing to track.
  if (end <= prefix_end_) return;
  const auto it = pending_.find(end);
  if (it != pending_.end()) return;  // the rest of a short write, or a retry
  // Ranges the writer reserves never overlap; a bounded map of the ones in
  // progress (control blocks plus a synchronous write or two).
  VERIFY(pending_.size() <= slots_.size() + 16);
  pending_[end] = Pending{begin, begin};
}

void RealDisk::note_written(std::uint64_t begin, std::uint64_t end, std::uint64_t bytes) {
  VERIFY(bytes <= end - begin);
  const auto it = pending_.find(end);
  if (it == pending_.end()) return;  // a rewrite below the prefix
  Pending& p = it->second;
  if (begin + bytes > p.written_end) p.written_end = begin + bytes;
  if (p.written_end < end) return;
  complete_[p.begin] = end;
  pending_.erase(it);
  // Bounded by the number of completed ranges beyond the prefix.
  for (std::size_t step = 0; step <= complete_.size() && !complete_.empty(); step++) {
    const auto first = complete_.begin();
    if (first->first != prefix_end_) break;
    prefix_end_ = first->second;
    complete_.erase(first);
  }
}

std::int64_t RealDisk::write_at(std::span<const std::byte> data, std::uint64_t offset) {
  VERIFY_MSG(fd_ >= 0, "write_at without an open file");
  VERIFY(!data.empty());
  const std::uint64_t end = offset + data.size();
  if (streaming()) {
    if (end <= stream_data_offset_) return static_cast<std::int64_t>(data.size());  // the file's header: not sent
    VERIFY_MSG(offset == stream_next_, "a stream is written in order");
  } else {
    note_request(offset, end);
  }
  const ssize_t n = streaming() ? ::write(fd_, data.data(), data.size())
                                : ::pwrite(fd_, data.data(), data.size(), static_cast<off_t>(offset));
  if (n < 0) {
    const int error = errno;
    VERIFY(error > 0);
    return -error;
  }
  counters_.sync_writes++;
  if (static_cast<std::uint64_t>(n) < data.size()) counters_.sync_short_writes++;
  counters_.bytes_written += static_cast<std::uint64_t>(n);
  if (streaming()) {
    stream_bytes_ += static_cast<std::uint64_t>(n);
    stream_next_ += static_cast<std::uint64_t>(n);
    prefix_end_ = stream_next_;
  } else {
    note_written(offset, end, static_cast<std::uint64_t>(n));
  }
  return n;
}

int RealDisk::truncate(std::uint64_t offset) {
  VERIFY_MSG(fd_ >= 0, "truncate without an open file");
  if (streaming()) return 0;  // a stream holds what was sent
  if (::ftruncate(fd_, static_cast<off_t>(offset)) != 0) {
    const int error = errno;
    VERIFY(error > 0);
    return -error;
  }
  if (offset < prefix_end_) prefix_end_ = offset;
  return 0;
}

int RealDisk::aio_submit(std::uint32_t slot, std::span<const std::byte> data, std::uint64_t offset) {
  VERIFY(slot < slots_.size());
  VERIFY_MSG(!streaming(), "a stream is written serially");
  VERIFY_MSG(fd_ >= 0, "aio_submit without an open file");
  VERIFY(!data.empty());
  Slot& s = slots_[slot];
  VERIFY_MSG(!s.in_flight, "aio_submit on a slot with a write in flight");
  VERIFY_MSG(s.returned, "aio_submit before aio_return of the slot's previous write");
  s.cb = aiocb{};
  s.cb.aio_fildes = fd_;
  s.cb.aio_offset = static_cast<off_t>(offset);
  // aio_write only reads the buffer.
  s.cb.aio_buf = const_cast<std::byte*>(data.data());
  s.cb.aio_nbytes = data.size();
  s.cb.aio_reqprio = 0;
  s.cb.aio_sigevent.sigev_notify = SIGEV_NONE;
  s.begin = offset;
  s.end = offset + data.size();
  note_request(s.begin, s.end);
  if (::aio_write(&s.cb) != 0) {
    const int error = errno;
    VERIFY(error > 0);
    if (error == EAGAIN) counters_.aio_submit_eagain++;
    return -error;
  }
  s.in_flight = true;
  s.returned = false;
  in_flight_++;
  counters_.aio_submitted++;
  return 0;
}

int RealDisk::aio_error(std::uint32_t slot) {
  VERIFY(slot < slots_.size());
  Slot& s = slots_[slot];
  VERIFY_MSG(s.in_flight, "aio_error on a slot with no write in flight");
  const int error = ::aio_error(&s.cb);
  VERIFY_MSG(error >= 0, "aio_error rejected a control block it queued");
  return error;
}

std::int64_t RealDisk::aio_return(std::uint32_t slot) {
  VERIFY(slot < slots_.size());
  Slot& s = slots_[slot];
  VERIFY_MSG(s.in_flight, "aio_return on a slot with no write in flight");
  const ssize_t n = ::aio_return(&s.cb);
  s.in_flight = false;
  s.returned = true;
  VERIFY(in_flight_ > 0);
  in_flight_--;
  counters_.aio_completed++;
  if (n < 0) {
    counters_.aio_failed++;
    return -1;
  }
  const std::uint64_t written = static_cast<std::uint64_t>(n);
  VERIFY(written <= s.end - s.begin);
  if (written < s.end - s.begin) counters_.aio_short_writes++;
  counters_.bytes_written += written;
  note_written(s.begin, s.end, written);
  return n;
}

int RealDisk::aio_suspend(std::span<const std::uint32_t> slots, std::uint64_t duration_ns) {
  suspend_list_.clear();
  for (const std::uint32_t slot : slots) {
    VERIFY(slot < slots_.size());
    if (slots_[slot].in_flight) suspend_list_.push_back(&slots_[slot].cb);
  }
  counters_.suspends++;
  const timespec timeout = to_timespec(duration_ns);
  if (suspend_list_.empty()) {
    // Nothing to wait for: behave as a timeout, without spinning.
    ::nanosleep(&timeout, nullptr);
    counters_.suspend_timeouts++;
    return -EAGAIN;
  }
  if (::aio_suspend(suspend_list_.data(), static_cast<int>(suspend_list_.size()), &timeout) == 0) return 0;
  const int error = errno;
  VERIFY(error > 0);
  if (error == EAGAIN) counters_.suspend_timeouts++;
  if (error == EINTR) counters_.suspend_interrupted++;
  return -error;
}

void RealDisk::sleep_ns(std::uint64_t duration_ns) {
  const timespec pause = to_timespec(duration_ns);
  // EINTR: cut short, as the contract allows.
  ::nanosleep(&pause, nullptr);
}

}  // namespace ringsim::real
