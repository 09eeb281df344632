// ringsim-record: records perf samples of a command, or of the whole system
// (-a), into a perf.data file. See docs/recorder.md.
//
//   bazel run //real:record -- [OPTIONS] -- COMMAND [ARGS...]
//   ringsim-record [OPTIONS] -- COMMAND [ARGS...]   (scripts/install-record.sh)
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "real/record_options.h"
#include "real/recorder.h"

int main(int argc, char** argv) {
  ringsim::real::RecordOptions options;
  const int parsed = ringsim::real::parse_record_command_line(argc, argv, options);
  if (parsed >= 0) return parsed;
  // Under `bazel run` the working directory is the runfiles tree: run where
  // the user ran bazel, so that -o and the command's relative paths mean
  // what they typed.
  if (const char* dir = std::getenv("BUILD_WORKING_DIRECTORY"); dir != nullptr && *dir != '\0') {
    if (::chdir(dir) != 0) {
      std::fprintf(stderr, "ringsim-record: error: chdir %s: %s\n", dir, std::strerror(errno));
      return ringsim::real::kExitOsError;
    }
  }
  return ringsim::real::record(options);
}
