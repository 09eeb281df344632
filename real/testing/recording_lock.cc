#include "real/testing/recording_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>

namespace ringsim::real::testing {
namespace {

std::mutex g_mutex;
int g_fd = -1;
int g_count = 0;

void sleep_ms(long ms) {
  const timespec pause{ms / 1000, (ms % 1000) * 1'000'000L};
  nanosleep(&pause, nullptr);
}

// Waiters poll every kPollMs; a process that releases the lock keeps off
// it for kYieldMs (longer than a poll) so that one recording after another
// in a loop does not starve the other test processes (flock is not fair).
constexpr long kPollMs = 20;
constexpr long kYieldMs = 60;

// flock(LOCK_EX) with a bounded wait: true when taken.
bool lock_bounded(int fd, int wait_s) {
  const long tries = static_cast<long>(wait_s) * (1000 / kPollMs);
  for (long i = 0; i <= tries; i++) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) return true;
    if (errno != EWOULDBLOCK && errno != EINTR) {
      std::fprintf(stderr, "recording lock: flock %s: %s; going ahead without it\n", kRecordingLockPath,
                   std::strerror(errno));
      return false;
    }
    sleep_ms(kPollMs);
  }
  std::fprintf(stderr, "recording lock: %s still held after %d s by another test process; going ahead without it\n",
               kRecordingLockPath, wait_s);
  return false;
}

}  // namespace

bool acquire_recording_lock(int wait_s) {
  std::lock_guard<std::mutex> guard(g_mutex);
  if (g_count > 0) {
    g_count++;
    return true;
  }
  const int fd = open(kRecordingLockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) {
    std::fprintf(stderr, "recording lock: open %s: %s; going ahead without it\n", kRecordingLockPath,
                 std::strerror(errno));
    return false;
  }
  if (!lock_bounded(fd, wait_s)) {
    close(fd);
    return false;
  }
  g_fd = fd;
  g_count = 1;
  return true;
}

void release_recording_lock() {
  std::lock_guard<std::mutex> guard(g_mutex);
  if (g_count == 0) return;
  if (--g_count > 0) return;
  close(g_fd);  // releases the flock
  g_fd = -1;
  sleep_ms(kYieldMs);  // (holding g_mutex: this process's next acquire waits too)
}

}  // namespace ringsim::real::testing
