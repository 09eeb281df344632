#include "real/zstd_records.h"

#include <sys/mman.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>

#include "core/perf_abi.h"
#include "core/verify.h"

namespace ringsim::real {
namespace {

constexpr std::size_t kHeaderBytes = core::kRecordHeaderBytes;
// The largest payload a record's u16 size leaves (perf caps its records at
// PERF_SAMPLE_MAX_SIZE - 8 - 1 payload bytes; this is one less still). 18:
// the largest frame header, which the first record of a file carries.
constexpr std::size_t kPayloadMaxBytes = 0xffff - kHeaderBytes;
static_assert(ZSTD_COMPRESSBOUND(kCompressSliceBytes) + 18 <= kPayloadMaxBytes,
              "a slice's compressed bytes fit in one record");
// Output room per round of decompression.
constexpr std::size_t kExpandStepBytes = std::size_t{256} << 10;

void store_header(std::byte* at, std::uint16_t size) {
  perf_event_header header{};
  header.type = kRecordCompressed;
  header.misc = 0;
  header.size = size;
  std::memcpy(at, &header, sizeof header);
}

// A record's length: its size, and an AUXTRACE record's data after it.
std::uint64_t record_length(std::span<const std::byte> data, std::size_t at, const perf_event_header& h) {
  std::uint64_t length = h.size;
  if (h.type == core::kRecordAuxtrace && h.size == core::kAuxtraceHeaderBytes &&
      data.size() - at >= core::kAuxtraceHeaderBytes) {
    length += core::load<std::uint64_t>(data.data() + at + kHeaderBytes);
  }
  return length;
}

// Whether `data` holds a COMPRESSED record among the records it walks
// (stops quietly at the first header that does not).
bool has_compressed(std::span<const std::byte> data) {
  std::size_t at = 0;
  while (data.size() - at >= kHeaderBytes) {
    const perf_event_header h = core::load_header(data.data() + at);
    if (h.type == kRecordCompressed) return true;
    const std::uint64_t length = record_length(data, at, h);
    if (h.size < kHeaderBytes || length > data.size() - at) return false;
    at += length;
  }
  return false;
}

// Hands what `payload` decompresses to to on_bytes, through `scratch`.
// "" or the problem.
template <class OnBytes>
std::string decompress_into(ZSTD_DCtx* dctx, std::span<const std::byte> payload, std::vector<std::byte>& scratch,
                            OnBytes& on_bytes) {
  ZSTD_inBuffer in{payload.data(), payload.size(), 0};
  // Each round either consumes input or fills its output room; a round
  // that does neither is a stream that cannot go on.
  for (;;) {
    ZSTD_outBuffer o{scratch.data(), scratch.size(), 0};
    const std::size_t consumed_before = in.pos;
    const std::size_t rc = ZSTD_decompressStream(dctx, &o, &in);
    if (o.pos > 0) on_bytes(std::span<const std::byte>(scratch.data(), o.pos));
    if (ZSTD_isError(rc)) return ZSTD_getErrorName(rc);
    if (o.pos < scratch.size() && in.pos == in.size) return "";
    if (o.pos == 0 && in.pos == consumed_before) return "the zstd stream makes no progress";
  }
}

}  // namespace

std::uint32_t CompressionCounts::ratio() const {
  if (bytes_out == 0) return 0;
  return static_cast<std::uint32_t>(static_cast<double>(bytes_in) / static_cast<double>(bytes_out) + 0.5);
}

ZstdRecordCompressor::ZstdRecordCompressor(int level) : cctx_(ZSTD_createCCtx()), level_(level) {
  VERIFY_MSG(cctx_ != nullptr, "ZSTD_createCCtx: out of memory");
  VERIFY(level >= kCompressionLevelMin && level <= kCompressionLevelMax);
  const std::size_t rc = ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, level);
  VERIFY_MSG(!ZSTD_isError(rc), ZSTD_getErrorName(rc));
}

ZstdRecordCompressor::~ZstdRecordCompressor() { ZSTD_freeCCtx(cctx_); }

std::size_t ZstdRecordCompressor::bound(std::size_t input_bytes) {
  const std::size_t slices = (input_bytes + kCompressSliceBytes - 1) / kCompressSliceBytes;
  return slices * (kHeaderBytes + kPayloadMaxBytes);
}

