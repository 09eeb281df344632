// What an MMAP2 record says about its file: a build-id, or a device and
// inode. The two share the same 24 bytes after pgoff; the header's
// PERF_RECORD_MISC_MMAP_BUILD_ID says which.
//
// Linux does not keep that bit to the event that asked for it: the mmap
// event is built once and offered to every event in turn, and an event with
// attr.build_id sets the bit in the shared header and never clears it, so
// every event offered the record after it (a CPU-wide event of another
// session comes before a task's) writes "build-id" over a device/inode
// body (docs/fidelity.md row 20). A consumer therefore trusts the bit only
// when the event that wrote the record asked for build-ids itself; then the
// kernel wrote the body to match (the build-id is looked up once per mmap,
// for every event alike). Debian's perf 6.1 trusts the bit alone and copies
// `maj & 0xff` bytes into a 20-byte build-id (a stack overflow: docs).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace ringsim::core {

inline constexpr std::size_t kMmap2IdentityOffset = 40;  // header, pid, tid, addr, len, pgoff
inline constexpr std::size_t kMmap2FilenameOffset = 72;  // identity (24 bytes), prot, flags
inline constexpr std::size_t kMmap2BuildIdBytesMax = 20;

struct Mmap2Identity {
  bool has_build_id = false;  // else device/inode
  // Whether the header's bit said build-id (it may lie: see above).
  bool misc_says_build_id = false;
  std::uint8_t build_id_size = 0;
  std::array<std::uint8_t, kMmap2BuildIdBytesMax> build_id{};
  std::uint32_t maj = 0;
  std::uint32_t min = 0;
  std::uint64_t ino = 0;
  std::uint64_t ino_generation = 0;
};

// Decodes `record` (a whole MMAP2 record, header included) written for an
// event that did (`asked_build_id`) or did not set attr.build_id. "" or the
// problem: too short, or a build-id body the event asked for whose size
// exceeds 20 bytes (the record is corrupt; `out` is left empty).
std::string decode_mmap2(std::span<const std::byte> record, bool asked_build_id, Mmap2Identity& out);

}  // namespace ringsim::core
