// The real backend on this machine's kernel: software events (cpu-clock,
// task-clock), read through the production core (core::RecordLoop and
// core::RingReader) exactly as the simulator reads its rings.
//
// Needs perf_event_open (root, or kernel.perf_event_paranoid low enough)
// and no hardware PMU. Nothing here asserts on timing: threads spin or wait
// until the condition a test needs has happened, with generous deadlines
// that only turn a hang into a failure with diagnostics.
//
// The records are walked by the model's walker (model/records.h, not the
// core's) and checked here, for the sample format every test uses:
//   PERF_RECORD_SAMPLE: { header; u64 identifier; u64 ip; u32 pid, tid;
//                         u64 time; u32 cpu, res; }             48 bytes
//   other records (sample_id_all): ...; { u32 pid, tid; u64 time;
//                         u32 cpu, res; u64 identifier; }  trailing 32 bytes
#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/perf_abi.h"
#include "core/record_loop.h"
#include "core/records.h"
#include "core/ring_reader.h"
#include "gtest/gtest.h"
#include "model/records.h"
#include "real/memory_sink.h"
#include "real/perf_event.h"
#include "real/process.h"
#include "real/real_backend.h"

namespace ringsim::real {
namespace {

using Loop = core::RecordLoop<RealSession, MemorySink>;

constexpr std::uint64_t kSampleType =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
constexpr std::uint64_t kSampleBytes = 48;
constexpr std::uint64_t kSampleIdBytes = 32;
constexpr std::uint64_t kLostBytes = model::kHeaderBytes + 16 + kSampleIdBytes;
constexpr std::uint64_t kMs = 1'000'000;
constexpr std::uint64_t kSecond = 1'000'000'000;
// Deadlines that only turn a hang into a failure.
constexpr std::uint64_t kDeadlineNs = 30 * kSecond;

std::uint64_t monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * kSecond + static_cast<std::uint64_t>(now.tv_nsec);
}

// Burns CPU until done() or budget_ns has passed. Returns done().
template <class Done>
bool spin_until(Done done, std::uint64_t budget_ns) {
  const std::uint64_t deadline_ns = monotonic_ns() + budget_ns;
  volatile std::uint64_t work = 0;
  constexpr std::uint64_t kRoundsMax = std::uint64_t{1} << 40;
  for (std::uint64_t round = 0; round < kRoundsMax; round++) {
    if (done()) return true;
    if (monotonic_ns() >= deadline_ns) return false;
    for (int k = 0; k < 2000; k++) work = work + static_cast<std::uint64_t>(k);
  }
  return done();
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return {0};
  for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

// Pins the calling thread; a failure is printed, not fatal (the tests only
// need it to make PAUSE_OUTPUT exact and to put load on a CPU).
void pin_this_thread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  const int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  if (rc != 0) std::printf("warning: cannot pin a thread to cpu %d: %s\n", cpu, std::strerror(rc));
}

perf_event_attr sampling_attr(std::uint64_t config, std::uint64_t period) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = config;
  attr.sample_period = period;
  attr.sample_type = kSampleType;
  attr.sample_id_all = 1;
  attr.disabled = 1;
  return attr;
}

// --- An independent checker, over the model's record walker ----------------

struct Expect {
  std::uint64_t id = 0;
  int cpu = -1;               // -1: any
  bool time_ordered = true;   // sample times nondecreasing in the stream
  std::set<pid_t> pids;       // empty: any
};

struct Summary {
  std::uint64_t records = 0;
  std::uint64_t bytes = 0;
  std::uint64_t samples = 0;
  std::uint64_t lost_records = 0;
  std::uint64_t lost_sum = 0;
  std::map<std::uint32_t, std::uint64_t> types;
  std::set<std::uint32_t> pids;
  std::uint64_t first_time = 0;
  std::uint64_t last_time = 0;
  std::vector<std::string> problems;

  void problem(std::uint64_t offset, const std::string& what) {
    if (problems.size() < 20) problems.push_back("at byte " + std::to_string(offset) + ": " + what);
  }
  std::string text() const {
    std::string out = std::to_string(records) + " records (" + std::to_string(bytes) + " bytes), " +
                      std::to_string(samples) + " samples, " + std::to_string(lost_records) +
                      " LOST records (lost " + std::to_string(lost_sum) + "), types {";
    for (const auto& [type, count] : types) out += " " + std::to_string(type) + ":" + std::to_string(count);
    out += " }, sample time " + std::to_string(first_time) + ".." + std::to_string(last_time);
    for (const std::string& p : problems) out += "\n    problem " + p;
    return out;
  }
};

// A sample's fields: identifier, pid, time and cpu against `expect`.
void check_sample(const model::PerfRecord& r, const Expect& expect, Summary& s) {
  s.samples++;
  if (r.size != kSampleBytes) {
    s.problem(r.offset, "sample of " + std::to_string(r.size) + " bytes, expected 48");
    return;
  }
  const std::byte* at = r.bytes.data();
  const auto identifier = model::load<std::uint64_t>(at + 8);
  const auto pid = model::load<std::uint32_t>(at + 24);
  const auto time = model::load<std::uint64_t>(at + 32);
  const auto cpu = model::load<std::uint32_t>(at + 40);
  s.pids.insert(pid);
  if (identifier != expect.id) {
    s.problem(r.offset, "sample identifier " + std::to_string(identifier) + ", event id " + std::to_string(expect.id));
  }
  if (expect.cpu >= 0 && cpu != static_cast<std::uint32_t>(expect.cpu)) {
    s.problem(r.offset, "sample on cpu " + std::to_string(cpu) + " in the ring of cpu " + std::to_string(expect.cpu));
  }
  if (!expect.pids.empty() && expect.pids.count(static_cast<pid_t>(pid)) == 0) {
    s.problem(r.offset, "sample of pid " + std::to_string(pid) + ", not a monitored task");
  }
  if (expect.time_ordered && s.samples > 1 && time < s.last_time) {
    s.problem(r.offset, "sample time " + std::to_string(time) + " before the previous sample's " +
                            std::to_string(s.last_time));
  }
  if (s.samples == 1) s.first_time = time;
  s.last_time = time;
}

// Another record's sample_id trailer; a LOST record's id and count.
void check_other(const model::PerfRecord& r, const Expect& expect, Summary& s) {
  if (r.size < model::kHeaderBytes + kSampleIdBytes) {
    s.problem(r.offset, "record type " + std::to_string(r.type) + " of " + std::to_string(r.size) +
                            " bytes: no room for its sample_id");
  } else {
    const std::byte* id_fields = r.bytes.data() + r.size - kSampleIdBytes;
    const auto cpu = model::load<std::uint32_t>(id_fields + 16);
    const auto identifier = model::load<std::uint64_t>(id_fields + 24);
    if (identifier != expect.id) {
      s.problem(r.offset, "record type " + std::to_string(r.type) + " identifier " + std::to_string(identifier) +
                              ", event id " + std::to_string(expect.id));
    }
    if (expect.cpu >= 0 && cpu != static_cast<std::uint32_t>(expect.cpu)) {
      s.problem(r.offset, "record type " + std::to_string(r.type) + " on cpu " + std::to_string(cpu) +
                              " in the ring of cpu " + std::to_string(expect.cpu));
    }
  }
  if (r.type != model::kTypeLost) return;
  s.lost_records++;
  if (r.size != kLostBytes) {
    s.problem(r.offset, "LOST record of " + std::to_string(r.size) + " bytes, expected " + std::to_string(kLostBytes));
    return;
  }
  const auto id = model::load<std::uint64_t>(r.bytes.data() + 8);
  const auto lost = model::load<std::uint64_t>(r.bytes.data() + model::kLostFieldOffset);
  s.lost_sum += lost;
  if (lost == 0) s.problem(r.offset, "LOST record with lost = 0");
  if (id != expect.id) s.problem(r.offset, "LOST record for id " + std::to_string(id));
}

