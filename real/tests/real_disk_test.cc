// RealDisk (core::TraceDisk over real files) on its own and under the trace
// writer: naming, pwrite and POSIX AIO round trips, the complete-prefix
// tracking the header rewrites rely on, and a full file system (a small
// tmpfs, root only) at every layer.
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/perf_data.h"
#include "core/trace_writer.h"
#include "gtest/gtest.h"
#include "model/perf_data_file.h"
#include "real/perf_event.h"
#include "real/real_disk.h"
#include "real/testing/record_testing.h"

// RealDisk's renameat2 comes here (the executable's definition comes
// first): glibc's, or EINVAL for RENAME_NOREPLACE while
// ringsim::real::g_noreplace_refused is on.
namespace ringsim::real {
namespace {
extern std::atomic<int> g_noreplace_refused;
}  // namespace
}  // namespace ringsim::real

extern "C" int renameat2(int from_dir, const char* from, int to_dir, const char* to, unsigned flags) noexcept {
  if ((flags & RENAME_NOREPLACE) != 0 && ringsim::real::g_noreplace_refused.load() >= 0) {
    ringsim::real::g_noreplace_refused.fetch_add(1);
    errno = EINVAL;
    return -1;
  }
  using Renameat2 = int (*)(int, const char*, int, const char*, unsigned);
  static const auto real = reinterpret_cast<Renameat2>(::dlsym(RTLD_NEXT, "renameat2"));
  return real(from_dir, from, to_dir, to, flags);
}

