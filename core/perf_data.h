// The perf.data file format, as far as a recorder writes it: the file
// header, the event attributes with their ids, and the data section, whose
// size is fixed up in the header when the file is finished.
//
// Layout written here:
//   [0, 104)                 header (magic "PERFILE2", section table)
//   [104, ...)               for each event: its ids (u64 each)
//   [..., data_offset)       for each event: perf_file_attr {attr, ids section}
//   [data_offset, + size)    data section: records as the rings hold them,
//                            with PERF_RECORD_FINISHED_ROUND between rounds
//   [data end, ...)          feature sections (core/perf_data_features.h),
//                            written when the file is finished; the header's
//                            feature bitmap says which (zero until then)
#pragma once

#include <linux/perf_event.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ringsim::core {

inline constexpr std::uint64_t kPerfFileMagic = 0x32454c4946524550ull;  // "PERFILE2"
// Written by the recorder between rounds (a user-space record type).
inline constexpr std::uint32_t kRecordFinishedRound = 68;
inline constexpr std::uint64_t kPerfFileHeaderBytes = 104;

struct FileSection {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

struct PerfFileHeader {
  std::uint64_t magic = kPerfFileMagic;
  std::uint64_t size = kPerfFileHeaderBytes;
  std::uint64_t attr_size = sizeof(perf_event_attr) + sizeof(FileSection);
  FileSection attrs;
  FileSection data;
  FileSection event_types;  // unused by perf; zero
  std::uint64_t features[4] = {0, 0, 0, 0};
};
static_assert(sizeof(PerfFileHeader) == kPerfFileHeaderBytes);

struct EventDescription {
  perf_event_attr attr{};
  std::vector<std::uint64_t> ids;  // one per opened event (per CPU or thread)
  std::string name;                // as perf names it ("cpu-clock", "page-faults:u"); EVENT_DESC
  int group_leader = -1;           // a group member: its leader's index among the events; GROUP_DESC
};

class PerfDataHead {
 public:
  explicit PerfDataHead(std::vector<EventDescription> events);

  std::uint64_t data_offset() const { return data_offset_; }
  const std::vector<EventDescription>& events() const { return events_; }

  // Everything before the data section, with a header that says the data
  // section holds data_bytes.
  std::vector<std::byte> bytes(std::uint64_t data_bytes) const;
  // The header alone (for the fix-up at the end), with the feature bitmap
  // (perf's adds_features: bit n of word n / 64); zero while recording.
  std::array<std::byte, kPerfFileHeaderBytes> header(std::uint64_t data_bytes,
                                                     const std::array<std::uint64_t, 4>& features = {}) const;

 private:
  std::vector<EventDescription> events_;
  std::uint64_t attrs_offset_ = 0;
  std::uint64_t data_offset_ = 0;
};

// The 8-byte PERF_RECORD_FINISHED_ROUND record.
const std::array<std::byte, 8>& finished_round_record();

}  // namespace ringsim::core
