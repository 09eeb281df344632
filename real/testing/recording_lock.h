// One recording at a time on this machine, across test processes.
//
// Side-band output is machine-wide kernel state: an event that asked for
// build-ids (attr.build_id) changes the misc field of the MMAP2 records of
// every event the kernel iterates after it for the same mmap (fidelity row
// 20, docs/fidelity.md). A ringsim-record run (which asks for build-ids)
// beside a `perf record` run (which does not) gives perf's file MMAP2
// records that claim a build-id over a device/inode body, and the
// conformance suite's side-band scenarios see misc bits no scenario asked
// for. So every test process that starts a recorder (ours or perf's) and
// the conformance suite hold this lock (flock on one file in /tmp) while
// their recordings run. The lock is counted within a process (a test that
// starts two recorders holds it once), fair enough (a releaser keeps off it
// a little longer than waiters poll) and waiting for it is bounded: after
// `wait_s` the holder is reported on stderr and the recording goes ahead,
// never silently.
#pragma once

namespace ringsim::real::testing {

inline constexpr const char* kRecordingLockPath = "/tmp/ringsim-recording.lock";

// Takes the lock (or one more count of it). Returns true if it is held,
// false if `wait_s` passed first (a line on stderr says so).
bool acquire_recording_lock(int wait_s = 600);
// Drops one count; the last one releases the lock.
void release_recording_lock();

// The lock for a scope.
class RecordingLockScope {
 public:
  explicit RecordingLockScope(int wait_s = 600) { held_ = acquire_recording_lock(wait_s); }
  ~RecordingLockScope() {
    if (held_) release_recording_lock();
  }
  RecordingLockScope(const RecordingLockScope&) = delete;
  RecordingLockScope& operator=(const RecordingLockScope&) = delete;

 private:
  bool held_ = false;
};

}  // namespace ringsim::real::testing
