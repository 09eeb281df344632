// Feature sections: core's layout (core/perf_data_features.h) read back by
// the model's independent reader (model/perf_features.h); the trace writer
// writes them only in a file's final header; simulated runs write them and
// the file check (sim/feature_check.h) catches a wrong one.
#include <gtest/gtest.h>

#include <cstring>

#include "core/perf_data_features.h"
#include "core/testing/scripted_disk.h"
#include "core/trace_writer.h"
#include "model/perf_data_file.h"
#include "sim/config.h"
#include "sim/feature_check.h"
#include "sim/run.h"
#include "sim/sample.h"
#include "sim/sim_features.h"
#include "tests/test_util.h"

namespace ringsim {
namespace {

using core::testing::ScriptedDisk;

core::PerfDataHead head(std::uint32_t events) {
  std::vector<core::EventDescription> list;
  for (std::uint32_t e = 0; e < events; e++) {
    core::EventDescription d;
    d.attr.type = PERF_TYPE_SOFTWARE;
    d.attr.config = e;
    d.attr.sample_type = sim::kSampleType;
    d.attr.sample_id_all = 1;
    d.ids = {100 + 2 * e, 101 + 2 * e};
    d.name = e == 0 ? "cpu-clock" : "page-faults:u";
    list.push_back(d);
  }
  return core::PerfDataHead(list);
}

core::PerfFeatures features() {
  core::PerfFeatures f;
  f.host = sim::sim_host_features(2);
  f.host.hostname = "a-host-name-longer-than-sixty-three-characters-so-that-it-pads-to-128";
  f.host.cmdline = {"/usr/bin/ringsim-record", "-e", "cpu-clock,page-faults:u", "--", "ls"};
  f.host.clock_data = core::ClockData{1, 1'700'000'000'000'000'000, 123'456};
  core::BuildIdEntry user;
  user.id = {0xde, 0xad, 0xbe, 0xef};
  user.name = "/usr/lib/x86_64-linux-gnu/libc.so.6";
  f.file.build_ids = {sim::sim_kernel_build_id(), user};
  f.file.first_sample_ns = 5;
  f.file.last_sample_ns = 9;
  f.file.aux_recorded = true;
  f.file.auxtrace = {{4096, 48}, {8192, 48}};
  return f;
}

// A file of `head` with an empty data section and `f`'s sections after it.
std::vector<std::byte> file_with(const core::PerfDataHead& h, const core::PerfFeatures& f) {
  const core::FeatureSections s = core::feature_sections(f, h.events(), h.data_offset());
  std::vector<std::byte> file = h.bytes(0);
  const auto header = h.header(0, s.bitmap);
  std::memcpy(file.data(), header.data(), header.size());
  file.insert(file.end(), s.bytes.begin(), s.bytes.end());
  return file;
}

TEST(PerfFeatures, EverySectionReadsBackWithTheModelsReader) {
  const core::PerfDataHead h = head(2);
  const core::PerfFeatures f = features();
  const std::vector<std::byte> file = file_with(h, f);
  model::PerfDataFile parsed;
  ASSERT_EQ(model::parse_perf_data(file, parsed), "");
  const model::PerfFeatures& m = parsed.features;
  EXPECT_EQ(m.end, file.size());
  for (std::uint32_t bit : {2u, 3u, 4u, 5u, 6u, 7u, 8u, 9u, 10u, 11u, 12u, 13u, 14u, 18u, 21u, 23u, 29u}) {
    EXPECT_TRUE(m.has(bit)) << model::feature_name(bit);
  }
  EXPECT_EQ(m.table.size(), 17u);
  EXPECT_EQ(m.hostname, f.host.hostname);
  EXPECT_EQ(m.osrelease, "simulated");
  EXPECT_EQ(m.cpus_avail, 2u);
  EXPECT_EQ(m.cpus_online, 2u);
  EXPECT_EQ(m.total_mem_kib, f.host.total_mem_kib);
  EXPECT_EQ(m.cmdline, f.host.cmdline);
  ASSERT_EQ(m.events.size(), 2u);
  EXPECT_EQ(m.events[1].name, "page-faults:u");
  EXPECT_EQ(m.events[1].config, 1u);
  EXPECT_EQ(m.events[1].ids, (std::vector<std::uint64_t>{102, 103}));
  EXPECT_EQ(m.topology.thread_lists, (std::vector<std::string>{"0", "1"}));
  EXPECT_TRUE(m.topology.has_dies);
  EXPECT_EQ(m.topology.core_ids, (std::vector<std::uint32_t>{0, 1}));
  ASSERT_EQ(m.numa.size(), 1u);
  EXPECT_EQ(m.numa[0].cpu_list, "0-1");
  ASSERT_EQ(m.build_ids.size(), 2u);
  EXPECT_EQ(m.build_ids[0].misc, 0x8001);
  EXPECT_EQ(m.build_ids[0].name, "[kernel.kallsyms]");
  EXPECT_EQ(m.build_ids[1].misc, 0x8002);
  EXPECT_EQ(m.build_ids[1].id_hex, "deadbeef");
  EXPECT_EQ(m.build_ids[1].pid, -1);
  EXPECT_EQ(m.first_sample_ns, 5u);
  EXPECT_EQ(m.last_sample_ns, 9u);
  EXPECT_EQ(m.auxtrace.size(), 2u);
  EXPECT_EQ(m.clock_resolution_ns, 1u);
  EXPECT_EQ(m.clock_data_version, 1u);
  EXPECT_EQ(m.clock_tod_ns, 1'700'000'000'000'000'000u);
}

TEST(PerfFeatures, StringsArePaddedTo64AndSectionsPackedInBitOrder) {
  const core::PerfDataHead h = head(1);
  core::PerfFeatures f;
  f.host = sim::sim_host_features(1);
  const core::FeatureSections s = core::feature_sections(f, h.events(), 1000);
  // HOSTNAME ("ringsim-sim") is the first section: u32 64, then 64 bytes.
  const std::uint64_t first_offset = core::load<std::uint64_t>(s.bytes.data());
  const std::uint64_t first_size = core::load<std::uint64_t>(s.bytes.data() + 8);
  EXPECT_EQ(first_size, 68u);
  EXPECT_EQ(core::load<std::uint32_t>(s.bytes.data() + (first_offset - 1000)), 64u);
  // No BUILD_ID (none given), no AUXTRACE, no CLOCK_DATA: 14 sections.
  EXPECT_EQ(s.bitmap[0], (std::uint64_t{0x7ff8}) | (std::uint64_t{1} << 21) | (std::uint64_t{1} << 23));
  std::uint64_t previous_end = 1000 + 14 * 16;
  for (int i = 0; i < 14; i++) {
    const std::uint64_t offset = core::load<std::uint64_t>(s.bytes.data() + 16 * i);
    EXPECT_EQ(offset, previous_end) << "section " << i;
    previous_end = offset + core::load<std::uint64_t>(s.bytes.data() + 16 * i + 8);
  }
  EXPECT_EQ(previous_end, 1000 + s.bytes.size());
}

TEST(PerfFeatures, ModelRejectsAStringThatIsNotPerfs) {
  const core::PerfDataHead h = head(1);
  std::vector<std::byte> file = file_with(h, features());
  model::PerfDataFile parsed;
  ASSERT_EQ(model::parse_perf_data(file, parsed), "");
  const model::FeatureTableEntry hostname = parsed.features.table[1];
  ASSERT_EQ(hostname.bit, 3u);
  const std::uint32_t bad = 0x7fffffff;
  std::memcpy(file.data() + hostname.offset, &bad, sizeof bad);
  EXPECT_NE(model::parse_perf_data(file, parsed).find("HOSTNAME: string length 2147483647"), std::string::npos);
}

// acquire, copy in, commit: what the record loop does.
void push(core::TraceWriter<ScriptedDisk>& w, const std::vector<std::byte>& bytes) {
  const std::span<std::byte> buffer = w.acquire(0);
  ASSERT_FALSE(buffer.empty());
  std::memcpy(buffer.data(), bytes.data(), bytes.size());
  core::RecordCounts counts;
  ASSERT_EQ(core::walk_records(bytes, counts).error, core::RecordError::none);
  ASSERT_EQ(w.commit(0, bytes.size(), counts), 0);
}

core::WriterOptions serial() {
  core::WriterOptions o;
  o.mode = core::WriteMode::serial;
  o.mappings = 1;
  o.buffer_bytes = 4096;
  return o;
}

TEST(PerfFeatures, TheWriterSetsTheBitsOnlyInTheFinalHeader) {
  ScriptedDisk disk(1);
  const core::PerfDataHead h = head(1);
  core::TraceWriter<ScriptedDisk> w(disk, serial(), h);
  std::vector<core::FinishedFile> asked;
  w.set_feature_source([&](const core::FinishedFile& file, core::PerfFeatures& out) {
    asked.push_back(file);
    out.host = sim::sim_host_features(1);
    const std::vector<std::byte>& bytes = disk.files[file.index];
    return core::scan_data_section(std::span<const std::byte>(bytes).subspan(file.data_offset, file.data_bytes),
                                   file.data_offset, h.events(), out.file)
        .empty();
  });
  ASSERT_EQ(w.start(), 0);
  model::PerfDataFile parsed;
  ASSERT_EQ(model::parse_perf_data(disk.files[0], parsed), "");
  EXPECT_TRUE(parsed.features.table.empty()) << "the header written at the start has no feature bits";
  std::vector<std::byte> data = ringsim::testing::sample(64, 600);   // time 700
  const auto second = ringsim::testing::sample(48, 800);             // time 900
  data.insert(data.end(), second.begin(), second.end());
  push(w, data);
  ASSERT_EQ(w.finish(), 0);
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0].data_bytes, data.size());
  ASSERT_EQ(model::parse_perf_data(disk.files[0], parsed), "");
  EXPECT_EQ(parsed.features.first_sample_ns, 700u);
  EXPECT_EQ(parsed.features.last_sample_ns, 900u);
  EXPECT_EQ(parsed.features.hostname, "ringsim-sim");
  EXPECT_EQ(disk.files[0].size(), parsed.end());
  EXPECT_EQ(w.stats().files_with_features, 1u);
  EXPECT_EQ(w.stats().feature_bytes, parsed.end() - parsed.data_offset - parsed.data_size);
}

TEST(PerfFeatures, AFailedFeatureWriteLeavesTheFileValidWithoutThem) {
  ScriptedDisk disk(1);
  const core::PerfDataHead h = head(1);
  core::TraceWriter<ScriptedDisk> w(disk, serial(), h);
  w.set_feature_source([&](const core::FinishedFile&, core::PerfFeatures& out) {
    out.host = sim::sim_host_features(1);
    disk.sync_results.push_back(-ENOSPC);  // the feature write, after the data's
    return true;
  });
  ASSERT_EQ(w.start(), 0);
  const std::vector<std::byte> data = ringsim::testing::sample(64, 0, 0);
  push(w, data);
  EXPECT_EQ(w.finish(), -ENOSPC);
  EXPECT_NE(w.stats().error_context.find("feature sections"), std::string::npos) << w.stats().error_context;
  model::PerfDataFile parsed;
  ASSERT_EQ(model::parse_perf_data(disk.files[0], parsed), "");
  EXPECT_TRUE(parsed.features.table.empty());
  EXPECT_EQ(parsed.data_size, data.size());
  EXPECT_EQ(disk.files[0].size(), parsed.data_offset + parsed.data_size);
  EXPECT_EQ(w.stats().files_with_features, 0u);
}

sim::RunConfig to_disk(std::uint64_t seed, sim::Output output, std::uint64_t rotate_bytes) {
  sim::RunConfig c;
  c.seed = seed;
  c.output = output;
  c.rotate_bytes = rotate_bytes;
  return c;
}

TEST(PerfFeatures, SimulatedRunsWriteThemInEveryFile) {
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    for (const sim::Output output : {sim::Output::serial, sim::Output::aio}) {
      const sim::RunResult r = sim::run_simulation(to_disk(seed, output, 8192));
      EXPECT_TRUE(r.ok()) << r.first_property() << ": " << r.violations.front().detail;
      EXPECT_GE(r.files, 1u);
      EXPECT_EQ(r.writer.files_with_features, r.files) << "seed " << seed;
    }
  }
}