namespace ringsim::real {
namespace {

std::vector<std::byte> bytes_of(const std::string& text) {
  std::vector<std::byte> out(text.size());
  std::memcpy(out.data(), text.data(), text.size());
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

// Waits for slot's write (bounded), returns aio_return.
std::int64_t complete(RealDisk& disk, std::uint32_t slot) {
  const std::uint32_t slots[] = {slot};
  for (int i = 0; i < 10'000; i++) {
    if (disk.aio_error(slot) != EINPROGRESS) break;
    disk.aio_suspend(slots, 10'000'000);
  }
  EXPECT_NE(disk.aio_error(slot), EINPROGRESS);
  return disk.aio_return(slot);
}

TEST(RealDisk, NamesFilesAfterThePathGiven) {
  EXPECT_EQ(output_path("perf.data", 0), "perf.data");
  EXPECT_EQ(output_path("perf.data", 1), "perf.data.1");
  EXPECT_EQ(output_path("/a/b.data", 12), "/a/b.data.12");
}

TEST(RealDisk, WritesAtOffsetsTruncatesAndRotates) {
  const std::string path = testing::temp_dir("disk") + "/out.data";
  RealDisk disk(path, 2);
  ASSERT_EQ(disk.open_output(0), 0);
  EXPECT_EQ(disk.current_path(), path);
  const auto hello = bytes_of("hello");
  const auto world = bytes_of("world");
  EXPECT_EQ(disk.write_at(world, 5), 5);
  EXPECT_EQ(disk.write_at(hello, 0), 5);
  EXPECT_EQ(read_file(path), "helloworld");
  EXPECT_EQ(disk.truncate(7), 0);
  EXPECT_EQ(read_file(path), "hellowo");
  ASSERT_EQ(disk.open_output(1), 0);  // closes file 0
  EXPECT_EQ(disk.current_path(), path + ".1");
  EXPECT_EQ(disk.write_at(hello, 0), 5);
  EXPECT_EQ(disk.close_output(), 0);
  EXPECT_EQ(read_file(path + ".1"), "hello");
  EXPECT_EQ(disk.paths(), (std::vector<std::string>{path, path + ".1"}));
  // A second open of file 0 starts empty (the earlier one, if not empty, is
  // kept as .old: RecordSummary.AnEarlierFileIsKeptAsOldAndTheNewOneIsPrivate).
  ASSERT_EQ(disk.open_output(0), 0);
  EXPECT_EQ(read_file(path), "");
  EXPECT_EQ(disk.remove_output(), 0);
  EXPECT_FALSE(exists(path));
  struct stat st {};
  ASSERT_EQ(stat((path + ".1").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u & ~static_cast<unsigned>(umask(022)));  // as perf record
}

// The files in `dir`, sorted.
std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// PATH.<16 digits>, or that and -N (std::regex trips GCC 12's
// -Wmaybe-uninitialized under ASan).
bool stamped_name(const std::string& name, const std::string& path) {
  if (name.rfind(path + ".", 0) != 0) return false;
  const std::string rest = name.substr(path.size() + 1);
  const auto digits = [](const std::string& t) {
    return !t.empty() && t.find_first_not_of("0123456789") == std::string::npos;
  };
  return (rest.size() == 16 && digits(rest)) ||
         (rest.size() > 17 && rest[16] == '-' && digits(rest.substr(0, 16)) && digits(rest.substr(17)));
}

// While >= 0, the number of renameat2 calls with RENAME_NOREPLACE answered
// EINVAL (the test's renameat2 below); -1: renameat2 is glibc's.
std::atomic<int> g_noreplace_refused{-1};

// With every name of the next two seconds taken beforehand, a closed file
// is renamed NAME-2 and every earlier file stays whole.
void expect_never_replaces(const std::string& tag);

// --timestamp-filename: a closed file (by close_output, or by the next
// open_output) is renamed PATH.<14 digits of local time><2 of centiseconds>,
// and never over another file: with every name of the next two seconds
// already taken, the rename takes NAME-2 and the file there stays whole.
TEST(RealDisk, TimestampNamesRenameEachClosedFileAndNeverReplaceOne) {
  const std::string dir = testing::temp_dir("disk-ts");
  const std::string path = dir + "/out.data";
  RealDisk disk(path, 1);
  disk.set_timestamp_names(true);
  ASSERT_EQ(disk.open_output(0), 0);
  ASSERT_EQ(disk.write_at(bytes_of("first"), 0), 5);
  ASSERT_EQ(disk.open_output(1), 0);  // closes and renames file 0
  ASSERT_EQ(disk.write_at(bytes_of("second"), 0), 6);
  ASSERT_EQ(disk.close_output(), 0);
  EXPECT_EQ(disk.rename_problem(), "");
  ASSERT_EQ(disk.paths().size(), 2u);
  for (const std::string& p : disk.paths()) EXPECT_TRUE(stamped_name(p, path)) << p;
  EXPECT_EQ(disk.current_path(), disk.paths().back());
  EXPECT_EQ(read_file(disk.paths()[0]), "first");
  EXPECT_EQ(read_file(disk.paths()[1]), "second");
  EXPECT_EQ(files_in(dir), (std::vector<std::string>{disk.paths()[0], disk.paths()[1]}));

  expect_never_replaces("disk-ts-taken");
}

// A file system without renameat2's RENAME_NOREPLACE (EINVAL: some network
// and FUSE ones): RealDisk falls back to link(2) and unlink(2), which never
// replace a file either. The test's renameat2 answers EINVAL to that flag
// (the path had no test before 2026-11-27: every file system here has it).
TEST(RealDisk, TimestampNamesWithoutNoReplaceLinkAndNeverReplaceOne) {
  g_noreplace_refused.store(0);
  expect_never_replaces("disk-ts-link");
  EXPECT_GE(g_noreplace_refused.exchange(-1), 2) << "renameat2 refused each name tried: the fallback ran";
}

void expect_never_replaces(const std::string& tag) {
  const std::string taken_dir = testing::temp_dir(tag);
  const std::string taken_path = taken_dir + "/out.data";
  timeval now{};
  ASSERT_EQ(::gettimeofday(&now, nullptr), 0);
  for (int cs = 0; cs < 200; cs++) {
    const std::int64_t us = static_cast<std::int64_t>(now.tv_usec) + cs * 10'000;
    const time_t t = now.tv_sec + static_cast<time_t>(us / 1'000'000);
    tm local{};
    ASSERT_NE(::localtime_r(&t, &local), nullptr);
    char date[32];
    ASSERT_GT(std::strftime(date, sizeof date, "%Y%m%d%H%M%S", &local), 0u);
    char cc[8];
    std::snprintf(cc, sizeof cc, "%02u", static_cast<unsigned>((us % 1'000'000) / 10'000));
    std::ofstream(taken_path + "." + date + cc) << "earlier";
  }
  RealDisk again(taken_path, 1);
  again.set_timestamp_names(true);
  ASSERT_EQ(again.open_output(0), 0);
  ASSERT_EQ(again.write_at(bytes_of("new"), 0), 3);
  ASSERT_EQ(again.close_output(), 0);
  ASSERT_EQ(again.paths().size(), 1u);
  EXPECT_EQ(again.paths()[0].substr(again.paths()[0].size() - 2), "-2") << again.paths()[0];
  EXPECT_EQ(read_file(again.paths()[0]), "new");
  std::size_t earlier = 0;
  for (const std::string& f : files_in(taken_dir)) earlier += read_file(f) == "earlier";
  EXPECT_EQ(earlier, 200u) << "no file replaced";
  EXPECT_FALSE(std::filesystem::exists(taken_path)) << "renamed, not copied";
}

// A rename that fails (here an immutable file, which even root may not
// rename: EPERM) leaves the file whole under its name, says so once in
// rename_problem(), and is no error of close_output. Skipped where the file
// system has no immutable flag.
TEST(RealDisk, TimestampNameRefusedKeepsTheFileWholeUnderItsName) {
  const std::string dir = testing::temp_dir("disk-ts-refused");
  const std::string path = dir + "/out.data";
  RealDisk disk(path, 1);
  disk.set_timestamp_names(true);
  ASSERT_EQ(disk.open_output(0), 0);
  ASSERT_EQ(disk.write_at(bytes_of("kept"), 0), 4);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  int flags = 0;
  if (::ioctl(fd, FS_IOC_GETFLAGS, &flags) != 0) {
    ::close(fd);
    ASSERT_EQ(disk.close_output(), 0);
    GTEST_SKIP() << "no file flags here (FS_IOC_GETFLAGS): " << std::strerror(errno);
  }
  const int immutable = flags | FS_IMMUTABLE_FL;
  if (::ioctl(fd, FS_IOC_SETFLAGS, &immutable) != 0) {
    ::close(fd);
    ASSERT_EQ(disk.close_output(), 0);
    GTEST_SKIP() << "cannot make the file immutable (needs CAP_LINUX_IMMUTABLE): " << std::strerror(errno);
  }
  const int closed = disk.close_output();
  ::ioctl(fd, FS_IOC_SETFLAGS, &flags);  // so that the directory can be removed
  ::close(fd);
  EXPECT_EQ(closed, 0) << "a file that keeps its name is still whole";
  EXPECT_NE(disk.rename_problem().find("--timestamp-filename: renaming " + path + ": EPERM"), std::string::npos)
      << disk.rename_problem();
  EXPECT_EQ(disk.paths(), (std::vector<std::string>{path}));
  EXPECT_EQ(disk.current_path(), path);
  EXPECT_EQ(read_file(path), "kept");
  EXPECT_EQ(files_in(dir), (std::vector<std::string>{path}));
}

TEST(RealDisk, OpenErrorsAreErrnosTheRecorderExplains) {
  const std::string dir = testing::temp_dir("disk-errors");
  RealDisk missing(dir + "/no/such/dir/x.data", 1);
  EXPECT_EQ(missing.open_output(0), -ENOENT);
  RealDisk directory(dir, 1);
  EXPECT_EQ(directory.open_output(0), -EISDIR);
  const std::string message = output_error_message(ENOENT, dir + "/no/x.data", "cannot create it");
  EXPECT_NE(message.find("the directory " + dir + "/no does not exist"), std::string::npos) << message;
  EXPECT_NE(message.find("-o"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
  for (const int error : {EACCES, EROFS, EISDIR, ENOSPC, EDQUOT, EIO, EFBIG, ETIMEDOUT}) {
    const std::string m = output_error_message(error, "x.data", "write");
    EXPECT_NE(m.find(errno_name(error)), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

// Found by //real/tests:record_faults_test (the output's directory removed
// while recording): the recorder wrote on into the removed file and exited
// 0 with "wrote 0 file(s)". Closing a file that was removed is now ENOENT,
// explained as such.
TEST(RealDisk, ClosingAFileRemovedWhileWrittenIsAnError) {
  const std::string dir = testing::temp_dir("disk-removed");
  RealDisk disk(dir + "/x.data", 1);
  ASSERT_EQ(disk.open_output(0), 0);
  const std::vector<std::byte> data = bytes_of("0123456789abcdef");
  EXPECT_EQ(disk.write_at(data, 0), 16);
  ASSERT_EQ(::unlink((dir + "/x.data").c_str()), 0);
  EXPECT_EQ(disk.write_at(data, 16), 16);  // the descriptor still writes
  EXPECT_EQ(disk.close_output(), -ENOENT);
  const std::string message = output_error_message(ENOENT, dir + "/x.data", "closing the output file in output file 0");
  EXPECT_NE(message.find("removed while recording"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  // A file still there closes cleanly.
  ASSERT_EQ(disk.open_output(1), 0);
  EXPECT_EQ(disk.close_output(), 0);
}

TEST(RealDisk, AsynchronousWritesLandWhereAsked) {
  const std::string path = testing::temp_dir("disk-aio") + "/out.data";
  RealDisk disk(path, 4);
  ASSERT_EQ(disk.open_output(0), 0);
  std::vector<std::vector<std::byte>> parts;
  for (int i = 0; i < 4; i++) parts.push_back(std::vector<std::byte>(4096, std::byte(0x41 + i)));
  // Submitted out of order, into a sparse file.
  for (std::uint32_t slot : {3u, 1u, 0u, 2u}) {
    ASSERT_EQ(disk.aio_submit(slot, parts[slot], slot * 4096ull), 0);
  }
  EXPECT_EQ(disk.in_flight(), 4u);
  for (std::uint32_t slot = 0; slot < 4; slot++) EXPECT_EQ(complete(disk, slot), 4096);
  EXPECT_EQ(disk.in_flight(), 0u);
  const std::string text = read_file(path);
  ASSERT_EQ(text.size(), 4 * 4096u);
  for (int i = 0; i < 4; i++) EXPECT_EQ(text[static_cast<std::size_t>(i) * 4096 + 17], static_cast<char>(0x41 + i));
  EXPECT_EQ(disk.counters().aio_submitted, 4u);
  EXPECT_EQ(disk.counters().aio_completed, 4u);
  // Nothing to wait for: a timeout, not a hang.
  const std::uint32_t idle[] = {0};
  EXPECT_EQ(disk.aio_suspend(idle, 1'000'000), -EAGAIN);
}

TEST(RealDisk, CompletePrefixCoversOnlyWholeWritesFromTheStart) {
  const std::string path = testing::temp_dir("disk-prefix") + "/out.data";
  RealDisk disk(path, 2);
  ASSERT_EQ(disk.open_output(0), 0);
  const std::vector<std::byte> block(100, std::byte{7});
  EXPECT_EQ(disk.complete_prefix_bytes(), 0u);
  ASSERT_EQ(disk.write_at(block, 0), 100);
  EXPECT_EQ(disk.complete_prefix_bytes(), 100u);
  // A later range completes first: the prefix waits for the gap.
  ASSERT_EQ(disk.aio_submit(1, block, 200), 0);
  EXPECT_EQ(complete(disk, 1), 100);
  EXPECT_EQ(disk.complete_prefix_bytes(), 100u);
  ASSERT_EQ(disk.aio_submit(0, block, 100), 0);
  EXPECT_EQ(complete(disk, 0), 100);
  EXPECT_EQ(disk.complete_prefix_bytes(), 300u);
  // Rewriting the header (below the prefix) changes nothing.
  ASSERT_EQ(disk.write_at(std::span<const std::byte>(block.data(), 10), 0), 10);
  EXPECT_EQ(disk.complete_prefix_bytes(), 300u);
  // A new file starts over.
  ASSERT_EQ(disk.open_output(1), 0);
  EXPECT_EQ(disk.complete_prefix_bytes(), 0u);
}

TEST(RealDiskDeathTest, SlotMisuseStops) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string path = testing::temp_dir("disk-death") + "/out.data";
  EXPECT_DEATH(
      {
        RealDisk disk(path, 1);
        disk.open_output(0);
        static const std::vector<std::byte> block(8, std::byte{1});
        disk.aio_submit(0, block, 0);
        disk.aio_submit(0, block, 8);
      },
      "in flight");
  EXPECT_DEATH(
      {
        RealDisk disk(path, 1);
        disk.aio_error(0);
      },
      "no write in flight");
}

// --- Full file system (root: mounts a 256 KiB tmpfs) ------------------------

TEST(RealDiskFull, ShortWriteThenEnospcAndThePrefixStopsBeforeIt) {
  const std::string dir = testing::temp_dir("disk-full");
  testing::Tmpfs tmpfs(dir, "size=256k");
  if (!tmpfs.mounted()) GTEST_SKIP() << "needs root to mount a tmpfs: " << tmpfs.error();
  RealDisk disk(dir + "/out.data", 1);
  ASSERT_EQ(disk.open_output(0), 0);
  const std::vector<std::byte> head(1000, std::byte{1});
  ASSERT_EQ(disk.write_at(head, 0), 1000);
  const std::vector<std::byte> big(512 * 1024, std::byte{2});
  const std::int64_t n = disk.write_at(big, 1000);
  ASSERT_GT(n, 0) << "the first write into a full tmpfs is short, not failed";
  ASSERT_LT(n, static_cast<std::int64_t>(big.size()));
  EXPECT_EQ(disk.complete_prefix_bytes(), 1000u) << "a partly written range is not complete";
  const std::span<const std::byte> rest(big.data() + n, big.size() - static_cast<std::size_t>(n));
  EXPECT_EQ(disk.write_at(rest, 1000 + static_cast<std::uint64_t>(n)), -ENOSPC);
  ASSERT_EQ(disk.aio_submit(0, rest, 1000 + static_cast<std::uint64_t>(n)), 0);
  const std::uint32_t slots[] = {0};
  for (int i = 0; i < 1000 && disk.aio_error(0) == EINPROGRESS; i++) disk.aio_suspend(slots, 10'000'000);
  EXPECT_EQ(disk.aio_error(0), ENOSPC);
  EXPECT_EQ(disk.aio_return(0), -1);
  EXPECT_EQ(disk.complete_prefix_bytes(), 1000u);
}

// The trace writer over a RealDisk into a full tmpfs, serial and AIO: the
// writer stops at the first hard error, fixes the header up to the last
// complete write, and the model reads exactly the records it says it kept.
TEST(RealDiskFull, TraceWriterKeepsAValidPrefix) {
  for (const core::WriteMode mode : {core::WriteMode::serial, core::WriteMode::aio}) {
    SCOPED_TRACE(core::to_string(mode));
    const std::string dir = testing::temp_dir("writer-full");
    testing::Tmpfs tmpfs(dir, "size=256k");
    if (!tmpfs.mounted()) GTEST_SKIP() << "needs root to mount a tmpfs: " << tmpfs.error();
    core::EventDescription event;
    event.attr.type = PERF_TYPE_SOFTWARE;
    event.attr.config = PERF_COUNT_SW_CPU_CLOCK;
    event.attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME;
    event.attr.sample_period = 1;
    event.ids = {11, 12};
    const core::PerfDataHead head({event});
    core::WriterOptions options;
    options.mode = mode;
    options.cblocks = 2;
    options.mappings = 2;
    options.buffer_bytes = 16384;
    const std::uint32_t slots = mode == core::WriteMode::aio ? 4 : 2;
    RealDisk disk(dir + "/perf.data", slots);
    core::TraceWriter<RealDisk> writer(disk, options, head);
    ASSERT_EQ(writer.start(), 0);
    // Chunks of 24-byte samples {header, identifier, time}, until the
    // writer fails (bounded: 256 KiB fills long before).
    std::uint64_t time = 1;
    int rc = 0;
    for (int chunk = 0; chunk < 200 && rc == 0; chunk++) {
      const std::size_t mapping = static_cast<std::size_t>(chunk % 2);
      std::span<std::byte> buffer = writer.acquire(mapping);
      if (buffer.empty()) break;
      core::RecordCounts counts;
      const std::uint64_t bytes = 16384 - 16384 % 24;
      for (std::uint64_t at = 0; at < bytes; at += 24) {
        const perf_event_header h{PERF_RECORD_SAMPLE, 0, 24};
        const std::uint64_t id = 11 + mapping;
        std::memcpy(buffer.data() + at, &h, 8);
        std::memcpy(buffer.data() + at + 8, &id, 8);
        std::memcpy(buffer.data() + at + 16, &time, 8);
        time++;
      }
      core::walk_records(std::span<const std::byte>(buffer.data(), bytes), counts);
      rc = writer.commit(mapping, bytes, counts);
      if (rc == 0) rc = writer.end_round();
    }
    writer.finish();
    const core::WriterStats& stats = writer.stats();
    EXPECT_EQ(stats.error, ENOSPC) << stats.error_context;
    EXPECT_EQ(disk.in_flight(), 0u);
    model::PerfDataFile file;
    const std::string problem = model::read_perf_data(dir + "/perf.data", file);
    ASSERT_TRUE(problem.empty()) << problem;
    model::LossStats loss;
    EXPECT_EQ(model::loss_stats(file, loss), "");
    EXPECT_EQ(loss.samples, stats.records.samples - stats.drops[core::DropCause::output_error].records.samples);
    EXPECT_GT(loss.samples, 0u);
    EXPECT_EQ(file.data_offset + file.data_size, file.file_size) << "the file is cut at its valid prefix";
  }
}

}  // namespace
}  // namespace ringsim::real
