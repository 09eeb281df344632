#include "core/verify.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace ringsim::core {
namespace {
std::atomic<VerifyHook> g_hook{nullptr};
std::atomic<bool> g_failing{false};
}  // namespace

VerifyHook set_verify_hook(VerifyHook hook) { return g_hook.exchange(hook); }

void verify_failed(const char* expression, const char* file, int line,
                   const char* message) {
  char description[512];
  std::snprintf(description, sizeof description, "VERIFY(%s) failed at %s:%d%s%s",
                expression, file, line, message ? ": " : "",
                message ? message : "");
  std::fprintf(stderr, "%s\n", description);
  std::fflush(stderr);
  // A failure inside the hook must not recurse into it.
  if (!g_failing.exchange(true)) {
    if (VerifyHook hook = g_hook.load()) hook(description);
  }
  std::abort();
}

}  // namespace ringsim::core
