#include "sim/aux.h"

#include <linux/perf_event.h>

#include <cstring>

#include "core/verify.h"

namespace ringsim::sim {

SimAux::SimAux(const AuxConfig& c, model::AuxLog& aux_log) : config(c), log(aux_log) {
  if (!present()) return;
  VERIFY((config.size_bytes & (config.size_bytes - 1)) == 0);
  VERIFY(config.size_bytes >= kAuxPageBytes);
  VERIFY(config.burst_bytes_max > 0);
  VERIFY(!config.offset_heads || config.overwrite);
  data.resize(config.size_bytes);
  // The kernel's defaults: half the area in non-overwrite mode, 0 (and no
  // bookkeeping) in overwrite mode.
  watermark_bytes = aux_watermark(config.overwrite, config.watermark_bytes, config.size_bytes);
  log.present = true;
  log.overwrite = config.overwrite;
  log.size_bytes = config.size_bytes;
  log.watermark_bytes = watermark_bytes;
  log.offset_heads = config.offset_heads;
}

void build_aux_record(std::span<std::byte> out, std::uint64_t id, std::uint32_t pid, std::uint32_t cpu,
                      std::uint64_t time_ns, std::uint64_t offset, std::uint64_t size, std::uint64_t flags) {
  VERIFY(out.size() == kAuxRecordBytes);
  std::byte* p = out.data();
  perf_event_header header{};
  header.type = PERF_RECORD_AUX;
  header.misc = 0;  // as the kernel writes it
  header.size = kAuxRecordBytes;
  std::memcpy(p, &header, 8);
  std::memcpy(p + 8, &offset, 8);
  std::memcpy(p + 16, &size, 8);
  std::memcpy(p + 24, &flags, 8);
  // sample_id: pid, tid, time, cpu, res, identifier
  std::memcpy(p + 32, &pid, 4);
  std::memcpy(p + 36, &pid, 4);
  std::memcpy(p + 40, &time_ns, 8);
  const std::uint32_t reserved = 0;
  std::memcpy(p + 48, &cpu, 4);
  std::memcpy(p + 52, &reserved, 4);
  std::memcpy(p + 56, &id, 8);
}

}  // namespace ringsim::sim
