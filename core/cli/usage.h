// The one-line usage error every ringsim command prints, without CLI11:
//
//   <app name>: error: <what> (see --help)
//
// with exit status 64 (EX_USAGE). Apart from command_line.h because
// CLI11 (2.1, header-only) costs about 10 s of compile time in each
// translation unit that includes it, whatever it uses of it.
#pragma once

#include <string>

namespace ringsim::core {

inline constexpr int kExitUsage = 64;  // sysexits.h EX_USAGE

// Prints "<app_name>: error: <what> (see --help)" on stderr; returns
// kExitUsage.
int usage_error(const std::string& app_name, const std::string& what);

}  // namespace ringsim::core