// Walks one mapping's output with the model's walker (not the core's: the
// core is what is checked) and checks each record against `expect`. Times
// are checked on samples only: a LOST record's time is read when it is
// written, after the sample that follows it read its own.
Summary check_stream(std::span<const std::byte> bytes, const Expect& expect) {
  Summary s;
  const std::string problem = model::walk_records(bytes, [&](const model::PerfRecord& r) {
    s.records++;
    s.bytes += r.size;
    s.types[r.type]++;
    if (r.type == model::kTypeSample) {
      check_sample(r, expect, s);
    } else {
      check_other(r, expect, s);
    }
  });
  if (!problem.empty()) s.problem(s.bytes, problem);
  return s;
}

// The checker itself: it must see what it is there to see.
TEST(RealBackendChecker, CatchesDisorderForeignRecordsAndBadSizes) {
  const auto sample = [](std::uint64_t id, std::uint32_t cpu, std::uint64_t time) {
    std::vector<std::byte> r(kSampleBytes);
    const perf_event_header header{PERF_RECORD_SAMPLE, 0, static_cast<std::uint16_t>(kSampleBytes)};
    std::memcpy(r.data(), &header, sizeof header);
    std::memcpy(r.data() + 8, &id, 8);
    std::memcpy(r.data() + 32, &time, 8);
    std::memcpy(r.data() + 40, &cpu, 4);
    return r;
  };
  const auto stream = [](std::initializer_list<std::vector<std::byte>> records) {
    std::vector<std::byte> out;
    for (const auto& r : records) out.insert(out.end(), r.begin(), r.end());
    return out;
  };
  EXPECT_TRUE(check_stream(stream({sample(7, 1, 10), sample(7, 1, 10), sample(7, 1, 11)}), Expect{7, 1, true, {}})
                  .problems.empty());
  // Newest first: what a backward reader that forgot to reverse delivers.
  EXPECT_FALSE(check_stream(stream({sample(7, 1, 11), sample(7, 1, 10)}), Expect{7, 1, true, {}}).problems.empty());
  EXPECT_FALSE(check_stream(stream({sample(7, 0, 10)}), Expect{7, 1, true, {}}).problems.empty());
  EXPECT_FALSE(check_stream(stream({sample(8, 1, 10)}), Expect{7, 1, true, {}}).problems.empty());
  const std::vector<std::byte> two = stream({sample(7, 1, 10), sample(7, 1, 11)});
  const std::span<const std::byte> torn(two.data(), two.size() - 8);  // the second record cut short
  EXPECT_FALSE(check_stream(torn, Expect{7, 1, true, {}}).problems.empty());
}

std::string loop_text(const core::LoopResult& r) {
  char text[512];
  std::snprintf(text, sizeof text,
                "status %s error %d, rounds %llu (interrupted %llu, timeouts %llu), chunks %llu (wrapped %llu), "
                "bytes %llu, snapshots %llu (fell behind %llu, overwritten %llu bytes), corrupt %llu, "
                "hangups with data %llu, abandoned %llu bytes",
                core::to_string(r.status), r.error, static_cast<unsigned long long>(r.rounds),
                static_cast<unsigned long long>(r.poll_interrupted),
                static_cast<unsigned long long>(r.poll_timeouts), static_cast<unsigned long long>(r.ring.chunks),
                static_cast<unsigned long long>(r.ring.wrapped_chunks),
                static_cast<unsigned long long>(r.ring.bytes_read), static_cast<unsigned long long>(r.ring.snapshots),
                static_cast<unsigned long long>(r.drops[core::DropCause::overwritten].events),
                static_cast<unsigned long long>(r.drops[core::DropCause::overwritten].records.bytes),
                static_cast<unsigned long long>(r.mappings_corrupt()),
                static_cast<unsigned long long>(r.hangups_with_data),
                static_cast<unsigned long long>(r.drops[core::DropCause::abandoned].records.bytes));
  return text;
}

std::string corruptions_text(const MemorySink::Output& out) {
  std::string text;
  for (const MemorySink::Corruption& c : out.corruptions) {
    text += std::string(" [") + core::to_string(c.status) + " at " + std::to_string(c.at.begin) + "]";
  }
  return text;
}

// Opens a session or fails the test with the backend's message.
std::unique_ptr<RealSession> open_session(const std::vector<RingSpec>& specs) {
  std::unique_ptr<RealSession> session;
  const Error error = RealSession::open(specs, session);
  EXPECT_TRUE(error.ok()) << error.message;
  return session;
}

std::uint64_t event_id(RealSession& session, std::size_t index) {
  std::uint64_t id = 0;
  const Error error = session.event(index).id(id);
  EXPECT_TRUE(error.ok()) << error.message;
  return id;
}

