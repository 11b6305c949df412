// ZipDirectory: the members of a zip archive, from its central directory (ZIP64 included), and
// where each member's data starts (after its local header).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/base/random_access_file.h"
#include "engine/base/status_or.h"

namespace stitchfs::engine {

struct ZipEntry {
  std::string name;
  uint16_t method = 0;  // 0 stored, 8 deflate; others are refused when read.
  uint16_t flags = 0;   // Bit 0: encrypted.
  uint32_t crc32 = 0;
  uint64_t packed_size = 0, size = 0;
  uint64_t header_offset = 0;  // Of its local header, in the archive file.
  uint64_t data_offset = 0;    // In the archive file.
};

// The file entries of the zip archive `file` (folders left out), in directory order. Every
// offset and size is checked against the file's length, and every member's local header and
// data (folders' too) against the others' and the central directory's bytes: no two may share
// a byte, as no zip writer makes them (ClickHouse's writes one member after another), and a
// hostile archive whose entries all point at one bomb would be decoded once per entry.
// kBackupDamaged naming `display` (and the member, or both members) if the archive is not a
// zip archive or is cut short or inconsistent; kIOError if reading fails.
StatusOr<std::vector<ZipEntry>> ReadZipDirectory(const RandomAccessFile& file,
                                                 const std::string& display);

}  // namespace stitchfs::engine
