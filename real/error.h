// The result of an operation of the real backend, and errno in messages.
#pragma once

#include <string>

namespace ringsim::real {

// Error 0 and an empty message on success, otherwise the errno and one
// line for a person (the call, the errno, the likely cause, the remedy).
struct Error {
  int error = 0;
  std::string message;

  bool ok() const { return error == 0; }
};

// "EACCES" for EACCES; "errno 4242" when the C library has no name.
std::string errno_name(int error);

// "ENOENT (No such file or directory)".
std::string errno_text(int error);

}  // namespace ringsim::real
