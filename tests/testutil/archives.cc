#include "tests/testutil/archives.h"

#include <bzlib.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string_view>

namespace stitchfs::testutil {

std::string Mixed(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string out;
  while (out.size() < n) {
    if (rng() % 3 == 0) {
      for (int i = 0; i < 5000; ++i) out.push_back(static_cast<char>(rng()));
    } else {
      out += "line " + std::to_string(rng() % 1000) + " of a log that repeats itself\n";
    }
  }
  out.resize(n);
  return out;
}

std::string Deflate(const std::string& data, int window_bits) {
  z_stream z{};
  if (deflateInit2(&z, 6, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2");
  std::string out(deflateBound(&z, data.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("deflate");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string Zstd(const std::string& data) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  const size_t n = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3);
  if (ZSTD_isError(n)) throw std::runtime_error("ZSTD_compress");
  out.resize(n);
  return out;
}

std::string Xz(const std::string& data) {
  std::string out(lzma_stream_buffer_bound(data.size()), '\0');
  size_t n = 0;
  if (lzma_easy_buffer_encode(1, LZMA_CHECK_CRC64, nullptr,
                              reinterpret_cast<const uint8_t*>(data.data()), data.size(),
                              reinterpret_cast<uint8_t*>(out.data()), &n, out.size()) != LZMA_OK)
    throw std::runtime_error("lzma_easy_buffer_encode");
  out.resize(n);
  return out;
}

std::string Bzip2(const std::string& data) {
  std::string out(data.size() + data.size() / 100 + 600, '\0');
  unsigned n = static_cast<unsigned>(out.size());
  if (BZ2_bzBuffToBuffCompress(out.data(), &n, const_cast<char*>(data.data()),
                               static_cast<unsigned>(data.size()), 9, 0, 0) != BZ_OK)
    throw std::runtime_error("BZ2_bzBuffToBuffCompress");
  out.resize(n);
  return out;
}

void PutLe(std::string& s, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
}

std::string ZstdZeros(uint64_t n) {
  constexpr uint64_t kBlock = 128 << 10;
  std::string out;
  PutLe(out, 0xFD2FB528, 4);
  out.push_back(0x00);            // No content size, checksum or dictionary; not single-segment.
  out.push_back((17 - 10) << 3);  // A 128 KiB window.
  do {
    const uint64_t len = std::min(n, kBlock);
    n -= len;
    PutLe(out, (len << 3) | (1 << 1) | (n == 0 ? 1 : 0), 3);  // An RLE block, last or not.
    out.push_back('\0');
  } while (n > 0);
  return out;
}

namespace {

uint32_t Crc(const std::string& s) {
  return static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(s.data()), s.size()));
}

struct Central {
  std::string_view name;
  int method;
  bool descriptor;
  uint32_t crc;
  uint64_t packed, size;
};

Central CentralOf(const ZipMember& m) {
  return {m.name, m.method, m.descriptor, Crc(m.original), m.stored.size(), m.original.size()};
}

// A central directory entry for a member whose local header is at `at`.
void CentralEntry(std::string& dir, const Central& m, uint64_t at) {
  PutLe(dir, 0x02014b50, 4), PutLe(dir, 20, 2), PutLe(dir, 20, 2);
  PutLe(dir, m.descriptor ? 8 : 0, 2), PutLe(dir, m.method, 2), PutLe(dir, 0, 4);
  PutLe(dir, m.crc, 4), PutLe(dir, m.packed, 4), PutLe(dir, m.size, 4);
  PutLe(dir, m.name.size(), 2), PutLe(dir, 0, 2), PutLe(dir, 0, 2), PutLe(dir, 0, 2);
  PutLe(dir, 0, 2), PutLe(dir, 0, 4), PutLe(dir, at, 4);
  dir += m.name;
}

void LocalEntry(std::string& zip, const ZipMember& m) {
  const bool d = m.descriptor;
  PutLe(zip, 0x04034b50, 4), PutLe(zip, 20, 2), PutLe(zip, d ? 8 : 0, 2);
  PutLe(zip, m.method, 2), PutLe(zip, 0, 4), PutLe(zip, d ? 0 : Crc(m.original), 4);
  PutLe(zip, d ? 0 : m.stored.size(), 4), PutLe(zip, d ? 0 : m.original.size(), 4);
  PutLe(zip, m.name.size(), 2), PutLe(zip, 0, 2);
  zip += m.name + m.stored;
  if (d) {
    PutLe(zip, 0x08074b50, 4), PutLe(zip, Crc(m.original), 4);
    PutLe(zip, m.stored.size(), 4), PutLe(zip, m.original.size(), 4);
  }
}

void EndRecord(std::string& zip, uint64_t entries, uint64_t dir_size, uint64_t dir_at) {
  PutLe(zip, 0x06054b50, 4), PutLe(zip, 0, 2), PutLe(zip, 0, 2), PutLe(zip, entries, 2);
  PutLe(zip, entries, 2), PutLe(zip, dir_size, 4), PutLe(zip, dir_at, 4), PutLe(zip, 0, 2);
}

}  // namespace

std::string ZipLocal(const ZipMember& m) {
  std::string out;
  LocalEntry(out, m);
  return out;
}

std::string ZipWithDirectory(const std::string& body,
                             const std::vector<std::pair<ZipMember, uint64_t>>& entries) {
  std::string dir;
  for (const auto& [m, at] : entries) CentralEntry(dir, CentralOf(m), at);
  std::string zip = body + dir;
  EndRecord(zip, entries.size(), dir.size(), body.size());
  return zip;
}

std::string MakeZip(const std::vector<ZipMember>& members) {
  std::string body;
  std::vector<std::pair<ZipMember, uint64_t>> entries;
  for (const ZipMember& m : members) {
    entries.emplace_back(m, body.size());
    LocalEntry(body, m);
  }
  return ZipWithDirectory(body, entries);
}

std::string SharedBombZip(int entries, uint64_t zeros) {
  const std::string original(zeros, '\0');
  const ZipMember bomb{"data/bomb.bin", 8, Deflate(original, -15), original};
  const Central c = CentralOf(bomb);
  std::string body = ZipLocal(bomb), dir;
  for (int i = 0; i < entries; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "data/m%03d.bin", i);
    Central named = c;
    named.name = name;
    CentralEntry(dir, named, 0);
  }
  std::string zip = body + dir;
  EndRecord(zip, entries, dir.size(), body.size());
  return zip;
}

std::string TarHeader(const std::string& name, uint64_t size, char type,
                      const std::string& prefix) {
  std::string h(512, '\0');
  std::memcpy(h.data(), name.data(), std::min<size_t>(name.size(), 100));
  std::snprintf(h.data() + 124, 12, "%011llo", static_cast<unsigned long long>(size));
  h[156] = type;
  std::memcpy(h.data() + 257,
              "ustar\0"
              "00",
              8);
  std::memcpy(h.data() + 345, prefix.data(), std::min<size_t>(prefix.size(), 155));
  std::memset(h.data() + 148, ' ', 8);
  unsigned sum = 0;
  for (char c : h) sum += static_cast<unsigned char>(c);
  std::snprintf(h.data() + 148, 8, "%06o", sum);
  return h;
}

std::string TarPadded(std::string s) {
  s.resize((s.size() + 511) / 512 * 512, '\0');
  return s;
}

std::string PaxRecord(const std::string& key, const std::string& value) {
  const std::string body = " " + key + "=" + value + "\n";
  size_t n = body.size() + 1;
  while (std::to_string(n).size() + body.size() != n) ++n;
  return std::to_string(n) + body;
}

}  // namespace stitchfs::testutil
