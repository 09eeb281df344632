#include "core/cli/command_line.h"

#include <iostream>
#include <string>

namespace ringsim::core {

int parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    return usage_error(app.get_name(), e.what());
  }
  return -1;
}

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
