#include "model/records.h"

namespace ringsim::model {

namespace {

std::string walk(std::span<const std::byte> bytes, const std::function<void(const PerfRecord&)>& on_record,
                 bool compressed_unpadded) {
  const std::uint64_t size = bytes.size();
  std::uint64_t offset = 0;
  // Every record takes at least 8 bytes: at most size / 8 steps.
  for (std::uint64_t steps = 0; steps <= size / kHeaderBytes && offset < size; steps++) {
    if (size - offset < kHeaderBytes) return "a partial header at offset " + std::to_string(offset);
    PerfRecord r;
    r.type = load<std::uint32_t>(bytes.data() + offset);
    r.misc = load<std::uint16_t>(bytes.data() + offset + 4);
    r.size = load<std::uint16_t>(bytes.data() + offset + 6);
    r.offset = offset;
    const bool aligned = r.size % 8 == 0 || (compressed_unpadded && r.type == kTypeCompressed);
    if (r.size < kHeaderBytes || !aligned || r.size > size - offset) {
      return "the record at offset " + std::to_string(offset) + " has an invalid size " + std::to_string(r.size);
    }
    std::uint64_t length = r.size;
    if (r.type == kTypeAuxtrace && r.size == kAuxtraceHeaderBytes) {
      const std::uint64_t data_bytes = load<std::uint64_t>(bytes.data() + offset + 8);
      if (data_bytes % 8 != 0 || data_bytes > size - offset - r.size) {
        return "the AUXTRACE record at offset " + std::to_string(offset) + " claims " + std::to_string(data_bytes) +
               " bytes of data";
      }
      length += data_bytes;
    }
    r.bytes = bytes.subspan(offset, length);
    on_record(r);
    offset += length;
  }
  return "";
}

}  // namespace

std::string walk_records(std::span<const std::byte> bytes, const std::function<void(const PerfRecord&)>& on_record) {
  return walk(bytes, on_record, false);
}

std::string walk_file_records(std::span<const std::byte> bytes,
                              const std::function<void(const PerfRecord&)>& on_record) {
  return walk(bytes, on_record, true);
}

}  // namespace ringsim::model
