// The BUILD_ID feature of a finished file and the build-id cache, as perf
// record makes them at its end:
//   1. hit DSOs: the file's records are walked again; MMAP/MMAP2 build each
//      process's maps (FORK copies the parent's, an exec's COMM clears
//      them), and a sample's IP marks the mapping it falls in (user mode)
//      or the kernel (kernel mode). As perf 6.1: sample IPs, not call
//      chains;
//   2. their build-ids: from the MMAP2 record when the kernel put one there
//      (attr.build_id, Linux 5.12+; the misc bit is trusted only when every
//      event writing MMAP2 asked for build-ids: core/mmap2.h), else from
//      the ELF notes of the file at
//      its path now; the kernel's from /sys/kernel/notes; [vdso] always
//      (perf lists it whether hit or not);
//   3. the cache (perf's ~/.debug layout, so that perf archive and perf
//      report find them after the binaries change or move):
//        DIR/<path>/<id>/elf, DIR/[kernel.kallsyms]/<id>/kallsyms,
//        DIR/[vdso]/<id>/vdso, and DIR/.build-id/<2 hex>/<38 hex> -> ../../<entry>.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/perf_data.h"
#include "core/perf_data_features.h"
#include "real/elf_build_id.h"

namespace ringsim::real {

struct HitDso {
  std::string name;  // the mapping's path as the record gave it
  BuildId id;        // from its MMAP2 record, when the kernel gave one
  // Where the file is read: /proc/PID/root/NAME while the process that
  // mapped it lives (its mount namespace: a container's file, not the
  // host's of the same path), else NAME.
  std::string source;
};

struct HitDsos {
  bool kernel = false;
  std::vector<HitDso> user;  // in order of first hit
  std::uint64_t samples = 0;
  std::uint64_t unresolved = 0;  // user samples in no known mapping
  // MMAP2 records whose misc said build-id for an event that never asked
  // for one: a device/inode body, read as such (docs/fidelity.md row 20).
  std::uint64_t untrusted_build_id_misc = 0;
  std::uint64_t bad_mmap2 = 0;  // MMAP2 records too short, or a build-id over 20 bytes
};

// Walks a data section (at file offset data_offset, of a file with these
// events). "" or the problem (a record that does not walk; what came before
// it is in `out`). `all` (--buildid-all, perf's dsos__hit_all): every
// mapped DSO counts as hit, the kernel's included, samples or not.
std::string find_hit_dsos(std::span<const std::byte> data, std::uint64_t data_offset,
                          const std::vector<core::EventDescription>& events, HitDsos& out, bool all = false);

// The BUILD_ID entries of `hits`: the kernel (if hit), the user DSOs with
// a build-id, [vdso]. problems: one line per DSO left out and why.
std::vector<core::BuildIdEntry> build_id_entries(const HitDsos& hits, std::vector<std::string>& problems);

// Adds `entries` to the cache at `dir` (entries already there are kept),
// each user file read from its source in `hits` (its name if absent) and
// only if that file's own build-id is the entry's: a file changed since the
// recording, or another of the same path, is never cached under a build-id
// it does not have. "" or the first problem (the others are still tried).
std::string fill_build_id_cache(const std::string& dir, const std::vector<core::BuildIdEntry>& entries,
                                const HitDsos& hits);

// Where `path`, as process `pid` mapped it, is read now: through
// /proc/PID/root (the process's mount namespace) while the process lives,
// else `path` itself.
std::string dso_source(const std::string& path, std::int32_t pid);

// $HOME/.debug ("" without HOME).
std::string default_build_id_dir();

}  // namespace ringsim::real
