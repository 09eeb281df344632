#include "core/mmap2.h"

#include <cstring>

#include "core/perf_abi.h"
#include "core/verify.h"

namespace ringsim::core {

std::string decode_mmap2(std::span<const std::byte> record, bool asked_build_id, Mmap2Identity& out) {
  out = Mmap2Identity{};
  if (record.size() < kMmap2FilenameOffset) {
    return "an MMAP2 record of " + std::to_string(record.size()) + " bytes (at least " +
           std::to_string(kMmap2FilenameOffset) + ")";
  }
  const perf_event_header h = load_header(record.data());
  VERIFY(h.type == PERF_RECORD_MMAP2);
  const std::byte* body = record.data() + kMmap2IdentityOffset;
  out.misc_says_build_id = (h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) != 0;
  if (out.misc_says_build_id && asked_build_id) {
    const std::uint8_t size = load<std::uint8_t>(body);
    if (size > kMmap2BuildIdBytesMax) {
      out = Mmap2Identity{};
      return "an MMAP2 build-id of " + std::to_string(size) + " bytes (at most 20)";
    }
    out.has_build_id = true;
    out.build_id_size = size;
    std::memcpy(out.build_id.data(), body + 4, size);
    return "";
  }
  out.maj = load<std::uint32_t>(body);
  out.min = load<std::uint32_t>(body + 4);
  out.ino = load<std::uint64_t>(body + 8);
  out.ino_generation = load<std::uint64_t>(body + 16);
  return "";
}

}  // namespace ringsim::core
