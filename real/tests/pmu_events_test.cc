// The PMU event syntax against a PMU laid out in a temporary sysfs tree
// (formats with split bit ranges, aliases), and against this machine's
// software PMU; the -e list split that keeps a PMU event's terms whole.
#include "real/pmu_events.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "real/record_options.h"

namespace ringsim::real {
namespace {

void write(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text << "\n";
}

// A PMU "cpu" of type 4 with Intel-like formats and one alias.
std::string fake_root() {
  const std::filesystem::path root =
      std::filesystem::path(::testing::TempDir()) / ("pmus-" + std::to_string(::getpid()));
  write(root / "cpu/type", "4");
  write(root / "cpu/format/event", "config:0-7");
  write(root / "cpu/format/umask", "config:8-15");
  write(root / "cpu/format/any", "config:21");
  write(root / "cpu/format/split", "config1:0-1,8-9");
  write(root / "cpu/events/cycles-t", "event=0x3c,umask=0x02");
  return root.string();
}

TEST(PmuEvents, TermsFormatsAndAliases) {
  const std::string root = fake_root();
  perf_event_attr attr{};
  std::string mods;
  ASSERT_EQ(parse_pmu_event("cpu/event=0x3c,umask=0x1,any/", attr, mods, root), "");
  EXPECT_EQ(attr.type, 4u);
  EXPECT_EQ(attr.config, 0x3cu | 0x100u | (1u << 21));
  EXPECT_EQ(mods, "");
  ASSERT_EQ(parse_pmu_event("cpu/cycles-t/u", attr, mods, root), "");
  EXPECT_EQ(attr.config, 0x23cu) << "the alias's terms, from a clean config";
  EXPECT_EQ(mods, "u");
  ASSERT_EQ(parse_pmu_event("cpu/split=0xf/", attr, mods, root), "");
  EXPECT_EQ(attr.config1, 0x303u) << "value bits low first into 0-1, then 8-9";
  ASSERT_EQ(parse_pmu_event("cpu/config=0x1234,config2=7,period=1000/", attr, mods, root), "");
  EXPECT_EQ(attr.config, 0x1234u);
  EXPECT_EQ(attr.config2, 7u);
  EXPECT_EQ(attr.freq, 0u);
  EXPECT_EQ(attr.sample_period, 1000u);
  for (const auto& [text, why] : std::vector<std::pair<std::string, std::string>>{
           {"cpu/umask=0x100/", "too big for format"},
           {"cpu/bogus/", "unknown term 'bogus' for PMU 'cpu'"},
           {"cpu/event=x/", "not a number"},
           {"nopmu/config=1/", "no PMU 'nopmu'"},
           {"cpu/event=1", "PMU/TERMS/"},
           {"cpu/event=1/:u", "modifiers follow the closing '/' directly, as perf's PMU/TERMS/MODIFIERS (cpu/event=1/u)"}}) {
    const std::string problem = parse_pmu_event(text, attr, mods, root);
    EXPECT_NE(problem.find(why), std::string::npos) << text << ": " << problem;
    EXPECT_EQ(problem.rfind("-e " + text + ": ", 0), 0u) << problem;
  }
  std::filesystem::remove_all(root);
}

TEST(PmuEvents, RawEventsAndWhatIsNotOne) {
  perf_event_attr attr{};
  std::string mods;
  EXPECT_TRUE(is_pmu_event("r1a8"));
  EXPECT_TRUE(is_pmu_event("r1a8:u"));
  EXPECT_TRUE(is_pmu_event("software/config=0/"));
  EXPECT_FALSE(is_pmu_event("rcu:rcu_utilization")) << "a tracepoint";
  EXPECT_FALSE(is_pmu_event("cpu-clock"));
  ASSERT_EQ(parse_pmu_event("r1a8:k", attr, mods), "");
  EXPECT_EQ(attr.type, std::uint32_t{PERF_TYPE_RAW});
  EXPECT_EQ(attr.config, 0x1a8u);
  EXPECT_EQ(mods, "k");
}

// A named event with terms, as perf's grammar (value_sym '/' event_config
// '/'): perf records -e cpu-clock/period=100000/u; ours said "no PMU
// 'cpu-clock'" until 2026-12-01.
TEST(PmuEvents, NamedEventsTakePeriodAndFreqTermsAsPerfs) {
  perf_event_attr attr{};
  ASSERT_EQ(parse_event("cpu-clock/period=100000/u", attr), "");
  EXPECT_EQ(attr.type, std::uint32_t{PERF_TYPE_SOFTWARE});
  EXPECT_EQ(attr.config, std::uint64_t{PERF_COUNT_SW_CPU_CLOCK});
  EXPECT_EQ(attr.sample_period, 100000u);
  EXPECT_EQ(attr.freq, 0u);
  EXPECT_EQ(attr.exclude_kernel, 1u);
  attr = perf_event_attr{};
  ASSERT_EQ(parse_event("page-faults/freq=99/", attr), "");
  EXPECT_EQ(attr.config, std::uint64_t{PERF_COUNT_SW_PAGE_FAULTS});
  EXPECT_EQ(attr.freq, 1u);
  EXPECT_EQ(attr.sample_freq, 99u);
  EXPECT_EQ(attr.exclude_kernel, 0u);
  ASSERT_EQ(parse_event("cs//", attr), "");
  EXPECT_EQ(attr.config, std::uint64_t{PERF_COUNT_SW_CONTEXT_SWITCHES});
  for (const auto& [text, why] : std::vector<std::pair<std::string, std::string>>{
           {"cpu-clock/stack-size=8/", "unknown term 'stack-size' for cpu-clock (period=N, freq=N)"},
           {"cpu-clock/period=x/", "the value is not a number"},
           {"cpu-clock/period=1/:u", "modifiers follow the closing '/' directly"},
           {"cpu-clock/period=1", "PMU/TERMS/"}}) {
    EXPECT_NE(parse_event(text, attr).find(why), std::string::npos) << text << ": " << parse_event(text, attr);
  }
  RecordOptions o;
  o.command = {"true"};
  o.events = {"cpu-clock/period=100000/"};
  std::vector<EventAttr> attrs;
  ASSERT_EQ(make_attrs(o, attrs), "");
  EXPECT_EQ(attrs[0].attr.sample_period, 100000u) << "the term over -F";
  EXPECT_EQ(attrs[0].attr.sample_type & PERF_SAMPLE_PERIOD, 0u);
}

// name=NAME, as perf's (perf evlist of perf's file: foo for
// software/config=0,name=foo/u, the modifiers not in it; {pf,cpu-clock}
// for a member named so): the event's name; refused where no name is kept.
TEST(PmuEvents, TheNameTermNamesTheEventAsPerfs) {
  if (::access("/sys/bus/event_source/devices/software/type", R_OK) != 0) GTEST_SKIP() << "no sysfs PMUs";
  RecordOptions o;
  o.command = {"true"};
  o.events.clear();
  for (const char* text : {"software/config=0,name=foo/u", "cpu-clock/name=bar,period=100000/",
                           "{software/config=2,name=pf/,cpu-clock}"}) {
    ASSERT_EQ(split_event_list(text, o.events, &o.event_groups, &o.group_modifiers), "") << text;
  }
  std::vector<EventAttr> attrs;
  ASSERT_EQ(make_attrs(o, attrs), "");
  ASSERT_EQ(attrs.size(), 4u);
  EXPECT_EQ(attrs[0].name, "foo");
  EXPECT_EQ(attrs[0].attr.exclude_kernel, 1u);
  EXPECT_EQ(attrs[1].name, "bar");
  EXPECT_EQ(attrs[1].attr.sample_period, 100000u);
  EXPECT_EQ(attrs[2].name, "pf");
  EXPECT_EQ(attrs[2].attr.config, 2u);
  EXPECT_EQ(attrs[3].leader, 2);
  perf_event_attr attr{};
  EventModifiers extra;
  EXPECT_NE(parse_event("software/config=0,name=x y/", attr, &extra).find("a name is a letter"), std::string::npos);
  EXPECT_NE(parse_event("software/name=a,name=b/", attr, &extra).find("name= given twice"), std::string::npos);
  EXPECT_NE(parse_event("software/config=0,name=foo/", attr).find("for -e's events only"), std::string::npos);
  extra = EventModifiers{};
  ASSERT_EQ(parse_event("software/name=first,config=0/", attr, &extra), "");
  EXPECT_EQ(extra.name, "first");
  EXPECT_EQ(attr.config, 0u);
}

TEST(PmuEvents, ThisMachinesSoftwarePmuAsPerfReadsIt) {
  if (::access("/sys/bus/event_source/devices/software/type", R_OK) != 0) GTEST_SKIP() << "no sysfs PMUs";
  perf_event_attr attr{};
  // The tracepoint PMU by number: one line (ringsim-record aborted on it
  // until 2026-12-01, looking its format up by a name it did not have).
  if (::access("/sys/bus/event_source/devices/tracepoint/type", R_OK) == 0) {
    EXPECT_NE(parse_event("tracepoint/config=1/", attr).find("give it as SYSTEM:NAME"), std::string::npos);
  }
  ASSERT_EQ(parse_event("software/config=2,period=3/", attr), "");
  EXPECT_EQ(attr.type, std::uint32_t{PERF_TYPE_SOFTWARE});
  EXPECT_EQ(attr.config, 2u);
  RecordOptions o;
  o.command = {"true"};
  o.events = {"software/config=2,period=3/u"};
  std::vector<EventAttr> attrs;
  ASSERT_EQ(make_attrs(o, attrs), "");
  EXPECT_EQ(attrs[0].attr.sample_period, 3u) << "the term over -F";
  EXPECT_EQ(attrs[0].attr.freq, 0u);
  EXPECT_EQ(attrs[0].attr.sample_type & PERF_SAMPLE_PERIOD, 0u) << "as perf: a fixed period, no PERIOD";
  EXPECT_EQ(attrs[0].attr.exclude_kernel, 1u);
  // perf's grammar: the modifiers right after the closing '/' (perf refuses
  // software/config=0/:u, a "parser error"); a group's after the member's.
  EXPECT_NE(parse_event("software/config=0/x", attr).find("modifier 'x' is unknown"), std::string::npos);
  o.events.clear();
  ASSERT_EQ(split_event_list("{software/config=0/k,page-faults}:u", o.events, &o.event_groups, &o.group_modifiers), "");
  ASSERT_EQ(make_attrs(o, attrs), "");
  ASSERT_EQ(attrs.size(), 2u);
  EXPECT_EQ(attrs[0].name, "software/config=0/k");
  EXPECT_EQ(attrs[0].attr.exclude_kernel, 0u) << "k then u: both";
  EXPECT_EQ(attrs[0].attr.exclude_user, 0u);
  EXPECT_EQ(attrs[1].attr.exclude_kernel, 1u);
}

TEST(PmuEvents, EventListsSplitOutsideTheTerms) {
  std::vector<std::string> out;
  ASSERT_EQ(split_event_list("cpu-clock,software/config=2,period=3/,page-faults:u", out), "");
  EXPECT_EQ(out, (std::vector<std::string>{"cpu-clock", "software/config=2,period=3/", "page-faults:u"}));
  EXPECT_NE(split_event_list("{cpu-clock,page-faults}", out).find("group"), std::string::npos) << "no groups asked";
  // Groups: their modifiers added to each member's own; numbered on.
  out.clear();
  std::vector<int> groups = {-1};
  out.push_back("dummy");
  ASSERT_EQ(split_event_list("{cpu-clock,page-faults:k,sched:sched_switch}:u,cs,{task-clock,software/config=2/}",
                             out, &groups),
            "");
  EXPECT_EQ(out, (std::vector<std::string>{"dummy", "cpu-clock:u", "page-faults:ku", "sched:sched_switch:u", "cs",
                                           "task-clock", "software/config=2/"}));
  EXPECT_EQ(groups, (std::vector<int>{-1, 0, 0, 0, -1, 1, 1}));
  for (const char* bad : {"{cpu-clock", "cpu-clock}", "{}", "{a,{b}}", "x{a}"}) {
    std::vector<std::string> o;
    std::vector<int> g;
    EXPECT_NE(split_event_list(bad, o, &g), "") << bad;
  }
}

TEST(PmuEvents, GroupMembersFollowTheirLeaderAsPerf) {
  RecordOptions o;
  o.command = {"true"};
  ASSERT_EQ(expand_events({"{cpu-clock,page-faults}", "cs"}, o.events, &o.event_groups), "");
  std::vector<EventAttr> attrs;
  ASSERT_EQ(make_attrs(o, attrs), "");
  ASSERT_EQ(attrs.size(), 3u);
  // {a,b}:u: the members named as written (as perf), user space only.
  RecordOptions u = o;
  u.events.clear();
  u.event_groups.clear();
  ASSERT_EQ(expand_events({"{cpu-clock,page-faults:k}:u"}, u.events, &u.event_groups, &u.group_modifiers), "");
  std::vector<EventAttr> user;
  ASSERT_EQ(make_attrs(u, user), "");
  ASSERT_EQ(user.size(), 2u);
  EXPECT_EQ(user[0].name, "cpu-clock");
  EXPECT_EQ(user[1].name, "page-faults:k");
  EXPECT_EQ(user[0].attr.exclude_kernel, 1u);
  EXPECT_EQ(user[1].attr.exclude_kernel, 0u) << "k and u";
  EXPECT_EQ(user[1].attr.exclude_user, 0u);
  EXPECT_EQ(attrs[0].leader, -1);
  EXPECT_EQ(attrs[1].leader, 0);
  EXPECT_EQ(attrs[2].leader, -1);
  EXPECT_EQ(attrs[0].attr.disabled, 1u);
  EXPECT_EQ(attrs[0].attr.enable_on_exec, 1u);
  EXPECT_EQ(attrs[1].attr.disabled, 0u) << "perf's evsel__config: the leader enables the group";
  EXPECT_EQ(attrs[1].attr.enable_on_exec, 0u);
  EXPECT_EQ(attrs[2].attr.disabled, 1u);
  o.delay_ms = 100;
  EXPECT_NE(make_attrs(o, attrs).find("-D with event groups"), std::string::npos);
}

}  // namespace
}  // namespace ringsim::real
