#include "real/perf_event.h"

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <span>
#include <utility>

#include "core/verify.h"

namespace ringsim::real {
namespace {

// The first line of a /proc file, or "unreadable".
std::string read_proc_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "unreadable";
  return line;
}

std::string memlock_limits() {
  struct rlimit limit {};
  std::string soft = "unknown";
  if (::getrlimit(RLIMIT_MEMLOCK, &limit) == 0) {
    soft = limit.rlim_cur == RLIM_INFINITY ? "unlimited" : std::to_string(limit.rlim_cur / 1024) + " KiB";
  }
  return "RLIMIT_MEMLOCK " + soft + ", /proc/sys/kernel/perf_event_mlock_kb " +
         read_proc_line("/proc/sys/kernel/perf_event_mlock_kb") + " KiB per CPU";
}

// Why perf_event_open failed with `error`, and what to do about it.
// expected_size: what the kernel wrote back into attr.size on E2BIG.
std::string open_advice(int error, const perf_event_attr& attr, const EventTarget& target,
                        std::uint32_t expected_size) {
  switch (error) {
    case EACCES:
    case EPERM:
      return "not allowed by /proc/sys/kernel/perf_event_paranoid (now " +
             read_proc_line("/proc/sys/kernel/perf_event_paranoid") +
             "): run as root or with CAP_PERFMON, or lower it (sysctl kernel.perf_event_paranoid=-1)";
    case ENOENT:
      return "event not supported: this kernel or machine has no event of type " + std::to_string(attr.type) +
             " config " + std::to_string(attr.config) + " (no hardware PMU here?); use a software event such as cpu-clock";
    case EOPNOTSUPP:
      if ((attr.sample_type & PERF_SAMPLE_BRANCH_STACK) != 0) {
        // perf's evsel__open_strerror: "PMU Hardware or event type doesn't
        // support branch stack sampling."
        return "PMU hardware or event type doesn't support branch stack sampling (-b/-j need a PMU with branch "
               "stacks; a software event has none)";
      }
      return "event not supported in this mode (sampling, exclusion or another requested feature); use a software "
             "event such as cpu-clock or drop the feature";
    case ENODEV:
      return "cpu " + std::to_string(target.cpu) +
             " does not exist or the event does not support it (see /sys/devices/system/cpu/online)";
    case ESRCH:
      return "no process or thread " + std::to_string(target.pid) + " (it has exited?)";
    case E2BIG:
      return "perf_event_attr.size " + std::to_string(attr.size) + " is not accepted by this kernel (it expects " +
             std::to_string(expected_size) +
             "): set it to sizeof(perf_event_attr), built against headers no newer than the kernel";
    case EINVAL:
      return "the kernel rejected the configuration: an unknown sample_type or read_format bit, a frequency above "
             "/proc/sys/kernel/perf_event_max_sample_rate, or an invalid pid/cpu/flag combination";
    case EMFILE:
    case ENFILE:
      return "out of file descriptors (one per event per CPU): raise the limit (ulimit -n)";
    case EBUSY:
      return "the PMU is in exclusive use by another user: stop that user and retry";
    case EOVERFLOW:
      return "sample_max_stack is above /proc/sys/kernel/perf_event_max_stack";
    default:
      return "perf_event_open failed";
  }
}

// Why mmap of a perf ring failed with `error`, and what to do about it.
std::string mmap_advice(int error) {
  switch (error) {
    case EPERM:
      return "over the locked-memory limit (" + memlock_limits() + "): use a smaller -m or raise the limits";
    case ENOMEM:
      return "the kernel cannot allocate a ring this large or it is over the locked-memory limit (" +
             memlock_limits() + "): use a smaller -m";
    case EINVAL:
      return "the kernel rejected the mapping: the size is not 1 + 2^n pages, or the event is an inherited "
             "per-task event (inherit=1 with cpu -1, which cannot be mapped: open one per CPU instead)";
    case EACCES:
      return "the event's file does not allow this mapping";
    default:
      return "mmap failed";
  }
}

const char* software_event_name(std::uint64_t config) {
  switch (config) {
    case PERF_COUNT_SW_CPU_CLOCK: return "cpu-clock";
    case PERF_COUNT_SW_TASK_CLOCK: return "task-clock";
    case PERF_COUNT_SW_PAGE_FAULTS: return "page-faults";
    case PERF_COUNT_SW_CONTEXT_SWITCHES: return "context-switches";
    case PERF_COUNT_SW_CPU_MIGRATIONS: return "cpu-migrations";
    case PERF_COUNT_SW_PAGE_FAULTS_MIN: return "minor-faults";
    case PERF_COUNT_SW_PAGE_FAULTS_MAJ: return "major-faults";
    case PERF_COUNT_SW_DUMMY: return "dummy";
    default: return nullptr;
  }
}

}  // namespace

