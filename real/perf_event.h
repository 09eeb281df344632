// One perf event and its ring mapping, owned (RAII).
//
// PerfEvent opens an event with perf_event_open(2), drives it with the
// ioctls the recorder needs (ENABLE, DISABLE, ID, PAUSE_OUTPUT) and maps its
// ring: one control page (struct perf_event_mmap_page) and a data area of
// 2^n pages.
//
//   - Normal rings (attr.write_backward == 0) are mapped PROT_READ |
//     PROT_WRITE: the reader owns data_tail and the kernel never overwrites
//     unread data (it drops and counts instead).
//   - Overwrite rings (attr.write_backward == 1) are mapped PROT_READ only:
//     the kernel ignores data_tail and writes each record below the previous
//     one (see core/ring_reader.h).
//
// The destructor unmaps and closes. Nothing here throws: every operation
// that can fail returns an Error whose message is one line naming the call,
// the errno, the likely cause and what to do about it.
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

#include "real/error.h"

namespace ringsim::real {

// Where an event counts (perf_event_open's pid and cpu):
//   pid -1, cpu >= 0: every task on that CPU (system-wide, one per CPU);
//   pid >= 0 (0: the caller), cpu -1: that task on any CPU;
//   pid >= 0, cpu >= 0: that task while it runs on that CPU.
struct EventTarget {
  pid_t pid = -1;
  int cpu = -1;
  // -G: a cgroup's directory, opened (pid must be -1): the event counts
  // only that cgroup's tasks on `cpu` (PERF_FLAG_PID_CGROUP). -1: none.
  int cgroup_fd = -1;
};

// The largest data area map() accepts, in pages. The kernel refuses far
// smaller areas (its page array must fit one allocation); this bound only
// keeps the size arithmetic away from overflow.
inline constexpr std::uint64_t kDataPagesMax = std::uint64_t{1} << 31;

// The lost count in what read(2) of an event gave (`bytes` bytes, the
// u64s `words`), laid out as perf_event_open(2) says for `read_format`:
// { value; time_enabled?; time_running?; id?; lost }, or with
// PERF_FORMAT_GROUP (which needs PERF_FORMAT_ID) { nr; time_enabled?;
// time_running?; { value; id; lost } x nr }, the entry whose id is `own`.
// EIO, naming `what` (the read), when the bytes do not have that layout
// or `own` is not among the group's ids; EINVAL without PERF_FORMAT_LOST.
Error lost_from_read(std::uint64_t read_format, std::span<const std::uint64_t> words, std::size_t bytes,
                     std::uint64_t own, const std::string& what, std::uint64_t& lost_out);

class PerfEvent {
 public:
  PerfEvent() = default;
  ~PerfEvent();
  PerfEvent(PerfEvent&& other) noexcept;
  PerfEvent& operator=(PerfEvent&& other) noexcept;
  PerfEvent(const PerfEvent&) = delete;
  PerfEvent& operator=(const PerfEvent&) = delete;

  // Opens `attr` for `target` (with PERF_FLAG_FD_CLOEXEC, no group). An
  // attr.size of 0 is taken as sizeof(perf_event_attr). On success `out`
  // holds the open event (whatever it held before is closed first); on
  // failure `out` is left closed.
  // group_fd: the group leader's descriptor (a member), or -1.
  static Error open(const perf_event_attr& attr, const EventTarget& target, PerfEvent& out, int group_fd = -1);

  // PERF_EVENT_IOC_ENABLE / _DISABLE on this event (not its group).
  Error enable();
  Error disable();

  // PERF_EVENT_IOC_SET_OUTPUT: this event writes its records into
  // `target`'s ring (which must be mapped; same CPU, or the same task when
  // cpu is -1; the same clock and write direction). This event must not be
  // mapped itself.
  Error set_output(const PerfEvent& target);

  // PERF_EVENT_IOC_SET_FILTER: a tracepoint's filter (tracefs's syntax,
  // "fd == 2 && count > 1").
  Error set_filter(const std::string& filter);

  // PERF_EVENT_IOC_ID: the id PERF_SAMPLE_IDENTIFIER / PERF_SAMPLE_ID carry.
  Error id(std::uint64_t& id_out) const;

  // PERF_EVENT_IOC_PAUSE_OUTPUT: while paused the kernel writes nothing to
  // the ring and counts what it drops. Needs a mapped ring.
  Error pause_output(bool paused);

  // read(2) of the counter: its value (the first u64 of the read format).
  Error read_count(std::uint64_t& value_out) const;
  // read(2) of an event opened with PERF_FORMAT_LOST in its read_format
  // (with PERF_FORMAT_GROUP also PERF_FORMAT_ID: its own entry, found by
  // its id): the samples the kernel could not write for it (Linux 6.0+).
  Error read_lost(std::uint64_t& lost_out) const;

  // Maps 1 + data_pages pages: the control page and the data area.
  // data_pages must be a power of two (1, 2, 4, ...) and at most
  // kDataPagesMax. Normal rings are mapped read-write, write_backward rings
  // read-only. Fails (EBUSY) when already mapped. After success the control
  // page is checked: data_offset and data_size, when the kernel fills them,
  // must describe the same area.
  Error map(std::uint64_t data_pages);

  // Unmaps the ring (no-op when not mapped).
  void unmap();

  // Unmaps and closes (no-op when not open).
  void close();

  bool is_open() const { return fd_ >= 0; }
  bool mapped() const { return base_ != nullptr; }
  int fd() const { return fd_; }
  const perf_event_attr& attr() const { return attr_; }
  const EventTarget& target() const { return target_; }
  // write_backward: the ring is (or will be) mapped read-only.
  bool overwrite() const { return attr_.write_backward != 0; }

  // Valid while mapped.
  perf_event_mmap_page* control_page() const { return static_cast<perf_event_mmap_page*>(base_); }
  std::byte* data() const { return data_; }
  std::uint64_t data_size_bytes() const { return data_size_bytes_; }
  std::uint64_t data_pages() const { return data_pages_; }

  // "cpu-clock on cpu 0", "task-clock for pid 1234": names the event in
  // messages.
  std::string describe() const;

 private:
  Error ioctl_error(const char* request, int error) const;

  int fd_ = -1;
  perf_event_attr attr_{};
  EventTarget target_{};
  void* base_ = nullptr;  // start of the mapping (the control page)
  std::size_t length_bytes_ = 0;
  std::byte* data_ = nullptr;
  std::uint64_t data_size_bytes_ = 0;
  std::uint64_t data_pages_ = 0;
};

// The page size the kernel maps perf rings in.
std::uint64_t page_size_bytes();

// `attr` as perf 6.1's perf_event_attr__fprintf prints it (its -vv, and
// perf evlist -v's fields): one "  NAME VALUE" line per field that is not
// zero (the type always), in perf's order, NAME padded to 32 columns;
// sample_type, read_format and branch_sample_type as perf's bit names
// joined by '|'.
std::string attr_text(const perf_event_attr& attr);

// -vv: every perf_event_open from now on written to `out` as perf's -vv
// writes it: the attr between two dashed lines (when it differs from the
// last one written), then "sys_perf_event_open: pid P  cpu C  group_fd G
// flags F = FD", or the call without " = FD" and "sys_perf_event_open
// failed, error -E". nullptr stops it. Opens on several threads at once
// are written one after the other.
void trace_event_opens(std::FILE* out);

}  // namespace ringsim::real
