// The sample-field and counting options against perf's own files of the
// same command line (Debian's linux-perf, /usr/bin/perf): -d (the page
// fault's address in ADDR, the data mappings), --phys-data, -W,
// --transaction, --user-regs, -I, --running-time, -n, -s; -b and -j, which
// the kernel refuses for software events (perf's line, no file).
//
// A field mis-sized or missing shifts every field after it: perf script
// then prints garbage or refuses the file, and the recorder's own readers
// (its summary, the model's read-back) miscount. So each test reads the
// file with perf script and the model, and compares with perf's file.
//
// No check depends on timing: the commands are short and deterministic
// (/bin/true's page faults: ld.so's data is always faulted in), and the
// deadlines only turn a hang into a failure.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/perf_data_reader.h"
#include "core/records.h"
#include "gtest/gtest.h"
#include "model/perf_data_file.h"
#include "real/mapped_file.h"
#include "real/recorder.h"
#include "real/tests/model_view.h"
#include "real/tests/perf_tools.h"
#include "real/testing/record_testing.h"

namespace ringsim::real {
namespace {

using testing::concat;
using testing::RunResult;

// Records `options -- command` with ours and with perf into dir/ours.data
// and dir/perf.data; both must succeed.
void record_both(const std::string& dir, const std::vector<std::string>& options,
                 const std::vector<std::string>& command) {
  const RunResult r = testing::run_record(concat(concat({"-q", "-o", dir + "/ours.data"}, options), concat({"--"}, command)));
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  const RunResult p = testing::run_perf_record(concat(
      concat({testing::perf_path(), "record", "-q", "-o", dir + "/perf.data"}, options), concat({"--"}, command)));
  ASSERT_TRUE(p.exited && p.exit_code == 0) << p.text();
}

// perf script's sample lines of `file` with these fields, the call chains
// hidden (-G; exit 0 required).
std::vector<std::string> script_lines(const std::string& file, const std::string& fields) {
  const RunResult s = testing::run({testing::perf_path(), "script", "-G", "-i", file, "-F", fields});
  EXPECT_TRUE(s.exited && s.exit_code == 0) << s.text();
  std::vector<std::string> out;
  std::size_t at = 0;
  // Bounded by the output's length: each step consumes one line.
  while (at < s.out.size()) {
    const std::size_t end = std::min(s.out.find('\n', at), s.out.size());
    if (end > at) out.push_back(s.out.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

// The data symbols perf resolves the samples' addresses to (-F addr,sym:
// "ADDR SYMBOL IP SYMBOL"; the second word).
std::set<std::string> data_symbols(const std::string& file) {
  std::set<std::string> out;
  for (const std::string& line : script_lines(file, "addr,ip,sym")) {
    const std::size_t first = line.find_first_not_of(' ');
    const std::size_t space = line.find(' ', first);
    if (space == std::string::npos) continue;
    const std::size_t second = line.find_first_not_of(' ', space);
    const std::size_t end = line.find(' ', second);
    if (second != std::string::npos) out.insert(line.substr(second, end - second));
  }
  return out;
}

// The model's read-back of `file`: no problem, and its sample count.
std::uint64_t model_samples(const std::string& file) {
  const testing::ModelView v = testing::model_view({file});
  EXPECT_EQ(v.problem, "") << file;
  return v.loss.samples;
}

// -d: a page fault's sample carries the faulting address (ADDR), and the
// data mappings are recorded (mmap_data), so perf resolves the address to
// ld.so's data (_rtld_global: /bin/true's dynamic loader always faults it
// in) in our file as in perf's.
TEST(RecordSampleFields, PageFaultAddressesResolveAsInPerfsFile) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("data-address");
  record_both(dir, {"-e", "page-faults", "-c", "1", "-d"}, {"/bin/true"});
  for (const char* who : {"ours", "perf"}) {
    SCOPED_TRACE(who);
    const std::string file = dir + "/" + who + ".data";
    const std::set<std::string> symbols = data_symbols(file);
    EXPECT_EQ(symbols.count("_rtld_global"), 1u) << ::testing::PrintToString(symbols);
    const std::vector<std::string> lines = script_lines(file, "addr");
    ASSERT_GT(lines.size(), 10u);
    for (const std::string& line : lines) {
      EXPECT_NE(line.find_first_not_of(" 0"), std::string::npos) << "a page fault at address 0: " << line;
    }
    EXPECT_EQ(model_samples(file), lines.size()) << "the model's walk of the same samples";
  }
}

// --data-page-size, --code-page-size: DATA_PAGE_SIZE and CODE_PAGE_SIZE,
// the last fields of a sample (after CGROUP): perf script prints both for
// every sample of ours as of its own file (it refuses a field whose bit is
// not set), the same sizes, and the model walks the same samples. The
// fields after a dwarf stack dump, moved by --cut-stacks, still read.
TEST(RecordSampleFields, PageSizesAreSampledAsPerfSamplesThem) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("page-sizes");
  // No -d: the data address is the kernel's (a page fault's), asked or not.
  const std::vector<std::string> options = {"-e", "page-faults", "-c", "1", "--data-page-size", "--code-page-size"};
  record_both(dir, options, {"/bin/true"});
  const std::string cut = dir + "/cut.data";
  const RunResult r = testing::run_record(
      concat(concat({"-q", "-o", cut, "--call-graph", "dwarf,1024", "--cut-stacks", "512"}, options), {"--", "/bin/true"}));
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  std::map<std::string, std::set<std::string>> sizes;  // file -> "data code" pairs seen
  for (const std::string& file : {dir + "/ours.data", dir + "/perf.data", cut}) {
    SCOPED_TRACE(file);
    const std::vector<std::string> lines = script_lines(file, "data_page_size,code_page_size");
    ASSERT_GT(lines.size(), 10u);
    for (const std::string& line : lines) {
      const std::size_t first = line.find_first_not_of(' ');
      ASSERT_NE(first, std::string::npos) << "an empty line";
      sizes[file].insert(line.substr(first));
    }
    EXPECT_EQ(model_samples(file), lines.size()) << "the model's walk of the same samples";
  }
  EXPECT_EQ(sizes[dir + "/ours.data"], sizes[dir + "/perf.data"]);
  EXPECT_EQ(sizes[cut], sizes[dir + "/perf.data"]);
}

// Every field at once (ADDR before CPU; DATA_SRC, PHYS_ADDR, WEIGHT_STRUCT,
// TRANSACTION, REGS_USER and REGS_INTR around the dwarf stack dump, cut by
// --cut-stacks: the fields after it move with the cut): perf prints the
// registers and the weight of every sample, as in its own file, and still
// unwinds.
TEST(RecordSampleFields, EveryFieldParsesInPerfAfterTheStackCut) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("every-field");
  const std::vector<std::string> options = {"-e", "page-faults", "-c", "1", "-d", "--phys-data", "-W",
                                            "--transaction", "--user-regs=sp,ip", "-I", "--running-time"};
  record_both(dir, options, {"/bin/true"});
  const std::string cut = dir + "/cut.data";
  const RunResult r = testing::run_record(
      concat(concat({"-q", "-o", cut, "--call-graph", "dwarf,1024", "--cut-stacks", "512"}, options), {"--", "/bin/true"}));
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  for (const std::string& file : {dir + "/ours.data", dir + "/perf.data", cut}) {
    SCOPED_TRACE(file);
    const std::vector<std::string> lines = script_lines(file, "ip,addr,phys_addr,weight,iregs,uregs");
    ASSERT_GT(lines.size(), 10u);
    std::uint64_t with_regs = 0;
    for (const std::string& line : lines) {
      with_regs += line.find("R15:0x") != std::string::npos && line.find("SP:0x") != std::string::npos;
    }
    EXPECT_EQ(with_regs, lines.size()) << "each sample's iregs (R15) and uregs (SP): " << lines.front();
    EXPECT_EQ(model_samples(file), lines.size());
  }
  const RunResult unwind = testing::run({testing::perf_path(), "script", "-i", cut});
  ASSERT_TRUE(unwind.exited && unwind.exit_code == 0) << unwind.text();
  EXPECT_NE(unwind.out.find("_dl_start"), std::string::npos) << unwind.out.substr(0, 2000);
}

// The CPU of every sample (after ADDR, before the fields after the dump)
// as the core's reader (core/perf_data_reader: the recorder's read-back)
// and the model's (model/perf_data_file: the tests' reference) find it,
// against perf script -F cpu of the same file.
std::vector<std::string> cpus_by_core(const std::string& file) {
  MappedFile mapped;
  core::PerfDataView view;
  EXPECT_EQ(mapped.map(file), "");
  EXPECT_EQ(core::read_perf_data(mapped.bytes(), view), "");
  std::vector<std::string> out;
  core::RecordCounts counts;
  core::walk_records(view.data, counts, [&](const perf_event_header& h, std::span<const std::byte> r) {
    std::uint32_t cpu = UINT32_MAX;
    if (h.type == PERF_RECORD_SAMPLE && view.cpu_of(h, r, cpu)) out.push_back(std::to_string(cpu));
  });
  return out;
}

std::vector<std::string> cpus_by_model(const std::string& file) {
  model::PerfDataFile parsed;
  EXPECT_EQ(model::read_perf_data(file, parsed), "");
  std::vector<std::string> out;
  parsed.for_each_record([&](const model::PerfRecord& r) {
    std::uint32_t cpu = UINT32_MAX;
    if (r.type == PERF_RECORD_SAMPLE && parsed.cpu_of(r, cpu)) out.push_back(std::to_string(cpu));
  });
  return out;
}

TEST(RecordSampleFields, TheReadersFindEachSamplesCpuAsPerfDoes) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("readers");
  const std::string out = dir + "/ours.data";
  const RunResult r = testing::run_record({"-q", "-o", out, "-e", "page-faults", "-c", "1", "-d", "--phys-data", "-W",
                                           "--transaction", "--user-regs=sp", "-I", "--", "/bin/sh", "-c",
                                           "/bin/true & /bin/true; wait"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.text();
  std::vector<std::string> by_perf;
  for (const std::string& line : script_lines(out, "cpu")) {
    const std::size_t open = line.find('['), close = line.find(']');
    ASSERT_TRUE(open != std::string::npos && close != std::string::npos) << line;
    by_perf.push_back(std::to_string(std::stoul(line.substr(open + 1, close - open - 1))));
  }
  ASSERT_GT(by_perf.size(), 20u);
  // perf script prints in time order, the file holds each CPU's chunks as
  // they were read (one reading thread per CPU): the same samples' CPUs,
  // compared as sorted lists (a field read at the wrong offset gives other
  // numbers, not the same ones in another order).
  std::vector<std::string> by_core = cpus_by_core(out);
  std::vector<std::string> by_model = cpus_by_model(out);
  std::sort(by_perf.begin(), by_perf.end());
  std::sort(by_core.begin(), by_core.end());
  std::sort(by_model.begin(), by_model.end());
  EXPECT_EQ(by_core, by_perf);
  EXPECT_EQ(by_model, by_perf);
}

// -n: no samples, the side-band records still there (perf script
// --show-task-events shows the command's exec), as perf's file; -s: perf
// report -T reads the per-thread counts (PERF_RECORD_READ at each task's
// exit) from ours as from perf's.
TEST(RecordSampleFields, NoSamplesAndPerThreadCountsAsPerfs) {
  REQUIRE_PERF();
  const std::vector<std::string> command = {"/bin/sh", "-c", "/bin/true; /bin/true"};
  const std::string dir = testing::temp_dir("counting");
  record_both(dir, {"-e", "task-clock", "-n"}, command);
  for (const char* who : {"ours", "perf"}) {
    SCOPED_TRACE(who);
    const std::string file = dir + "/" + who + ".data";
    EXPECT_EQ(model_samples(file), 0u);
    const RunResult s = testing::run({testing::perf_path(), "script", "-i", file, "--show-task-events"});
    EXPECT_NE(s.out.find("PERF_RECORD_COMM exec: true"), std::string::npos) << s.text();
  }
  const std::string stat_dir = testing::temp_dir("per-thread");
  record_both(stat_dir, {"-e", "task-clock", "-s"}, command);
  for (const char* who : {"ours", "perf"}) {
    SCOPED_TRACE(who);
    const RunResult t =
        testing::run({testing::perf_path(), "report", "-T", "--stdio", "-i", stat_dir + "/" + who + ".data"});
    ASSERT_TRUE(t.exited && t.exit_code == 0) << t.text();
    EXPECT_EQ(testing::lines_with(t.out, "TID  task-clock").size(), 1u) << "the per-thread table: " << t.out;
    const RunResult d = testing::run({testing::perf_path(), "report", "-D", "-i", stat_dir + "/" + who + ".data"});
    EXPECT_GE(testing::lines_with(d.out, "PERF_RECORD_READ").size(), 2u) << "the two /bin/true (and sh)";
  }
}

// -b and -j: the kernel has no branch stacks for a software event
// (EOPNOTSUPP), as for perf, whose line ours gives (exit 69, no file).
TEST(RecordSampleFields, BranchStacksAreRefusedByTheKernelAsForPerf) {
  REQUIRE_PERF();
  const std::string dir = testing::temp_dir("branch");
  for (const std::vector<std::string>& options :
       {std::vector<std::string>{"-b"}, {"-j", "any_call,u"}, {"-j", "u", "-e", "page-faults"}}) {
    SCOPED_TRACE(::testing::PrintToString(options));
    const std::string out = dir + "/ours.data";
    const RunResult r = testing::run_record(concat(concat({"-o", out}, options), {"--", "/bin/true"}));
    EXPECT_TRUE(r.exited && r.exit_code == kExitUnavailable) << r.text();
    const std::vector<std::string> errors = testing::lines_with(r.err, "ringsim-record: error:");
    ASSERT_EQ(errors.size(), 1u) << r.text();
    EXPECT_NE(errors[0].find("doesn't support branch stack sampling"), std::string::npos) << errors[0];
    EXPECT_FALSE(std::filesystem::exists(out)) << "no file";
    const RunResult p = testing::run_perf_record(
        concat(concat({testing::perf_path(), "record", "-o", dir + "/perf.data"}, options), {"--", "/bin/true"}));
    EXPECT_FALSE(p.exited && p.exit_code == 0) << p.text();
    EXPECT_NE(p.err.find("doesn't support branch stack sampling"), std::string::npos) << p.text();
  }
}

}  // namespace
}  // namespace ringsim::real
