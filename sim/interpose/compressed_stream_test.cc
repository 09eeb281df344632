// The oracle's reading of perf record -z's COMPRESSED records
// (sim/interpose/compressed_stream.h): records split across COMPRESSED
// records are handed over whole, once, in order; and each way a stream can
// be bad is one line naming it.
#include "sim/interpose/compressed_stream.h"

#include <zstd.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model/records.h"

namespace {

using ringsim::model::PerfRecord;
using ringsim::sim::interpose::CompressedStream;
using Bytes = std::vector<std::byte>;

// A record header and `payload_bytes` bytes of `fill`.
Bytes record(std::uint32_t type, std::size_t payload_bytes, std::uint8_t fill) {
  Bytes out(8 + payload_bytes, std::byte{fill});
  const std::uint16_t misc = 0, size = static_cast<std::uint16_t>(out.size());
  std::memcpy(out.data(), &type, 4);
  std::memcpy(out.data() + 4, &misc, 2);
  std::memcpy(out.data() + 6, &size, 2);
  return out;
}

Bytes concat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// One zstd frame of `plain`.
Bytes compress(const Bytes& plain) {
  Bytes out(ZSTD_compressBound(plain.size()));
  const std::size_t n = ZSTD_compress(out.data(), out.size(), plain.data(), plain.size(), 1);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

// Feeds COMPRESSED records (one per payload, at successive offsets) and
// collects what the stream hands over.
struct Reader {
  CompressedStream stream;
  std::vector<std::unique_ptr<Bytes>> storage;
  std::vector<Bytes> seen;
  std::uint64_t offset = 0;

  std::string add(std::span<const std::byte> payload) {
    const Bytes whole = concat({record(ringsim::model::kTypeCompressed, 0, 0), Bytes(payload.begin(), payload.end())});
    Bytes& kept = *storage.emplace_back(std::make_unique<Bytes>(whole));
    PerfRecord r;
    r.type = ringsim::model::kTypeCompressed;
    r.size = static_cast<std::uint16_t>(kept.size());
    r.offset = offset;
    r.bytes = kept;
    offset += kept.size();
    return stream.add(r, storage, [&](const PerfRecord& rec) { seen.emplace_back(rec.bytes.begin(), rec.bytes.end()); });
  }
};

bool one_line(const std::string& s) { return !s.empty() && s.find('\n') == std::string::npos; }

// One zstd stream of `parts`, one block flushed per part, as perf record -z
// writes a COMPRESSED record per chunk of its ring (each decompresses to
// the part: perf's reader refuses a record that decompresses to nothing).
std::vector<Bytes> compress_parts(const std::vector<Bytes>& parts) {
  ZSTD_CCtx* const cctx = ZSTD_createCCtx();
  std::vector<Bytes> out;
  for (std::size_t i = 0; i < parts.size(); i++) {
    Bytes block(ZSTD_compressBound(parts[i].size()) + 64);
    ZSTD_inBuffer in{parts[i].data(), parts[i].size(), 0};
    ZSTD_outBuffer o{block.data(), block.size(), 0};
    const std::size_t rc = ZSTD_compressStream2(cctx, &o, &in, i + 1 == parts.size() ? ZSTD_e_end : ZSTD_e_flush);
    EXPECT_EQ(rc, 0u);
    block.resize(o.pos);
    out.push_back(block);
  }
  ZSTD_freeCCtx(cctx);
  return out;
}

TEST(CompressedStream, RecordsSplitAcrossCompressedRecordsAreHandedOverWholeOnceInOrder) {
  const Bytes a = record(9, 16, 0xA1), b = record(10, 40, 0xB2), c = record(3, 8, 0xC3);
  const Bytes plain = concat({a, b, c});
  // Every split of the records' bytes into two COMPRESSED records: inside
  // a header, inside a payload, at a boundary.
  for (std::size_t cut = 1; cut < plain.size(); cut++) {
    const std::vector<Bytes> payloads =
        compress_parts({Bytes(plain.begin(), plain.begin() + cut), Bytes(plain.begin() + cut, plain.end())});
    Reader r;
    ASSERT_EQ(r.add(payloads[0]), "") << "cut " << cut;
    const std::size_t whole_first = cut >= a.size() + b.size() ? 2 : cut >= a.size() ? 1 : 0;
    EXPECT_EQ(r.seen.size(), whole_first) << "cut " << cut;
    ASSERT_EQ(r.add(payloads[1]), "") << "cut " << cut;
    EXPECT_EQ(r.stream.finish(), "") << "cut " << cut;
    ASSERT_EQ(r.seen.size(), 3u) << "cut " << cut;
    EXPECT_EQ(r.seen[0], a);
    EXPECT_EQ(r.seen[1], b);
    EXPECT_EQ(r.seen[2], c);
  }
}

TEST(CompressedStream, AnAuxtraceRecordIsWholeWithItsData) {
  Bytes aux = record(ringsim::model::kTypeAuxtrace, 40, 0);
  const std::uint64_t data_bytes = 24;
  std::memcpy(aux.data() + 8, &data_bytes, 8);
  const Bytes with_data = concat({aux, Bytes(data_bytes, std::byte{0x5A})});
  const Bytes frame = compress(with_data);
  Reader r;
  // The header alone first: nothing is whole yet.
  const Bytes header_frame = compress(aux);
  ASSERT_EQ(r.add(frame), "");
  EXPECT_EQ(r.stream.finish(), "");
  ASSERT_EQ(r.seen.size(), 1u);
  EXPECT_EQ(r.seen[0], with_data);
  Reader cut;
  ASSERT_EQ(cut.add(header_frame), "");
  EXPECT_TRUE(cut.seen.empty());
  EXPECT_EQ(cut.stream.finish(), "the compressed stream ends inside a record (48 bytes left over)");
}

TEST(CompressedStream, BytesThatAreNotZstdAreOneLineNamingTheRecord) {
  Reader r;
  ASSERT_EQ(r.add(compress(record(9, 8, 1))), "");
  const Bytes garbage(32, std::byte{0x42});
  const std::string problem = r.add(garbage);
  EXPECT_TRUE(one_line(problem)) << problem;
  EXPECT_EQ(problem.rfind("the COMPRESSED record at offset ", 0), 0u) << problem;
  EXPECT_NE(problem.find(" at offset " + std::to_string(r.offset - 8 - garbage.size()) + ": zstd: "), std::string::npos)
      << problem;
  EXPECT_EQ(r.seen.size(), 1u);
}

TEST(CompressedStream, ARecordThatDecompressesToNothingFailsAsPerfsReaderDoes) {
  Reader r;
  const std::string problem = r.add(compress({}));
  EXPECT_TRUE(one_line(problem)) << problem;
  EXPECT_NE(problem.find("decompresses to nothing"), std::string::npos) << problem;
  EXPECT_NE(problem.find("Couldn't decompress data"), std::string::npos) << problem;
}

TEST(CompressedStream, AStreamThatEndsInsideARecordIsNamedAtTheEnd) {
  const Bytes a = record(9, 16, 1), b = record(9, 24, 2);
  Bytes plain = concat({a, b});
  plain.resize(plain.size() - 10);  // b cut short
  Reader r;
  ASSERT_EQ(r.add(compress(plain)), "");
  ASSERT_EQ(r.seen.size(), 1u);
  EXPECT_EQ(r.seen[0], a);
  EXPECT_EQ(r.stream.finish(), "the compressed stream ends inside a record (22 bytes left over)");
}

TEST(CompressedStream, AMalformedRecordInsideIsNamedByTheWalk) {
  Bytes bad = record(9, 8, 0);
  const std::uint16_t size = 4;  // shorter than a header
  std::memcpy(bad.data() + 6, &size, 2);
  Reader r;
  const std::string problem = r.add(compress(bad));
  EXPECT_TRUE(one_line(problem)) << problem;
  EXPECT_EQ(problem.rfind("inside the compressed stream: ", 0), 0u) << problem;
  EXPECT_TRUE(r.seen.empty());
}

}  // namespace
