#include "real/error.h"

#include <cstring>

namespace ringsim::real {

std::string errno_name(int error) {
  const char* name = ::strerrorname_np(error);
  if (name == nullptr) return "errno " + std::to_string(error);
  return name;
}

std::string errno_text(int error) { return errno_name(error) + " (" + std::strerror(error) + ")"; }

}  // namespace ringsim::real