// Requests a stop if the test has not finished within kDeadlineNs, so that
// a lost wakeup or a missing POLLHUP fails the test instead of hanging it.
class Watchdog {
 public:
  explicit Watchdog(RealSession& session)
      : thread_([this, &session] {
          std::unique_lock lock(mutex_);
          if (!done_cv_.wait_for(lock, std::chrono::nanoseconds(kDeadlineNs), [this] { return done_; })) {
            fired_ = true;
            session.request_stop();
          }
        }) {}
  ~Watchdog() { finish(); }
  void finish() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    done_cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  bool fired() {
    std::lock_guard lock(mutex_);
    return fired_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  bool fired_ = false;
  std::thread thread_;
};

// Runs the record loop (normal mode) until every ring has hung up and is
// released, under a watchdog.
core::LoopResult run_until_hangup(RealSession& session, MemorySink& sink, bool& watchdog_fired) {
  Watchdog watchdog(session);
  core::LoopOptions options;
  options.poll_timeout_ns = 100 * kMs;
  Loop loop(session, sink, core::RingMode::normal, options);
  const core::LoopResult result = loop.run();
  watchdog.finish();
  watchdog_fired = watchdog.fired();
  return result;
}

// --- (a) system-wide cpu-clock, normal mode --------------------------------

TEST(RealBackend, CpuClockOnEveryCpuIsReadWholeAndInTimeOrder) {
  const std::vector<int> cpus = allowed_cpus();
  ASSERT_FALSE(cpus.empty());
  std::unique_ptr<RealSession> session =
      open_session(system_wide_specs(sampling_attr(PERF_COUNT_SW_CPU_CLOCK, 100'000), cpus, 16));
  ASSERT_TRUE(session);
  ASSERT_EQ(session->mapping_count(), cpus.size());
  EXPECT_EQ(session->mode(), core::RingMode::normal);
  std::vector<std::uint64_t> ids;
  for (std::size_t i = 0; i < cpus.size(); i++) ids.push_back(event_id(*session, i));
  MemorySink sink(session->mapping_count(), session->data_size_bytes_max());
  const Error enabled = session->enable_all();
  ASSERT_TRUE(enabled.ok()) << enabled.message;

  // One busy thread per CPU until its ring has delivered enough samples;
  // the last one to finish stops the loop.
  constexpr std::uint64_t kSamplesPerCpu = 300;
  std::atomic<std::size_t> running{cpus.size()};
  std::atomic<std::size_t> reached{0};
  std::vector<std::thread> busy;
  for (std::size_t i = 0; i < cpus.size(); i++) {
    busy.emplace_back([&, i] {
      pin_this_thread(cpus[i]);
      if (spin_until([&] { return sink.committed_samples(i) >= kSamplesPerCpu; }, kDeadlineNs)) reached++;
      if (--running == 0) session->request_stop();
    });
  }
  core::LoopOptions options;
  options.poll_timeout_ns = 10 * kMs;
  Loop loop(*session, sink, core::RingMode::normal, options);
  const core::LoopResult result = loop.run();
  for (std::thread& t : busy) t.join();

  std::printf("loop: %s\n", loop_text(result).c_str());
  EXPECT_EQ(result.status, core::LoopStatus::stopped);
  EXPECT_EQ(result.mappings_corrupt(), 0u);
  EXPECT_EQ(reached.load(), cpus.size()) << "some CPU's ring did not deliver " << kSamplesPerCpu << " samples";
  EXPECT_EQ(session->disable_failures(), 0u) << session->last_disable_error().message;
  core::RecordCounts sink_total;
  for (std::size_t i = 0; i < cpus.size(); i++) {
    const MemorySink::Output& out = sink.output(i);
    const Summary summary = check_stream(out.bytes, Expect{ids[i], cpus[i], true, {}});
    std::printf("cpu %d: %s\n", cpus[i], summary.text().c_str());
    EXPECT_TRUE(summary.problems.empty()) << "cpu " << cpus[i] << ": " << summary.text();
    EXPECT_GE(summary.samples, kSamplesPerCpu) << "cpu " << cpus[i];
    // The core's walk and this parser agree.
    EXPECT_EQ(out.counts.records, summary.records);
    EXPECT_EQ(out.counts.samples, summary.samples);
    EXPECT_EQ(out.counts.lost_sum, summary.lost_sum);
    EXPECT_TRUE(out.corruptions.empty()) << corruptions_text(out);
    EXPECT_TRUE(session->released(i));
    sink_total.add(out.counts);
  }
  EXPECT_EQ(result.records, sink_total);
  EXPECT_EQ(result.ring.bytes_read, sink_total.bytes);
}

// --- (b) a one-page ring not read for a while: LOST records ----------------

TEST(RealBackend, TinyRingNotReadReportsLostRecords) {
  const int cpu = allowed_cpus().front();
  // 50 kHz of 48-byte samples: one 4 KiB page holds ~2 ms of them.
  std::unique_ptr<RealSession> session =
      open_session(system_wide_specs(sampling_attr(PERF_COUNT_SW_CPU_CLOCK, 20'000), std::vector<int>{cpu}, 1));
  ASSERT_TRUE(session);
  ASSERT_EQ(session->mapping(0).data_size_bytes(), page_size_bytes());
  const std::uint64_t id = event_id(*session, 0);
  MemorySink sink(1, session->data_size_bytes_max());
  const Error enabled = session->enable_all();
  ASSERT_TRUE(enabled.ok()) << enabled.message;

  // Load on the ring's CPU until a LOST record has been delivered. The
  // kernel writes LOST only with its next record once there is room, so
  // the samples must go on after the loop starts reading.
  std::atomic<bool> lost_seen{false};
  std::thread busy([&] {
    pin_this_thread(cpu);
    lost_seen = spin_until([&] { return sink.committed_lost_records() > 0; }, kDeadlineNs);
    session->request_stop();
  });
  // Not reading: the ring fills within milliseconds and the kernel drops.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  core::LoopOptions options;
  options.poll_timeout_ns = 10 * kMs;
  Loop loop(*session, sink, core::RingMode::normal, options);
  const core::LoopResult result = loop.run();
  busy.join();

  const MemorySink::Output& out = sink.output(0);
  const Summary summary = check_stream(out.bytes, Expect{id, cpu, true, {}});
  std::printf("loop: %s\ncpu %d: %s\n", loop_text(result).c_str(), cpu, summary.text().c_str());
  EXPECT_EQ(result.status, core::LoopStatus::stopped);
  EXPECT_TRUE(lost_seen.load()) << "no PERF_RECORD_LOST delivered within the deadline";
  EXPECT_GT(summary.lost_records, 0u);
  EXPECT_GT(summary.lost_sum, 0u);
  EXPECT_EQ(result.records.lost_records, summary.lost_records);
  EXPECT_EQ(result.records.lost_sum, summary.lost_sum);
  EXPECT_TRUE(summary.problems.empty()) << summary.text();
  EXPECT_EQ(result.mappings_corrupt(), 0u) << corruptions_text(out);
}

// --- (c) overwrite mode: write_backward, read-only, snapshots ---------------

TEST(RealBackend, OverwriteSnapshotsAreWholeAndInTimeOrder) {
  const int cpu = allowed_cpus().front();
  perf_event_attr attr = sampling_attr(PERF_COUNT_SW_CPU_CLOCK, 100'000);
  attr.write_backward = 1;
  // Two pages (8 KiB, ~170 samples): the ring wraps between snapshots at
  // times, so the walk's stop at one area and the gap report run too.
  std::unique_ptr<RealSession> session = open_session(system_wide_specs(attr, std::vector<int>{cpu}, 2));
  ASSERT_TRUE(session);
  ASSERT_EQ(session->mode(), core::RingMode::backward);
  ASSERT_TRUE(session->mapping(0).overwrite());
  const std::uint64_t id = event_id(*session, 0);
  MemorySink sink(1, session->data_size_bytes_max());
  const Error enabled = session->enable_all();
  ASSERT_TRUE(enabled.ok()) << enabled.message;

  // The reader runs on the ring's CPU: then PAUSE_OUTPUT is exact (no
  // record is half-written when the ioctl returns).
  core::LoopResult result;
  std::thread reader([&] {
    pin_this_thread(cpu);
    core::LoopOptions options;
    options.poll_timeout_ns = 10 * kMs;
    Loop loop(*session, sink, core::RingMode::backward, options);
    result = loop.run();
  });
  // Requester, loading the same CPU: each snapshot request is followed by
  // a commit before the next (a new snapshot always finds new samples).
  // Before the last kBehind requests it lets the kernel write two ring
  // sizes past the head it saw after the previous snapshot, so those
  // snapshots cannot reach the previous one: the reader fell behind.
  constexpr int kSnapshots = 12;
  constexpr int kBehind = 3;
  const std::uint64_t size_bytes = session->mapping(0).data_size_bytes();
  int committed = 0;
  std::thread requester([&] {
    pin_this_thread(cpu);
    RealMapping& mapping = session->mapping(0);
    for (int k = 0; k < kSnapshots; k++) {
      if (k >= kSnapshots - kBehind) {
        // The head moves down in overwrite mode. A plain atomic load: the
        // mapping has no state of its own.
        const std::uint64_t seen = mapping.load_head();
        spin_until([&] { return seen - mapping.load_head() >= 2 * size_bytes; }, kDeadlineNs);
      } else {
        spin_until([] { return false; }, 3 * kMs);  // new samples
      }
      const std::uint64_t before = sink.commits();
      session->request_snapshot();
      if (!spin_until([&] { return sink.commits() > before; }, kDeadlineNs)) break;
      committed++;
    }
    session->request_stop();
  });
  requester.join();
  reader.join();

  const MemorySink::Output& out = sink.output(0);
  const Summary summary = check_stream(out.bytes, Expect{id, cpu, true, {}});
  std::printf("loop: %s\ncpu %d: %s, %zu commits, %zu gaps\n", loop_text(result).c_str(), cpu,
              summary.text().c_str(), out.commit_ends.size(), out.gaps.size());
  EXPECT_EQ(result.status, core::LoopStatus::stopped);
  EXPECT_EQ(committed, kSnapshots) << "a snapshot request produced no snapshot within the deadline";
  EXPECT_GE(result.ring.snapshots, static_cast<std::uint64_t>(kSnapshots));
  EXPECT_EQ(result.mappings_corrupt(), 0u) << corruptions_text(out);
  // Every record whole, and the samples in time order: each snapshot walks
  // newest first from head and must be delivered oldest first; successive
  // snapshots must hold successively newer records.
  EXPECT_TRUE(summary.problems.empty()) << summary.text();
  EXPECT_GT(summary.samples, 0u);
  EXPECT_EQ(out.counts.records, summary.records);
  EXPECT_EQ(result.records.records, summary.records);
  // Each gap: on record boundaries, starting within one area of the head
  // its snapshot walked from.
  EXPECT_GE(result.drops[core::DropCause::overwritten].events, static_cast<std::uint64_t>(kBehind));
  EXPECT_EQ(out.gaps.size(), result.drops[core::DropCause::overwritten].events);
  for (const MemorySink::Gap& gap : out.gaps) {
    EXPECT_EQ(gap.range.begin % 8, 0u);
    EXPECT_EQ(gap.range.end % 8, 0u);
    EXPECT_GT(gap.range.bytes(), 0u);
    EXPECT_LE(gap.range.begin - gap.head, size_bytes);
  }
}

// --- (d) POLLHUP: the monitored task exits ----------------------------------

// Burns `cpu_ns` of process CPU time. Async-signal-safe calls only (runs in
// a forked child).
void burn_process_cpu(std::uint64_t cpu_ns) {
  volatile std::uint64_t work = 0;
  for (std::uint64_t round = 0; round < (std::uint64_t{1} << 40); round++) {
    timespec used{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &used);
    if (static_cast<std::uint64_t>(used.tv_sec) * kSecond + static_cast<std::uint64_t>(used.tv_nsec) >= cpu_ns) return;
    for (int k = 0; k < 2000; k++) work = work + static_cast<std::uint64_t>(k);
  }
}

// A forked child (real/process.h) held until release(), then running
// `body`. Killed and reaped by the Process if the test ends early.
Error start_held(Process& child, std::function<int()> body) {
  ProcessOptions options;
  options.hold = true;
  return child.start_function(std::move(body), options);
}

// Enables the events, lets the held child go, runs the loop until every
// ring has hung up (run_until_hangup), and reaps the child.
core::LoopResult run_child_until_hangup(RealSession& session, MemorySink& sink, Process& child,
                                        bool& watchdog_fired, WaitStatus& status) {
  const Error enabled = session.enable_all();
  EXPECT_TRUE(enabled.ok()) << enabled.message;
  const Error released = child.release();
  EXPECT_TRUE(released.ok()) << released.message;
  const core::LoopResult result = run_until_hangup(session, sink, watchdog_fired);
  status = child.wait(kDeadlineNs);
  return result;
}

TEST(RealBackend, HangupWhenTheTaskExitsDrainsAndReleases) {
  Process child;
  const Error started = start_held(child, [] {
    burn_process_cpu(40 * kMs);
    return 0;
  });
  ASSERT_TRUE(started.ok()) << started.message;
  // task-clock of the child alone (cpu -1, no inherit): one sample per
  // millisecond of its CPU time.
  const std::vector<RingSpec> specs = {
      RingSpec{sampling_attr(PERF_COUNT_SW_TASK_CLOCK, 1 * kMs), EventTarget{child.pid(), -1}, 8}};
  std::unique_ptr<RealSession> session = open_session(specs);
  ASSERT_TRUE(session);
  const std::uint64_t id = event_id(*session, 0);
  MemorySink sink(1, session->data_size_bytes_max());
  bool watchdog_fired = false;
  WaitStatus status;
  const core::LoopResult result = run_child_until_hangup(*session, sink, child, watchdog_fired, status);

  const MemorySink::Output& out = sink.output(0);
  // Times come from the clocks of the CPUs the child ran on.
  const Summary summary = check_stream(out.bytes, Expect{id, -1, false, {child.pid()}});
  std::printf("loop: %s\npid %d: %s\n", loop_text(result).c_str(), child.pid(), summary.text().c_str());
  EXPECT_FALSE(watchdog_fired) << "no POLLHUP within the deadline after the child exited";
  EXPECT_EQ(result.status, core::LoopStatus::done);
  EXPECT_TRUE(session->released(0));
  EXPECT_EQ(result.drops[core::DropCause::abandoned].records.bytes, 0u);
  EXPECT_EQ(status.exit_code(), 0) << "child " << status.text();
  EXPECT_GT(summary.samples, 0u) << "the child burnt 40 ms of CPU with a 1 ms task-clock period";
  EXPECT_TRUE(summary.problems.empty()) << summary.text();
  EXPECT_EQ(result.records.samples, summary.samples);
}

// A command on every CPU with inherit=1: the rings hang up once the child
// and the grandchild it forks have exited; the grandchild's samples arrive.
TEST(RealBackend, HangupOfAnInheritedCommandOnEveryCpu) {
  Process child;
  const Error started = start_held(child, [] {
    const pid_t grandchild = fork();
    if (grandchild == 0) {
      burn_process_cpu(30 * kMs);
      _exit(0);
    }
    burn_process_cpu(10 * kMs);
    if (grandchild > 0) waitpid(grandchild, nullptr, 0);
    return 0;
  });
  ASSERT_TRUE(started.ok()) << started.message;
  const std::vector<int> cpus = allowed_cpus();
  std::unique_ptr<RealSession> session =
      open_session(command_specs(sampling_attr(PERF_COUNT_SW_TASK_CLOCK, 1 * kMs), child.pid(), cpus, 4));
  ASSERT_TRUE(session);
  std::vector<std::uint64_t> ids;
  for (std::size_t i = 0; i < cpus.size(); i++) ids.push_back(event_id(*session, i));
  MemorySink sink(session->mapping_count(), session->data_size_bytes_max());
  bool watchdog_fired = false;
  WaitStatus status;
  const core::LoopResult result = run_child_until_hangup(*session, sink, child, watchdog_fired, status);

  std::printf("loop: %s\n", loop_text(result).c_str());
  EXPECT_FALSE(watchdog_fired) << "no POLLHUP on every ring within the deadline";
  EXPECT_EQ(result.status, core::LoopStatus::done);
  EXPECT_EQ(status.exit_code(), 0) << "child " << status.text();
  std::set<std::uint32_t> pids;
  std::uint64_t samples = 0;
  for (std::size_t i = 0; i < cpus.size(); i++) {
    const Summary summary = check_stream(sink.output(i).bytes, Expect{ids[i], cpus[i], true, {}});
    std::printf("cpu %d: %s\n", cpus[i], summary.text().c_str());
    EXPECT_TRUE(summary.problems.empty()) << summary.text();
    EXPECT_TRUE(session->released(i));
    pids.insert(summary.pids.begin(), summary.pids.end());
    samples += summary.samples;
  }
  EXPECT_GT(samples, 0u);
  EXPECT_EQ(pids.count(static_cast<std::uint32_t>(child.pid())), 1u) << "no sample of the child";
  EXPECT_GE(pids.size(), 2u) << "no sample of the grandchild: inherit did not follow the fork";
}

// --- (e) error paths ----------------------------------------------------------

bool one_line(const std::string& message) { return !message.empty() && message.find('\n') == std::string::npos; }

TEST(RealBackendErrors, MapRejectsBadPageCountsClearly) {
  PerfEvent event;
  const int cpu = allowed_cpus().front();
  Error error = PerfEvent::open(sampling_attr(PERF_COUNT_SW_CPU_CLOCK, 10 * kMs), EventTarget{-1, cpu}, event);
  ASSERT_TRUE(error.ok()) << error.message;

  error = event.map(3);
  std::printf("map(3): %s\n", error.message.c_str());
  EXPECT_EQ(error.error, EINVAL);
  EXPECT_NE(error.message.find("not a power of two"), std::string::npos) << error.message;
  EXPECT_TRUE(one_line(error.message));
  EXPECT_FALSE(event.mapped());

  error = event.map(0);
  EXPECT_EQ(error.error, EINVAL) << error.message;

  error = event.map(std::uint64_t{1} << 40);
  std::printf("map(2^40): %s\n", error.message.c_str());
  EXPECT_EQ(error.error, EINVAL);
  EXPECT_NE(error.message.find("smaller -m"), std::string::npos) << error.message;

  // Passes the wrapper's checks; the kernel refuses it (its page array
  // does not fit one allocation, or the locked-memory limit).
  error = event.map(std::uint64_t{1} << 28);
  std::printf("map(2^28): %s\n", error.message.c_str());
  EXPECT_TRUE(error.error == ENOMEM || error.error == EPERM || error.error == EINVAL) << error.message;
  EXPECT_NE(error.message.find("mmap of 1 + 268435456 pages"), std::string::npos) << error.message;
  EXPECT_NE(error.message.find("-m"), std::string::npos) << error.message;
  EXPECT_TRUE(one_line(error.message));
  EXPECT_FALSE(event.mapped());

  // The event is still usable, and a second map is refused.
  error = event.map(1);
  ASSERT_TRUE(error.ok()) << error.message;
  EXPECT_EQ(event.data_size_bytes(), page_size_bytes());
  error = event.map(1);
  EXPECT_EQ(error.error, EBUSY) << error.message;
}

// read_lost of a group's events (the modifier S: read_format GROUP|ID|
// LOST): each event's own entry of the group's read, found by its id, the
// lost count and not the value (the counters ran: a value read as the lost
// count would not be 0); a group read without ids is refused.
TEST(RealBackend, LostSamplesOfAGroupsEventsAreTheirOwnEntries) {
  perf_event_attr attr = sampling_attr(PERF_COUNT_SW_CPU_CLOCK, 10 * kMs);
  attr.read_format = PERF_FORMAT_LOST | PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED;
  attr.sample_type |= PERF_SAMPLE_READ;
  attr.disabled = 0;
  PerfEvent leader, member;
  ASSERT_TRUE(PerfEvent::open(attr, EventTarget{0, -1}, leader).ok());
  perf_event_attr member_attr = attr;
  member_attr.config = PERF_COUNT_SW_TASK_CLOCK;
  member_attr.sample_period = 0;
  ASSERT_TRUE(PerfEvent::open(member_attr, EventTarget{0, -1}, member, leader.fd()).ok());
  spin_until([] { return false; }, 20 * kMs);
  for (const PerfEvent* e : {&leader, &member}) {
    std::uint64_t lost = 1;
    const Error error = e->read_lost(lost);
    ASSERT_TRUE(error.ok()) << error.message;
    EXPECT_EQ(lost, 0u);
  }
  std::uint64_t value = 0;
  ASSERT_TRUE(leader.read_count(value).ok());
  EXPECT_EQ(value, 2u) << "a group read starts with nr";
  PerfEvent no_ids;
  attr.read_format = PERF_FORMAT_LOST | PERF_FORMAT_GROUP;
  ASSERT_TRUE(PerfEvent::open(attr, EventTarget{0, -1}, no_ids).ok());
  std::uint64_t lost = 0;
  const Error error = no_ids.read_lost(lost);
  EXPECT_EQ(error.error, EINVAL) << error.message;
  EXPECT_NE(error.message.find("without PERF_FORMAT_ID"), std::string::npos) << error.message;
}

// What read_lost makes of read()'s bytes (lost_from_read), on words the
// kernel never gives: a size that is not the read_format's, a group whose
// nr does not match its bytes, an id not among the group's. Each an EIO
// that names the read and says what was expected; the good layouts give
// the entry's lost count, not a neighbour's.
TEST(RealBackendErrors, LostCountsFromReadsOfTheWrongShapeAreEio) {
  const std::string what = "read of cpu-clock";
  std::uint64_t lost = 99;
  // { value, time_enabled, id, lost }
  const std::uint64_t format = PERF_FORMAT_LOST | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED;
  const std::vector<std::uint64_t> one = {7, 1000, 42, 3, 0};
  ASSERT_TRUE(lost_from_read(format, one, 32, 0, what, lost).ok());
  EXPECT_EQ(lost, 3u);
  for (const std::size_t bytes : {0, 8, 24, 31, 33, 40}) {
    const Error e = lost_from_read(format, one, bytes, 0, what, lost);
    EXPECT_EQ(e.error, EIO) << bytes;
    EXPECT_EQ(e.message.rfind("read of cpu-clock: EIO: ", 0), 0u) << e.message;
    EXPECT_NE(e.message.find("not 32 (value, ..., lost)"), std::string::npos) << e.message;
  }
  // { nr; time_enabled; { value, id, lost } x nr }
  const std::uint64_t group = PERF_FORMAT_LOST | PERF_FORMAT_ID | PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED;
  std::vector<std::uint64_t> two = {2, 1000, 5, 41, 8, 6, 42, 9};
  lost = 99;
  ASSERT_TRUE(lost_from_read(group, two, 64, 42, what, lost).ok());
  EXPECT_EQ(lost, 9u);
  ASSERT_TRUE(lost_from_read(group, two, 64, 41, what, lost).ok());
  EXPECT_EQ(lost, 8u);
  Error e = lost_from_read(group, two, 64, 43, what, lost);
  EXPECT_EQ(e.error, EIO);
  EXPECT_EQ(e.message, "read of cpu-clock: EIO: its id 43 is not in its group's 2 values");
  e = lost_from_read(group, two, 40, 42, what, lost);  // the second entry cut off
  EXPECT_EQ(e.error, EIO);
  EXPECT_EQ(e.message, "read of cpu-clock: EIO: 40 bytes for a group of 2 (nr, ..., {value, id, lost} each)");
  two[0] = 1u << 20;  // an nr beyond any buffer
  e = lost_from_read(group, two, 64, 42, what, lost);
  EXPECT_EQ(e.error, EIO);
  EXPECT_NE(e.message.find("for a group of 1048576"), std::string::npos) << e.message;
  e = lost_from_read(group, two, 0, 42, what, lost);
  EXPECT_EQ(e.error, EIO);
  e = lost_from_read(PERF_FORMAT_ID, one, 32, 0, what, lost);
  EXPECT_EQ(e.error, EINVAL);
  EXPECT_EQ(lost, 8u) << "a failed read leaves the count as it was";
}

TEST(RealBackendErrors, OpenRejectsBadConfigurationsClearly) {
  const int cpu = allowed_cpus().front();
  PerfEvent event;
  perf_event_attr attr = sampling_attr(9999, 10 * kMs);  // no such software event
  Error error = PerfEvent::open(attr, EventTarget{-1, cpu}, event);
  std::printf("config 9999: %s\n", error.message.c_str());
  EXPECT_EQ(error.error, ENOENT);
  EXPECT_NE(error.message.find("event not supported"), std::string::npos) << error.message;
  EXPECT_TRUE(one_line(error.message));
  EXPECT_FALSE(event.is_open());

  attr = sampling_attr(PERF_COUNT_SW_CPU_CLOCK, 10 * kMs);
  attr.sample_type |= std::uint64_t{1} << 63;  // a bit no kernel knows
  error = PerfEvent::open(attr, EventTarget{-1, cpu}, event);
  std::printf("sample_type bit 63: %s\n", error.message.c_str());
  EXPECT_EQ(error.error, EINVAL);
  EXPECT_NE(error.message.find("rejected the configuration"), std::string::npos) << error.message;

  attr = sampling_attr(PERF_COUNT_SW_CPU_CLOCK, 10 * kMs);
  attr.size = 8;  // smaller than the first published attr (64 bytes)
  error = PerfEvent::open(attr, EventTarget{-1, cpu}, event);
  std::printf("attr.size 8: %s\n", error.message.c_str());
  EXPECT_EQ(error.error, E2BIG);
  EXPECT_NE(error.message.find("perf_event_attr.size"), std::string::npos) << error.message;

  error = PerfEvent::open(sampling_attr(PERF_COUNT_SW_CPU_CLOCK, 10 * kMs), EventTarget{0x7fffffff, -1}, event);
  std::printf("pid 2^31-1: %s\n", error.message.c_str());
  EXPECT_EQ(error.error, ESRCH);
  EXPECT_NE(error.message.find("no process"), std::string::npos) << error.message;

  error = PerfEvent::open(sampling_attr(PERF_COUNT_SW_CPU_CLOCK, 10 * kMs), EventTarget{-1, -1}, event);
  EXPECT_EQ(error.error, EINVAL) << error.message;
  EXPECT_TRUE(one_line(error.message));

  // An inherited per-task event cannot be mapped.
  attr = sampling_attr(PERF_COUNT_SW_TASK_CLOCK, 10 * kMs);
  attr.inherit = 1;
  error = PerfEvent::open(attr, EventTarget{0, -1}, event);
  ASSERT_TRUE(error.ok()) << error.message;
  error = event.map(1);
  std::printf("inherit, cpu -1, map: %s\n", error.message.c_str());
  EXPECT_EQ(error.error, EINVAL);
  EXPECT_NE(error.message.find("inherit"), std::string::npos) << error.message;

  // PAUSE_OUTPUT needs a ring.
  error = event.pause_output(true);
  EXPECT_EQ(error.error, EINVAL) << error.message;
  EXPECT_NE(error.message.find("no mapped ring"), std::string::npos) << error.message;
}

// Runs `body` in a forked child that has dropped every capability (so
// root's bypasses of perf_event_paranoid and of the locked-memory limit no
// longer apply) and returns what it returned: "errno|message".
std::string run_without_capabilities(const std::function<Error()>& body) {
  ProcessOptions options;
  options.out = Output::captured();
  Process child;
  const Error started = child.start_function(
      [&body] {
        __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
        __user_cap_data_struct data[2] = {};
        std::string out;
        if (syscall(SYS_capset, &header, data) != 0) {
          out = std::string("capset failed: ") + std::strerror(errno);
        } else {
          const Error error = body();
          out = std::to_string(error.error) + "|" + error.message;
        }
        return ::write(1, out.data(), out.size()) == static_cast<ssize_t>(out.size()) ? 0 : 1;
      },
      options);
  if (!started.ok()) return started.message;
  const WaitStatus status = child.wait(kDeadlineNs);
  if (status.exit_code() != 0) return "child " + status.text();
  return child.captured_out();
}

int read_proc_int(const char* path) {
  std::ifstream in(path);
  int value = 0;
  in >> value;
  return value;
}

TEST(RealBackendErrors, PermissionAndLockedMemoryErrorsNameTheLimit) {
  const int paranoid = read_proc_int("/proc/sys/kernel/perf_event_paranoid");
  const int cpu = allowed_cpus().front();
  if (paranoid < 1) {
    std::printf("perf_event_paranoid is %d: an unprivileged system-wide event is allowed here; not checked\n", paranoid);
  } else {
    const std::string out = run_without_capabilities([&] {
      PerfEvent event;
      return PerfEvent::open(sampling_attr(PERF_COUNT_SW_CPU_CLOCK, 10 * kMs), EventTarget{-1, cpu}, event);
    });
    std::printf("without capabilities, system-wide: %s\n", out.c_str());
    EXPECT_TRUE(out.rfind(std::to_string(EACCES) + "|", 0) == 0 || out.rfind(std::to_string(EPERM) + "|", 0) == 0)
        << out;
    EXPECT_NE(out.find("/proc/sys/kernel/perf_event_paranoid"), std::string::npos) << out;
  }
  if (paranoid < 0) {
    std::printf("perf_event_paranoid is %d: the locked-memory limit is not enforced here; not checked\n", paranoid);
    return;
  }
  // More data pages than perf_event_mlock_kb allows for all CPUs, with
  // RLIMIT_MEMLOCK 0: EPERM.
  std::vector<int> online;
  ASSERT_TRUE(online_cpus(online).ok());
  const std::uint64_t limit_pages = static_cast<std::uint64_t>(read_proc_int("/proc/sys/kernel/perf_event_mlock_kb")) *
                                    1024 / page_size_bytes() * online.size();
  std::uint64_t pages = 1;
  for (int i = 0; i < 40 && pages <= limit_pages; i++) pages *= 2;
  const std::string out = run_without_capabilities([&] {
    const rlimit none{0, 0};
    if (setrlimit(RLIMIT_MEMLOCK, &none) != 0) return Error{errno, "setrlimit failed"};
    perf_event_attr attr = sampling_attr(PERF_COUNT_SW_TASK_CLOCK, 10 * kMs);
    attr.exclude_kernel = 1;  // allowed unprivileged at paranoid <= 2
    attr.exclude_hv = 1;
    PerfEvent event;
    const Error opened = PerfEvent::open(attr, EventTarget{0, -1}, event);
    if (!opened.ok()) return opened;
    return event.map(pages);
  });
  std::printf("without capabilities, %llu pages: %s\n", static_cast<unsigned long long>(pages), out.c_str());
  EXPECT_EQ(out.rfind(std::to_string(EPERM) + "|", 0), 0u) << out;
  EXPECT_NE(out.find("RLIMIT_MEMLOCK"), std::string::npos) << out;
  EXPECT_NE(out.find("perf_event_mlock_kb"), std::string::npos) << out;
  EXPECT_NE(out.find("use a smaller -m"), std::string::npos) << out;
}

TEST(RealBackendErrors, SessionOpenFailsWholeAndNamesTheEvent) {
  const int cpu = allowed_cpus().front();
  std::vector<RingSpec> specs = system_wide_specs(sampling_attr(PERF_COUNT_SW_CPU_CLOCK, 10 * kMs), std::vector<int>{cpu}, 1);
  specs.push_back(RingSpec{sampling_attr(9999, 10 * kMs), EventTarget{-1, cpu}, 1});
  std::unique_ptr<RealSession> session;
  Error error = RealSession::open(specs, session);
  std::printf("bad second event: %s\n", error.message.c_str());
  EXPECT_EQ(error.error, ENOENT);
  EXPECT_EQ(error.message.rfind("event 1 of 2: ", 0), 0u) << error.message;
  EXPECT_FALSE(session);

  specs.back() = RingSpec{sampling_attr(PERF_COUNT_SW_CPU_CLOCK, 10 * kMs), EventTarget{-1, cpu}, 3};
  error = RealSession::open(specs, session);
  EXPECT_EQ(error.error, EINVAL);
  EXPECT_NE(error.message.find("power of two"), std::string::npos) << error.message;
  EXPECT_FALSE(session);

  specs.back().data_pages = 1;
  specs.back().attr.write_backward = 1;
  error = RealSession::open(specs, session);
  EXPECT_EQ(error.error, EINVAL);
  EXPECT_NE(error.message.find("write_backward"), std::string::npos) << error.message;
  EXPECT_FALSE(session);

  error = RealSession::open({}, session);
  EXPECT_EQ(error.error, EINVAL) << error.message;
}

// --- Stop, signals, contract checks -----------------------------------------

// The first event's counter no longer moves (20 ms apart): disabled.
// `when` says after what, for the failure message.
void expect_counter_stopped(RealSession& session, const std::string& when) {
  std::uint64_t stopped = 0;
  std::uint64_t later = 0;
  ASSERT_TRUE(session.event(0).read_count(stopped).ok());
  spin_until([] { return false; }, 20 * kMs);
  ASSERT_TRUE(session.event(0).read_count(later).ok());
  EXPECT_EQ(stopped, later) << when;
}

TEST(RealBackend, StopDisablesTheEventsBeforeTheFinalDrain) {
  const int cpu = allowed_cpus().front();
  std::unique_ptr<RealSession> session =
      open_session(system_wide_specs(sampling_attr(PERF_COUNT_SW_CPU_CLOCK, 10 * kMs), std::vector<int>{cpu}, 1));
  ASSERT_TRUE(session);
  const Error enabled = session->enable_all();
  ASSERT_TRUE(enabled.ok()) << enabled.message;
  EXPECT_FALSE(session->stop_requested());

  std::uint64_t before = 0;
  std::uint64_t running = 0;
  ASSERT_TRUE(session->event(0).read_count(before).ok());
  // A cpu-clock counter advances with time while enabled.
  spin_until([&] {
    return session->event(0).read_count(running).ok() && running > before;
  }, kDeadlineNs);
  ASSERT_GT(running, before) << "cpu-clock did not count while enabled";

  session->request_stop();
  ASSERT_TRUE(session->stop_requested());
  EXPECT_EQ(session->disable_failures(), 0u) << session->last_disable_error().message;
  expect_counter_stopped(*session, "the counter still runs after stop_requested() returned true");
  EXPECT_TRUE(session->stop_requested());  // stays set
  EXPECT_FALSE(session->released(0));
}

// The request usually wakes the poll: the events are disabled as poll()
// returns, before the loop's round copies anything (with -a that copy was
// sampled: docs/recorder.md, "Self-sampling"), not only at the next
// stop_requested().
TEST(RealBackend, AStopThatWakesThePollDisablesTheEventsAsItReturns) {
  const int cpu = allowed_cpus().front();
  std::unique_ptr<RealSession> session =
      open_session(system_wide_specs(sampling_attr(PERF_COUNT_SW_CPU_CLOCK, 1'000 * kMs), std::vector<int>{cpu}, 1));
  ASSERT_TRUE(session);
  ASSERT_TRUE(session->enable_all().ok());
  std::vector<core::PollEvents> events(1, core::PollEvents{true});
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    session->request_stop();
  });
  const int polled = session->poll(events, kDeadlineNs);
  stopper.join();
  EXPECT_EQ(polled, -EINTR);  // a request and no ring event
  expect_counter_stopped(*session, "the counter still runs after a poll() woken by the stop returned");
  EXPECT_EQ(session->disable_failures(), 0u) << session->last_disable_error().message;
  EXPECT_TRUE(session->stop_requested());
}

// Two reading threads' slices of one session: a stop requested from
// another thread wakes the secondary slice's poll (its own eventfd, which
// the stop kicks; it does not watch the process-wide one) at once, the
// events disabled. Without the kick it would sleep to its deadline and
// return 0.
TEST(RealBackend, AStopWakesEverySlicesPoll) {
  const int cpu = allowed_cpus().front();
  std::unique_ptr<RealSession> session = open_session(
      system_wide_specs(sampling_attr(PERF_COUNT_SW_CPU_CLOCK, 1'000 * kMs), std::vector<int>{cpu, cpu}, 1));
  ASSERT_TRUE(session);
  std::unique_ptr<RealSessionSlice> primary;
  std::unique_ptr<RealSessionSlice> secondary;
  ASSERT_TRUE(RealSessionSlice::make(*session, {0}, true, primary).ok());
  ASSERT_TRUE(RealSessionSlice::make(*session, {1}, false, secondary).ok());
  EXPECT_EQ(secondary->mapping_count(), 1u);
  EXPECT_EQ(&secondary->mapping(0), &session->mapping(1));
  EXPECT_FALSE(secondary->take_snapshot_request());  // only the primary takes requests
  ASSERT_TRUE(session->enable_all().ok());
  std::vector<core::PollEvents> events(1, core::PollEvents{true});
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    session->request_stop();
  });
  const int polled = secondary->poll(events, kDeadlineNs);
  stopper.join();
  EXPECT_EQ(polled, -EINTR);  // the kick and no ring event
  EXPECT_TRUE(secondary->stop_requested());
  expect_counter_stopped(*session, "the counter still runs after a secondary slice saw the stop");
  EXPECT_EQ(session->disable_failures(), 0u) << session->last_disable_error().message;
  std::unique_ptr<RealSessionSlice> overwrite;
  EXPECT_FALSE(RealSessionSlice::make(*session, {}, false, overwrite).ok()) << "a slice of no rings";
}

// The command's exit, seen by the session's own poll (no waiter thread):
// a stop request, the events disabled as poll() returns.
TEST(RealBackend, AWatchedCommandsExitIsAStopRequest) {
  const int cpu = allowed_cpus().front();
  std::unique_ptr<RealSession> session =
      open_session(system_wide_specs(sampling_attr(PERF_COUNT_SW_CPU_CLOCK, 1'000 * kMs), std::vector<int>{cpu}, 1));
  ASSERT_TRUE(session);
  ASSERT_TRUE(session->enable_all().ok());
  ProcessOptions options;
  options.hold = true;
  Process child;
  ASSERT_TRUE(child.start_function([] { return 0; }, options).ok());
  session->watch_exit(child.pidfd());
  std::vector<core::PollEvents> events(1, core::PollEvents{true});
  EXPECT_EQ(session->poll(events, 0), 0);  // held: not exited
  ASSERT_TRUE(child.release().ok());
  const int polled = session->poll(events, kDeadlineNs);
  EXPECT_EQ(polled, -EINTR);  // the exit and no ring event
  expect_counter_stopped(*session, "the counter still runs after the command's exit was polled");
  EXPECT_TRUE(session->stop_requested());
  EXPECT_TRUE(child.wait().exited());
}

TEST(RealBackend, SignalsBecomeRequestsAndWakeAWaitingPoll) {
  const int cpu = allowed_cpus().front();
  // One sample a second: no ring wakes the poll during the test.
  std::unique_ptr<RealSession> session =
      open_session(system_wide_specs(sampling_attr(PERF_COUNT_SW_CPU_CLOCK, 1'000 * kMs), std::vector<int>{cpu}, 1));
  ASSERT_TRUE(session);
  const Error installed = install_signal_handlers();
  ASSERT_TRUE(installed.ok()) << installed.message;
  std::vector<core::PollEvents> events(1, core::PollEvents{true});

  EXPECT_EQ(session->poll(events, 0), 0);  // nothing pending
  EXPECT_FALSE(session->take_snapshot_request());

  // A request made before poll() is not lost until the timeout: poll
  // returns at once, as interrupted (the deadline only bounds a failure).
  ASSERT_EQ(raise(SIGUSR2), 0);
  EXPECT_EQ(session->poll(events, kDeadlineNs), -EINTR);
  EXPECT_FALSE(events[0].readable);
  EXPECT_FALSE(events[0].hangup);
  EXPECT_TRUE(session->take_snapshot_request());
  EXPECT_FALSE(session->take_snapshot_request());  // reading clears it
  EXPECT_FALSE(session->stop_requested());

  // A signal from another thread while poll() waits.
  const pthread_t waiter = pthread_self();
  std::atomic<bool> sent{false};
  std::thread sender([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    sent = pthread_kill(waiter, SIGTERM) == 0;
  });
  const int polled = session->poll(events, kDeadlineNs);
  sender.join();
  EXPECT_TRUE(sent.load());
  EXPECT_EQ(polled, -EINTR);
  EXPECT_TRUE(session->stop_requested());

  restore_signal_handlers();
  EXPECT_FALSE(session->take_snapshot_request());
  // restore cleared the signal's stop request; this session's own
  // disable stays done.
  std::unique_ptr<RealSession> fresh =
      open_session(system_wide_specs(sampling_attr(PERF_COUNT_SW_CPU_CLOCK, 1'000 * kMs), std::vector<int>{cpu}, 1));
  ASSERT_TRUE(fresh);
  EXPECT_FALSE(fresh->stop_requested());
}

TEST(RealBackend, PollReportsReadableAndSkipsUnwantedRings) {
  const int cpu = allowed_cpus().front();
  perf_event_attr attr = sampling_attr(PERF_COUNT_SW_CPU_CLOCK, 100'000);
  attr.wakeup_events = 1;  // POLLIN after every sample
  std::unique_ptr<RealSession> session = open_session(system_wide_specs(attr, std::vector<int>{cpu, cpu}, 1));
  ASSERT_TRUE(session);
  const Error enabled = session->enable_all();
  ASSERT_TRUE(enabled.ok()) << enabled.message;
  std::vector<core::PollEvents> events = {core::PollEvents{true}, core::PollEvents{false}};
  int polled = 0;
  std::thread busy([&] {
    pin_this_thread(cpu);
    spin_until([] { return false; }, 5 * kMs);
  });
  busy.join();
  // Bounded: each poll returns at once once a sample is there.
  for (int attempt = 0; attempt < 100 && polled == 0; attempt++) polled = session->poll(events, kDeadlineNs / 100);
  EXPECT_EQ(polled, 1);
  EXPECT_TRUE(events[0].readable);
  EXPECT_FALSE(events[1].readable) << "an unwanted ring was reported";
  EXPECT_FALSE(events[0].hangup);
  EXPECT_GT(session->mapping(0).load_head(), 0u);
}

TEST(RealBackend, CpuListParsing) {
  std::vector<int> cpus;
  ASSERT_TRUE(parse_cpu_list("0-1\n", cpus).ok());
  EXPECT_EQ(cpus, (std::vector<int>{0, 1}));
  ASSERT_TRUE(parse_cpu_list("0,2-4,7", cpus).ok());
  EXPECT_EQ(cpus, (std::vector<int>{0, 2, 3, 4, 7}));
  for (const char* bad : {"", "\n", "a", "1-0", "0,", "0-", "-1", "0;1", "0-70000"}) {
    const Error error = parse_cpu_list(bad, cpus);
    EXPECT_EQ(error.error, EINVAL) << "\"" << bad << "\" accepted";
    EXPECT_TRUE(one_line(error.message)) << error.message;
  }
  const Error online = online_cpus(cpus);
  ASSERT_TRUE(online.ok()) << online.message;
  EXPECT_FALSE(cpus.empty());
}

// The mapping's contract checks: they stop the process rather than touch
// memory they must not.
TEST(RealBackendDeathTest, MappingContractViolationsStop) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const int cpu = allowed_cpus().front();
  std::unique_ptr<RealSession> session =
      open_session(system_wide_specs(sampling_attr(PERF_COUNT_SW_CPU_CLOCK, 10 * kMs), std::vector<int>{cpu}, 1));
  ASSERT_TRUE(session);
  RealMapping& mapping = session->mapping(0);
  std::vector<std::byte> buffer(16);
  const std::uint64_t last = mapping.data_size_bytes() - 8;
  mapping.copy_out(last, std::span<std::byte>(buffer.data(), 8));  // fits
  EXPECT_DEATH(mapping.copy_out(last, std::span<std::byte>(buffer)), "crosses the end of the data area");

  perf_event_attr attr = sampling_attr(PERF_COUNT_SW_CPU_CLOCK, 10 * kMs);
  attr.write_backward = 1;
  std::unique_ptr<RealSession> overwrite = open_session(system_wide_specs(attr, std::vector<int>{cpu}, 1));
  ASSERT_TRUE(overwrite);
  EXPECT_DEATH(overwrite->mapping(0).store_tail(0), "read-only");

  session->release(0);
  EXPECT_TRUE(session->released(0));
  EXPECT_DEATH(session->mapping(0), "released");
  EXPECT_DEATH(mapping.load_head(), "released mapping");
  EXPECT_DEATH(session->release(0), "released twice");
}

}  // namespace
}  // namespace ringsim::real
