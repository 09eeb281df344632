// The shared command-line error path: what goes to stdout and stderr, and
// the return value, for a good command line, --help, a bad option, a bad
// value and an error found after parsing.
#include "core/cli/command_line.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ringsim::core {
namespace {

struct Outcome {
  int status = 0;
  std::string out;
  std::string err;
};

// Parses `args` (after the program name) with an app named "tool" that has
// one option, --count in 1..10.
Outcome parse(std::vector<std::string> args, int& count) {
  CLI::App app{"A tool.", "tool"};
  app.add_option("--count", count, "how many")->check(CLI::Range(1, 10));
  args.insert(args.begin(), "tool");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  Outcome o;
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  o.status = parse_command_line(app, static_cast<int>(argv.size()), argv.data());
  o.out = ::testing::internal::GetCapturedStdout();
  o.err = ::testing::internal::GetCapturedStderr();
  return o;
}

// One line "tool: error: ... (see --help)" that contains `needle`.
void expect_one_error_line(const std::string& err, const std::string& needle) {
  EXPECT_EQ(err.rfind("tool: error: ", 0), 0u) << err;
  ASSERT_FALSE(err.empty());
  EXPECT_EQ(err.find('\n'), err.size() - 1) << err;
  EXPECT_NE(err.find(" (see --help)\n"), std::string::npos) << err;
  EXPECT_NE(err.find(needle), std::string::npos) << err;
}

TEST(CommandLine, GoodArgumentsGoOnSilently) {
  int count = 0;
  const Outcome o = parse({"--count", "3"}, count);
  EXPECT_EQ(o.status, -1);
  EXPECT_EQ(count, 3);
  EXPECT_EQ(o.out, "");
  EXPECT_EQ(o.err, "");
}

TEST(CommandLine, HelpGoesToStdoutWithStatusZero) {
  int count = 0;
  const Outcome o = parse({"--help"}, count);
  EXPECT_EQ(o.status, 0);
  EXPECT_NE(o.out.find("--count"), std::string::npos) << o.out;
  EXPECT_EQ(o.err, "");
}

TEST(CommandLine, UnknownOptionIsOneLineWithStatus64) {
  int count = 0;
  const Outcome o = parse({"--bogus"}, count);
  EXPECT_EQ(o.status, kExitUsage);
  EXPECT_EQ(o.out, "");
  expect_one_error_line(o.err, "--bogus");
}

TEST(CommandLine, ValueOutOfRangeIsOneLineWithStatus64) {
  int count = 0;
  const Outcome o = parse({"--count", "11"}, count);
  EXPECT_EQ(o.status, kExitUsage);
  expect_one_error_line(o.err, "--count");
}

TEST(CommandLine, UsageErrorAfterParsingReadsTheSameOnOneLine) {
  ::testing::internal::CaptureStderr();
  const int status = usage_error("tool", "first part\nsecond part");
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, kExitUsage);
  EXPECT_EQ(err, "tool: error: first part second part (see --help)\n");
}

}  // namespace
}  // namespace ringsim::core
