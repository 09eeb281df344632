// perf record -z's PERF_RECORD_COMPRESSED records, read as perf 6.1 reads
// them (perf_session__process_compressed_event): one zstd stream per
// file; each record's bytes decompressed at once, and the whole records
// they complete processed, the start of an incomplete one kept for the
// next. A record that decompresses to nothing fails perf's reader
// ("Couldn't decompress data"), as one above kMaxRecordExpandBytes
// (perf's buffer is HEADER_COMPRESSED's mmap_len, a ring's size) would.
// Written apart from the recorder's (real/zstd_records), as the oracle
// (sim/interpose/oracle.h) is from everything it judges.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/records.h"

struct ZSTD_DCtx_s;

namespace ringsim::sim::interpose {

class CompressedStream {
 public:
  static constexpr std::size_t kMaxRecordExpandBytes = std::size_t{1} << 30;

  CompressedStream();
  ~CompressedStream();
  CompressedStream(const CompressedStream&) = delete;
  CompressedStream& operator=(const CompressedStream&) = delete;

  // One COMPRESSED record (`offset` in its file's data section): the whole
  // records it completes, in `storage`'s new buffer, walked with
  // on_record. "" or the problem, one line.
  std::string add(const model::PerfRecord& record, std::vector<std::unique_ptr<std::vector<std::byte>>>& storage,
                  const std::function<void(const model::PerfRecord&)>& on_record);

  // At the file's end: "" or the incomplete record left.
  std::string finish() const;

 private:
  static constexpr std::size_t kStepBytes = 256 * 1024;

  // The whole records at the start of pending_, moved into a buffer of
  // their own and walked; the rest stays.
  std::string walk_whole(std::vector<std::unique_ptr<std::vector<std::byte>>>& storage,
                         const std::function<void(const model::PerfRecord&)>& on_record);

  ZSTD_DCtx_s* dctx_;
  std::vector<std::byte> pending_;
};

}  // namespace ringsim::sim::interpose
