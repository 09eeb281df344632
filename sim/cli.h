// Command-line pieces shared by the simulator's commands.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <deque>
#include <string>

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

// Parses argv; on error prints one line "<program>: error: ..." and returns
// the exit code to use (kExitUsage), or -1 when parsing succeeded and 0 for
// --help.
int parse_command_line(CLI::App& app, int argc, char** argv);

}  // namespace ringsim::sim
