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
// failed check, on the thread whose check failed. Must not return normally
// into the failed code: the hook may exit itself; if it returns, the
// process aborts. A check that fails on another thread meanwhile waits for
// the hook (up to a minute) instead of ending the process under it.
using VerifyHook = void (*)(const char* description);

// Installs the hook (nullptr restores the default: print and abort).
// Returns the previous hook.
VerifyHook set_verify_hook(VerifyHook hook);

// A pointer the hook can read back, per thread: what the thread works on
// (the campaign sets it to the run's seed and decisions, so a check that
// fails reports that run, whichever of its threads it fails in). A thread
// that does work for another passes it on (sim/scheduler.cc does).
void set_verify_context(const void* context);
const void* verify_context();

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
