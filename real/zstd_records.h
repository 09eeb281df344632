// PERF_RECORD_COMPRESSED (type 81): records compressed with zstd, as perf
// record -z writes them and perf 6.1 reads them (tools/perf/util/zstd.c,
// session.c: perf_session__process_compressed_event).
//
// The format: a record of header {type 81, misc 0, size} followed by
// size - 8 bytes of one zstd stream that runs through the whole file (one
// frame, never ended; a new file starts a new frame). The size is not
// padded to 8 (perf's are not either: the payload cannot carry padding).
// perf keeps one decompression stream per file and decompresses each
// record, as it meets it, into a fresh buffer of HEADER_COMPRESSED's
// mmap_len bytes (plus what was left of an incomplete record), then
// processes the records that buffer holds. So:
//   - a COMPRESSED record must decompress to at least one byte: perf 6.1
//     takes 0 for an error ("Couldn't decompress data");
//   - to at most mmap_len bytes.
// perf's own compressor (zstd_compress_stream_to_records) cuts the
// stream into records of up to 64 KiB wherever the output buffer fills,
// which can end a record inside a zstd block (a record then decompresses
// to nothing). Here the input is fed in slices of kCompressSliceBytes,
// each flushed into a record of its own: a flush ends the zstd block, and
// a slice's compressed size is at most ZSTD_compressBound(slice), under
// 64 KiB, so every record holds whole blocks of one slice and decompresses
// to exactly that slice (1..kCompressSliceBytes bytes). The history
// (window) carries over from slice to slice, so the ratio stays close to
// one long stream's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

struct ZSTD_CCtx_s;
struct ZSTD_DCtx_s;

namespace ringsim::real {

inline constexpr std::uint32_t kRecordCompressed = 81;  // PERF_RECORD_COMPRESSED
inline constexpr int kCompressionLevelMin = 1;           // perf's range: zstd's 1..22
inline constexpr int kCompressionLevelMax = 22;
inline constexpr int kCompressionLevelDefault = 1;       // perf's comp_level_default
// Input bytes per COMPRESSED record (see above).
inline constexpr std::size_t kCompressSliceBytes = 64000;
// HEADER_COMPRESSED: version 0, type 1 (zstd), as perf 6.1 writes.
inline constexpr std::uint32_t kCompressedFeatureVersion = 0;
inline constexpr std::uint32_t kCompressedTypeZstd = 1;

struct CompressionCounts {
  std::uint64_t bytes_in = 0;   // records handed in
  std::uint64_t bytes_out = 0;  // COMPRESSED records written, headers included
  std::uint64_t records = 0;    // COMPRESSED records
  // perf's HEADER_COMPRESSED ratio: in / out, rounded (0 before any data).
  std::uint32_t ratio() const;
};

class ZstdRecordCompressor {
 public:
  explicit ZstdRecordCompressor(int level);
  ~ZstdRecordCompressor();
  ZstdRecordCompressor(const ZstdRecordCompressor&) = delete;
  ZstdRecordCompressor& operator=(const ZstdRecordCompressor&) = delete;

  // The most bytes compress() writes for `input_bytes` of input.
  static std::size_t bound(std::size_t input_bytes);

  int level() const { return level_; }
  // `input` (any bytes; the recorder's are whole records) as COMPRESSED
  // records: `out` views them, in a buffer of the compressor's that the
  // next call reuses. Every byte handed in is in `out` when this returns
  // (flushed). "" or the problem (zstd's error name; `out` then empty).
  std::string compress(std::span<const std::byte> input, std::span<const std::byte>& out);
  // The next file: a new zstd frame (perf decompresses each file with a
  // stream of its own). Clears file().
  void restart();
  // Since the last restart(), and since the start.
  const CompressionCounts& file() const { return file_; }
  const CompressionCounts& total() const { return total_; }

 private:
  ZSTD_CCtx_s* cctx_ = nullptr;
  int level_;
  std::vector<std::byte> buffer_;  // compress()'s output
  CompressionCounts file_;
  CompressionCounts total_;
};

// The records of a data section with every COMPRESSED record replaced by
// what it holds, in order (one decompression stream, as perf reads a
// file). `expanded` says whether there was any; without, `out` is left
// empty. "" or the problem (a record that does not walk, zstd's error);
// `out` then holds what came before it.
std::string expand_compressed(std::span<const std::byte> data, std::vector<std::byte>& out, bool& expanded);

}  // namespace ringsim::real
