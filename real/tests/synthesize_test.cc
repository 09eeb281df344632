// The records the recorder synthesizes: their layout, checked with the
// model's independent parser, and what they say about this process.
#include <linux/perf_event.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "model/perf_data_file.h"
#include "real/process.h"
#include "real/synthesize.h"

namespace ringsim::real {
namespace {

constexpr std::uint64_t kSampleType =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;

template <class T>
T load(std::span<const std::byte> bytes, std::size_t at) {
  T value;
  std::memcpy(&value, bytes.data() + at, sizeof value);
  return value;
}

std::string string_at(std::span<const std::byte> bytes, std::size_t at) {
  return std::string(reinterpret_cast<const char*>(bytes.data() + at));
}

// The builder's records as a data section the model walks.
std::vector<model::PerfRecord> walk(const RecordBuilder& builder, model::PerfDataFile& file) {
  file.attrs.push_back(model::PerfAttr{PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, kSampleType, true, {1}});
  file.data.assign(builder.bytes().begin(), builder.bytes().end());
  file.data_size = file.data.size();
  std::vector<model::PerfRecord> records;
  const std::string problem = file.for_each_record([&](const model::PerfRecord& r) { records.push_back(r); });
  EXPECT_EQ(problem, "");
  return records;
}

TEST(Synthesize, MapsLines) {
  MapEntry m;
  ASSERT_TRUE(parse_maps_line("5570e1a70000-5570e1a75000 r-xp 00002000 fe:00 248056    /usr/bin/sleep", m));
  EXPECT_EQ(m.start, 0x5570e1a70000u);
  EXPECT_EQ(m.end, 0x5570e1a75000u);
  EXPECT_EQ(m.pgoff, 0x2000u);
  EXPECT_EQ(m.major, 0xfeu);
  EXPECT_EQ(m.minor, 0u);
  EXPECT_EQ(m.inode, 248056u);
  EXPECT_EQ(m.prot, static_cast<std::uint32_t>(PROT_READ | PROT_EXEC));
  EXPECT_EQ(m.flags, static_cast<std::uint32_t>(MAP_PRIVATE));
  EXPECT_EQ(m.path, "/usr/bin/sleep");
  ASSERT_TRUE(parse_maps_line("7f00-8f00 rw-s 00000000 00:05 12 /dev/shm/a file with spaces (deleted)", m));
  EXPECT_EQ(m.flags, static_cast<std::uint32_t>(MAP_SHARED));
  EXPECT_EQ(m.prot, static_cast<std::uint32_t>(PROT_READ | PROT_WRITE));
  EXPECT_EQ(m.path, "/dev/shm/a file with spaces (deleted)");
  ASSERT_TRUE(parse_maps_line("7f00-8f00 r-xp 00000000 00:00 0 ", m));
  EXPECT_EQ(m.path, "");
  for (const char* bad : {"", "garbage", "7f00 r-xp 0 00:00 0", "8f00-7f00 r-xp 00000000 00:00 0",
                          "7f00-8f00 rx 00000000 00:00 0", "7f00-8f00 r-xp zz 00:00 0"}) {
    EXPECT_FALSE(parse_maps_line(bad, m)) << bad;
  }
}

TEST(Synthesize, RecordLayoutsAsPerfWritesThem) {
  RecordBuilder builder(kSampleType, true);
  EXPECT_EQ(builder.trailer_bytes(), 32u);  // TID, TIME, CPU, IDENTIFIER
  builder.add_comm(10, 11, "a-very-long-command-name");
  builder.add_kernel_mmap(0xffffffff81000000ull, 0x1206448, 0xffffffff81000000ull, "[kernel.kallsyms]_text");
  MapEntry m;
  ASSERT_TRUE(parse_maps_line("400000-401000 r-xp 00001000 08:01 77 /bin/x", m));
  builder.add_mmap2(20, 20, m);
  MapEntry anon;
  ASSERT_TRUE(parse_maps_line("7f00-8f00 r-xp 00000000 00:00 0", anon));
  builder.add_mmap2(20, 20, anon);
  EXPECT_EQ(builder.records(), 4u);
  const core::RecordCounts counts = builder.counts();
  EXPECT_EQ(counts.records, 4u);
  EXPECT_EQ(counts.bytes, builder.bytes().size());
  EXPECT_EQ(counts.samples, 0u);

  model::PerfDataFile file;
  const std::vector<model::PerfRecord> r = walk(builder, file);
  ASSERT_EQ(r.size(), 4u);
  // COMM: pid, tid, the name cut to 15 characters, padded to 8, trailer.
  EXPECT_EQ(r[0].type, static_cast<std::uint32_t>(PERF_RECORD_COMM));
  EXPECT_EQ(load<std::uint32_t>(r[0].bytes, 8), 10u);
  EXPECT_EQ(load<std::uint32_t>(r[0].bytes, 12), 11u);
  EXPECT_EQ(string_at(r[0].bytes, 16), "a-very-long-com");
  EXPECT_EQ(r[0].size, 8 + 8 + 16 + 32);
  // The kernel's MMAP, as in perf's files: pid -1, misc KERNEL.
  EXPECT_EQ(r[1].type, static_cast<std::uint32_t>(PERF_RECORD_MMAP));
  EXPECT_EQ(r[1].misc, PERF_RECORD_MISC_KERNEL);
  EXPECT_EQ(load<std::uint32_t>(r[1].bytes, 8), 0xffffffffu);
  EXPECT_EQ(load<std::uint64_t>(r[1].bytes, 16), 0xffffffff81000000ull);
  EXPECT_EQ(load<std::uint64_t>(r[1].bytes, 24), 0x1206448u);
  EXPECT_EQ(string_at(r[1].bytes, 40), "[kernel.kallsyms]_text");
  EXPECT_EQ(r[1].size, 0x50 + 16);  // perf's 0x50 with a 16-byte trailer; ours is 32
  // MMAP2.
  EXPECT_EQ(r[2].type, static_cast<std::uint32_t>(PERF_RECORD_MMAP2));
  EXPECT_EQ(r[2].misc, PERF_RECORD_MISC_USER);
  EXPECT_EQ(load<std::uint64_t>(r[2].bytes, 16), 0x400000u);
  EXPECT_EQ(load<std::uint64_t>(r[2].bytes, 24), 0x1000u);
  EXPECT_EQ(load<std::uint64_t>(r[2].bytes, 32), 0x1000u);
  EXPECT_EQ(load<std::uint32_t>(r[2].bytes, 40), 8u);
  EXPECT_EQ(load<std::uint32_t>(r[2].bytes, 44), 1u);
  EXPECT_EQ(load<std::uint64_t>(r[2].bytes, 48), 77u);
  EXPECT_EQ(load<std::uint32_t>(r[2].bytes, 64), static_cast<std::uint32_t>(PROT_READ | PROT_EXEC));
  EXPECT_EQ(load<std::uint32_t>(r[2].bytes, 68), static_cast<std::uint32_t>(MAP_PRIVATE));
  EXPECT_EQ(string_at(r[2].bytes, 72), "/bin/x");
  EXPECT_EQ(string_at(r[3].bytes, 72), "//anon");
  // Synthesized: time 0 (perf sorts them first), on no particular CPU.
  for (const model::PerfRecord& record : r) {
    std::uint64_t time = 1;
    EXPECT_TRUE(file.time_of(record, time));
    EXPECT_EQ(time, 0u);
    EXPECT_EQ(load<std::uint64_t>(record.bytes, record.size - 8), 0u) << "identifier 0: perf's first event";
  }
  builder.clear();
  EXPECT_TRUE(builder.bytes().empty());
  EXPECT_EQ(builder.records(), 0u);

  RecordBuilder bare(kSampleType, false);
  EXPECT_EQ(bare.trailer_bytes(), 0u);
}

// LOST_SAMPLES (perf's record__read_lost_samples at the end): the lost
// count, then the trailer the attr's sample_type has, with the event's id
// in IDENTIFIER; without IDENTIFIER (ours with --overwrite and one event,
// as perf's one event) no id, and no failure (a VERIFY aborted the
// recorder there for a day, 2026-11-27: a snapshot's paused ring counts
// lost samples).
TEST(Synthesize, LostSamplesCarryTheIdWhereTheTrailerHasOne) {
  RecordBuilder with_id(kSampleType, true);
  with_id.add_lost_samples(5, 0x1234);
  ASSERT_EQ(with_id.bytes().size(), 8u + 8 + 32);
  EXPECT_EQ(load<std::uint64_t>(with_id.bytes(), 8), 5u);
  EXPECT_EQ(load<std::uint64_t>(with_id.bytes(), 8 + 8 + 24), 0x1234u) << "IDENTIFIER, the trailer's last";
  const std::uint64_t no_identifier = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
  RecordBuilder without(no_identifier, true);
  EXPECT_EQ(without.trailer_bytes(), 16u);  // TID, TIME
  without.add_lost_samples(7, 0x1234);
  ASSERT_EQ(without.bytes().size(), 8u + 8 + 16);
  const std::span<const std::byte> bytes = without.bytes();
  EXPECT_EQ(load<std::uint16_t>(bytes, 6), 8u + 8 + 16) << "header size";
  EXPECT_EQ(load<std::uint32_t>(bytes, 0), static_cast<std::uint32_t>(PERF_RECORD_LOST_SAMPLES));
  EXPECT_EQ(load<std::uint64_t>(bytes, 8), 7u);
  EXPECT_EQ(load<std::uint64_t>(bytes, 16), 0u);
  EXPECT_EQ(load<std::uint64_t>(bytes, 24), 0u);
  EXPECT_EQ(without.counts().records, 1u);
}

TEST(Synthesize, ThisProcessItsThreadsAndItsExecutable) {
  std::atomic<bool> done{false};
  std::thread other([&] {
    for (int i = 0; i < 100000 && !done.load(); i++) usleep(1000);
  });
  RecordBuilder builder(kSampleType, true);
  SynthesisStats stats;
  ASSERT_TRUE(synthesize_process(getpid(), MapKinds::executable, builder, stats));
  done = true;
  other.join();
  EXPECT_EQ(stats.processes, 1u);
  EXPECT_GE(stats.threads, 2u);
  EXPECT_GE(stats.maps, 2u);  // this binary, libc, ...

  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  ASSERT_GT(n, 0);
  const std::string self(exe, static_cast<std::size_t>(n));
  model::PerfDataFile file;
  std::set<std::uint32_t> tids;
  bool executable_mapped = false;
  for (const model::PerfRecord& r : walk(builder, file)) {
    EXPECT_EQ(load<std::uint32_t>(r.bytes, 8), static_cast<std::uint32_t>(getpid()));
    if (r.type == PERF_RECORD_COMM) tids.insert(load<std::uint32_t>(r.bytes, 12));
    if (r.type == PERF_RECORD_MMAP2 && string_at(r.bytes, 72) == self) {
      executable_mapped = true;
      EXPECT_NE(load<std::uint32_t>(r.bytes, 64) & PROT_EXEC, 0u);
    }
  }
  EXPECT_EQ(tids.size(), stats.threads);
  EXPECT_EQ(tids.count(static_cast<std::uint32_t>(getpid())), 1u);
  EXPECT_TRUE(executable_mapped) << "no MMAP2 for " << self;

  // A process that is gone leaves the builder as it was.
  const std::size_t before = builder.bytes().size();
  EXPECT_FALSE(synthesize_process(0x7ffffff0, MapKinds::executable, builder, stats));
  EXPECT_EQ(builder.bytes().size(), before);
  EXPECT_EQ(stats.skipped, 1u);
}

// Issue 19: with --call-graph dwarf perf synthesizes every readable
// mapping (MISC_MMAP_DATA on the non-executable ones): its unwinder reads a
// library's .eh_frame_hdr from the read-only segment that holds it. libc's
// first segment (offset 0) is read-only on Debian (-z separate-code).
TEST(Synthesize, DataMapsAddEveryReadableMappingMarkedAsData) {
  for (const MapKinds kinds : {MapKinds::executable, MapKinds::executable_and_data}) {
    SCOPED_TRACE(kinds == MapKinds::executable ? "executable" : "executable_and_data");
    RecordBuilder builder(kSampleType, true);
    SynthesisStats stats;
    ASSERT_TRUE(synthesize_process(getpid(), kinds, builder, stats));
    model::PerfDataFile file;
    std::uint64_t data = 0, executable = 0;
    bool libc_read_only = false;
    for (const model::PerfRecord& r : walk(builder, file)) {
      if (r.type != PERF_RECORD_MMAP2) continue;
      const std::uint32_t prot = load<std::uint32_t>(r.bytes, 64);
      const bool marked = (load<std::uint16_t>(r.bytes, 4) & PERF_RECORD_MISC_MMAP_DATA) != 0;
      EXPECT_EQ(marked, (prot & PROT_EXEC) == 0) << string_at(r.bytes, 72) << " prot " << prot;
      if ((prot & PROT_EXEC) == 0) {
        EXPECT_NE(prot & PROT_READ, 0u) << string_at(r.bytes, 72);
      }
      ((prot & PROT_EXEC) != 0 ? executable : data)++;
      const std::string path = string_at(r.bytes, 72);
      if (path.find("libc.so") != std::string::npos && prot == PROT_READ && load<std::uint64_t>(r.bytes, 32) == 0) {
        libc_read_only = true;
      }
    }
    EXPECT_GE(executable, 2u);
    EXPECT_EQ(stats.maps, executable + data);
    if (kinds == MapKinds::executable) {
      EXPECT_EQ(data, 0u);
    } else {
      EXPECT_GE(data, 2u) << "libc's read-only segments, the stack, ...";
      EXPECT_TRUE(libc_read_only) << "no MMAP2 of libc's read-only first segment";
    }
  }
}

TEST(Synthesize, ProcessTreeFindsChildren) {
  // Held: the child stays (waiting before it runs anything) until wait().
  Process child;
  ProcessOptions options;
  options.hold = true;
  const Error started = child.start_function([] { return 0; }, options);
  ASSERT_TRUE(started.ok()) << started.message;
  const std::vector<pid_t> tree = process_tree(getpid());
  const pid_t child_pid = child.pid();
  child.wait();
  ASSERT_FALSE(tree.empty());
  EXPECT_EQ(tree.front(), getpid());
  EXPECT_NE(std::find(tree.begin(), tree.end(), child_pid), tree.end());
}

// -u's walk: this user's processes, a running child among them, an exited
// child not yet reaped (a zombie: ESRCH for every event opened on it) not,
// and not the one left out.
TEST(Synthesize, ProcessesOfUserLeaveOutZombies) {
  const pid_t running = ::fork();
  ASSERT_GE(running, 0);
  if (running == 0) {
    ::pause();
    ::_exit(0);
  }
  const pid_t zombie = ::fork();
  ASSERT_GE(zombie, 0);
  if (zombie == 0) ::_exit(0);
  // Until the zombie's /proc stat says Z (it has exited).
  for (int i = 0; i < 5000; i++) {
    std::ifstream in("/proc/" + std::to_string(zombie) + "/stat");
    std::string line;
    std::getline(in, line);
    const std::size_t close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z') break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const std::vector<pid_t> mine = processes_of_user(::geteuid(), ::getpid());
  ::kill(running, SIGKILL);
  ::waitpid(running, nullptr, 0);
  ::waitpid(zombie, nullptr, 0);
  EXPECT_NE(std::find(mine.begin(), mine.end(), running), mine.end());
  EXPECT_EQ(std::find(mine.begin(), mine.end(), zombie), mine.end()) << "a zombie is no process to record";
  EXPECT_EQ(std::find(mine.begin(), mine.end(), ::getpid()), mine.end()) << "the one left out";
}

// --proc-map-timeout: once a maps line is read after the timeout, that
// mapping is written whatever its kind (sleep's first segment, read-only:
// Debian links with separate code), marked PROC_MAP_PARSE_TIMEOUT, and the
// rest left out, as perf's perf_event__synthesize_mmap_events. A timeout
// of 0 ms runs out at the first line (perf's test: elapsed > timeout); the
// default does not.
TEST(Synthesize, AMapsReadPastTheTimeoutEndsAtTheMarkedMapping) {
  Process sleeper;
  ASSERT_TRUE(sleeper.start({"sleep", "30"}).ok());
  const std::string dir = "/proc/" + std::to_string(sleeper.pid());
  std::string first_line;
  for (int i = 0; i < 5000; i++) {  // exec'd (bounded: 5 s)
    std::ifstream comm(dir + "/comm");
    std::string name;
    if (std::getline(comm, name) && name == "sleep") break;
    usleep(1000);
  }
  std::ifstream maps(dir + "/maps");
  ASSERT_TRUE(std::getline(maps, first_line));
  MapEntry first;
  ASSERT_TRUE(parse_maps_line(first_line, first)) << first_line;
  ASSERT_EQ(first.prot & PROT_EXEC, 0u) << "sleep's first segment should not be executable: " << first_line;
  for (const std::uint64_t timeout_ns : {std::uint64_t{0}, kNoMapTimeout}) {
    SCOPED_TRACE("timeout " + std::to_string(timeout_ns));
    RecordBuilder builder(kSampleType, true);
    SynthesisStats stats;
    ASSERT_TRUE(synthesize_process(sleeper.pid(), ProcessSynthesis{MapKinds::executable, false, timeout_ns}, builder,
                                   stats));
    model::PerfDataFile file;
    std::vector<std::uint16_t> miscs;
    std::vector<std::uint64_t> starts;
    for (const model::PerfRecord& r : walk(builder, file)) {
      if (r.type != PERF_RECORD_MMAP2) continue;
      miscs.push_back(load<std::uint16_t>(r.bytes, 4));
      starts.push_back(load<std::uint64_t>(r.bytes, 16));
    }
    if (timeout_ns == 0) {
      ASSERT_EQ(miscs.size(), 1u);
      EXPECT_NE(miscs[0] & PERF_RECORD_MISC_PROC_MAP_PARSE_TIMEOUT, 0u);
      EXPECT_EQ(starts[0], first.start) << "the first line, whatever its kind: " << first_line;
      EXPECT_EQ(stats.maps, 1u);
      EXPECT_EQ(stats.maps_cut, 1u);
      EXPECT_EQ(stats.first_cut, sleeper.pid());
    } else {
      ASSERT_GE(miscs.size(), 2u);
      for (const std::uint16_t misc : miscs) EXPECT_EQ(misc & PERF_RECORD_MISC_PROC_MAP_PARSE_TIMEOUT, 0u);
      EXPECT_EQ(std::count(starts.begin(), starts.end(), first.start), 0) << "not executable: left out";
      EXPECT_EQ(stats.maps_cut, 0u);
    }
  }
  sleeper.signal(SIGKILL);
  sleeper.wait();
}

TEST(Synthesize, AllProcessesAndTheKernel) {
  RecordBuilder builder(kSampleType, true);
  SynthesisStats stats;
  synthesize_all_processes(ProcessSynthesis{}, builder, stats);
  EXPECT_GE(stats.processes, 2u);  // init and this one at least
  const std::string warning = synthesize_kernel_mmap(builder);
  if (geteuid() != 0) {
    std::printf("not root: %s\n", warning.c_str());
    return;
  }
  std::ifstream restrict_file("/proc/sys/kernel/kptr_restrict");
  int restrict_level = 0;
  restrict_file >> restrict_level;
  if (restrict_level >= 2) {
    EXPECT_NE(warning, "");
    return;
  }
  EXPECT_EQ(warning, "");
  model::PerfDataFile file;
  const std::vector<model::PerfRecord> r = walk(builder, file);
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r.back().type, static_cast<std::uint32_t>(PERF_RECORD_MMAP));
  EXPECT_EQ(string_at(r.back().bytes, 40), "[kernel.kallsyms]_text");
}

}  // namespace
// --namespaces: a NAMESPACES record after each thread's COMM, {pid, tid,
// 7, then dev and ino of /proc/TID/ns/{net, uts, ipc, pid, user, mnt,
// cgroup}} as stat(2) gives them; none without it.
TEST(Synthesize, NamespacesFollowEachThreadsComm) {
  for (const bool namespaces : {true, false}) {
    RecordBuilder builder(kSampleType, true);
    SynthesisStats stats;
    ASSERT_TRUE(synthesize_process(getpid(), MapKinds::executable, builder, stats, namespaces));
    model::PerfDataFile file;
    std::uint64_t comms = 0, records = 0;
    std::uint32_t previous = 0;
    for (const model::PerfRecord& r : walk(builder, file)) {
      if (r.type == PERF_RECORD_COMM) comms++;
      if (r.type == PERF_RECORD_NAMESPACES) {
        records++;
        EXPECT_EQ(previous, static_cast<std::uint32_t>(PERF_RECORD_COMM));
        EXPECT_EQ(load<std::uint32_t>(r.bytes, 8), static_cast<std::uint32_t>(getpid()));
        EXPECT_EQ(load<std::uint64_t>(r.bytes, 16), 7u);
        struct stat net{};
        ASSERT_EQ(::stat(("/proc/" + std::to_string(load<std::uint32_t>(r.bytes, 12)) + "/ns/net").c_str(), &net), 0);
        EXPECT_EQ(load<std::uint64_t>(r.bytes, 24), static_cast<std::uint64_t>(net.st_dev));
        EXPECT_EQ(load<std::uint64_t>(r.bytes, 32), static_cast<std::uint64_t>(net.st_ino));
      }
      previous = r.type;
    }
    EXPECT_EQ(records, namespaces ? comms : 0u);
  }
}

// A file's 8-byte handle (a cgroup's id, as the kernel gives it), read
// here on its own.
bool handle_id(const std::string& path, std::uint64_t& id) {
  struct {
    file_handle fh;
    std::uint64_t bytes;
  } handle{};
  handle.fh.handle_bytes = sizeof handle.bytes;
  int mount_id = 0;
  if (::name_to_handle_at(AT_FDCWD, path.c_str(), &handle.fh, &mount_id, 0) != 0) return false;
  id = handle.bytes;
  return true;
}

// --all-cgroups: a CGROUP record per directory of the tree, depth first
// from the root ("/"), each directory before its children (perf's
// perf_event__walk_cgroup_tree), with the directory's file handle as its
// id; files are not cgroups. A tree made under the test's temporary
// directory stands for a cgroup mount (ids are file handles on any file
// system that gives 8-byte ones).
TEST(Synthesize, CgroupsAreTheTreeDepthFirstWithTheirHandles) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string root = std::string(tmp != nullptr ? tmp : "/tmp") + "/cgroups-" + std::to_string(::getpid());
  std::filesystem::remove_all(root);
  ASSERT_EQ(::mkdir(root.c_str(), 0755), 0) << root;
  std::uint64_t root_id = 0;
  if (!handle_id(root, root_id)) {
    GTEST_SKIP() << root << ": no 8-byte file handles on this file system (" << std::strerror(errno) << ")";
  }
  for (const char* d : {"/a", "/a/b", "/a/b/c", "/d"}) ASSERT_EQ(::mkdir((root + d).c_str(), 0755), 0) << d;
  std::ofstream(root + "/a/cgroup.procs") << "";  // a file: no record
  RecordBuilder builder(kSampleType, true);
  const std::uint64_t written = synthesize_cgroups(root, builder);
  model::PerfDataFile file;
  std::vector<std::string> paths;
  for (const model::PerfRecord& r : walk(builder, file)) {
    ASSERT_EQ(r.type, static_cast<std::uint32_t>(PERF_RECORD_CGROUP));
    const std::string path = string_at(r.bytes, 16);
    paths.push_back(path);
    std::uint64_t id = 0;
    ASSERT_TRUE(handle_id(root + (path == "/" ? "" : path), id)) << path;
    EXPECT_EQ(load<std::uint64_t>(r.bytes, 8), id) << path;
  }
  EXPECT_EQ(written, 5u);
  ASSERT_EQ(paths.size(), 5u);
  EXPECT_EQ(paths[0], "/");
  // Depth first: /a's tree together, in order, wherever /d comes.
  const auto a = std::find(paths.begin(), paths.end(), "/a");
  ASSERT_NE(a, paths.end());
  ASSERT_LE(a + 3, paths.end());
  EXPECT_EQ(*(a + 1), "/a/b");
  EXPECT_EQ(*(a + 2), "/a/b/c");
  EXPECT_NE(std::find(paths.begin(), paths.end(), "/d"), paths.end());
  // A mount that is not there: nothing.
  RecordBuilder none(kSampleType, true);
  EXPECT_EQ(synthesize_cgroups(root + "/no-such-dir", none), 0u);
  EXPECT_TRUE(none.bytes().empty());
}

}  // namespace ringsim::real