TEST(PerfFeatures, TheFileCheckCatchesAWrongFeature) {
  const core::PerfDataHead h = head(1);
  core::PerfFeatures f;
  f.host = sim::sim_host_features(2);
  f.file.build_ids = {sim::sim_kernel_build_id()};
  std::vector<std::string> problems;
  const auto collect = [&](const std::string& p) { problems.push_back(p); };
  model::PerfDataFile parsed;
  ASSERT_EQ(model::parse_perf_data(file_with(h, f), parsed), "");
  sim::check_file_features(parsed, 2, true, collect);
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
  parsed.features.events[0].name = "task-clock";
  sim::check_file_features(parsed, 2, true, collect);
  EXPECT_EQ(problems.size(), 1u) << "only EVENT_DESC's name differs: " << ::testing::PrintToString(problems);
  problems.clear();
  f.host.cpus_online = 1;
  f.file.first_sample_ns = 3;  // no sample in the data section
  ASSERT_EQ(model::parse_perf_data(file_with(h, f), parsed), "");
  sim::check_file_features(parsed, 2, true, collect);
  EXPECT_EQ(problems.size(), 2u) << ::testing::PrintToString(problems);
  problems.clear();
  ASSERT_EQ(model::parse_perf_data(h.bytes(0), parsed), "");
  sim::check_file_features(parsed, 2, true, collect);
  EXPECT_EQ(problems, std::vector<std::string>{"no feature sections in a file the writer finished"});
}

}  // namespace
}  // namespace ringsim
