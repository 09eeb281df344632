#include "tests/conformance/call_backend.h"

#include <linux/perf_event.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <span>

#include "core/verify.h"
#include "sim/attr_records.h"
#include "tests/conformance/layout.h"

namespace ringsim::conformance {
namespace {

constexpr std::uint64_t kPageBytes = 4096;
constexpr std::uint64_t kActionNs = 1000;  // virtual time of one call or action

// The tasks' pids: a base plus their Who code (who() is the difference),
// as the suite's simulated side numbers them; the executable mappings'
// addresses; the simulated tracepoints' ids (any number: only the kernel
// and this backend see them).
constexpr std::uint32_t kPidBase = 1u << 20;
constexpr int kThisPid = static_cast<int>(kPidBase + kWhoThis);
constexpr std::uint64_t kMappingBase = 0x7f0000000000;
constexpr std::uint64_t kTracepointBase = 1000;
int child_pid(int child) { return static_cast<int>(kPidBase + kWhoChild) + child; }

std::uint64_t tracepoint_id(Source s) { return kTracepointBase + static_cast<std::uint64_t>(s); }

bool on_child(Target t) { return t == Target::child || t == Target::child_cpu0; }
// A CPU-wide tracepoint is filtered on the child's pid; a dummy one is not.
bool filtered(const EventSpec& spec) { return spec.target == Target::system_cpu0 && spec.source != Source::dummy; }

}  // namespace

CallBackend::CallBackend(const SuiteFiles& files) : files_(files) {}
CallBackend::~CallBackend() { end(); }

void CallBackend::begin(const Scenario& scenario) {
  scenario_ = &scenario;
  finished_.clear();
  // The driven workload draws nothing: an empty tape replayed strictly
  // says so (end() checks).
  decisions_ = std::make_unique<sim::DecisionSource>(std::vector<sim::Decision>{},
                                                     sim::DecisionSource::Mode::replay_strict);
  kernel_ = std::make_unique<sim::CallKernel>(*decisions_, sim::KernelParams{});
  kernel_->set_machine_page(files_.machine.capabilities, files_.machine.pmc_width);
  kernel_->add_task(kThisPid);
  handles_.assign(scenario.events.size(), -1);
  mappings_.assign(scenario.events.size(), Mapping{});
  child_ = -1;
  child_alive_ = false;
  forks_ = 0;
  exec_mappings_ = 0;
}

void CallBackend::end() {
  if (kernel_ == nullptr) return;
  VERIFY_MSG(!decisions_->diverged(), "the driven call kernel drew a decision");
  for (const std::unique_ptr<sim::MappedRing>& r : kernel_->rings()) {
    if (!r->ring) continue;
    const sim::RingLayout& layout = r->ring->layout();
    model::KernelLog k;
    k.mode = static_cast<model::Mode>(layout.mode);
    k.ring_bytes = layout.size_bytes;
    k.watermark_bytes = layout.watermark_bytes == 0 ? layout.size_bytes / 2
                                                    : std::min(layout.watermark_bytes, layout.size_bytes);
    k.cpus.push_back(r->log);
    finished_.push_back(std::move(k));
  }
  kernel_.reset();
  for (const std::vector<Mapping>* list : {&mappings_, &retired_}) {
    for (const Mapping& m : *list) {
      if (m.memory != nullptr) VERIFY(munmap(m.memory, m.bytes) == 0);
    }
  }
  mappings_.clear();
  retired_.clear();
  handles_.clear();
  decisions_.reset();
  scenario_ = nullptr;
}

void CallBackend::tick() { kernel_->advance(kActionNs); }

int CallBackend::open(std::size_t event) {
  const EventSpec& spec = scenario_->events[event];
  VERIFY(handles_[event] < 0);
  tick();
  const bool child = on_child(spec.target) || filtered(spec);
  if (child && !child_alive_) return ESRCH;
  const perf_event_attr attr = attr_of(spec, tracepoint(spec.source) ? tracepoint_id(spec.source) : 0);
  const int pid = spec.target == Target::system_cpu0 ? -1 : on_child(spec.target) ? child_pid(child_) : 0;
  const int cpu = spec.target == Target::self || spec.target == Target::child ? -1 : 0;
  const long h = kernel_->open(attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC, kThisPid);
  if (h < 0) return static_cast<int>(-h);
  handles_[event] = static_cast<int>(h);
  if (filtered(spec)) VERIFY(kernel_->set_filter(handles_[event], "common_pid == " + std::to_string(child_pid(child_))) == 0);
  return 0;
}

std::uint64_t CallBackend::id(std::size_t event) {
  return kernel_->events().at(static_cast<std::size_t>(handles_[event])).id;
}

int CallBackend::map(std::size_t event, std::uint32_t data_pages, bool writable) {
  VERIFY(handles_[event] >= 0);
  tick();
  Mapping& m = mappings_[event];
  VERIFY(m.ring < 0);
  if (m.memory != nullptr) retired_.push_back(m);  // mapped before, unmapped since
  m = Mapping{};
  m.bytes = (1 + std::size_t{data_pages}) * kPageBytes;
  m.memory = mmap(nullptr, m.bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  VERIFY(m.memory != MAP_FAILED);
  const long ring = kernel_->map(handles_[event], std::span(static_cast<std::byte*>(m.memory), m.bytes), writable);
  if (ring < 0) {
    VERIFY(munmap(m.memory, m.bytes) == 0);
    m = Mapping{};
    return static_cast<int>(-ring);
  }
  m.ring = static_cast<int>(ring);
  // As the real backend: its first store to a writable control page (of
  // data_tail) is a page fault of this thread.
  if (writable) act(Action::fault, false, "");
  return 0;
}

int CallBackend::map_aux(std::size_t event, const AuxAsk& ask, bool writable) {
  VERIFY(handles_[event] >= 0);
  tick();
  const Mapping& m = mappings_[event];
  if (m.ring >= 0) {
    auto* control = static_cast<perf_event_mmap_page*>(m.memory);
    control->aux_offset = std::uint64_t{ask.offset} * kPageBytes;
    control->aux_size = std::uint64_t{ask.size} * kPageBytes;
  }
  std::vector<std::byte> area(std::size_t{ask.map_pages} * kPageBytes);
  const long ring = kernel_->map_aux(handles_[event], area, std::uint64_t{ask.map_offset} * kPageBytes, writable, 0);
  if (ring < 0) return static_cast<int>(-ring);
  kernel_->unmap_aux(static_cast<int>(ring));
  return 0;
}

void CallBackend::unmap(std::size_t event) {
  Mapping& m = mappings_[event];
  VERIFY(m.ring >= 0);
  tick();
  kernel_->unmap(m.ring);
  m.ring = -1;  // the memory stays until end(): the ring's log is the kernel's
}

int CallBackend::set_output(std::size_t event, std::size_t target) {
  tick();
  const long rc = kernel_->set_output(handles_[event], handles_[target]);
  return rc < 0 ? static_cast<int>(-rc) : 0;
}

int CallBackend::control(std::size_t event, Op op) {
  tick();
  unsigned long request = 0, arg = 0;
  switch (op) {
    case Op::enable: request = PERF_EVENT_IOC_ENABLE; break;
    case Op::disable: request = PERF_EVENT_IOC_DISABLE; break;
    case Op::pause: request = PERF_EVENT_IOC_PAUSE_OUTPUT, arg = 1; break;
    case Op::resume: request = PERF_EVENT_IOC_PAUSE_OUTPUT; break;
    default: VERIFY_MSG(false, "not an ioctl");
  }
  const long rc = kernel_->ioctl(handles_[event], request, arg);
  kernel_->publish();
  return rc < 0 ? static_cast<int>(-rc) : 0;
}

void CallBackend::act(Action action, bool by_child, const std::string& name) {
  VERIFY(!by_child || child_alive_);
  tick();
  const int pid = by_child ? child_pid(child_) : kThisPid;
  if (by_child) kernel_->run_task(pid, kActionNs);
  switch (action) {
    case Action::getpid:
    case Action::getppid:
    case Action::getuid: {
      const Source source = action == Action::getpid ? Source::getpid
                            : action == Action::getppid ? Source::getppid
                                                        : Source::getuid;
      kernel_->occurrence(pid, PERF_TYPE_TRACEPOINT, tracepoint_id(source), kSyscallRawBytes);
      return;
    }
    case Action::fault:
      kernel_->occurrence(pid, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 0);
      return;
    case Action::comm:
      kernel_->rename_task(pid, name);
      return;
    case Action::fork:
      kernel_->fork_task(pid, static_cast<int>(kPidBase + kWhoForked + forks_++));
      return;
    case Action::mmap_exec: {
      sim::MmapFields m;
      m.addr = kMappingBase + exec_mappings_++ * kPageBytes;
      m.len = kPageBytes;
      m.prot = PROT_READ | PROT_EXEC;
      m.flags = MAP_PRIVATE;
      m.maj = files_.exec_major;
      m.min = files_.exec_minor;
      m.ino = files_.exec_ino;
      m.generation = files_.exec_generation;
      m.filename = files_.exec_file;
      if (files_.exec_has_build_id) {
        m.build_id_size = files_.exec_build_id_size;
        m.build_id = files_.exec_build_id;
      }
      kernel_->map_exec(pid, m);
      return;
    }
  }
}

void CallBackend::spawn_child() {
  VERIFY(!child_alive_);
  tick();
  kernel_->fork_task(kThisPid, child_pid(child_ + 1));
  child_alive_ = true;
  child_++;
}

void CallBackend::child_exit() {
  VERIFY(child_alive_);
  tick();
  kernel_->run_task(child_pid(child_), kActionNs);
  kernel_->exit_task(child_pid(child_), kThisPid);
  child_alive_ = false;
}

short CallBackend::child_exit_polling(std::size_t event) {
  child_exit();
  return poll(event);
}

short CallBackend::poll(std::size_t event) {
  tick();
  kernel_->publish();
  return kernel_->poll(handles_[event]);
}

perf_event_mmap_page* CallBackend::page(std::size_t owner) const {
  VERIFY(mappings_[owner].ring >= 0);
  return static_cast<perf_event_mmap_page*>(mappings_[owner].memory);
}

std::uint64_t CallBackend::head(std::size_t owner) {
  kernel_->publish();
  return std::atomic_ref<__u64>(page(owner)->data_head).load(std::memory_order_acquire);
}

std::span<const std::byte> CallBackend::data(std::size_t owner) {
  const Mapping& m = mappings_[owner];
  return std::span(static_cast<const std::byte*>(m.memory) + kPageBytes, m.bytes - kPageBytes);
}

void CallBackend::store_tail(std::size_t owner, std::uint64_t tail) {
  std::atomic_ref<__u64>(page(owner)->data_tail).store(tail, std::memory_order_release);
  kernel_->publish();
}

ReadValues CallBackend::read_values(std::size_t event) {
  tick();
  std::array<std::uint64_t, 8> words{};
  const long n = kernel_->read(handles_[event], std::as_writable_bytes(std::span(words)));
  VERIFY(n > 0 && n % 8 == 0 && n <= 40);
  ReadValues v;
  v.bytes = static_cast<std::uint32_t>(n);
  std::copy(words.begin(), words.begin() + n / 8, v.words.begin());
  return v;
}

ControlPage CallBackend::control_page(std::size_t owner) {
  kernel_->publish();
  return read_control_page(page(owner));
}

Who CallBackend::who(std::uint32_t pid) {
  if (pid == 0) return kWhoZero;
  if (pid < kPidBase + kWhoThis || pid >= kPidBase + kWhoOther) return kWhoOther;
  return static_cast<Who>(pid - kPidBase);
}

bool CallBackend::scenario_mapping(std::uint64_t address) {
  return address >= kMappingBase && address < kMappingBase + exec_mappings_ * kPageBytes &&
         (address - kMappingBase) % kPageBytes == 0;
}

}  // namespace ringsim::conformance
