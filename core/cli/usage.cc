#include "core/cli/usage.h"

#include <iostream>

namespace ringsim::core {

int usage_error(const std::string& app_name, const std::string& what) {
  // One line, whatever the message holds (some of CLI11's span lines).
  std::string line = what;
  for (char& c : line) {
    if (c == '\n') c = ' ';
  }
  std::cerr << app_name << ": error: " << line << " (see --help)\n";
  return kExitUsage;
}

}  // namespace ringsim::core
