// Replay files: round trip, and every kind of bad file refused with one
// line naming the problem.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>
#include <nlohmann/json.hpp>

#include "sim/params.h"
#include "sim/replay.h"

namespace ringsim::sim {
namespace {

ReplayFile example() {
  ReplayFile r;
  r.config = random_config(17);
  r.tape = {{2, 1}, {1000, 999}, {7, 0}};
  r.property = "exactly_once";
  r.detail = "cpu 0: something";
  r.trace_hash = 0x0123456789abcdefull;
  r.output_hash = 42;
  r.note = "test";
  return r;
}

TEST(ReplayFile, RoundTrip) {
  const ReplayFile r = example();
  ReplayFile back;
  ASSERT_EQ(replay_from_text(replay_to_text(r), back), "");
  EXPECT_EQ(back.config, r.config);
  EXPECT_EQ(back.tape, r.tape);
  EXPECT_EQ(back.property, r.property);
  EXPECT_EQ(back.detail, r.detail);
  EXPECT_EQ(back.trace_hash, r.trace_hash);
  EXPECT_EQ(back.output_hash, r.output_hash);
  EXPECT_EQ(back.note, r.note);
}

std::string problem(const std::string& text) {
  ReplayFile out;
  return replay_from_text(text, out);
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(ReplayFile, Truncated) {
  const std::string text = replay_to_text(example());
  for (std::size_t cut : {std::size_t{1}, text.size() / 3, text.size() - 3}) {
    EXPECT_NE(problem(text.substr(0, cut)).find("truncated"), std::string::npos) << cut;
  }
}

TEST(ReplayFile, NotJson) { EXPECT_NE(problem("hello").find("not JSON"), std::string::npos); }

// Found by //tests/fuzz:replay_fuzz (corpus entry crash-number-overflow): a
// number no double holds made the JSON parser throw out_of_range, which
// escaped and aborted the command instead of naming the problem.
TEST(ReplayFile, NumberTooLargeForADoubleIsNotJson) {
  for (const std::string& text : {std::string("1e9999"), std::string("{\"format\": -9e2722}"),
                                 replace(replay_to_text(example()), "\"note\": \"test\"", "\"note\": 1e400")}) {
    const std::string p = problem(text);
    EXPECT_NE(p.find("not JSON (number overflow parsing"), std::string::npos) << p;
    EXPECT_EQ(p.find('\n'), std::string::npos) << p;
  }
}

TEST(ReplayFile, OtherFormat) {
  EXPECT_NE(problem(R"({"format": "perf-data"})").find("not a ringsim replay"), std::string::npos);
}

TEST(ReplayFile, OtherVersion) {
  // Version 2 (before disk_short_any_byte) and version 3 (no sampling
  // fields) are refused, with a line.
  for (const char* old : {"2", "3"}) {
    const std::string text =
        replace(replay_to_text(example()), "\"version\": 8", std::string("\"version\": ") + old);
    EXPECT_NE(problem(text).find(std::string("version ") + old), std::string::npos);
  }
}

TEST(ReplayFile, CorruptContentFailsTheChecksum) {
  const std::string text = replace(replay_to_text(example()), "[2,1,1000,999", "[2,1,1000,998");
  EXPECT_NE(problem(text).find("checksum mismatch"), std::string::npos);
}

// Files edited consistently (checksum recomputed) must still be valid.
std::string resealed_all(const std::vector<std::pair<std::string, std::string>>& edits,
                         const ReplayFile& base = example()) {
  // Re-parse, edit, re-checksum by going through the writer: edit the text,
  // then recompute the checksum the way the format defines it.
  std::string text = replay_to_text(base);
  for (const auto& [from, to] : edits) text = replace(text, from, to);
  nlohmann::json j = nlohmann::json::parse(text);
  j.erase("checksum");
  const std::string canonical = j.dump();
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(XXH3_64bits(canonical.data(), canonical.size())));
  j["checksum"] = std::string("xxh3:") + hex;
  return j.dump();
}
std::string resealed(const std::string& from, const std::string& to) { return resealed_all({{from, to}}); }

// A string the file quotes back is escaped: a newline in it does not split
// the error line (the replay fuzzer's crash of 2026-11-26).
TEST(ReplayFile, QuotedStringsStayOnOneLine) {
  const std::string format = problem("{\"format\": \"ring\\nsim\\\"\"}");
  EXPECT_EQ(format, "not a ringsim replay (format is \"ring\\nsim\\\"\")");
  const std::string mode = problem(resealed("\"mode\": \"", "\"mode\": \"x\\n"));
  EXPECT_NE(mode.find("config.mode: unknown mode \"x\\n"), std::string::npos) << mode;
  EXPECT_EQ(mode.find('\n'), std::string::npos) << mode;
}

// Versions 5 to 7 are read: a version-7 file with staging_notify_rounds 0;
// a version-6 file as it is (readers_per_cpu 0 or 1, help_min_quarters 1),
// a version-5 file (no readers_per_cpu) with 0; a version-6 file with
// version 7's readers_per_cpu 2 or its help_min_quarters, or a version-7
// file naming staging_notify_rounds, is refused.
TEST(ReplayFile, OlderVersionsRead) {
  ReplayFile helping = example();
  for (std::uint64_t seed = 1; helping.config.readers_per_cpu != 2; seed++) {
    ASSERT_LT(seed, 1000u) << "no seed below 1000 draws helping readers";
    helping.config = random_config(seed);
  }
  const std::string field = "\"readers_per_cpu\": 2";
  const std::string quarters = "\"help_min_quarters\": " + std::to_string(helping.config.help_min_quarters) + ",";
  const std::pair<std::string, std::string> to_six{"\"version\": 8", "\"version\": 6"};
  const std::pair<std::string, std::string> no_notify{"\"staging_notify_rounds\": 0,", ""};
  for (const char* value : {"0", "1"}) {
    ReplayFile out;
    const std::string text = resealed_all(
        {to_six, no_notify, {quarters, ""}, {field, std::string("\"readers_per_cpu\": ") + value}}, helping);
    ASSERT_EQ(replay_from_text(text, out), "") << value;
    EXPECT_EQ(out.config.readers_per_cpu, std::stoul(value));
    EXPECT_EQ(out.config.help_min_quarters, 1u);
  }
  ReplayFile five;
  ASSERT_EQ(replay_from_text(resealed_all({{"\"version\": 8", "\"version\": 5"}, no_notify, {quarters, ""},
                                           {field + ",", ""}},
                                          helping),
                             five),
            "");
  EXPECT_EQ(five.config.readers_per_cpu, 0u);
  const std::string two = problem(resealed_all({to_six, no_notify, {quarters, ""}}, helping));
  EXPECT_NE(two.find("config.readers_per_cpu: 2 is outside 0..1 in version 6"), std::string::npos) << two;
  const std::string extra = problem(resealed_all({to_six, no_notify}, helping));
  EXPECT_NE(extra.find("config.help_min_quarters: not a field of version 6"), std::string::npos) << extra;
  // Version 7: no staging_notify_rounds (read as 0); naming it is refused.
  const std::pair<std::string, std::string> to_seven{"\"version\": 8", "\"version\": 7"};
  ReplayFile seven;
  ASSERT_EQ(replay_from_text(resealed_all({to_seven, no_notify}, helping), seven), "");
  EXPECT_EQ(seven.config, helping.config);
  const std::string notify = problem(resealed_all({to_seven}, helping));
  EXPECT_NE(notify.find("config.staging_notify_rounds: not a field of version 7"), std::string::npos) << notify;
  ReplayFile eight;
  ASSERT_EQ(replay_from_text(replay_to_text(helping), eight), "");
  EXPECT_EQ(eight.config, helping.config);
}

TEST(ReplayFile, ValueNotBelowItsBound) {
  EXPECT_NE(problem(resealed("[2,1,1000,999", "[2,2,1000,999")).find("value 2 for bound 2"), std::string::npos);
}

TEST(ReplayFile, CountDisagreesWithTape) {
  EXPECT_NE(problem(resealed("\"count\": 3", "\"count\": 4")).find("count says 4"), std::string::npos);
}

TEST(ReplayFile, ConfigOutOfRange) {
  const std::string cpus = "\"cpus\": " + std::to_string(example().config.cpus);
  EXPECT_NE(problem(resealed(cpus, "\"cpus\": 9")).find("config.cpus: 9 is outside 1..8"), std::string::npos);
}

TEST(ReplayFile, MissingFileAndEmptyFile) {
  ReplayFile out;
  EXPECT_NE(read_replay("/nonexistent/x.json", out).find("cannot open"), std::string::npos);
  const std::string empty = ::testing::TempDir() + "/empty.json";
  std::ofstream{empty};
  EXPECT_NE(read_replay(empty, out).find("empty file"), std::string::npos);
}

TEST(ReplayFile, WriteThenReadFromDisk) {
  const std::string path = ::testing::TempDir() + "/r.replay.json";
  ASSERT_EQ(write_replay(path, example()), "");
  ReplayFile out;
  ASSERT_EQ(read_replay(path, out), "");
  EXPECT_EQ(out.tape, example().tape);
  EXPECT_NE(write_replay("/nonexistent-dir/r.json", example()).find("cannot write"), std::string::npos);
}

}  // namespace
}  // namespace ringsim::sim
