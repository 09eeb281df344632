#include "core/verify.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace ringsim::core {
namespace {
std::atomic<VerifyHook> g_hook{nullptr};
std::atomic<bool> g_failing{false};
thread_local bool t_failing = false;
thread_local const void* t_context = nullptr;
// How long a second failing thread waits for the first one's hook.
constexpr std::chrono::seconds kHookWait{60};
}  // namespace

VerifyHook set_verify_hook(VerifyHook hook) { return g_hook.exchange(hook); }

void set_verify_context(const void* context) { t_context = context; }
const void* verify_context() { return t_context; }

void verify_failed(const char* expression, const char* file, int line,
                   const char* message) {
  char description[512];
  std::snprintf(description, sizeof description, "VERIFY(%s) failed at %s:%d%s%s",
                expression, file, line, message ? ": " : "",
                message ? message : "");
  std::fprintf(stderr, "%s\n", description);
  std::fflush(stderr);
  if (!g_failing.exchange(true)) {
    t_failing = true;
    if (VerifyHook hook = g_hook.load()) hook(description);
  } else if (!t_failing) {
    // Another thread is reporting its failure: let its hook finish (it
    // ends the process) rather than abort under it.
    std::this_thread::sleep_for(kHookWait);
  }
  // A failure inside the hook (t_failing) must not recurse into it.
  std::abort();
}

}  // namespace ringsim::core