std::uint64_t page_size_bytes() {
  const long page = ::sysconf(_SC_PAGESIZE);
  VERIFY(page > 0);
  VERIFY((page & (page - 1)) == 0);
  return static_cast<std::uint64_t>(page);
}

PerfEvent::~PerfEvent() { close(); }

PerfEvent::PerfEvent(PerfEvent&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      attr_(other.attr_),
      target_(other.target_),
      base_(std::exchange(other.base_, nullptr)),
      length_bytes_(std::exchange(other.length_bytes_, 0)),
      data_(std::exchange(other.data_, nullptr)),
      data_size_bytes_(std::exchange(other.data_size_bytes_, 0)),
      data_pages_(std::exchange(other.data_pages_, 0)) {}

PerfEvent& PerfEvent::operator=(PerfEvent&& other) noexcept {
  if (this == &other) return *this;
  close();
  fd_ = std::exchange(other.fd_, -1);
  attr_ = other.attr_;
  target_ = other.target_;
  base_ = std::exchange(other.base_, nullptr);
  length_bytes_ = std::exchange(other.length_bytes_, 0);
  data_ = std::exchange(other.data_, nullptr);
  data_size_bytes_ = std::exchange(other.data_size_bytes_, 0);
  data_pages_ = std::exchange(other.data_pages_, 0);
  return *this;
}

std::string PerfEvent::describe() const {
  std::string name;
  const char* software = attr_.type == PERF_TYPE_SOFTWARE ? software_event_name(attr_.config) : nullptr;
  if (software != nullptr) {
    name = software;
  } else {
    char text[64];
    std::snprintf(text, sizeof text, "event type %u config %#llx", attr_.type,
                  static_cast<unsigned long long>(attr_.config));
    name = text;
  }
  if (target_.cgroup_fd >= 0) return name + " of a cgroup (-G) on cpu " + std::to_string(target_.cpu);
  if (target_.pid < 0) return name + " on cpu " + std::to_string(target_.cpu);
  name += " for pid " + std::to_string(target_.pid);
  if (target_.cpu >= 0) name += " on cpu " + std::to_string(target_.cpu);
  return name;
}

namespace {

struct BitName {
  std::uint64_t bit;
  const char* name;
};

// perf's __p_bits: the names of the bits set, in the table's order.
std::string bit_names(std::uint64_t value, std::span<const BitName> names) {
  std::string out;
  for (const BitName& n : names) {
    if ((value & n.bit) == 0) continue;
    if (!out.empty()) out += '|';
    out += n.name;
  }
  return out;
}

#define RS_BIT(prefix, n) BitName{prefix##n, #n}
constexpr BitName kSampleTypeNames[] = {
    RS_BIT(PERF_SAMPLE_, IP),           RS_BIT(PERF_SAMPLE_, TID),           RS_BIT(PERF_SAMPLE_, TIME),
    RS_BIT(PERF_SAMPLE_, ADDR),         RS_BIT(PERF_SAMPLE_, READ),          RS_BIT(PERF_SAMPLE_, CALLCHAIN),
    RS_BIT(PERF_SAMPLE_, ID),           RS_BIT(PERF_SAMPLE_, CPU),           RS_BIT(PERF_SAMPLE_, PERIOD),
    RS_BIT(PERF_SAMPLE_, STREAM_ID),    RS_BIT(PERF_SAMPLE_, RAW),           RS_BIT(PERF_SAMPLE_, BRANCH_STACK),
    RS_BIT(PERF_SAMPLE_, REGS_USER),    RS_BIT(PERF_SAMPLE_, STACK_USER),    RS_BIT(PERF_SAMPLE_, IDENTIFIER),
    RS_BIT(PERF_SAMPLE_, REGS_INTR),    RS_BIT(PERF_SAMPLE_, DATA_SRC),      RS_BIT(PERF_SAMPLE_, WEIGHT),
    RS_BIT(PERF_SAMPLE_, PHYS_ADDR),    RS_BIT(PERF_SAMPLE_, AUX),           RS_BIT(PERF_SAMPLE_, CGROUP),
    RS_BIT(PERF_SAMPLE_, DATA_PAGE_SIZE), RS_BIT(PERF_SAMPLE_, CODE_PAGE_SIZE), RS_BIT(PERF_SAMPLE_, WEIGHT_STRUCT)};
constexpr BitName kBranchNames[] = {
    RS_BIT(PERF_SAMPLE_BRANCH_, USER),      RS_BIT(PERF_SAMPLE_BRANCH_, KERNEL),     RS_BIT(PERF_SAMPLE_BRANCH_, HV),
    RS_BIT(PERF_SAMPLE_BRANCH_, ANY),       RS_BIT(PERF_SAMPLE_BRANCH_, ANY_CALL),   RS_BIT(PERF_SAMPLE_BRANCH_, ANY_RETURN),
    RS_BIT(PERF_SAMPLE_BRANCH_, IND_CALL),  RS_BIT(PERF_SAMPLE_BRANCH_, ABORT_TX),   RS_BIT(PERF_SAMPLE_BRANCH_, IN_TX),
    RS_BIT(PERF_SAMPLE_BRANCH_, NO_TX),     RS_BIT(PERF_SAMPLE_BRANCH_, COND),       RS_BIT(PERF_SAMPLE_BRANCH_, CALL_STACK),
    RS_BIT(PERF_SAMPLE_BRANCH_, IND_JUMP),  RS_BIT(PERF_SAMPLE_BRANCH_, CALL),       RS_BIT(PERF_SAMPLE_BRANCH_, NO_FLAGS),
    RS_BIT(PERF_SAMPLE_BRANCH_, NO_CYCLES), RS_BIT(PERF_SAMPLE_BRANCH_, TYPE_SAVE),  RS_BIT(PERF_SAMPLE_BRANCH_, HW_INDEX),
    RS_BIT(PERF_SAMPLE_BRANCH_, PRIV_SAVE)};
constexpr BitName kReadFormatNames[] = {RS_BIT(PERF_FORMAT_, TOTAL_TIME_ENABLED), RS_BIT(PERF_FORMAT_, TOTAL_TIME_RUNNING),
                                        RS_BIT(PERF_FORMAT_, ID), RS_BIT(PERF_FORMAT_, GROUP),
                                        RS_BIT(PERF_FORMAT_, LOST)};
#undef RS_BIT

class AttrLines {
 public:
  void add(const char* name, const std::string& value) {
    char line[512];
    std::snprintf(line, sizeof line, "  %-32s %s\n", name, value.c_str());
    text_ += line;
  }
  void unsigned_field(const char* name, std::uint64_t v) {
    if (v != 0) add(name, std::to_string(v));
  }
  void hex_field(const char* name, std::uint64_t v) {
    if (v == 0) return;
    char hex[32];
    std::snprintf(hex, sizeof hex, "%#llx", static_cast<unsigned long long>(v));
    add(name, hex);
  }
  void bits_field(const char* name, std::uint64_t v, std::span<const BitName> names) {
    if (v != 0) add(name, bit_names(v, names));
  }
  std::string take() { return std::move(text_); }

 private:
  std::string text_;
};

// The flag bits, in perf_event_attr__fprintf's order.
void add_flag_bits(const perf_event_attr& a, AttrLines& l) {
  const std::pair<const char*, std::uint64_t> flags[] = {
      {"disabled", a.disabled},         {"inherit", a.inherit},
      {"pinned", a.pinned},             {"exclusive", a.exclusive},
      {"exclude_user", a.exclude_user}, {"exclude_kernel", a.exclude_kernel},
      {"exclude_hv", a.exclude_hv},     {"exclude_idle", a.exclude_idle},
      {"mmap", a.mmap},                 {"comm", a.comm},
      {"freq", a.freq},                 {"inherit_stat", a.inherit_stat},
      {"enable_on_exec", a.enable_on_exec}, {"task", a.task},
      {"watermark", a.watermark},       {"precise_ip", a.precise_ip},
      {"mmap_data", a.mmap_data},       {"sample_id_all", a.sample_id_all},
      {"exclude_host", a.exclude_host}, {"exclude_guest", a.exclude_guest},
      {"exclude_callchain_kernel", a.exclude_callchain_kernel},
      {"exclude_callchain_user", a.exclude_callchain_user},
      {"mmap2", a.mmap2},               {"comm_exec", a.comm_exec},
      {"use_clockid", a.use_clockid},   {"context_switch", a.context_switch},
      {"write_backward", a.write_backward}, {"namespaces", a.namespaces},
      {"ksymbol", a.ksymbol},           {"bpf_event", a.bpf_event},
      {"aux_output", a.aux_output},     {"cgroup", a.cgroup},
      {"text_poke", a.text_poke},       {"build_id", a.build_id},
      {"inherit_thread", a.inherit_thread}, {"remove_on_exec", a.remove_on_exec},
      {"sigtrap", a.sigtrap}};
  for (const auto& [name, value] : flags) l.unsigned_field(name, value);
}

std::mutex g_trace_mutex;
std::FILE* g_trace = nullptr;           // guarded by g_trace_mutex
perf_event_attr g_traced_attr{};        // the last attr written
bool g_traced_any = false;

void trace_open(const perf_event_attr& attr, pid_t pid, int cpu, int group_fd, unsigned long flags, long fd,
                int error) {
  const std::lock_guard<std::mutex> lock(g_trace_mutex);
  if (g_trace == nullptr) return;
  if (!g_traced_any || std::memcmp(&attr, &g_traced_attr, sizeof attr) != 0) {
    const char* dashes = "------------------------------------------------------------\n";
    std::fprintf(g_trace, "%sperf_event_attr:\n%s%s", dashes, attr_text(attr).c_str(), dashes);
    g_traced_attr = attr;
    g_traced_any = true;
  }
  std::fprintf(g_trace, "sys_perf_event_open: pid %d  cpu %d  group_fd %d  flags %#lx", static_cast<int>(pid), cpu,
               group_fd, flags);
  if (fd >= 0) {
    std::fprintf(g_trace, " = %ld\n", fd);
  } else {
    std::fprintf(g_trace, "\nsys_perf_event_open failed, error %d\n", -error);
  }
  std::fflush(g_trace);
}

}  // namespace

std::string attr_text(const perf_event_attr& a) {
  AttrLines l;
  l.add("type", std::to_string(a.type));
  l.unsigned_field("size", a.size);
  l.hex_field("config", a.config);
  l.unsigned_field("{ sample_period, sample_freq }", a.sample_period);
  l.bits_field("sample_type", a.sample_type, kSampleTypeNames);
  l.bits_field("read_format", a.read_format, kReadFormatNames);
  add_flag_bits(a, l);
  l.unsigned_field("{ wakeup_events, wakeup_watermark }", a.wakeup_events);
  l.unsigned_field("bp_type", a.bp_type);
  l.hex_field("{ bp_addr, config1 }", a.bp_addr);
  l.hex_field("{ bp_len, config2 }", a.bp_len);
  l.bits_field("branch_sample_type", a.branch_sample_type, kBranchNames);
  l.hex_field("sample_regs_user", a.sample_regs_user);
  l.unsigned_field("sample_stack_user", a.sample_stack_user);
  if (a.clockid != 0) l.add("clockid", std::to_string(a.clockid));
  l.hex_field("sample_regs_intr", a.sample_regs_intr);
  l.unsigned_field("aux_watermark", a.aux_watermark);
  l.unsigned_field("sample_max_stack", a.sample_max_stack);
  l.unsigned_field("aux_sample_size", a.aux_sample_size);
  l.unsigned_field("sig_data", a.sig_data);
  return l.take();
}

void trace_event_opens(std::FILE* out) {
  const std::lock_guard<std::mutex> lock(g_trace_mutex);
  g_trace = out;
  g_traced_any = false;
}

Error PerfEvent::open(const perf_event_attr& attr, const EventTarget& target, PerfEvent& out, int group_fd) {
  out.close();
  out.attr_ = attr;
  out.target_ = target;
  if (out.attr_.size == 0) out.attr_.size = sizeof(perf_event_attr);
  if (target.pid < 0 && target.cpu < 0) {
    return Error{EINVAL, "perf_event_open(" + out.describe() +
                             "): EINVAL: pid -1 with cpu -1 (every task on every CPU) is not an event; open one per CPU"};
  }
  VERIFY_MSG(target.cgroup_fd < 0 || target.pid < 0, "a cgroup event is a CPU's (pid -1)");
  // On E2BIG the kernel writes the size it expects into attr.size.
  const perf_event_attr requested = out.attr_;
  const bool cgroup = target.cgroup_fd >= 0;
  const pid_t pid = cgroup ? target.cgroup_fd : target.pid;
  const unsigned long flags = PERF_FLAG_FD_CLOEXEC | (cgroup ? PERF_FLAG_PID_CGROUP : 0);
  const long fd = ::syscall(SYS_perf_event_open, &out.attr_, pid, target.cpu, group_fd, flags);
  const int error = fd < 0 ? errno : 0;
  trace_open(requested, pid, target.cpu, group_fd, flags, fd, error);
  if (fd < 0) {
    VERIFY(error != 0);
    const std::string advice = open_advice(error, requested, target, out.attr_.size);
    out.attr_ = requested;
    return Error{error, "perf_event_open(" + out.describe() + "): " + errno_text(error) + ": " + advice};
  }
  VERIFY(fd <= 0x7fffffff);
  out.fd_ = static_cast<int>(fd);
  return Error{};
}

Error PerfEvent::ioctl_error(const char* request, int error) const {
  std::string advice;
  if (error == EINVAL && std::strcmp(request, "PERF_EVENT_IOC_PAUSE_OUTPUT") == 0) {
    advice = ": the event has no mapped ring (map it first)";
  } else if (error == EBADF) {
    advice = ": the event is not open";
  }
  return Error{error, std::string("ioctl(") + request + ") on " + describe() + ": " + errno_text(error) + advice};
}

Error PerfEvent::enable() {
  if (fd_ < 0) return ioctl_error("PERF_EVENT_IOC_ENABLE", EBADF);
  if (::ioctl(fd_, PERF_EVENT_IOC_ENABLE, 0) != 0) return ioctl_error("PERF_EVENT_IOC_ENABLE", errno);
  return Error{};
}

Error PerfEvent::disable() {
  if (fd_ < 0) return ioctl_error("PERF_EVENT_IOC_DISABLE", EBADF);
  if (::ioctl(fd_, PERF_EVENT_IOC_DISABLE, 0) != 0) return ioctl_error("PERF_EVENT_IOC_DISABLE", errno);
  return Error{};
}

Error PerfEvent::set_filter(const std::string& filter) {
  if (fd_ < 0) return ioctl_error("PERF_EVENT_IOC_SET_FILTER", EBADF);
  if (::ioctl(fd_, PERF_EVENT_IOC_SET_FILTER, filter.c_str()) != 0) {
    return ioctl_error("PERF_EVENT_IOC_SET_FILTER", errno);
  }
  return Error{};
}

Error PerfEvent::set_output(const PerfEvent& target) {
  if (fd_ < 0 || target.fd_ < 0) return ioctl_error("PERF_EVENT_IOC_SET_OUTPUT", EBADF);
  if (::ioctl(fd_, PERF_EVENT_IOC_SET_OUTPUT, target.fd_) != 0) {
    const int error = errno;
    Error e = ioctl_error("PERF_EVENT_IOC_SET_OUTPUT", error);
    if (error == EINVAL) {
      e.message += ": the kernel refused to share " + target.describe() +
                   "'s ring (another CPU or task, another clock or direction, or that ring is not mapped)";
    }
    return e;
  }
  return Error{};
}

Error PerfEvent::id(std::uint64_t& id_out) const {
  if (fd_ < 0) return ioctl_error("PERF_EVENT_IOC_ID", EBADF);
  __u64 value = 0;
  if (::ioctl(fd_, PERF_EVENT_IOC_ID, &value) != 0) return ioctl_error("PERF_EVENT_IOC_ID", errno);
  id_out = value;
  return Error{};
}

Error PerfEvent::pause_output(bool paused) {
  if (fd_ < 0) return ioctl_error("PERF_EVENT_IOC_PAUSE_OUTPUT", EBADF);
  if (::ioctl(fd_, PERF_EVENT_IOC_PAUSE_OUTPUT, paused ? 1 : 0) != 0) {
    return ioctl_error("PERF_EVENT_IOC_PAUSE_OUTPUT", errno);
  }
  return Error{};
}

Error PerfEvent::read_count(std::uint64_t& value_out) const {
  if (fd_ < 0) return Error{EBADF, "read of " + describe() + ": EBADF: the event is not open"};
  // Large enough for any non-group read format (value, enabled, running,
  // id, lost); a group format may be longer and fails with ENOSPC.
  std::uint64_t values[8] = {};
  const ssize_t got = ::read(fd_, values, sizeof values);
  if (got < 0) {
    const int error = errno;
    return Error{error, "read of " + describe() + ": " + errno_text(error) +
                            (error == ENOSPC ? ": a group read format needs a larger buffer" : "")};
  }
  if (got < static_cast<ssize_t>(sizeof values[0])) {
    return Error{EIO, "read of " + describe() + ": EIO: " + std::to_string(got) + " bytes, less than one value"};
  }
  value_out = values[0];
  return Error{};
}

namespace {

// A read_format whose read gives no lost count, or not the event's own.
Error lost_format_error(std::uint64_t read_format, const std::string& what) {
  const bool group = (read_format & PERF_FORMAT_GROUP) != 0;
  if ((read_format & PERF_FORMAT_LOST) == 0 || (group && (read_format & PERF_FORMAT_ID) == 0)) {
    return Error{EINVAL, what + ": EINVAL: read_format has no PERF_FORMAT_LOST, or is a group's without "
                                "PERF_FORMAT_ID"};
  }
  return Error{};
}

}  // namespace

Error lost_from_read(std::uint64_t read_format, std::span<const std::uint64_t> words_read, std::size_t bytes,
                     std::uint64_t own, const std::string& what, std::uint64_t& lost_out) {
  if (Error e = lost_format_error(read_format, what); !e.ok()) return e;
  const bool group = (read_format & PERF_FORMAT_GROUP) != 0;
  const std::size_t times = ((read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) != 0 ? 1 : 0) +
                            ((read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) != 0 ? 1 : 0);
  const std::size_t ids = (read_format & PERF_FORMAT_ID) != 0 ? 1 : 0;
  const std::size_t words = bytes / sizeof(std::uint64_t);
  VERIFY(words <= words_read.size());
  if (!group) {
    const std::size_t lost_at = 1 + times + ids;
    if (bytes != (lost_at + 1) * sizeof(std::uint64_t)) {
      return Error{EIO, what + ": EIO: " + std::to_string(bytes) + " bytes, not " +
                            std::to_string((lost_at + 1) * sizeof(std::uint64_t)) + " (value, ..., lost)"};
    }
    lost_out = words_read[lost_at];
    return Error{};
  }
  const std::uint64_t nr = words > 0 ? words_read[0] : 0;
  if (words == 0 || nr > (words_read.size() - 1 - times) / 3 ||
      bytes != (1 + times + 3 * nr) * sizeof(std::uint64_t)) {
    return Error{EIO, what + ": EIO: " + std::to_string(bytes) + " bytes for a group of " + std::to_string(nr) +
                          " (nr, ..., {value, id, lost} each)"};
  }
  for (std::uint64_t m = 0; m < nr; m++) {
    const std::uint64_t* entry = words_read.data() + 1 + times + 3 * m;
    if (entry[1] != own) continue;
    lost_out = entry[2];
    return Error{};
  }
  return Error{EIO, what + ": EIO: its id " + std::to_string(own) + " is not in its group's " + std::to_string(nr) +
                        " values"};
}

Error PerfEvent::read_lost(std::uint64_t& lost_out) const {
  const std::string what = "read of " + describe();
  if (fd_ < 0) return Error{EBADF, what + ": EBADF: the event is not open"};
  const std::uint64_t format = attr_.read_format;
  if (Error e = lost_format_error(format, what); !e.ok()) return e;
  // Its group as it is now (its leader's: nr counts the members still open).
  constexpr std::size_t kMembersMax = 256;
  std::uint64_t values[3 + 3 * kMembersMax] = {};
  const ssize_t got = ::read(fd_, values, sizeof values);
  if (got < 0) {
    const int error = errno;
    return Error{error, what + ": " + errno_text(error)};
  }
  std::uint64_t own = 0;
  if ((format & PERF_FORMAT_GROUP) != 0) {
    if (const Error e = id(own); !e.ok()) return e;
  }
  return lost_from_read(format, values, static_cast<std::size_t>(got), own, what, lost_out);
}

Error PerfEvent::map(std::uint64_t data_pages) {
  const std::string what = "mmap of 1 + " + std::to_string(data_pages) + " pages for " + describe();
  if (fd_ < 0) return Error{EBADF, what + ": EBADF: the event is not open (open it first)"};
  if (base_ != nullptr) return Error{EBUSY, what + ": EBUSY: the ring is already mapped (unmap it first)"};
  if (data_pages == 0 || (data_pages & (data_pages - 1)) != 0) {
    return Error{EINVAL, what + ": EINVAL: " + std::to_string(data_pages) +
                             " data pages is not a power of two: use 2^n data pages (1, 2, 4, ...)"};
  }
  if (data_pages > kDataPagesMax) {
    return Error{EINVAL, what + ": EINVAL: " + std::to_string(data_pages) + " data pages is more than the " +
                             std::to_string(kDataPagesMax) + " any kernel maps: use a smaller -m"};
  }
  const std::uint64_t page_bytes = page_size_bytes();
  const std::uint64_t expected_size_bytes = data_pages * page_bytes;
  const std::size_t length_bytes = static_cast<std::size_t>(expected_size_bytes + page_bytes);
  const int protection = overwrite() ? PROT_READ : (PROT_READ | PROT_WRITE);
  void* base = ::mmap(nullptr, length_bytes, protection, MAP_SHARED, fd_, 0);
  if (base == MAP_FAILED) {
    const int error = errno;
    return Error{error, what + ": " + errno_text(error) + ": " + mmap_advice(error)};
  }
  // data_offset and data_size exist since Linux 4.1; 0 means an older
  // kernel, whose area starts right after the control page.
  const perf_event_mmap_page* page = static_cast<const perf_event_mmap_page*>(base);
  const std::uint64_t offset_bytes = page->data_offset != 0 ? page->data_offset : page_bytes;
  const std::uint64_t size_bytes = page->data_size != 0 ? page->data_size : expected_size_bytes;
  if (offset_bytes != page_bytes || size_bytes != expected_size_bytes) {
    ::munmap(base, length_bytes);
    return Error{EPROTO, what + ": EPROTO: the control page describes a data area at offset " +
                             std::to_string(offset_bytes) + " of " + std::to_string(size_bytes) +
                             " bytes, not the one mapped: kernel ABI mismatch"};
  }
  VERIFY(size_bytes >= 8);
  VERIFY((size_bytes & (size_bytes - 1)) == 0);
  base_ = base;
  length_bytes_ = length_bytes;
  data_ = static_cast<std::byte*>(base) + offset_bytes;
  data_size_bytes_ = size_bytes;
  data_pages_ = data_pages;
  return Error{};
}

void PerfEvent::unmap() {
  if (base_ == nullptr) return;
  VERIFY(length_bytes_ > data_size_bytes_);
  // munmap fails only for a bad range, which would be a bug here.
  const int rc = ::munmap(base_, length_bytes_);
  VERIFY(rc == 0);
  base_ = nullptr;
  length_bytes_ = 0;
  data_ = nullptr;
  data_size_bytes_ = 0;
  data_pages_ = 0;
}

void PerfEvent::close() {
  unmap();
  if (fd_ < 0) return;
  // close(2) of a perf event does not fail in a way the caller can act on
  // (EINTR still closes on Linux).
  ::close(fd_);
  fd_ = -1;
}

}  // namespace ringsim::real
