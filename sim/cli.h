// Command-line pieces shared by the simulator's commands.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <deque>
#include <string>

#include "core/cli/command_line.h"
#include "sim/params.h"

namespace ringsim::sim {

// One option per run parameter of the table (sim/params.h), but the seed:
// --cpus, --ring-pages, ..., --mode, --size-mix, --output, --mutant.
// Values out of range (or not a choice) are refused by the parser.
class ConfigOptions {
 public:
  void add_to(CLI::App& app);
  // After parsing: the parameters that were given.
  Overrides overrides() const;

 private:
  struct Given {
    const Param* param;
    std::string text;
    CLI::Option* option = nullptr;
  };
  std::deque<Given> given_;
};

// A path given on the command line, relative to where the user ran
// `bazel run` (BUILD_WORKING_DIRECTORY), not to the runfiles directory.
std::string user_path(const std::string& path);

// The one command-line error path (core/cli): -1 to go on, 0 after
// --help, 64 after one line "<program>: error: ... (see --help)".
using core::parse_command_line;

}  // namespace ringsim::sim
