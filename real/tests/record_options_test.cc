// The recorder's command line and the perf_event_attr it describes. No
// perf events are opened here.
#include <asm/perf_regs.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "real/record_options.h"
#include "real/sample_regs.h"
#include "real/tracepoints.h"

namespace ringsim::real {
namespace {

struct Parsed {
  int status = 0;
  RecordOptions options;
  std::string err;
  std::string out;
};

Parsed parse(std::vector<std::string> args) {
  args.insert(args.begin(), "ringsim-record");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::ostringstream err;
  std::ostringstream out;
  std::streambuf* old_err = std::cerr.rdbuf(err.rdbuf());
  std::streambuf* old_out = std::cout.rdbuf(out.rdbuf());
  Parsed p;
  p.status = parse_record_command_line(static_cast<int>(args.size()), argv.data(), p.options);
  std::cerr.rdbuf(old_err);
  std::cout.rdbuf(old_out);
  p.err = err.str();
  p.out = out.str();
  return p;
}

TEST(RecordOptions, DefaultsAreDocumented) {
  const Parsed p = parse({"--", "sleep", "1"});
  ASSERT_EQ(p.status, -1) << p.err;
  const RecordOptions& o = p.options;
  EXPECT_EQ(o.output, "perf.data");
  EXPECT_FALSE(o.system_wide);
  EXPECT_EQ(o.events, std::vector<std::string>{"cpu-clock"});
  EXPECT_TRUE(o.pids.empty());
  EXPECT_TRUE(o.tids.empty());
  EXPECT_EQ(o.cpu_list, "");
  EXPECT_EQ(o.buildid_dir, "");
  EXPECT_FALSE(o.no_buildid_cache);
  EXPECT_EQ(o.argv, (std::vector<std::string>{"ringsim-record", "--", "sleep", "1"}));
  EXPECT_EQ(o.freq_hz, 4000u);
  EXPECT_EQ(o.period, 0u);
  EXPECT_EQ(o.call_graph, CallGraph::none);
  EXPECT_EQ(o.mmap_pages, 128u);
  EXPECT_EQ(o.aio_cblocks, kAioDefault);
  EXPECT_FALSE(o.overwrite);
  EXPECT_EQ(o.switch_output_bytes, 0u);
  EXPECT_EQ(o.header_interval_ms, 10000u);
  EXPECT_EQ(o.realtime_priority, 0u);
  EXPECT_TRUE(o.staged);
  EXPECT_EQ(o.staging_bytes, 0u);  // the default size, from the rings
  EXPECT_EQ(o.reader_priority.kind, ThreadPriority::Kind::automatic);
  EXPECT_FALSE(o.reader_priority_given);
  EXPECT_EQ(o.cut_stacks, RecordOptions::CutStacks::off);
  EXPECT_EQ(o.command, (std::vector<std::string>{"sleep", "1"}));
}

TEST(RecordOptions, StagingReaderPriorityAndStackCutting) {
  Parsed p = parse({"--staging", "64M", "--reader-priority", "nice:-5", "--call-graph", "dwarf,4096", "--cut-stacks",
                    "1024", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_EQ(p.options.staging_bytes, std::uint64_t{64} << 20);
  EXPECT_EQ(p.options.reader_priority, (ThreadPriority{ThreadPriority::Kind::nice, -5}));
  EXPECT_EQ(p.options.cut_stacks, RecordOptions::CutStacks::always);
  EXPECT_EQ(p.options.cut_stack_bytes, 1024u);
  p = parse({"--staging", "off", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_FALSE(p.options.staged);
  p = parse({"--reader-priority", "fifo", "--call-graph", "dwarf", "--cut-stacks", "pressure", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_EQ(p.options.reader_priority, (ThreadPriority{ThreadPriority::Kind::fifo, 1}));
  EXPECT_EQ(p.options.cut_stacks, RecordOptions::CutStacks::pressure);
  p = parse({"--reader-priority", "off", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_EQ(p.options.reader_priority.kind, ThreadPriority::Kind::normal);
  EXPECT_TRUE(p.options.readers_per_cpu);  // the default
  p = parse({"--readers", "one", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_FALSE(p.options.readers_per_cpu);
  EXPECT_TRUE(p.options.readers_help);  // the default
  p = parse({"--readers", "cpu", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_TRUE(p.options.readers_per_cpu);
  EXPECT_TRUE(p.options.readers_help);
  p = parse({"--readers", "cpu-own", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_TRUE(p.options.readers_per_cpu);
  EXPECT_FALSE(p.options.readers_help);
  for (const auto& [args, says] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--staging", "4K", "--", "true"}, "outside 8K..64G"},
           {{"--staging", "lots", "--", "true"}, "--staging"},
           {{"--reader-priority", "fifo:0", "--", "true"}, "1..99"},
           {{"--reader-priority", "nice:-21", "--", "true"}, "-20..19"},
           {{"--reader-priority", "high", "--", "true"}, "auto, off, fifo[:N] or nice[:N]"},
           {{"--reader-priority", "auto:1", "--", "true"}, "takes no value"},
           {{"--readers", "2", "--", "true"}, "--readers 2: not cpu, cpu-own or one"},
           {{"--staging", "off", "--reader-priority", "fifo", "--", "true"}, "not --staging off"},
           {{"--cut-stacks", "1024", "--", "true"}, "needs --call-graph dwarf"},
           {{"--call-graph", "dwarf,4096", "--cut-stacks", "4096", "--", "true"}, "below the dump size"},
           {{"--call-graph", "dwarf,4096", "--cut-stacks", "100", "--", "true"}, "multiple of 8"},
           {{"--call-graph", "dwarf", "--staging", "off", "--cut-stacks", "pressure", "--", "true"}, "staging"},
       }) {
    const Parsed bad = parse(args);
    SCOPED_TRACE(::testing::PrintToString(args));
    EXPECT_EQ(bad.status, 64);
    EXPECT_NE(bad.err.find(says), std::string::npos) << bad.err;
    EXPECT_EQ(bad.err.find('\n'), bad.err.size() - 1) << "one line: " << bad.err;
  }
}

TEST(RecordOptions, EveryOption) {
  const Parsed p = parse({"-o", "x.data", "-a", "-e", "cs:u", "-c", "1000", "--call-graph", "dwarf,2048", "-m", "8",
                          "--aio", "4", "--overwrite", "--switch-output", "100M", "--header-interval-ms", "0", "-q", "-r", "7",
                          "--", "make", "-j2"});
  ASSERT_EQ(p.status, -1) << p.err;
  const RecordOptions& o = p.options;
  EXPECT_EQ(o.output, "x.data");
  EXPECT_TRUE(o.system_wide);
  EXPECT_EQ(o.events, std::vector<std::string>{"cs:u"});
  EXPECT_EQ(o.period, 1000u);
  EXPECT_EQ(o.call_graph, CallGraph::dwarf);
  EXPECT_EQ(o.dwarf_stack_bytes, 2048u);
  EXPECT_EQ(o.mmap_pages, 8u);
  EXPECT_EQ(o.aio_cblocks, 4u);
  EXPECT_TRUE(o.overwrite);
  EXPECT_EQ(o.switch_output_bytes, 100u << 20);
  EXPECT_EQ(o.header_interval_ms, 0u);
  EXPECT_TRUE(o.quiet);
  EXPECT_EQ(o.realtime_priority, 7u);
  EXPECT_EQ(o.command, (std::vector<std::string>{"make", "-j2"}));
}

TEST(RecordOptions, SeveralEventsTasksCpusAndTheBuildIdCache) {
  Parsed p = parse({"-e", "cpu-clock,page-faults", "-e", "cs:u", "-p", "12,34", "-p", "56", "--buildid-dir", "/tmp/c",
                    "--", "sleep", "1"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_EQ(p.options.events, (std::vector<std::string>{"cpu-clock", "page-faults", "cs:u"}));
  EXPECT_EQ(p.options.pids, (std::vector<int>{12, 34, 56}));
  EXPECT_EQ(p.options.buildid_dir, "/tmp/c");
  EXPECT_TRUE(p.options.attach());
  EXPECT_FALSE(p.options.command_target()) << "with -p the command only sets how long";
  p = parse({"-t", "7", "-N"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_EQ(p.options.tids, std::vector<int>{7});
  EXPECT_TRUE(p.options.no_buildid_cache);
  EXPECT_TRUE(p.options.command.empty());
  p = parse({"-C", "0,1"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_EQ(p.options.cpu_list, "0,1");
  EXPECT_TRUE(p.options.cpu_wide());
}

TEST(RecordOptions, CommandWithoutDashDashAndItsOwnOptions) {
  Parsed p = parse({"-a", "sleep", "1", "-o", "not-ours"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_EQ(p.options.command, (std::vector<std::string>{"sleep", "1", "-o", "not-ours"}));
  EXPECT_EQ(p.options.output, "perf.data");
  p = parse({"-g", "-a"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_TRUE(p.options.command.empty());
  EXPECT_EQ(p.options.call_graph, CallGraph::fp);
  p = parse({"--", "--weird-command"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_EQ(p.options.command, (std::vector<std::string>{"--weird-command"}));
}

// -F above /proc/sys/kernel/perf_event_max_sample_rate: lowered to it,
// the frequency asked kept for the warning line, as perf; --strict-freq
// refuses (the errors test below).
TEST(RecordOptions, AFrequencyAboveTheMaximumIsLoweredUnlessStrict) {
  std::ifstream in("/proc/sys/kernel/perf_event_max_sample_rate");
  std::uint64_t max_rate = 0;
  if (!(in >> max_rate) || max_rate == 0) GTEST_SKIP() << "no perf_event_max_sample_rate here";
  const std::string above = std::to_string(max_rate + 1);
  Parsed p = parse({"-F", above, "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_EQ(p.options.freq_hz, max_rate);
  EXPECT_EQ(p.options.freq_lowered_from, max_rate + 1);
  p = parse({"-F", std::to_string(max_rate), "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_EQ(p.options.freq_hz, max_rate);
  EXPECT_EQ(p.options.freq_lowered_from, 0u);
  p = parse({"-F", above, "--strict-freq", "--", "true"});
  EXPECT_EQ(p.status, 64);
  EXPECT_NE(p.err.find("--strict-freq refuses"), std::string::npos) << p.err;
}

// --group, as perf's evlist__set_leader: every event in group 0 (the
// first its leader); one event alone is no group; with {...} refused.
TEST(RecordOptions, GroupPutsEveryEventInOneGroup) {
  Parsed p = parse({"--group", "-e", "cpu-clock,page-faults", "-e", "task-clock", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_EQ(p.options.event_groups, (std::vector<int>{0, 0, 0}));
  p = parse({"--group", "-e", "cpu-clock", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_TRUE(std::none_of(p.options.event_groups.begin(), p.options.event_groups.end(), [](int g) { return g >= 0; }));
  p = parse({"-e", "cpu-clock,page-faults", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_TRUE(std::none_of(p.options.event_groups.begin(), p.options.event_groups.end(), [](int g) { return g >= 0; }));
  p = parse({"--group", "-e", "{cpu-clock,page-faults},task-clock", "--", "true"});
  EXPECT_EQ(p.status, 64);
  EXPECT_NE(p.err.find("--group with groups"), std::string::npos) << p.err;
}

TEST(RecordOptions, ErrorsAreOneLineWithExitStatus64) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--bogus", "--", "true"},
           {"-x", "true"},
           {"-m", "6", "--", "true"},
           {"-m", "2097152", "--", "true"},
           {"--aio", "-1", "--", "true"},
           {"--aio", "5", "--", "true"},
           {"-F", "0", "--", "true"},
           {"-F", "1000000000", "--strict-freq", "--", "true"},
           {"--max-size", "12Q", "--", "true"},
           {"--max-size", "", "--", "true"},
           {"--switch-max-files", "", "--switch-output", "1s", "--", "true"},
           {"-c", "9223372036854775808", "--", "true"},
           {"-e", "nope", "--", "true"},
           {"--switch-output", "abc", "-a"},
           {"--switch-output", "2K", "-a"},
           {"--call-graph", "dwarf,0", "--", "true"},
           {"-r", "0", "--", "true"},
           {"-r", "100", "--", "true"},
           {"-a", "stray", "--", "true"},
           {},
           {"-e", "cpu-clock,bogus", "--", "true"},
           {"-e", "", "--", "true"},
           {"-p", "0"},
           {"-p", "x"},
           {"-p", "1,x", "--", "true"},
           {"-t", "-5"},
           {"-p", "1", "-t", "2"},
           {"-p", "1", "-a"},
           {"-t", "1", "-C", "0"},
           {"-a", "-C", "0"},
           {"-o", "-", "--aio", "2", "--", "true"},
           {"-o", "-", "--switch-output", "--", "true"},
           {"-o", "-", "--overwrite", "--", "true"},
       }) {
    const Parsed p = parse(args);
    SCOPED_TRACE(::testing::PrintToString(args));
    EXPECT_EQ(p.status, 64);
    EXPECT_EQ(p.err.rfind("ringsim-record: error: ", 0), 0u) << p.err;
    EXPECT_EQ(p.err.find('\n'), p.err.size() - 1) << "one line: " << p.err;
  }
}

// --switch-output as perf 6.1's switch_output_setup reads it: signal (also
// bare), a size (upper-case suffix), or a time (s, m, h, d: 2m is two
// minutes, as perf, not 2 MiB); ours also ms. --switch-max-files=N.
TEST(RecordOptions, SwitchOutputTakesPerfsSignalSizeAndTimeForms) {
  struct Case {
    std::vector<std::string> args;
    bool signal;
    std::uint64_t bytes;
    std::uint64_t ns;
  };
  for (const Case& c : std::vector<Case>{
           {{"--switch-output=signal", "-a"}, true, 0, 0},
           {{"--switch-output", "-a"}, true, 0, 0},
           {{"-a", "--switch-output"}, true, 0, 0},
           {{"--switch-output", "--", "true"}, true, 0, 0},
           {{"--switch-output=100M", "-a"}, false, 100u << 20, 0},
           {{"--switch-output", "64K", "-a"}, false, 64u << 10, 0},
           {{"--switch-output=1s", "-a"}, false, 0, 1'000'000'000},
           {{"--switch-output=2m", "-a"}, false, 0, 120'000'000'000},
           {{"--switch-output=1h", "-a"}, false, 0, 3'600'000'000'000},
           {{"--switch-output=1d", "-a"}, false, 0, 86'400'000'000'000},
           {{"--switch-output=100ms", "-a"}, false, 0, 100'000'000},
       }) {
    const Parsed p = parse(c.args);
    SCOPED_TRACE(::testing::PrintToString(c.args));
    ASSERT_EQ(p.status, -1) << p.err;
    EXPECT_EQ(p.options.switch_output_signal, c.signal);
    EXPECT_EQ(p.options.switch_output_bytes, c.bytes);
    EXPECT_EQ(p.options.switch_output_ns, c.ns);
    EXPECT_TRUE(p.options.rotates());
  }
  const Parsed kept = parse({"--switch-output=1s", "--switch-max-files=5", "-a"});
  ASSERT_EQ(kept.status, -1) << kept.err;
  EXPECT_EQ(kept.options.switch_max_files, 5u);
  const Parsed overwrite = parse({"--overwrite", "--switch-max-files", "3", "-a"});
  ASSERT_EQ(overwrite.status, -1) << overwrite.err;
  EXPECT_EQ(overwrite.options.switch_max_files, 3u);
  EXPECT_FALSE(overwrite.options.staged) << "--overwrite reads each snapshot on one thread";
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"--switch-output=banana", "-a"},
           {"--switch-output=100", "-a"},
           {"--switch-output=1ms", "-a"},
           {"--switch-output=31d", "-a"},
           {"--switch-output=s", "-a"},
           {"--switch-output=signal", "--switch-max-files=-1", "-a"},
           {"--switch-output=signal", "--switch-max-files=x", "-a"},
           {"--switch-max-files=2", "-a"},
       }) {
    const Parsed p = parse(bad);
    SCOPED_TRACE(::testing::PrintToString(bad));
    EXPECT_EQ(p.status, 64);
    EXPECT_NE(p.err.find(bad[0].substr(0, bad[0].find('=')) == "--switch-output" && bad.size() == 2
                             ? "--switch-output="
                             : "--switch-max-files"),
              std::string::npos)
        << p.err;
    EXPECT_EQ(p.err.find('\n'), p.err.size() - 1) << "one line: " << p.err;
  }
}

TEST(RecordOptions, HelpReturnsZero) {
  const Parsed p = parse({"--help"});
  EXPECT_EQ(p.status, 0);
  EXPECT_NE(p.out.find("--switch-output"), std::string::npos);
  EXPECT_TRUE(p.err.empty());
}

TEST(RecordOptions, EventNamesAndModifiers) {
  perf_event_attr attr{};
  for (const EventName& e : event_names()) {
    EXPECT_EQ(parse_event(e.name, attr), "") << e.name;
    EXPECT_EQ(attr.type, e.type);
    EXPECT_EQ(attr.config, e.config);
    EXPECT_EQ(attr.exclude_kernel, 0u);
  }
  ASSERT_EQ(parse_event("page-faults:u", attr), "");
  EXPECT_EQ(attr.config, static_cast<std::uint64_t>(PERF_COUNT_SW_PAGE_FAULTS));
  EXPECT_EQ(attr.exclude_kernel, 1u);
  EXPECT_EQ(attr.exclude_user, 0u);
  EXPECT_EQ(attr.exclude_hv, 1u);
  ASSERT_EQ(parse_event("cpu-clock:k", attr), "");
  EXPECT_EQ(attr.exclude_user, 1u);
  EXPECT_EQ(attr.exclude_kernel, 0u);
  ASSERT_EQ(parse_event("cpu-clock:uk", attr), "");
  EXPECT_EQ(attr.exclude_user, 0u);
  EXPECT_EQ(attr.exclude_kernel, 0u);
  EXPECT_NE(parse_event("cpu-clock:", attr), "");
  // perf 6.1's get_event_modifier, flag by flag.
  ASSERT_EQ(parse_event("cpu-clock:ppp", attr), "");
  EXPECT_EQ(attr.precise_ip, 3u);
  EXPECT_EQ(attr.exclude_guest, 1u) << "p asks for exclude_guest";
  EXPECT_EQ(attr.exclude_kernel, 0u);
  ASSERT_EQ(parse_event("cpu-clock:P", attr), "");
  EXPECT_EQ(attr.precise_ip, 3u);
  ASSERT_EQ(parse_event("cpu-clock:H", attr), "");
  EXPECT_EQ(attr.exclude_guest, 1u);
  EXPECT_EQ(attr.exclude_host, 0u);
  EXPECT_EQ(attr.precise_ip, 0u) << "reset from the earlier parse";
  ASSERT_EQ(parse_event("cpu-clock:G", attr), "");
  EXPECT_EQ(attr.exclude_guest, 0u);
  EXPECT_EQ(attr.exclude_host, 1u);
  ASSERT_EQ(parse_event("cpu-clock:kh", attr), "");
  EXPECT_EQ(attr.exclude_user, 1u);
  EXPECT_EQ(attr.exclude_kernel, 0u);
  EXPECT_EQ(attr.exclude_hv, 0u);
  ASSERT_EQ(parse_event("task-clock:uDeI", attr), "");
  EXPECT_EQ(attr.pinned, 1u);
  EXPECT_EQ(attr.exclusive, 1u);
  EXPECT_EQ(attr.exclude_idle, 1u);
  for (const char* bad : {"cpu-clock:pppp", "cpu-clock:b", "cpu-clock:x"}) {
    EventModifiers extra;
    const std::string problem = parse_event(bad, attr, &extra);
    EXPECT_NE(problem.find("modifier"), std::string::npos) << bad << ": " << problem;
  }
  // S and W are -e's: where no one takes them (--switch-output-event), refused.
  EventModifiers extra;
  ASSERT_EQ(parse_event("cpu-clock:uSW", attr, &extra), "");
  EXPECT_TRUE(extra.sample_read);
  EXPECT_TRUE(extra.weak_group);
  EXPECT_EQ(attr.exclude_kernel, 1u);
  for (const char* only_e : {"cpu-clock:S", "cpu-clock:W"}) {
    const std::string problem = parse_event(only_e, attr);
    EXPECT_NE(problem.find("is for -e's events only"), std::string::npos) << only_e << ": " << problem;
  }
}

// Hardware breakpoints as perf 6.1's parse_events_add_breakpoint (perf
// record -vv's attrs for each form): rw and 4 bytes by default, 8 for x;
// each hit sampled (period 1, no PERIOD) unless -c or -F; named as perf
// names them (mem:ADDR without its length); bad forms one line.
TEST(RecordOptions, BreakpointsAsPerfs) {
  struct Case {
    const char* event;
    unsigned type;
    std::uint64_t len;
    unsigned exclude_kernel;
    const char* name;
  };
  for (const Case& c : {Case{"mem:0x1000", HW_BREAKPOINT_RW, 4, 0, "mem:0x1000"},
                        Case{"mem:0x1000/8:w", HW_BREAKPOINT_W, 8, 0, "mem:0x1000"},
                        Case{"mem:0x1000:x", HW_BREAKPOINT_X, sizeof(long), 0, "mem:0x1000:x"},
                        Case{"mem:4096:rw:u", HW_BREAKPOINT_RW, 4, 1, "mem:4096:rw:u"},
                        Case{"mem:0x1000:u", HW_BREAKPOINT_RW, 4, 1, "mem:0x1000:u"},
                        Case{"mem:0x1000/2", HW_BREAKPOINT_RW, 2, 0, "mem:0x1000"}}) {
    const Parsed p = parse({"-e", c.event, "--", "true"});
    ASSERT_EQ(p.status, -1) << c.event << ": " << p.err;
    std::vector<EventAttr> attrs;
    ASSERT_EQ(make_attrs(p.options, attrs), "") << c.event;
    const perf_event_attr& a = attrs[0].attr;
    EXPECT_EQ(a.type, std::uint32_t{PERF_TYPE_BREAKPOINT}) << c.event;
    EXPECT_EQ(a.bp_addr, 0x1000u) << c.event;
    EXPECT_EQ(a.bp_type, c.type) << c.event;
    EXPECT_EQ(a.bp_len, c.len) << c.event;
    EXPECT_EQ(a.exclude_kernel, c.exclude_kernel) << c.event;
    EXPECT_EQ(a.sample_period, 1u) << c.event;
    EXPECT_EQ(a.freq, 0u) << c.event;
    EXPECT_EQ(a.sample_type & PERF_SAMPLE_PERIOD, 0u) << c.event;
    EXPECT_EQ(attrs[0].name, c.name);
  }
  Parsed p = parse({"-e", "mem:0x1000", "-c", "3", "--", "true"});
  std::vector<EventAttr> attrs;
  ASSERT_EQ(make_attrs(p.options, attrs), "");
  EXPECT_EQ(attrs[0].attr.sample_period, 3u);
  p = parse({"-e", "mem:0x1000", "-F", "99", "--", "true"});
  ASSERT_EQ(make_attrs(p.options, attrs), "");
  EXPECT_EQ(attrs[0].attr.freq, 1u);
  EXPECT_EQ(attrs[0].attr.sample_freq, 99u);
  // In a group: the group's modifiers after the access, with their ':'.
  p = parse({"-e", "{mem:0x1000:w,cpu-clock}:u", "--", "true"});
  ASSERT_EQ(make_attrs(p.options, attrs), "");
  EXPECT_EQ(attrs[0].attr.bp_type, std::uint32_t{HW_BREAKPOINT_W});
  EXPECT_EQ(attrs[0].attr.exclude_kernel, 1u);
  EXPECT_EQ(attrs[0].name, "mem:0x1000:w");
  for (const char* bad : {"mem:", "mem:x", "mem:0x1000/y", "mem:0x1000:w:u:k", "mem:0x1000:rr", "mem:0x1000:"}) {
    perf_event_attr attr{};
    EventModifiers extra;
    const std::string problem = parse_event(bad, attr, &extra);
    EXPECT_FALSE(problem.empty()) << bad;
    EXPECT_EQ(problem.find('\n'), std::string::npos) << problem;
  }
  EXPECT_FALSE(is_tracepoint("mem:0x1000:w"));
  EXPECT_TRUE(is_breakpoint("mem:0x1000:w"));
}

// A group's modifiers as perf 6.1 applies them: to each member's attr as
// it already is, where a member without modifiers of its own excludes
// guests (perf evlist -v of perf's files: {cpu-clock,page-faults}:k and
// {cpu-clock:k,page-faults}:S exclude guests on page-faults; the group's G
// or H decide for themselves).
TEST(RecordOptions, AGroupsModifiersKeepAMembersExcludeGuestAsPerf) {
  struct Case {
    const char* events;
    unsigned leader, member;  // exclude_guest
  };
  for (const Case& c : {Case{"{cpu-clock,page-faults}:k", 1, 1}, Case{"{cpu-clock:k,page-faults}:S", 0, 1},
                        Case{"{cpu-clock:G,page-faults}:k", 0, 1}, Case{"{cpu-clock,page-faults}:G", 0, 0},
                        Case{"{cpu-clock,page-faults}:H", 1, 1}, Case{"{cpu-clock,page-faults}:u", 1, 1}}) {
    const Parsed p = parse({"-e", c.events, "--", "true"});
    ASSERT_EQ(p.status, -1) << c.events << ": " << p.err;
    std::vector<EventAttr> attrs;
    ASSERT_EQ(make_attrs(p.options, attrs), "") << c.events;
    ASSERT_EQ(attrs.size(), 2u);
    EXPECT_EQ(attrs[0].attr.exclude_guest, c.leader) << c.events;
    EXPECT_EQ(attrs[1].attr.exclude_guest, c.member) << c.events;
  }
}

// The modifier S as perf 6.1's evsel__config (perf record -vv's attrs):
// READ and the ids; a group's read (GROUP) without inherit, its members
// not sampling and sampling the leader's fields; alone, inherit kept.
TEST(RecordOptions, SampleReadAsPerfsLeaderSampling) {
  Parsed p = parse({"-e", "{cpu-clock,page-faults}:S", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  std::vector<EventAttr> attrs;
  ASSERT_EQ(make_attrs(p.options, attrs), "");
  ASSERT_EQ(attrs.size(), 2u);
  for (const EventAttr& e : attrs) {
    EXPECT_NE(e.attr.sample_type & PERF_SAMPLE_READ, 0u) << e.name;
    EXPECT_EQ(e.attr.read_format & (PERF_FORMAT_GROUP | PERF_FORMAT_ID), std::uint64_t{PERF_FORMAT_GROUP | PERF_FORMAT_ID})
        << e.name;
    EXPECT_EQ(e.attr.inherit, 0u) << e.name;
  }
  EXPECT_EQ(attrs[0].attr.freq, 1u);
  EXPECT_EQ(attrs[0].attr.sample_freq, 4000u);
  EXPECT_EQ(attrs[1].leader, 0);
  EXPECT_EQ(attrs[1].attr.freq, 0u);
  EXPECT_EQ(attrs[1].attr.sample_period, 0u);
  EXPECT_EQ(attrs[1].attr.sample_type, attrs[0].attr.sample_type);
  // Without S: no READ, inherit as ever.
  p = parse({"-e", "{cpu-clock,page-faults}", "--", "true"});
  ASSERT_EQ(make_attrs(p.options, attrs), "");
  EXPECT_EQ(attrs[0].attr.sample_type & PERF_SAMPLE_READ, 0u);
  EXPECT_EQ(attrs[1].attr.inherit, 1u);
  EXPECT_EQ(attrs[1].attr.freq, 1u);
  // One event: its own value, no group read, inherit kept.
  p = parse({"-e", "cpu-clock:S", "--", "true"});
  ASSERT_EQ(make_attrs(p.options, attrs), "");
  ASSERT_EQ(attrs.size(), 1u);
  EXPECT_NE(attrs[0].attr.sample_type & PERF_SAMPLE_READ, 0u);
  EXPECT_EQ(attrs[0].attr.read_format & PERF_FORMAT_GROUP, 0u);
  EXPECT_NE(attrs[0].attr.read_format & PERF_FORMAT_ID, 0u);
  EXPECT_EQ(attrs[0].attr.inherit, 1u);
  // W marks the weak group's members (the recorder breaks it up if refused).
  p = parse({"-e", "{cpu-clock,page-faults:D}:W", "--", "true"});
  ASSERT_EQ(make_attrs(p.options, attrs), "");
  EXPECT_TRUE(attrs[1].weak_group);
  EXPECT_EQ(attrs[1].attr.pinned, 1u);
  EXPECT_EQ(attrs[1].attr.sample_type & PERF_SAMPLE_READ, 0u);
  // Where S cannot be: one line each.
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"-e", "{cpu-clock,page-faults}:S", "--overwrite", "--", "true"},
        std::vector<std::string>{"-e", "cpu-clock:S", "--call-graph", "dwarf", "--cut-stacks", "pressure", "--", "true"}}) {
    p = parse(bad);
    ASSERT_EQ(p.status, -1) << p.err;
    const std::string problem = make_attrs(p.options, attrs);
    EXPECT_NE(problem.find("the modifier S (sample read) with --"), std::string::npos) << bad[2] << ": " << problem;
  }
  p = parse({"--switch-output-event", "cpu-clock:S", "--", "true"});
  EXPECT_EQ(p.status, 64);
  EXPECT_NE(p.err.find("--switch-output-event: cpu-clock:S: modifier 'S' (sample read) is for -e's events only"),
            std::string::npos)
      << p.err;
}

// Host only (exclude_guest) as perf 6.1 sets it: by default, and with a
// modifier list only when it has u (get_event_modifier: 'u' sets it, 'k'
// does not; the side-by-side harness found -e cpu-clock:k differing).
TEST(RecordOptions, ExcludeGuestAsPerfsModifiers) {
  RecordOptions o;
  o.command = {"true"};
  for (const auto& [event, exclude_guest] : {std::pair{"cpu-clock", 1u}, std::pair{"cpu-clock:u", 1u},
                                             std::pair{"cpu-clock:k", 0u}, std::pair{"page-faults:uk", 1u},
                                             std::pair{"page-faults:ku", 1u}, std::pair{"cs:k", 0u}}) {
    o.events = {event};
    std::vector<EventAttr> attrs;
    ASSERT_EQ(make_attrs(o, attrs), "") << event;
    EXPECT_EQ(attrs[0].attr.exclude_guest, exclude_guest) << event;
  }
}

TEST(RecordOptions, UnknownEventsAreNamed) {
  perf_event_attr attr{};
  const std::string unknown = parse_event("cpu-clok", attr);
  EXPECT_NE(unknown.find("unknown event \"cpu-clok\""), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("task-clock"), std::string::npos) << "lists the events: " << unknown;
}

// --switch-events, --all-user, --all-kernel, -P, -R: the attr bits perf
// 6.1's evsel__config sets for them.
TEST(RecordOptions, SwitchEventsAllUserAllKernelPeriodAndRawAsPerf) {
  const Parsed p = parse({"-e", "cpu-clock:k,page-faults", "--switch-events", "--all-user", "-P", "-R", "-c", "1000",
                          "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  std::vector<EventAttr> attrs;
  ASSERT_EQ(make_attrs(p.options, attrs), "");
  ASSERT_EQ(attrs.size(), 2u);
  EXPECT_EQ(attrs[0].attr.context_switch, 1u) << "on the tracking event";
  EXPECT_EQ(attrs[1].attr.context_switch, 0u);
  for (const EventAttr& a : attrs) {
    EXPECT_EQ(a.attr.exclude_kernel, 1u) << a.name << ": --all-user over :k";
    EXPECT_EQ(a.attr.exclude_user, 0u) << a.name;
    EXPECT_EQ(a.attr.sample_type & (PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW), PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW);
    EXPECT_EQ(a.attr.sample_period, 1000u);
  }
  const Parsed k = parse({"--all-kernel", "--", "true"});
  ASSERT_EQ(k.status, -1) << k.err;
  ASSERT_EQ(make_attrs(k.options, attrs), "");
  EXPECT_EQ(attrs[0].attr.exclude_user, 1u);
  EXPECT_EQ(attrs[0].attr.exclude_kernel, 0u);
  const Parsed both = parse({"--all-kernel", "--all-user", "--", "true"});
  EXPECT_EQ(both.status, 64);
  EXPECT_NE(both.err.find("exclude each other"), std::string::npos) << both.err;
}

TEST(RecordOptions, DashOIsPipeModeAndAPipeAsStdoutToo) {
  const Parsed p = parse({"-o", "-", "-z", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_TRUE(p.options.pipe_output());
  const Parsed file = parse({"-o", "x.data", "--", "true"});
  ASSERT_EQ(file.status, -1) << file.err;
  EXPECT_FALSE(file.options.pipe_output());
  // No -o, standard output a pipe: the stream goes to it, as perf decides.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const int saved = ::dup(STDOUT_FILENO);
  ::dup2(fds[1], STDOUT_FILENO);
  const Parsed piped = parse({"--", "true"});
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  ::close(fds[0]);
  ::close(fds[1]);
  ASSERT_EQ(piped.status, -1) << piped.err;
  EXPECT_TRUE(piped.options.pipe_output());
}

TEST(RecordOptions, TracepointsAreToldFromEventsWithModifiers) {
  EXPECT_FALSE(is_tracepoint("cpu-clock"));
  EXPECT_FALSE(is_tracepoint("cpu-clock:u"));
  EXPECT_TRUE(is_tracepoint("sched:sched_switch"));
  EXPECT_TRUE(is_tracepoint("sched:sched_switch:k"));
  if (tracefs_root().empty() || ::access((tracefs_root() + "/events/sched/sched_switch/id").c_str(), R_OK) != 0) {
    GTEST_SKIP() << "no readable tracefs: mount -t tracefs nodev /sys/kernel/tracing (as root)";
  }
  std::ifstream id_file(tracefs_root() + "/events/sched/sched_switch/id");
  std::uint64_t id = 0;
  ASSERT_TRUE(id_file >> id);
  perf_event_attr attr{};
  ASSERT_EQ(parse_event("sched:sched_switch", attr), "");
  EXPECT_EQ(attr.type, std::uint32_t{PERF_TYPE_TRACEPOINT});
  EXPECT_EQ(attr.config, id);
  EXPECT_EQ(attr.exclude_guest, 1u);
  EXPECT_NE(parse_event("sched:sched_*", attr).find("tracepoints, not one"), std::string::npos) << "a glob is expanded first";
  std::vector<std::string> expanded;
  ASSERT_EQ(expand_events({"sched:sched_switch*", "cpu-clock:u"}, expanded), "");
  ASSERT_GE(expanded.size(), 2u);
  EXPECT_NE(std::find(expanded.begin(), expanded.end(), "sched:sched_switch"), expanded.end());
  EXPECT_EQ(expanded.back(), "cpu-clock:u");
  // perf's sampling: every event, with its fields; -F overrides.
  RecordOptions o;
  o.command = {"true"};
  o.events = {"sched:sched_switch"};
  std::vector<EventAttr> attrs;
  ASSERT_EQ(make_attrs(o, attrs), "");
  EXPECT_EQ(attrs[0].attr.freq, 0u);
  EXPECT_EQ(attrs[0].attr.sample_period, 1u);
  EXPECT_EQ(attrs[0].attr.sample_type & (PERF_SAMPLE_RAW | PERF_SAMPLE_PERIOD), PERF_SAMPLE_RAW | PERF_SAMPLE_PERIOD);
  EXPECT_EQ(attrs[0].name, "sched:sched_switch");
  // Named as perf names it, without its modifiers (perf evlist of perf's
  // file: sched:sched_switch for -e sched:sched_switch:u); the modifiers
  // still apply.
  o.events = {"sched:sched_switch:u", "cpu-clock:k"};
  ASSERT_EQ(make_attrs(o, attrs), "");
  EXPECT_EQ(attrs[0].name, "sched:sched_switch");
  EXPECT_EQ(attrs[0].attr.exclude_kernel, 1u);
  EXPECT_EQ(attrs[1].name, "cpu-clock:k");
  o.events = {"sched:sched_switch"};
  o.freq_given = true;
  o.freq_hz = 99;
  ASSERT_EQ(make_attrs(o, attrs), "");
  EXPECT_EQ(attrs[0].attr.freq, 1u);
  EXPECT_EQ(attrs[0].attr.sample_freq, 99u);
}

TEST(RecordOptions, SizesAndCallGraphs) {
  std::uint64_t bytes = 0;
  EXPECT_EQ(parse_size("100M", bytes), "");
  EXPECT_EQ(bytes, 100ull << 20);
  EXPECT_EQ(parse_size("4096", bytes), "");
  EXPECT_EQ(bytes, 4096u);
  EXPECT_EQ(parse_size("2g", bytes), "");
  EXPECT_EQ(bytes, 2ull << 30);
  EXPECT_EQ(parse_size("7B", bytes), "");
  EXPECT_EQ(bytes, 7u);
  for (const char* bad : {"", "M", "-1M", "1.5M", "1MB", "99999999999999999999", "20000000T"}) {
    EXPECT_NE(parse_size(bad, bytes), "") << bad;
  }
  CallGraph mode = CallGraph::none;
  std::uint32_t stack = 0;
  EXPECT_EQ(parse_call_graph("fp", mode, stack), "");
  EXPECT_EQ(mode, CallGraph::fp);
  EXPECT_EQ(parse_call_graph("dwarf", mode, stack), "");
  EXPECT_EQ(mode, CallGraph::dwarf);
  EXPECT_EQ(stack, 8192u);
  EXPECT_EQ(parse_call_graph("dwarf,65528", mode, stack), "");
  EXPECT_EQ(stack, 65528u);
  for (const char* bad : {"dwarf,", "dwarf,0", "dwarf,65536", "dwarf,12", "dwarf,x", "lbr", "frame", ""}) {
    EXPECT_NE(parse_call_graph(bad, mode, stack), "") << bad;
  }
}

// The first event's attr.
std::string make_attr(const RecordOptions& o, perf_event_attr& attr) {
  std::vector<EventAttr> attrs;
  const std::string problem = make_attrs(o, attrs);
  if (problem.empty()) attr = attrs.at(0).attr;
  return problem;
}

TEST(RecordOptions, AttrForACommand) {
  RecordOptions o;
  o.command = {"true"};
  o.freq_hz = 999;
  perf_event_attr attr{};
  ASSERT_EQ(make_attr(o, attr), "");
  EXPECT_EQ(attr.use_clockid, 1u);
  EXPECT_EQ(attr.clockid, CLOCK_MONOTONIC);
  EXPECT_EQ(attr.size, sizeof(perf_event_attr));
  EXPECT_EQ(attr.type, static_cast<std::uint32_t>(PERF_TYPE_SOFTWARE));
  EXPECT_EQ(attr.config, static_cast<std::uint64_t>(PERF_COUNT_SW_CPU_CLOCK));
  EXPECT_EQ(attr.freq, 1u);
  EXPECT_EQ(attr.sample_freq, 999u);
  EXPECT_EQ(attr.sample_type, static_cast<std::uint64_t>(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                                         PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD));
  EXPECT_EQ(attr.sample_id_all, 1u);
  EXPECT_EQ(attr.disabled, 1u);
  EXPECT_EQ(attr.inherit, 1u);
  EXPECT_EQ(attr.enable_on_exec, 1u);
  EXPECT_EQ(attr.mmap, 1u);
  EXPECT_EQ(attr.mmap2, 1u);
  EXPECT_EQ(attr.comm, 1u);
  EXPECT_EQ(attr.comm_exec, 1u);
  EXPECT_EQ(attr.task, 1u);
  EXPECT_EQ(attr.mmap_data, 0u) << "data mappings only for dwarf, as perf";
  EXPECT_EQ(attr.exclude_guest, 1u);
  EXPECT_EQ(attr.write_backward, 0u);
}

// A fixed period (-c): no PERF_SAMPLE_PERIOD, as perf (the kernel would
// sample a software event at every occurrence otherwise: issue 22).
// perf's spellings (issue 19): -m with a size, -F max, a bare --aio.
TEST(RecordOptions, PerfSpellingsOfSizesFrequencyAndAio) {
  Parsed p = parse({"-m", "8M", "-o", "x.data", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_EQ(p.options.mmap_pages, 2048u);
  p = parse({"-m", "64K", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_EQ(p.options.mmap_pages, 16u);
  p = parse({"-m", "12K", "--", "true"});  // 3 pages
  EXPECT_EQ(p.status, 64);
  p = parse({"-m", "5000B", "--", "true"});  // not whole pages
  EXPECT_EQ(p.status, 64);
  p = parse({"-F", "max", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_GT(p.options.freq_hz, 0u);
  p = parse({"-F", "fast", "--", "true"});
  EXPECT_EQ(p.status, 64);
  p = parse({"--aio", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_EQ(p.options.aio_cblocks, 1u);
  p = parse({"--aio", "-o", "x.data", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_EQ(p.options.aio_cblocks, 1u);
  EXPECT_EQ(p.options.output, "x.data");
  p = parse({"--aio", "3", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_EQ(p.options.aio_cblocks, 3u);
  p = parse({"--aio=2", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_EQ(p.options.aio_cblocks, 2u);
}

// perf command lines that failed (issue 19): -g with --call-graph (the
// latter wins, as perf), -k monotonic, -T, --sample-cpu, --no-inherit; the
// options not supported are refused naming the option.
TEST(RecordOptions, PerfCommandLinesThatFailedBefore) {
  Parsed p = parse({"-g", "--call-graph", "dwarf", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_EQ(p.options.call_graph, CallGraph::dwarf);
  p = parse({"-k", "CLOCK_MONOTONIC", "-T", "--sample-cpu", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  p = parse({"-k", "monotonic", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  p = parse({"--no-inherit", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  perf_event_attr attr{};
  ASSERT_EQ(make_attr(p.options, attr), "");
  EXPECT_EQ(attr.inherit, 0u);
  // -u, -G, --control: taken as perf takes them (each checked in its own
  // test); -G without -a is perf's error.
  p = parse({"-u", "0", "-G", "/", "-a", "-e", "cpu-clock,page-faults"});
  ASSERT_EQ(p.status, 64) << "-u with -a";
  p = parse({"-G", "/", "-a", "-e", "cpu-clock,page-faults"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_EQ(p.options.cgroups, (std::vector<std::string>{"/", "/"})) << "one cgroup: every event's";
  p = parse({"-G", ",x", "-a", "-e", "cpu-clock,page-faults"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_EQ(p.options.cgroups, (std::vector<std::string>{"", "x"})) << "in -e order; an empty one: none";
  p = parse({"-G", "/", "--", "true"});
  EXPECT_EQ(p.status, 64);
  EXPECT_NE(p.err.find("only available in system-wide mode"), std::string::npos) << p.err;
  p = parse({"-u", "0", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_EQ(p.options.uid, 0);
  EXPECT_TRUE(p.options.attach());
}

// -k as perf's parse_clockid: the five clocks by name, short name, CLOCK_
// prefix (any case) or number, into every event's attr; anything else one
// line, status 64 (perf: "unknown clockid", or the kernel's EINVAL for a
// number it does not take).
TEST(RecordOptions, ClockidTakesPerfsNamesForTheFiveClocks) {
  const std::pair<const char*, int> good[] = {
      {"monotonic", CLOCK_MONOTONIC},    {"mono", CLOCK_MONOTONIC},          {"CLOCK_MONOTONIC", CLOCK_MONOTONIC},
      {"monotonic_raw", CLOCK_MONOTONIC_RAW}, {"raw", CLOCK_MONOTONIC_RAW}, {"clock_monotonic_raw", CLOCK_MONOTONIC_RAW},
      {"realtime", CLOCK_REALTIME},      {"Real", CLOCK_REALTIME},           {"0", CLOCK_REALTIME},
      {"boottime", CLOCK_BOOTTIME},      {"boot", CLOCK_BOOTTIME},           {"7", CLOCK_BOOTTIME},
      {"tai", CLOCK_TAI},                {"CLOCK_TAI", CLOCK_TAI},           {"11", CLOCK_TAI}};
  for (const auto& [text, clock] : good) {
    SCOPED_TRACE(text);
    const Parsed p = parse({"-k", text, "-e", "cpu-clock,page-faults", "--", "true"});
    ASSERT_EQ(p.status, -1) << p.err;
    EXPECT_EQ(p.options.clockid, clock);
    std::vector<EventAttr> attrs;
    ASSERT_EQ(make_attrs(p.options, attrs), "");
    for (const EventAttr& a : attrs) {
      EXPECT_EQ(a.attr.use_clockid, 1u);
      EXPECT_EQ(a.attr.clockid, clock);
    }
  }
  EXPECT_EQ(parse({"--", "true"}).options.clockid, CLOCK_MONOTONIC) << "the default";
  for (const char* bad : {"2", "3", "5", "12", "-1", "CLOCK_1", "monotonic_coarse", "clock_", "", "1x"}) {
    SCOPED_TRACE(bad);
    const Parsed p = parse({"-k", bad, "--", "true"});
    EXPECT_EQ(p.status, 64);
    EXPECT_EQ(p.err.rfind("ringsim-record: error: -k ", 0), 0u) << p.err;
    EXPECT_EQ(p.err.find('\n'), p.err.size() - 1) << "one line: " << p.err;
  }
}

// -D/--delay as perf's (issue 19): a dummy event first takes the side-band
// records and starts at exec; the events asked for wait (no
// enable_on_exec) for the delay, or with -1 until --control enables them;
// values out of range are refused naming the option.
TEST(RecordOptions, DelayPutsASideBandDummyFirstAndHoldsTheEvents) {
  Parsed p = parse({"-D", "250", "-e", "cpu-clock,page-faults", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_EQ(p.options.delay_ms, 250u);
  std::vector<EventAttr> attrs;
  ASSERT_EQ(make_attrs(p.options, attrs), "");
  ASSERT_EQ(attrs.size(), 3u);
  EXPECT_EQ(attrs[0].name, "dummy:HG");
  EXPECT_EQ(attrs[0].attr.config, static_cast<std::uint64_t>(PERF_COUNT_SW_DUMMY));
  EXPECT_EQ(attrs[0].attr.exclude_kernel, 0u);
  EXPECT_EQ(attrs[1].name, "cpu-clock");
  for (const EventAttr& e : attrs) {
    const bool first = &e == &attrs[0];
    EXPECT_EQ(e.attr.mmap, first ? 1u : 0u) << e.name;
    EXPECT_EQ(e.attr.comm, first ? 1u : 0u) << e.name;
    EXPECT_EQ(e.attr.enable_on_exec, first ? 1u : 0u) << e.name;
    EXPECT_EQ(e.attr.disabled, 1u) << e.name;
    EXPECT_EQ(e.attr.sample_type, attrs[0].attr.sample_type) << e.name;
  }
  p = parse({"--delay=10", "-e", "cpu-clock:u", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  ASSERT_EQ(make_attrs(p.options, attrs), "");
  ASSERT_EQ(attrs.size(), 2u);
  EXPECT_EQ(attrs[0].name, "dummy:u");
  EXPECT_EQ(attrs[0].attr.exclude_kernel, 1u) << "user space only: no kernel permission needed";
  p = parse({"-D", "0", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  ASSERT_EQ(make_attrs(p.options, attrs), "");
  EXPECT_EQ(attrs.size(), 1u) << "-D 0: no delay, no dummy";
  // -1: every event but the dummy waits (for --control's enable), as perf.
  p = parse({"-D", "-1", "--control", "fifo:ctl,ack", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_TRUE(p.options.start_disabled);
  EXPECT_EQ(p.options.control, "fifo:ctl,ack");
  ASSERT_EQ(make_attrs(p.options, attrs), "");
  ASSERT_EQ(attrs.size(), 2u);
  EXPECT_EQ(attrs[0].name, "dummy:HG");
  EXPECT_EQ(attrs[0].attr.enable_on_exec, 1u);
  EXPECT_EQ(attrs[1].attr.enable_on_exec, 0u);
  for (const char* bad : {"-2", "x", "3600001", ""}) {
    p = parse({"-D", bad, "--", "true"});
    EXPECT_EQ(p.status, 64) << bad;
    EXPECT_NE(p.err.find("-D"), std::string::npos) << bad << ": " << p.err;
  }
}

// -z/--compression-level as perf's -z[=n]: bare is level 1; a level out
// of 1..22 is one line naming the option and the range; -z needs the
// staging buffer (the writer thread compresses).
TEST(RecordOptions, CompressionLevel) {
  Parsed p = parse({"--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_EQ(p.options.compression_level, 0);
  for (const auto& [args, level] : std::vector<std::pair<std::vector<std::string>, int>>{
           {{"-z"}, 1},
           {{"--compression-level"}, 1},
           {{"-z", "3"}, 3},
           {{"-z7"}, 7},
           {{"--compression-level=22"}, 22},
           {{"--compression-level", "5"}, 5},
           {{"-z", "-a"}, 1}}) {
    std::vector<std::string> a = args;
    a.insert(a.end(), {"--", "true"});
    p = parse(a);
    ASSERT_EQ(p.status, -1) << args[0] << ": " << p.err;
    EXPECT_EQ(p.options.compression_level, level) << args[0];
  }
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"-z", "0"}, {"-z23"}, {"--compression-level=100"}, {"--compression-level=fast"}}) {
    std::vector<std::string> a = bad;
    a.insert(a.end(), {"--", "true"});
    p = parse(a);
    EXPECT_EQ(p.status, 64) << bad[0];
    EXPECT_NE(p.err.find("-z/--compression-level"), std::string::npos) << p.err;
    EXPECT_NE(p.err.find("1..22"), std::string::npos) << p.err;
    EXPECT_EQ(std::count(p.err.begin(), p.err.end(), '\n'), 1) << p.err;
  }
  p = parse({"-z", "--staging", "off", "--", "true"});
  EXPECT_EQ(p.status, 64);
  EXPECT_NE(p.err.find("needs the staging buffer"), std::string::npos) << p.err;
}

TEST(RecordOptions, AFixedPeriodLeavesThePeriodOutOfTheSample) {
  RecordOptions o;
  o.command = {"true"};
  o.period = 10000;
  perf_event_attr attr{};
  ASSERT_EQ(make_attr(o, attr), "");
  EXPECT_EQ(attr.freq, 0u);
  EXPECT_EQ(attr.sample_period, 10000u);
  EXPECT_EQ(attr.sample_type & PERF_SAMPLE_PERIOD, 0u);
}

TEST(RecordOptions, AttrSystemWideWithCallChainsAndOverwrite) {
  RecordOptions o;
  o.system_wide = true;
  o.period = 12345;
  o.call_graph = CallGraph::fp;
  o.overwrite = true;
  perf_event_attr attr{};
  ASSERT_EQ(make_attr(o, attr), "");
  EXPECT_EQ(attr.freq, 0u);
  EXPECT_EQ(attr.sample_period, 12345u);
  EXPECT_NE(attr.sample_type & PERF_SAMPLE_CALLCHAIN, 0u);
  EXPECT_EQ(attr.sample_type & PERF_SAMPLE_STACK_USER, 0u);
  EXPECT_EQ(attr.inherit, 0u);
  EXPECT_EQ(attr.enable_on_exec, 0u);
  EXPECT_EQ(attr.write_backward, 1u);

  o.call_graph = CallGraph::dwarf;
  o.dwarf_stack_bytes = 2048;
  ASSERT_EQ(make_attr(o, attr), "");
  EXPECT_NE(attr.sample_type & PERF_SAMPLE_CALLCHAIN, 0u);
  EXPECT_NE(attr.sample_type & PERF_SAMPLE_REGS_USER, 0u);
  EXPECT_NE(attr.sample_type & PERF_SAMPLE_STACK_USER, 0u);
  EXPECT_EQ(attr.sample_stack_user, 2048u);
  EXPECT_NE(attr.sample_regs_user, 0u);
  EXPECT_EQ(attr.exclude_callchain_user, 1u);
  // perf 6.1's sample_address for DWARF unwind: data mappings (issue 19),
  // not its ADDR and DATA_SRC samples (D14).
  EXPECT_EQ(attr.mmap_data, 1u);
  EXPECT_EQ(attr.sample_type & (PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC), 0u);
}

// Issue 19: the data mappings with dwarf, from the first event (the one that
// asks for side-band records), as perf sets mmap_data on its tracking event.
TEST(RecordOptions, DwarfAsksTheFirstEventForDataMappings) {
  RecordOptions o;
  o.command = {"true"};
  o.events = {"cpu-clock", "page-faults"};
  for (const CallGraph mode : {CallGraph::none, CallGraph::fp, CallGraph::dwarf}) {
    o.call_graph = mode;
    std::vector<EventAttr> attrs;
    ASSERT_EQ(make_attrs(o, attrs), "");
    ASSERT_EQ(attrs.size(), 2u);
    EXPECT_EQ(attrs[0].attr.mmap_data, mode == CallGraph::dwarf ? 1u : 0u);
    EXPECT_EQ(attrs[1].attr.mmap_data, 0u);
  }
}

TEST(RecordOptions, SeveralEventsShareTheirSamplingAndOnlyTheFirstAsksForSideBand) {
  RecordOptions o;
  o.command = {"true"};
  o.events = {"cpu-clock", "page-faults:u", "context-switches"};
  o.period = 10;
  std::vector<EventAttr> attrs;
  ASSERT_EQ(make_attrs(o, attrs), "");
  ASSERT_EQ(attrs.size(), 3u);
  EXPECT_EQ(attrs[1].name, "page-faults:u");
  EXPECT_EQ(attrs[1].attr.config, static_cast<std::uint64_t>(PERF_COUNT_SW_PAGE_FAULTS));
  EXPECT_EQ(attrs[1].attr.exclude_kernel, 1u);
  for (const EventAttr& e : attrs) {
    EXPECT_EQ(e.attr.sample_type, attrs[0].attr.sample_type) << e.name;
    EXPECT_NE(e.attr.sample_type & PERF_SAMPLE_IDENTIFIER, 0u) << e.name;
    EXPECT_EQ(e.attr.sample_period, 10u);
    EXPECT_EQ(e.attr.inherit, 1u);
    EXPECT_EQ(e.attr.enable_on_exec, 1u);
    const bool first = &e == &attrs[0];
    EXPECT_EQ(e.attr.mmap, first ? 1u : 0u) << e.name;
    EXPECT_EQ(e.attr.comm, first ? 1u : 0u) << e.name;
    EXPECT_EQ(e.attr.task, first ? 1u : 0u) << e.name;
  }
}

TEST(RecordOptions, AttachingInheritsForProcessesNotForThreads) {
  RecordOptions o;
  o.pids = {1};
  perf_event_attr attr{};
  ASSERT_EQ(make_attr(o, attr), "");
  EXPECT_EQ(attr.inherit, 1u);
  EXPECT_EQ(attr.enable_on_exec, 0u);
  o.pids.clear();
  o.tids = {1};
  o.command = {"sleep", "1"};  // only how long
  ASSERT_EQ(make_attr(o, attr), "");
  EXPECT_EQ(attr.inherit, 0u);
  EXPECT_EQ(attr.enable_on_exec, 0u);
}

}  // namespace
}  // namespace ringsim::real

namespace ringsim::real {
namespace {

constexpr std::uint64_t kAllRegs = 0xff0fff;  // x86_64's PERF_REGS_MASK: perf evlist's sample_regs_*

// The sample-field options as perf 6.1's evsel__config sets them (perf
// evlist -v of perf's own files: docs/recorder.md, side by side): -d ADDR
// and DATA_SRC and mmap_data on the tracking event, --phys-data PHYS_ADDR,
// -W WEIGHT_STRUCT (x86), --transaction TRANSACTION, --user-regs REGS_USER,
// -I REGS_INTR, --running-time the TOTAL_TIMEs in read_format, -s
// inherit_stat and those with ID.
TEST(RecordOptions, SampleFieldOptionsSetPerfsBits) {
  const Parsed p = parse({"-e", "page-faults,cpu-clock", "-d", "--phys-data", "-W", "--transaction",
                          "--user-regs=ax,Sp", "-IIP,r15", "--running-time", "-s", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  std::vector<EventAttr> attrs;
  ASSERT_EQ(make_attrs(p.options, attrs), "");
  ASSERT_EQ(attrs.size(), 2u);
  for (const EventAttr& a : attrs) {
    SCOPED_TRACE(a.name);
    const std::uint64_t want = PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_PHYS_ADDR |
                               PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_REGS_INTR;
    EXPECT_EQ(a.attr.sample_type & want, want);
#if defined(__x86_64__)
    EXPECT_NE(a.attr.sample_type & PERF_SAMPLE_WEIGHT_STRUCT, 0u);
    EXPECT_EQ(a.attr.sample_type & PERF_SAMPLE_WEIGHT, 0u) << "one or the other";
    EXPECT_EQ(a.attr.sample_regs_user, (1u << PERF_REG_X86_AX) | (1u << PERF_REG_X86_SP));
    EXPECT_EQ(a.attr.sample_regs_intr, (1u << PERF_REG_X86_IP) | (1u << PERF_REG_X86_R15));
#endif
    EXPECT_EQ(a.attr.read_format & (PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID),
              std::uint64_t{PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID});
    EXPECT_EQ(a.attr.inherit_stat, 1u);
    EXPECT_EQ(a.attr.sample_type & PERF_SAMPLE_BRANCH_STACK, 0u);
  }
  EXPECT_EQ(attrs[0].attr.mmap_data, 1u) << "-d: the data mappings, on the tracking event";
  EXPECT_EQ(attrs[1].attr.mmap_data, 0u);
  // --running-time alone: no ID (ours reads no counter by its id: D3).
  const Parsed r = parse({"--running-time", "--", "true"});
  ASSERT_EQ(r.status, -1) << r.err;
  ASSERT_EQ(make_attrs(r.options, attrs), "");
  EXPECT_EQ(attrs[0].attr.read_format, std::uint64_t{PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING});
  EXPECT_EQ(attrs[0].attr.inherit_stat, 0u);
}

// --user-regs and -I as perf's OPTARG options: bare (every register of
// PERF_REGS_MASK), a value only attached (--user-regs=..., -I...), '?'
// lists the names (to stdout, status 0). With dwarf the user registers are
// both sets (all).
TEST(RecordOptions, RegisterListsAsPerfs) {
  Parsed p = parse({"--user-regs", "-I", "-e", "cpu-clock", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  std::vector<EventAttr> attrs;
  ASSERT_EQ(make_attrs(p.options, attrs), "");
#if defined(__x86_64__)
  EXPECT_EQ(attrs[0].attr.sample_regs_user, kAllRegs);
  EXPECT_EQ(attrs[0].attr.sample_regs_intr, kAllRegs);
#endif
  // The next argument is not the option's value (perf's): it is the command.
  p = parse({"--user-regs", "ax"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_EQ(p.options.command, std::vector<std::string>{"ax"});
  for (const char* list : {"--user-regs=?", "-I?", "--intr-regs=?"}) {
    p = parse({list});
    EXPECT_EQ(p.status, 0) << list << ": " << p.err;
  }
#if defined(__x86_64__)
  p = parse({"--user-regs=sp", "--call-graph", "dwarf", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  ASSERT_EQ(make_attrs(p.options, attrs), "");
  EXPECT_EQ(attrs[0].attr.sample_regs_user, kAllRegs);
  EXPECT_EQ(sample_regs_list(),
            "available registers: AX BX CX DX SI DI BP SP IP FLAGS CS SS R8 R9 R10 R11 R12 R13 R14 R15");
  std::uint64_t mask = 0;
  EXPECT_NE(parse_sample_regs("--user-regs", "ds", mask), "") << "a segment register: not in PERF_REGS_MASK";
#endif
}

// -n: the events count, never sample (perf: sample_freq 0, the union with
// the period), whatever -F, -c or a tracepoint's period 1 said.
TEST(RecordOptions, NoSamplesCountsOnly) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"-n", "--", "true"},
                                               {"-n", "-c", "10", "-e", "page-faults", "--", "true"},
                                               {"--no-samples", "-F", "99", "--", "true"}}) {
    const Parsed p = parse(args);
    ASSERT_EQ(p.status, -1) << p.err;
    std::vector<EventAttr> attrs;
    ASSERT_EQ(make_attrs(p.options, attrs), "");
    EXPECT_EQ(attrs[0].attr.sample_period, 0u) << ::testing::PrintToString(args);
  }
}

// -b is -j any; -j's kinds ORed, privilege levels alone mean any branch
// (perf 6.1's parse_branch_str); not on the -D dummy (perf resets it there).
TEST(RecordOptions, BranchStacksAsPerfsFilters) {
  struct Case {
    std::vector<std::string> args;
    std::uint64_t mode;
  };
  for (const Case& c : {Case{{"-b"}, PERF_SAMPLE_BRANCH_ANY},
                        Case{{"-j", "u"}, PERF_SAMPLE_BRANCH_ANY},
                        Case{{"-j", "any_call,u"}, PERF_SAMPLE_BRANCH_ANY_CALL | PERF_SAMPLE_BRANCH_USER},
                        Case{{"--branch-filter=cond,stack"}, PERF_SAMPLE_BRANCH_COND | PERF_SAMPLE_BRANCH_CALL_STACK}}) {
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"-D", "10", "--", "true"});
    const Parsed p = parse(args);
    ASSERT_EQ(p.status, -1) << p.err;
    std::vector<EventAttr> attrs;
    ASSERT_EQ(make_attrs(p.options, attrs), "");
    ASSERT_EQ(attrs.size(), 2u);
    EXPECT_EQ(attrs[0].attr.sample_type & PERF_SAMPLE_BRANCH_STACK, 0u) << "the dummy";
    EXPECT_NE(attrs[1].attr.sample_type & PERF_SAMPLE_BRANCH_STACK, 0u);
    EXPECT_EQ(attrs[1].attr.branch_sample_type, c.mode) << ::testing::PrintToString(c.args);
  }
}

TEST(RecordOptions, BadSampleFieldValuesAreOneLineWithExitStatus64) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--control", "fifo:", "--", "true"},
           {"--control", "fd:", "--", "true"},
           {"--control", "fd:1,", "--", "true"},
           {"--control", "socket:x", "--", "true"},
           {"--user-regs=foo", "--", "true"},
           {"--user-regs=ax,", "--", "true"},
           {"--user-regs=ax", "--user-regs=bx", "--", "true"},
           {"-Ids", "--", "true"},
           {"-j", "foo", "--", "true"},
           {"-j", "any,", "--", "true"},
           {"-j", "any", "-j", "u", "--", "true"},
           {"-b", "-j", "any", "--", "true"},
       }) {
    const Parsed p = parse(args);
    SCOPED_TRACE(::testing::PrintToString(args));
    EXPECT_EQ(p.status, 64);
    EXPECT_EQ(p.err.rfind("ringsim-record: error: ", 0), 0u) << p.err;
    EXPECT_EQ(p.err.find('\n'), p.err.size() - 1) << "one line: " << p.err;
  }
}


// --filter and --exclude-perf: each event's parts in the order given, on
// the tracepoints of the last item of the -e before each (a glob's every
// one); composed as perf appends them.
TEST(RecordOptions, FiltersAndExcludePerfAreKeptInOrderAndAndedAsPerfs) {
  using Part = RecordOptions::FilterPart;
  const std::vector<pid_t> own = {7, 9};
  EXPECT_EQ(compose_filter({}, own), "");
  EXPECT_EQ(compose_filter({Part{"a", false}}, own), "a");
  EXPECT_EQ(compose_filter({Part{"", true}}, own), "common_pid != 7 && common_pid != 9");
  EXPECT_EQ(compose_filter({Part{"a", false}, Part{"", true}, Part{"b", false}}, own),
            "((a) && (common_pid != 7 && common_pid != 9)) && (b)");
  if (tracefs_root().empty() || ::access((tracefs_root() + "/events/syscalls").c_str(), R_OK) != 0) {
    GTEST_SKIP() << "no readable tracefs: mount -t tracefs nodev /sys/kernel/tracing (as root)";
  }
  const Parsed p = parse({"-e", "cpu-clock", "-e", "syscalls:sys_enter_write*", "--filter", "fd == 1",
                          "--exclude-perf", "--filter", "count > 1", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  ASSERT_GE(p.options.events.size(), 3u) << "cpu-clock, sys_enter_write, sys_enter_writev";
  ASSERT_EQ(p.options.event_filters.size(), p.options.events.size());
  EXPECT_TRUE(p.options.event_filters[0].empty()) << "cpu-clock: no filter";
  for (std::size_t e = 1; e < p.options.events.size(); e++) {
    EXPECT_EQ(p.options.event_filters[e], (std::vector<Part>{{"fd == 1", false}, {"", true}, {"count > 1", false}}))
        << p.options.events[e];
  }
  const Parsed no_e = parse({"--exclude-perf", "-e", "syscalls:sys_enter_write", "--", "true"});
  EXPECT_EQ(no_e.status, 64);
  EXPECT_NE(no_e.err.find("--exclude-perf: give it after the -e"), std::string::npos) << no_e.err;
}

// --synth as perf's parse_synth_opt.
TEST(RecordOptions, SynthTakesPerfsKinds) {
  struct Case {
    std::string value;
    bool tasks;
    bool mmaps;
    bool cgroups;
  };
  for (const Case& c : std::vector<Case>{{"all", true, true, true},
                                         {"no", false, false, false},
                                         {"none", false, false, false},
                                         {"task", true, false, false},
                                         {"mmap", true, true, false},
                                         {"Task,MMAP", true, true, false},
                                         {"cgroup", false, false, true},
                                         {"task,cgroup", true, false, true},
                                         {"task,no,mmap", false, false, false},
                                         {"cgroup,all,bogus", true, true, true}}) {
    SCOPED_TRACE(c.value);
    const Parsed p = parse({"--synth", c.value, "--", "true"});
    ASSERT_EQ(p.status, -1) << p.err;
    EXPECT_EQ(p.options.synth_tasks, c.tasks);
    EXPECT_EQ(p.options.synth_mmaps, c.mmaps);
    EXPECT_EQ(p.options.synth_cgroups, c.cgroups);
  }
  const Parsed d = parse({"--", "true"});
  EXPECT_TRUE(d.options.synth_tasks && d.options.synth_mmaps && d.options.synth_cgroups) << "all by default";
  // --all-cgroups: CGROUP in every event's samples, attr.cgroup on the
  // side-band (first) event only, as perf's evsel__config.
  const Parsed cg = parse({"--all-cgroups", "-e", "cpu-clock,page-faults", "--", "true"});
  ASSERT_EQ(cg.status, -1) << cg.err;
  std::vector<EventAttr> attrs;
  ASSERT_EQ(make_attrs(cg.options, attrs), "");
  ASSERT_EQ(attrs.size(), 2u);
  for (const EventAttr& a : attrs) EXPECT_NE(a.attr.sample_type & PERF_SAMPLE_CGROUP, 0u) << a.name;
  EXPECT_EQ(attrs[0].attr.cgroup, 1u);
  EXPECT_EQ(attrs[1].attr.cgroup, 0u);
  for (const std::string bad : {"bogus", "task,", "", "task,bogus"}) {
    SCOPED_TRACE(bad);
    const Parsed p = parse({"--synth=" + bad, "--", "true"});
    EXPECT_EQ(p.status, 64);
    EXPECT_NE(p.err.find("--synth"), std::string::npos) << p.err;
  }
}


// --switch-output-event: its events as -e's (lists, repeats), implying
// --switch-output=signal; each samples every occurrence (period 1) unless a
// period= term says otherwise, where perf's parse_events leaves period 0
// (strace of perf 6.1: its trigger then never fires); woken at every
// record (watermark 1), as perf's evlist__set_cb; no inherit.
TEST(RecordOptions, SwitchOutputEventTriggersOnEveryOccurrence) {
  Parsed p = parse({"--switch-output-event", "page-faults,cpu-clock", "--switch-output-event",
                    "software/config=2,period=7/", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_EQ(p.options.switch_output_events,
            (std::vector<std::string>{"page-faults", "cpu-clock", "software/config=2,period=7/"}));
  EXPECT_TRUE(p.options.switch_output_signal);
  EXPECT_EQ(p.options.switch_output_bytes, 0u);
  std::vector<perf_event_attr> attrs;
  ASSERT_EQ(make_trigger_attrs(p.options, attrs), "");
  ASSERT_EQ(attrs.size(), 3u);
  const std::uint64_t periods[] = {1, 1, 7};
  for (std::size_t i = 0; i < attrs.size(); i++) {
    SCOPED_TRACE(i);
    EXPECT_EQ(attrs[i].sample_period, periods[i]);
    EXPECT_EQ(attrs[i].freq, 0u);
    EXPECT_EQ(attrs[i].watermark, 1u);
    EXPECT_EQ(attrs[i].wakeup_watermark, 1u);
    EXPECT_EQ(attrs[i].disabled, 1u);
    EXPECT_EQ(attrs[i].inherit, 0u);
    EXPECT_EQ(attrs[i].write_backward, 0u) << "its own ring, read by its own thread";
  }
  EXPECT_EQ(attrs[0].type, static_cast<std::uint32_t>(PERF_TYPE_SOFTWARE));
  EXPECT_EQ(attrs[0].config, static_cast<std::uint64_t>(PERF_COUNT_SW_PAGE_FAULTS));
  // With --switch-output=SIZE both hold (perf drops the SIZE).
  p = parse({"--switch-output=1M", "--switch-output-event", "page-faults", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_EQ(p.options.switch_output_bytes, std::uint64_t{1} << 20);
  EXPECT_TRUE(p.options.switch_output_signal);
  // Bad events, and a pipe: one line, 64.
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--switch-output-event", "bogus", "--", "true"},
        std::vector<std::string>{"--switch-output-event", "", "--", "true"},
        std::vector<std::string>{"--switch-output-event", "page-faults", "-o", "-", "--", "true"}}) {
    SCOPED_TRACE(bad[1] + " " + bad[2]);
    const Parsed b = parse(bad);
    EXPECT_EQ(b.status, 64);
    EXPECT_NE(b.err.find("--switch-output-event"), std::string::npos) << b.err;
  }
}

// --per-thread: no inherit (perf's evlist__config with the dummy cpu map);
// with -a or -C it is ignored, as perf, and said.
TEST(RecordOptions, PerThreadMeansNoInheritAndYieldsToCpuWideTargets) {
  const Parsed p = parse({"--per-thread", "--", "true"});
  ASSERT_EQ(p.status, -1) << p.err;
  EXPECT_TRUE(p.options.per_thread);
  EXPECT_TRUE(p.options.no_inherit);
  EXPECT_FALSE(p.options.per_thread_ignored);
  std::vector<EventAttr> attrs;
  ASSERT_EQ(make_attrs(p.options, attrs), "");
  for (const EventAttr& a : attrs) EXPECT_EQ(a.attr.inherit, 0u) << a.name;
  for (const std::vector<std::string>& wide : {std::vector<std::string>{"-a"}, std::vector<std::string>{"-C", "0"}}) {
    std::vector<std::string> args = wide;
    args.insert(args.end(), {"--per-thread", "--", "true"});
    const Parsed w = parse(args);
    ASSERT_EQ(w.status, -1) << w.err;
    EXPECT_FALSE(w.options.per_thread) << wide[0];
    EXPECT_TRUE(w.options.per_thread_ignored) << wide[0];
    EXPECT_FALSE(w.options.no_inherit) << wide[0];
  }
  const Parsed d = parse({"--", "true"});
  EXPECT_FALSE(d.options.per_thread || d.options.per_thread_ignored);
}


// --overwrite with one event samples as perf: no IDENTIFIER, CPU only with
// -a/-C or --sample-cpu (a snapshot then holds as many samples as perf's).
// Everything else keeps ours' one layout (D1, D2).
TEST(RecordOptions, OverwriteWithOneEventSamplesAsPerf) {
  struct Case {
    std::vector<std::string> args;
    bool identifier;
    bool cpu;
  };
  for (const Case& c : std::vector<Case>{{{"--overwrite"}, false, false},
                                         {{"--overwrite", "--sample-cpu"}, false, true},
                                         {{"--overwrite", "--sample-identifier"}, true, false},
                                         {{"--sample-identifier"}, true, true},
                                         {{"--overwrite", "-a"}, false, true},
                                         {{"--overwrite", "-C", "0"}, false, true},
                                         {{"--overwrite", "-e", "cpu-clock,page-faults"}, true, true},
                                         {{"--overwrite", "-D", "10"}, true, true},
                                         {{}, true, true},
                                         {{"-e", "page-faults"}, true, true}}) {
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"--", "true"});
    SCOPED_TRACE(::testing::PrintToString(c.args));
    const Parsed p = parse(args);
    ASSERT_EQ(p.status, -1) << p.err;
    std::vector<EventAttr> attrs;
    ASSERT_EQ(make_attrs(p.options, attrs), "");
    for (const EventAttr& a : attrs) {
      EXPECT_EQ((a.attr.sample_type & PERF_SAMPLE_IDENTIFIER) != 0, c.identifier) << a.name;
      EXPECT_EQ((a.attr.sample_type & PERF_SAMPLE_CPU) != 0, c.cpu) << a.name;
      EXPECT_NE(a.attr.sample_type & PERF_SAMPLE_TIME, 0u) << a.name;
    }
  }
}

}  // namespace
}  // namespace ringsim::real
