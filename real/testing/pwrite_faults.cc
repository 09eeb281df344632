// LD_PRELOAD shim for the recorder's fault tests (record_faults_test): the
// file system fills up at a header checkpoint. With RINGSIM_FULL_AT_HEADER=N
// in the environment, the Nth rewrite of a perf.data header (a pwrite of
// 104 bytes at offset 0) and every pwrite after it fail with ENOSPC; the
// other writes before it, and POSIX AIO's (glibc's own threads, not
// interposed), go through. Without the variable it changes nothing.
#include <dlfcn.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>

namespace {

using PwriteFn = ssize_t (*)(int, const void*, size_t, off_t);

constexpr size_t kHeaderBytes = 104;

std::atomic<long> g_headers{0};
std::atomic<bool> g_full{false};

long full_at() {
  static const long n = [] {
    const char* text = std::getenv("RINGSIM_FULL_AT_HEADER");
    return text == nullptr ? 0L : std::strtol(text, nullptr, 10);
  }();
  return n;
}

// Whether this write fails with ENOSPC.
bool disk_full(size_t count, off_t offset) {
  if (full_at() <= 0) return false;
  if (count == kHeaderBytes && offset == 0 && g_headers.fetch_add(1) + 1 >= full_at()) g_full = true;
  return g_full;
}

// The next definition of `name` (libc's, or a sanitizer's interceptor).
ssize_t forward(PwriteFn next, int fd, const void* buffer, size_t count, off_t offset) {
  if (next == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  return next(fd, buffer, count, offset);
}

}  // namespace

extern "C" ssize_t pwrite(int fd, const void* buffer, size_t count, off_t offset) {
  if (disk_full(count, offset)) {
    errno = ENOSPC;
    return -1;
  }
  static const auto next = reinterpret_cast<PwriteFn>(dlsym(RTLD_NEXT, "pwrite"));
  return forward(next, fd, buffer, count, offset);
}

extern "C" ssize_t pwrite64(int fd, const void* buffer, size_t count, off_t offset) {
  if (disk_full(count, offset)) {
    errno = ENOSPC;
    return -1;
  }
  static const auto next = reinterpret_cast<PwriteFn>(dlsym(RTLD_NEXT, "pwrite64"));
  return forward(next, fd, buffer, count, offset);
}
