// One error path for every command line (the recorder, its benchmark, the
// simulator's commands): CLI11 parses, --help prints the help on stdout,
// and a bad option or value is one line on stderr,
//
//   <app name>: error: <what> (see --help)
//
// with exit status 64 (EX_USAGE). Errors found after parsing (a
// combination of options, a value CLI11 cannot check) go through
// usage_error() (core/cli/usage.h) so that they read the same.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "core/cli/usage.h"

namespace ringsim::core {

// Parses argv with `app`. Returns -1 to go on, 0 after --help (printed to
// stdout), or kExitUsage after one error line on stderr.
int parse_command_line(CLI::App& app, int argc, char** argv);

}  // namespace ringsim::core
