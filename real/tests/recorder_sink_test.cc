// RecorderSink's rotation by size (--switch-output=SIZE): a file is
// switched only at the end of a round that read every ring up to its
// head. Before, the writer switched at any round's end (core's
// TraceWriter with rotate_bytes): records a ring still held, older than
// the file's last samples from other rings (a task's COMM and MMAP on the
// CPU it exec'd on, its samples on another), went into the next file, and
// the finished file had the task's samples without its COMM/MMAP.
#include <linux/perf_event.h>

#include <cstring>
#include <memory>
#include <string>

#include "core/perf_data.h"
#include "core/records.h"
#include "gtest/gtest.h"
#include "model/perf_data_file.h"
#include "real/recorder.h"
#include "real/testing/record_testing.h"

namespace ringsim::real {
namespace {

constexpr std::uint64_t kSampleType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME;

// `n` samples {header, identifier, time} into the sink through mapping 0.
int put_samples(RecorderSink& sink, int n, std::uint64_t& time) {
  const std::span<std::byte> buffer = sink.acquire(0);
  EXPECT_GE(buffer.size(), static_cast<std::size_t>(n) * 24);
  for (int i = 0; i < n; i++) {
    const perf_event_header h{PERF_RECORD_SAMPLE, 0, 24};
    const std::uint64_t id = 11;
    std::memcpy(buffer.data() + i * 24, &h, 8);
    std::memcpy(buffer.data() + i * 24 + 8, &id, 8);
    std::memcpy(buffer.data() + i * 24 + 16, &time, 8);
    time++;
  }
  core::RecordCounts counts;
  const std::uint64_t bytes = static_cast<std::uint64_t>(n) * 24;
  core::walk_records(std::span<const std::byte>(buffer.data(), bytes), counts);
  return sink.commit(0, bytes, counts);
}

// A COMM record {pid, tid, "burn"} (no sample_id trailer: sample_id_all 0).
int put_comm(RecorderSink& sink) {
  const std::span<std::byte> buffer = sink.acquire(0);
  const perf_event_header h{PERF_RECORD_COMM, 0, 24};
  const std::uint32_t ids[2] = {42, 42};
  std::memcpy(buffer.data(), &h, 8);
  std::memcpy(buffer.data() + 8, ids, 8);
  std::memcpy(buffer.data() + 16, "burn\0\0\0\0", 8);
  core::RecordCounts counts;
  core::walk_records(std::span<const std::byte>(buffer.data(), 24), counts);
  return sink.commit(0, 24, counts);
}

TEST(RecorderSink, SizeRotationWaitsForARoundThatReadEveryRing) {
  const std::string dir = testing::temp_dir("sink-rotation");
  core::EventDescription event;
  event.attr.type = PERF_TYPE_SOFTWARE;
  event.attr.config = PERF_COUNT_SW_CPU_CLOCK;
  event.attr.sample_type = kSampleType;
  event.attr.sample_period = 1;
  event.ids = {11};
  const core::PerfDataHead head({event});
  core::WriterOptions options;
  options.mode = core::WriteMode::serial;
  options.mappings = 1;
  options.buffer_bytes = 16384;
  RealDisk disk(dir + "/perf.data", 1);
  std::unique_ptr<Writer> writer = std::make_unique<Writer>(disk, options, head);
  ASSERT_EQ(writer->start(), 0);
  Rotation r;
  r.keep_side_band = true;
  r.every_bytes = 4096;
  r.switch_file = [&] {
    const int finished = writer->finish();
    if (finished != 0) return finished;
    disk.set_index_base(disk.index_base() + writer->file_index() + 1);
    writer = std::make_unique<Writer>(disk, options, head);
    return writer->start();
  };
  r.on_new_file = [](std::uint32_t, bool) { return 0; };
  r.file_index = [&] { return disk.index_base() + writer->file_index(); };
  RecorderSink sink(writer, disk, head, 0, r);
  std::uint64_t time = 1;
  // 8 KiB of samples, past the size, in a round that left records in a
  // ring: no switch yet.
  ASSERT_EQ(put_samples(sink, 340, time), 0);
  ASSERT_EQ(sink.end_round(/*all_drained=*/false), 0);
  EXPECT_EQ(disk.paths().size(), 1u) << "switched at a round that left records unread";
  // The next round reads what was left (a COMM) and drains every ring: the
  // COMM is in the first file, the switch follows.
  ASSERT_EQ(put_comm(sink), 0);
  ASSERT_EQ(sink.end_round(/*all_drained=*/true), 0);
  ASSERT_EQ(disk.paths().size(), 2u) << "no switch at a drained round past the size";
  ASSERT_EQ(put_samples(sink, 10, time), 0);
  model::PerfDataFile first;  // finished at the switch
  ASSERT_EQ(model::read_perf_data(dir + "/perf.data", first), "");
  std::uint64_t comms = 0;
  std::uint64_t samples = 0;
  ASSERT_EQ(first.for_each_record([&](const model::PerfRecord& record) {
    comms += record.type == PERF_RECORD_COMM ? 1 : 0;
    samples += record.type == PERF_RECORD_SAMPLE ? 1 : 0;
  }),
            "");
  EXPECT_EQ(comms, 1u) << "the COMM read after the size was reached is the first file's";
  EXPECT_EQ(samples, 340u);
  // Past twice the size a ring never drained does not hold the switch.
  ASSERT_EQ(put_samples(sink, 400, time), 0);
  ASSERT_EQ(put_samples(sink, 10, time), 0);
  ASSERT_EQ(sink.end_round(/*all_drained=*/false), 0);
  EXPECT_EQ(disk.paths().size(), 3u) << "twice the size: switched even with a ring left unread";
  EXPECT_EQ(writer->finish(), 0);
}

}  // namespace
}  // namespace ringsim::real
