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

}  // namespace ringsim::core
