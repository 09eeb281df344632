// Command-line pieces shared by the simulator's commands.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "sim/config.h"

namespace ringsim::sim {

// One option per configuration field (--cpus, --ring-pages, ..., --mode,
// --size-mix, --mutant). Values out of range are refused by the parser.
class ConfigOptions {
 public:
  void add_to(CLI::App& app);
  // After parsing: the fields that were given, as functions and as text.
  std::vector<std::function<void(RunConfig&)>> overrides() const;
  std::string as_args() const;

 private:
  struct Integer {
    const ConfigField* field;
    std::uint64_t value = 0;
    CLI::Option* option = nullptr;
  };
  std::deque<Integer> integers_;
  std::string mode_, size_mix_, mutant_, output_;
  CLI::Option* mode_option_ = nullptr;
  CLI::Option* output_option_ = nullptr;
  CLI::Option* size_mix_option_ = nullptr;
  CLI::Option* mutant_option_ = nullptr;
};

// A path given on the command line, relative to where the user ran
// `bazel run` (BUILD_WORKING_DIRECTORY), not to the runfiles directory.
std::string user_path(const std::string& path);

// Parses argv; on error prints one line "<program>: error: ..." and returns
// the exit code to use (kExitUsage), or -1 when parsing succeeded and 0 for
// --help.
int parse_command_line(CLI::App& app, int argc, char** argv);

}  // namespace ringsim::sim
