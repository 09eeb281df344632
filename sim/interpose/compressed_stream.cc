#include "sim/interpose/compressed_stream.h"

#include <zstd.h>

#include <span>

namespace ringsim::sim::interpose {

CompressedStream::CompressedStream() : dctx_(ZSTD_createDCtx()) {}

CompressedStream::~CompressedStream() { ZSTD_freeDCtx(dctx_); }

std::string CompressedStream::add(const model::PerfRecord& record,
                                  std::vector<std::unique_ptr<std::vector<std::byte>>>& storage,
                                  const std::function<void(const model::PerfRecord&)>& on_record) {
  const std::string where = "the COMPRESSED record at offset " + std::to_string(record.offset);
  if (dctx_ == nullptr) return where + ": zstd: no decompression context";
  const std::span<const std::byte> payload = record.bytes.subspan(model::kHeaderBytes);
  ZSTD_inBuffer in{payload.data(), payload.size(), 0};
  const std::size_t before = pending_.size();
  // Bounded: a step that neither takes input nor gives output ends it,
  // the input is finite and the output at most kMaxRecordExpandBytes.
  for (bool more = true; more;) {
    const std::size_t at = pending_.size();
    if (at - before >= kMaxRecordExpandBytes) return where + ": decompresses to more than 1 GiB";
    pending_.resize(at + kStepBytes);
    ZSTD_outBuffer out{pending_.data() + at, kStepBytes, 0};
    const std::size_t taken = in.pos;
    const std::size_t rc = ZSTD_decompressStream(dctx_, &out, &in);
    pending_.resize(at + out.pos);
    if (ZSTD_isError(rc)) return where + ": zstd: " + ZSTD_getErrorName(rc);
    if (in.pos == taken && out.pos == 0 && in.pos < in.size) return where + ": zstd made no progress";
    more = in.pos < in.size || out.pos == out.size;
  }
  if (pending_.size() == before) {
    return where + " decompresses to nothing: perf 6.1's reader stops there (\"Couldn't decompress data\")";
  }
  return walk_whole(storage, on_record);
}

std::string CompressedStream::finish() const {
  if (pending_.empty()) return "";
  return "the compressed stream ends inside a record (" + std::to_string(pending_.size()) + " bytes left over)";
}

std::string CompressedStream::walk_whole(std::vector<std::unique_ptr<std::vector<std::byte>>>& storage,
                                         const std::function<void(const model::PerfRecord&)>& on_record) {
  std::size_t whole = 0;
  // Bounded: each step passes one record of at least 8 bytes.
  while (pending_.size() - whole >= model::kHeaderBytes) {
    const std::byte* h = pending_.data() + whole;
    std::uint64_t length = model::load<std::uint16_t>(h + 6);
    if (length < model::kHeaderBytes) break;  // the walk below reports it
    if (model::load<std::uint32_t>(h) == model::kTypeAuxtrace && length == model::kAuxtraceHeaderBytes) {
      if (pending_.size() - whole < length) break;
      length += model::load<std::uint64_t>(h + 8);
    }
    if (pending_.size() - whole < length) break;
    whole += length;
  }
  if (whole == 0 && pending_.size() >= model::kHeaderBytes &&
      model::load<std::uint16_t>(pending_.data() + 6) < model::kHeaderBytes) {
    whole = pending_.size();  // a malformed record: let the walk name it
  }
  if (whole == 0) return "";
  storage.push_back(std::make_unique<std::vector<std::byte>>(pending_.begin(), pending_.begin() + whole));
  pending_.erase(pending_.begin(), pending_.begin() + whole);
  const std::string walk = model::walk_records(*storage.back(), on_record);
  return walk.empty() ? "" : "inside the compressed stream: " + walk;
}

}  // namespace ringsim::sim::interpose
