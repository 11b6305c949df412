// Archives built byte by byte for tests: zip (local headers, central directory, end record),
// tar headers (ustar, pax records), deflate, gzip, zstd, xz and bzip2 streams, and the hostile
// archives of issue 25 (members sharing bytes, bombs).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace stitchfs::testutil {

// Text that compresses well, with random runs that do not.
std::string Mixed(size_t n, uint32_t seed);
// `data` deflated: raw (window_bits -15) or as one gzip member (31).
std::string Deflate(const std::string& data, int window_bits);
std::string Zstd(const std::string& data);
std::string Xz(const std::string& data);
std::string Bzip2(const std::string& data);
// A zstd frame of `n` zero bytes made of RLE blocks (4 bytes per 128 KiB): a bomb that costs
// nothing to build.
std::string ZstdZeros(uint64_t n);

// Appends `v` as `bytes` little-endian bytes.
void PutLe(std::string& s, uint64_t v, int bytes);

struct ZipMember {
  std::string name;
  int method = 0;           // 0 stored, 8 deflate, 12 bzip2, 93 zstd, 95 xz.
  std::string stored;       // The bytes as they are in the archive.
  std::string original;     // What they decode to (its CRC-32 and size are recorded).
  bool descriptor = false;  // Sizes and CRC in a data descriptor after the data (flag bit 3).
};
// A zip of `members`: local headers and data in order, then the central directory.
std::string MakeZip(const std::vector<ZipMember>& members);
// The local header and data (and descriptor) of `m`.
std::string ZipLocal(const ZipMember& m);
// `body` (local headers and data as the caller lays them out), then a central directory with an
// entry for each member at the local header offset paired with it, then the end record.
std::string ZipWithDirectory(const std::string& body,
                             const std::vector<std::pair<ZipMember, uint64_t>>& entries);

// A zip of `entries` central directory entries that all name one deflate member of `zeros`
// zero bytes (issue 25: 300 entries over one bomb took 104 s and 703 MB to index).
std::string SharedBombZip(int entries, uint64_t zeros);

// A tar header block: `name` (ustar fields), `size`, `type`, checksum filled in.
std::string TarHeader(const std::string& name, uint64_t size, char type,
                      const std::string& prefix = "");
// `s` padded with zeros to a multiple of 512 bytes.
std::string TarPadded(std::string s);
// One pax record "<length> key=value\n".
std::string PaxRecord(const std::string& key, const std::string& value);

}  // namespace stitchfs::testutil
