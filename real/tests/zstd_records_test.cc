// real/zstd_records.h: COMPRESSED records as perf 6.1 reads them (one
// decompression stream per file, each record into a buffer of its own that
// must receive 1..mmap_len bytes), and expand_compressed.
#include "real/zstd_records.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include <cstring>
#include <random>

#include "core/perf_abi.h"

namespace ringsim::real {
namespace {

// Records of random sizes (multiples of 8), their bodies half
// compressible (a counter) and half random, as samples are.
std::vector<std::byte> make_records(std::uint32_t seed, std::size_t bytes) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> out;
  std::uint64_t counter = 0;
  while (out.size() < bytes) {
    const std::size_t size = 8 * (2 + rng() % 1000);  // 16..8000
    const std::size_t at = out.size();
    out.resize(at + size);
    perf_event_header h{PERF_RECORD_SAMPLE, 0, static_cast<std::uint16_t>(size)};
    std::memcpy(out.data() + at, &h, sizeof h);
    for (std::size_t i = 8; i + 8 <= size; i += 8) {
      const std::uint64_t word = (i / 8) % 2 == 0 ? counter++ : rng();
      std::memcpy(out.data() + at + i, &word, 8);
    }
  }
  return out;
}

// perf 6.1's reading of a data section: each COMPRESSED record into a
// fresh buffer of mmap_len bytes after what was left of the last one; 0
// bytes out is an error ("Couldn't decompress data").
struct PerfLikeRead {
  std::vector<std::byte> records;  // what perf would process, in order
  std::size_t compressed_records = 0;
  std::size_t largest_output = 0;
  std::string problem;
};

PerfLikeRead read_like_perf(std::span<const std::byte> data, std::size_t mmap_len) {
  PerfLikeRead r;
  ZSTD_DStream* d = ZSTD_createDStream();
  ZSTD_initDStream(d);
  for (std::size_t at = 0; at < data.size() && r.problem.empty();) {
    const perf_event_header h = core::load_header(data.data() + at);
    if (h.size < 8 || h.size > data.size() - at) {
      r.problem = "bad record size";
      break;
    }
    if (h.type != kRecordCompressed) {
      r.records.insert(r.records.end(), data.begin() + at, data.begin() + at + h.size);
    } else {
      std::vector<std::byte> buffer(mmap_len);
      ZSTD_inBuffer in{data.data() + at + 8, h.size - 8u, 0};
      ZSTD_outBuffer out{buffer.data(), buffer.size(), 0};
      while (in.pos < in.size) {
        const std::size_t rc = ZSTD_decompressStream(d, &out, &in);
        if (ZSTD_isError(rc) || (out.pos == out.size && in.pos < in.size)) {
          r.problem = ZSTD_isError(rc) ? ZSTD_getErrorName(rc) : "output over mmap_len";
          break;
        }
      }
      if (out.pos == 0) r.problem = "a record decompressed to nothing (perf: Couldn't decompress data)";
      r.largest_output = std::max(r.largest_output, out.pos);
      r.records.insert(r.records.end(), buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(out.pos));
      r.compressed_records++;
    }
    at += h.size;
  }
  ZSTD_freeDStream(d);
  return r;
}

TEST(ZstdRecords, EveryRecordDecompressesAsPerfReadsIt) {
  for (const int level : {1, 3, 22}) {
    ZstdRecordCompressor c(level);
    std::vector<std::byte> file;
    std::vector<std::byte> plain;
    std::span<const std::byte> out;
    // Batches of several sizes, with an uncompressed record between them
    // (the writer's FINISHED_ROUND markers).
    for (std::uint32_t batch = 0; batch < 6; batch++) {
      const std::vector<std::byte> records = make_records(batch, std::size_t{1000} << (batch * 2));
      ASSERT_EQ(c.compress(records, out), "");
      EXPECT_LE(out.size(), ZstdRecordCompressor::bound(records.size()));
      file.insert(file.end(), out.begin(), out.end());
      plain.insert(plain.end(), records.begin(), records.end());
      const perf_event_header round{68, 0, 8};  // PERF_RECORD_FINISHED_ROUND
      const auto* bytes = reinterpret_cast<const std::byte*>(&round);
      file.insert(file.end(), bytes, bytes + 8);
      plain.insert(plain.end(), bytes, bytes + 8);
    }
    const PerfLikeRead r = read_like_perf(file, kCompressSliceBytes);
    ASSERT_EQ(r.problem, "") << "level " << level;
    EXPECT_EQ(r.records, plain) << "level " << level;
    EXPECT_EQ(r.compressed_records, c.total().records);
    EXPECT_LE(r.largest_output, kCompressSliceBytes);
    EXPECT_EQ(c.total().bytes_in + 6 * 8, plain.size());
    EXPECT_LT(c.total().bytes_out, c.total().bytes_in) << "level " << level;  // half the words compress
    EXPECT_GE(c.total().ratio(), 1u);

    std::vector<std::byte> expanded;
    bool any = false;
    ASSERT_EQ(expand_compressed(file, expanded, any), "");
    EXPECT_TRUE(any);
    EXPECT_EQ(expanded, plain);
  }
}

TEST(ZstdRecords, ANewFileStartsANewStream) {
  ZstdRecordCompressor c(1);
  std::span<const std::byte> out;
  const std::vector<std::byte> first = make_records(1, 200'000);
  ASSERT_EQ(c.compress(first, out), "");
  c.restart();
  EXPECT_EQ(c.file().bytes_in, 0u);
  const std::vector<std::byte> second = make_records(2, 100'000);
  ASSERT_EQ(c.compress(second, out), "");
  // The second file alone reads back (a stream of its own).
  const PerfLikeRead r = read_like_perf(out, kCompressSliceBytes);
  ASSERT_EQ(r.problem, "");
  EXPECT_EQ(r.records, second);
  EXPECT_EQ(c.file().bytes_in, second.size());
  EXPECT_EQ(c.total().bytes_in, first.size() + second.size());
}

TEST(ZstdRecords, WithoutCompressedRecordsNothingIsExpanded) {
  const std::vector<std::byte> plain = make_records(3, 10'000);
  std::vector<std::byte> out;
  bool any = true;
  EXPECT_EQ(expand_compressed(plain, out, any), "");
  EXPECT_FALSE(any);
  EXPECT_TRUE(out.empty());
}

TEST(ZstdRecords, ACorruptStreamIsAProblemNotACrash) {
  ZstdRecordCompressor c(1);
  std::span<const std::byte> packed;
  ASSERT_EQ(c.compress(make_records(4, 100'000), packed), "");
  std::vector<std::byte> out(packed.begin(), packed.end());
  out[8] ^= std::byte{0xff};  // the frame's magic number
  std::vector<std::byte> expanded;
  bool any = false;
  const std::string problem = expand_compressed(out, expanded, any);
  EXPECT_TRUE(any);
  EXPECT_NE(problem, "");
  out.resize(out.size() - 3);  // cut inside the last record
  EXPECT_NE(expand_compressed(out, expanded, any), "");
}

}  // namespace
}  // namespace ringsim::real
