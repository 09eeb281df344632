// Fuzzes the command-line parsers of campaign, replay, record, bench and
// compare with the functions their main() calls (sim/commands.h,
// real/record_options.h).
// The input's first byte picks the command; the rest, split at NUL bytes,
// is the argument list (up to kArgsMax).
//
// Whatever the arguments: no crash, no exception, and exactly one of
//   - go on (-1), printing nothing, with options a run accepts: the
//     campaign's first seed's configuration (when its options are valid)
//     has a reproduction line that parses back to the same configuration;
//     the recorder's options give an event attribute; bench's are in its
//     ranges; compare's fixed options print as arguments that parse back
//     to the same options, and its first seed's configuration with them
//     validates or names its problem on one line;
//   - help (0) on stdout, nothing on stderr;
//   - a usage error (64): one line on stderr,
//     "<command>: error: ... (see --help)", nothing on stdout.
#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/verify.h"
#include "real/record_options.h"
#include "sim/campaign.h"
#include "sim/commands.h"
#include "sim/params.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using namespace ringsim;

constexpr std::size_t kArgsMax = 64;
// The seeds whose configurations the harness validates (the campaign
// validates every one; the first few show the same errors).
constexpr std::uint64_t kSeedsChecked = 16;

// std::cout and std::cerr into strings while it lives.
class Captured {
 public:
  Captured() : out_(std::cout.rdbuf(out_text_.rdbuf())), err_(std::cerr.rdbuf(err_text_.rdbuf())) {}
  ~Captured() {
    std::cout.rdbuf(out_);
    std::cerr.rdbuf(err_);
  }
  std::string out() const { return out_text_.str(); }
  std::string err() const { return err_text_.str(); }

 private:
  std::ostringstream out_text_;
  std::ostringstream err_text_;
  std::streambuf* out_;
  std::streambuf* err_;
};

// argv for a parser: the program name, then `args`.
class Argv {
 public:
  Argv(const char* program, std::vector<std::string> args) : args_(std::move(args)) {
    pointers_.push_back(const_cast<char*>(program));
    for (std::string& a : args_) pointers_.push_back(a.data());
    pointers_.push_back(nullptr);
  }
  int argc() const { return static_cast<int>(pointers_.size() - 1); }
  char** argv() { return pointers_.data(); }

 private:
  std::vector<std::string> args_;
  std::vector<char*> pointers_;
};

void check_outcome(int rc, const std::string& name, const Captured& io) {
  VERIFY(rc == -1 || rc == 0 || rc == 64);
  if (rc == -1) {
    VERIFY(io.out().empty() && io.err().empty());
  } else if (rc == 0) {
    VERIFY(!io.out().empty() && io.err().empty());
  } else {
    const std::string err = io.err();
    VERIFY(io.out().empty());
    VERIFY(err.starts_with(name + ": error: "));
    VERIFY(err.ends_with(" (see --help)\n"));
    VERIFY(err.find('\n') == err.size() - 1);
  }
}

std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The first seed's reproduction line parses back to its configuration.
void check_reproduction(const sim::CampaignOptions& options) {
  const sim::RunConfig config = sim::campaign_config(options, options.first_seed + options.shard_index);
  sim::CampaignOptions again;
  Argv argv("campaign", words(sim::reproduce_args(config)));
  int rc = 0;
  {
    Captured io;
    rc = sim::parse_campaign_command_line(argv.argc(), argv.argv(), again);
    check_outcome(rc, "campaign", io);
  }
  VERIFY_MSG(rc == -1, "a reproduction line the campaign refuses");
  VERIFY(sim::campaign_config(again, again.first_seed) == config);
}

void fuzz_campaign(std::vector<std::string> args) {
  sim::CampaignOptions options;
  Argv argv("campaign", std::move(args));
  int rc = 0;
  {
    Captured io;
    rc = sim::parse_campaign_command_line(argv.argc(), argv.argv(), options);
    check_outcome(rc, "campaign", io);
  }
  if (rc != -1) return;
  VERIFY(options.runs >= 1 && options.runs <= 1'000'000'000);
  VERIFY(options.jobs >= 1 && options.jobs <= 256);
  const std::string problem = sim::check_campaign_seeds(options, kSeedsChecked);
  VERIFY(problem.find('\n') == std::string::npos);
  if (problem.empty()) check_reproduction(options);
}

void fuzz_replay(std::vector<std::string> args) {
  sim::ReplayOptions options;
  Argv argv("replay", std::move(args));
  Captured io;
  const int rc = sim::parse_replay_command_line(argv.argc(), argv.argv(), options);
  check_outcome(rc, "replay", io);
  if (rc == -1) VERIFY(!options.file.empty() || argv.argc() > 1);
}

void fuzz_record(std::vector<std::string> args) {
  real::RecordOptions options;
  Argv argv("ringsim-record", std::move(args));
  int rc = 0;
  {
    Captured io;
    rc = real::parse_record_command_line(argv.argc(), argv.argv(), options);
    check_outcome(rc, "ringsim-record", io);
  }
  if (rc != -1) return;
  VERIFY(real::check_options(options).empty());
  std::vector<real::EventAttr> attrs;
  const std::string problem = real::make_attrs(options, attrs);
  VERIFY(problem.find('\n') == std::string::npos);
  VERIFY(!problem.empty() || !attrs.empty());
}

void fuzz_bench(std::vector<std::string> args) {
  sim::BenchOptions options;
  Argv argv("bench", std::move(args));
  Captured io;
  const int rc = sim::parse_bench_command_line(argv.argc(), argv.argv(), options);
  check_outcome(rc, "bench", io);
  if (rc != -1) return;
  VERIFY(options.reps >= 1 && options.reps <= 1000);
  VERIFY(options.producer_batch >= 1 && options.producer_batch <= 4096);
}

int parse_compare(std::vector<std::string> args, sim::CompareOptions& options) {
  Argv argv("compare", std::move(args));
  Captured io;
  const int rc = sim::parse_compare_command_line(argv.argc(), argv.argv(), options);
  check_outcome(rc, "compare", io);
  return rc;
}

void fuzz_compare(std::vector<std::string> args) {
  sim::CompareOptions options;
  if (parse_compare(std::move(args), options) != -1) return;
  VERIFY(options.runs >= 1 && options.runs <= 1'000'000);
  VERIFY(options.first_seed <= UINT64_MAX / 2);
  // The fixed options compare prints ("fixed: ...") parse back to themselves.
  sim::CompareOptions again;
  VERIFY_MSG(parse_compare(words(options.overrides.as_args()), again) == -1, "fixed options compare refuses");
  VERIFY(again.overrides.as_args() == options.overrides.as_args());
  sim::RunConfig config = sim::random_config(options.first_seed);
  options.overrides.apply(config);
  sim::RunConfig config_again = sim::random_config(options.first_seed);
  again.overrides.apply(config_again);
  VERIFY(config == config_again);
  VERIFY(sim::validate(config).find('\n') == std::string::npos);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::FuzzInput in(data, size);
  const std::uint8_t command = in.byte() % 5;
  std::vector<std::string> args;
  while (!in.empty() && args.size() < kArgsMax) args.push_back(in.until('\0'));
  switch (command) {
    case 0: fuzz_campaign(std::move(args)); break;
    case 1: fuzz_replay(std::move(args)); break;
    case 2: fuzz_record(std::move(args)); break;
    case 3: fuzz_bench(std::move(args)); break;
    default: fuzz_compare(std::move(args)); break;
  }
  return 0;
}