std::string ZstdRecordCompressor::compress(std::span<const std::byte> input, std::span<const std::byte>& out) {
  out = {};
  // Grown, never shrunk or cleared: no zero-filling per batch.
  if (buffer_.size() < bound(input.size())) buffer_.resize(bound(input.size()));
  std::size_t used = 0;
  for (std::size_t pos = 0; pos < input.size();) {
    const std::size_t slice = std::min(kCompressSliceBytes, input.size() - pos);
    const std::size_t at = used;
    ZSTD_inBuffer in{input.data() + pos, slice, 0};
    ZSTD_outBuffer o{buffer_.data() + at + kHeaderBytes, kPayloadMaxBytes, 0};
    std::size_t left = 1;  // to flush
    // Bounded: the room holds the slice's bound, so a few calls flush it.
    for (int call = 0; call < 64 && (left != 0 || in.pos < in.size); call++) {
      left = ZSTD_compressStream2(cctx_, &o, &in, ZSTD_e_flush);
      if (ZSTD_isError(left)) return std::string("zstd: ") + ZSTD_getErrorName(left);
    }
    if (left != 0 || in.pos < in.size || o.pos == 0) {
      return "zstd: a slice of " + std::to_string(slice) + " bytes did not flush into one record";
    }
    store_header(buffer_.data() + at, static_cast<std::uint16_t>(kHeaderBytes + o.pos));
    used = at + kHeaderBytes + o.pos;
    pos += slice;
    file_.records++;
    total_.records++;
  }
  file_.bytes_in += input.size();
  total_.bytes_in += input.size();
  file_.bytes_out += used;
  total_.bytes_out += used;
  out = std::span<const std::byte>(buffer_.data(), used);
  return "";
}

void ZstdRecordCompressor::restart() {
  ZSTD_CCtx_reset(cctx_, ZSTD_reset_session_only);
  file_ = CompressionCounts{};
}

namespace {

// Walks the records of `data`, calling on_bytes(bytes) with each
// uncompressed record and with what each COMPRESSED record decompresses
// to (through `scratch`), in order. "" or the problem.
template <class OnBytes>
std::string walk_expanded(std::span<const std::byte> data, OnBytes&& on_bytes) {
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  VERIFY_MSG(dctx != nullptr, "ZSTD_createDCtx: out of memory");
  std::vector<std::byte> scratch(kExpandStepBytes);
  std::string problem;
  std::size_t at = 0;
  while (at < data.size() && problem.empty()) {
    const std::size_t left = data.size() - at;
    const perf_event_header h = left >= kHeaderBytes ? core::load_header(data.data() + at) : perf_event_header{};
    const std::uint64_t length = left >= kHeaderBytes ? record_length(data, at, h) : 0;
    if (left < kHeaderBytes || h.size < kHeaderBytes || length > left) {
      problem = "data section: record at offset " + std::to_string(at) + ": bad size " + std::to_string(h.size);
      break;
    }
    const std::span<const std::byte> record = data.subspan(at, length);
    if (h.type == kRecordCompressed) {
      problem = decompress_into(dctx, record.subspan(kHeaderBytes), scratch, on_bytes);
      if (!problem.empty()) problem = "COMPRESSED record at offset " + std::to_string(at) + ": " + problem;
    } else {
      on_bytes(record);
    }
    at += length;
  }
  ZSTD_freeDCtx(dctx);
  return problem;
}

// Room for `bytes` in `out`, in huge pages where the kernel gives them on
// request (transparent_hugepage "madvise"): tens of MB touched once, and a
// page fault per 4 KiB costs more than the decompression.
void reserve_for(std::vector<std::byte>& out, std::size_t bytes) {
  out.reserve(bytes);
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  const auto begin = (reinterpret_cast<std::uintptr_t>(out.data()) + kHuge - 1) & ~(kHuge - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(out.data()) + bytes) & ~(kHuge - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // advice only
}

}  // namespace

std::string expand_compressed(std::span<const std::byte> data, std::vector<std::byte>& out, bool& expanded) {
  out.clear();
  expanded = has_compressed(data);
  if (!expanded) return "";
  // Twice: the size first (decompressing is fast), so that `out` is
  // allocated once and never copied as it grows.
  std::size_t total = 0;
  walk_expanded(data, [&](std::span<const std::byte> bytes) { total += bytes.size(); });
  reserve_for(out, total);
  return walk_expanded(data, [&](std::span<const std::byte> bytes) { out.insert(out.end(), bytes.begin(), bytes.end()); });
}

}  // namespace ringsim::real
