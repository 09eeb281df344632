// Assertions that stay on in every build (they do not read NDEBUG).
//
// VERIFY(cond) checks an invariant; when it does not hold, the process
// reports the expression and location, runs the installed failure hook (the
// simulator prints the seed, a one-line reproduction and writes a replay
// file) and ends. Split compound conditions into several VERIFYs so a
// failure names the exact clause.
#pragma once

namespace ringsim::core {

// Called once, before the process ends, with a one-line description of the
// failed check. Must not return normally into the failed code: the hook may
// exit itself; if it returns, the process aborts.
using VerifyHook = void (*)(const char* description);

// Installs the hook (nullptr restores the default: print and abort).
// Returns the previous hook.
VerifyHook set_verify_hook(VerifyHook hook);

[[noreturn]] void verify_failed(const char* expression, const char* file,
                                int line, const char* message);

}  // namespace ringsim::core

#define VERIFY(condition)                                                  \
  do {                                                                     \
    if (!(condition)) [[unlikely]] {                                       \
      ::ringsim::core::verify_failed(#condition, __FILE__, __LINE__,       \
                                     nullptr);                             \
    }                                                                      \
  } while (0)

#define VERIFY_MSG(condition, message)                                     \
  do {                                                                     \
    if (!(condition)) [[unlikely]] {                                       \
      ::ringsim::core::verify_failed(#condition, __FILE__, __LINE__,       \
                                     (message));                           \
    }                                                                      \
  } while (0)
