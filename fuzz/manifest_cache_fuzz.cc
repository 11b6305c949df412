// libFuzzer target for the manifest cache's file format (ManifestFile::Read and Write). The
// first input byte picks a mode:
//   0  the rest is a cache file, read as it is;
//   1  the rest chooses a valid cache file (made at startup by ManifestFile::Write from a small
//      parsed manifest) and byte mutations of it (see Mutate): most fail the checksum, but the
//      header of the index codec (engine/base/index_codec.h: magic, versions, byte order,
//      section count, length) is outside it, so its checks are reached;
//   2  as 1, then the file's own XXH3-128 checksum is recomputed, so structural corruption
//      behind a valid checksum is fuzzed too;
//   3  the rest is a manifest document: if it parses, Write then Read must give it back, and
//      the same file must be refused for another identity, with a byte flipped or cut short.
// Whatever Read accepts is walked with every lookup and must satisfy every invariant of a
// parsed manifest.
#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/format/manifest_file.h"
#include "engine/format/manifest_reader.h"
#include "engine/storage/backup.h"
#include "fuzz/fuzz_common.h"

namespace {

using stitchfs::engine::Manifest;
using stitchfs::engine::ManifestFile;
using stitchfs::engine::ManifestIdentity;
using stitchfs::fuzz::Require;

// The identity every cache file here is written for and read with (seed files use it too).
// Times stay zero.
ManifestIdentity Identity() {
  ManifestIdentity id;
  id.dev = 0xfd01;
  id.ino = 4242;
  id.size = 123456;
  return id;
}
const ManifestIdentity kIdentity = Identity();

// Where the file's header ends and where in it the XXH3-128 of the rest of the file is kept
// (low, then high 64 bits), as engine/base/index_codec.h lays them out. Found at startup in the
// files Write makes (FindChecksum), so a change of the header's size does not break this.
size_t g_header_bytes = 0;
size_t g_hash_offset = 0;

// Small manifests the valid cache files are made from: ClickHouse's kinds of entries (stored,
// stitched, whole from the base, deduplicated, empty) and stitchfs's (metadata, hard links,
// folders, symlinks, XXH3 checksums, a missing file).
const char* const kSamples[] = {
    ("<config><version>1</version><deduplicate_files>1</deduplicate_files>"
     "<timestamp>2026-10-02 03:00:00</timestamp><uuid>5c3e1a2b-0d4f-4e6a-9b8c-7d6e5f4a3b2c</uuid>"
     "<base_backup>File('../b0')</base_backup>"
     "<base_backup_uuid>0f1e2d3c-4b5a-4968-8776-655443322110</base_backup_uuid><contents>"
     "<file><name>data/db/log/data.bin</name><size>8023</size>"
     "<checksum>5a1f10f638dc7a226231f3fd927d1726</checksum><use_base>true</use_base>"
     "<base_size>3022</base_size><base_checksum>28b5529750ac210952ffd366774363ed</base_checksum>"
     "</file>"
     "<file><name>data/db/t/all_1_1_0/columns.txt</name><size>48</size>"
     "<checksum>9e107d9d372bb6826bd81d3542a419d6</checksum><use_base>true</use_base></file>"
     "<file><name>data/db/t/all_1_1_0/empty.idx</name><size>0</size></file>"
     "<file><name>data/db/t/all_2_2_0/columns.txt</name><size>48</size>"
     "<checksum>9e107d9d372bb6826bd81d3542a419d6</checksum></file>"
     "<file><name>store/copy.txt</name><size>6</size>"
     "<checksum>e4d909c290d0fb1ca068ffaddf22cbd0</checksum>"
     "<data_file>store/new &amp; &lt;odd&gt; name.txt</data_file></file>"
     "<file><name>store/new &amp; &lt;odd&gt; name.txt</name><size>6</size>"
     "<checksum>e4d909c290d0fb1ca068ffaddf22cbd0</checksum></file>"
     "</contents></config>"),

    ("<config><version>2</version><deduplicate_files>1</deduplicate_files>"
     "<timestamp>2026-12-02 10:00:00</timestamp><uuid>11111111-2222-4333-8444-555555555555</uuid>"
     "<stitchfs_checksum>xxh3_128</stitchfs_checksum><stitchfs_incomplete>1</stitchfs_incomplete>"
     "<contents>"
     "<file><name>a/hard1</name><size>5</size><checksum>0123456789abcdef0123456789abcdef</checksum>"
     "<stitchfs_meta>644 1000 1000 1764745200123456789 1764745200123456789 77 2049 2"
     "</stitchfs_meta></file>"
     "<file><name>a/hard2</name><size>5</size><checksum>0123456789abcdef0123456789abcdef</checksum>"
     "<data_file>a/hard1</data_file><stitchfs_meta>644 1000 1000 1764745200123456789 "
     "1764745200123456789 77 2049 2</stitchfs_meta></file>"
     "<file><name>b/empty</name><size>0</size>"
     "<stitchfs_meta>600 0 0 -5000000000.000000001 0 3 2049</stitchfs_meta></file>"
     "<file><name>secret</name><size>10</size><checksum>fedcba9876543210fedcba9876543210</checksum>"
     "<encrypted_by_disk>true</encrypted_by_disk></file>"
     "</contents>"
     "<stitchfs_dir>755 1000 1000 1764745200000000000 1764745200000000000 12 2049 empty_dir"
     "</stitchfs_dir>"
     "<stitchfs_symlink>777 1000 1000 0 0 13 2049 4 linkb/empty</stitchfs_symlink>"
     "<stitchfs_missing>6 a/lostPermission denied</stitchfs_missing></config>"),

    ("<config><version>1</version><timestamp>1970-01-01 00:00:00</timestamp>"
     "<uuid>00000000-0000-0000-0000-000000000000</uuid><contents/></config>"),
};

std::vector<std::string>& ValidFiles() {
  static std::vector<std::string> files;
  return files;
}

stitchfs::fuzz::MemFile& File() {
  static stitchfs::fuzz::MemFile file;
  return file;
}

XXH128_hash_t StoredHash(const std::string& f, size_t at) {
  XXH128_hash_t h;
  std::memcpy(&h.low64, f.data() + at, 8);
  std::memcpy(&h.high64, f.data() + at + 8, 8);
  return h;
}

XXH128_hash_t ContentHash(const std::string& f, size_t header_bytes) {
  return XXH3_128bits(f.data() + header_bytes, f.size() - header_bytes);
}

// True if `f` has the checksum of its content after `header_bytes` at `at`.
bool ChecksumAt(const std::string& f, size_t header_bytes, size_t at) {
  return header_bytes < f.size() && at + 16 <= header_bytes &&
         XXH128_isEqual(StoredHash(f, at), ContentHash(f, header_bytes));
}

// Sets g_header_bytes and g_hash_offset from a file Write made.
void FindChecksum(const std::string& f) {
  for (size_t header = 16; header <= 1024 && header < f.size(); header += 8) {
    const XXH128_hash_t h = ContentHash(f, header);
    for (size_t at = 0; at + 16 <= header; at += 8) {
      if (XXH128_isEqual(StoredHash(f, at), h)) {
        g_header_bytes = header;
        g_hash_offset = at;
        return;
      }
    }
  }
  stitchfs::fuzz::Fail(
      "no XXH3-128 of the rest of the file found in a cache file's header: the cache format "
      "changed; update FindChecksum in fuzz/manifest_cache_fuzz.cc");
}

void MakeValidFiles() {
  for (const char* xml : kSamples) {
    auto m = stitchfs::engine::ParseManifest(xml, "sample");
    Require(m.ok(), "a sample manifest parses", m.status().ToString());
    Require(ManifestFile::Write(File().Set(""), **m, kIdentity).ok(), "ManifestFile::Write");
    std::string f = File().Contents();
    if (g_header_bytes == 0) FindChecksum(f);
    Require(ChecksumAt(f, g_header_bytes, g_hash_offset),
            "every cache file keeps its checksum at the same place");
    Require(ManifestFile::Read(File().fd(), kIdentity).ok(), "a sample cache file reads back");
    ValidFiles().push_back(std::move(f));
  }
}

// Applies 4-byte mutations [offset low, offset high, op, value] to `f`: op % 4 is 0 (xor the
// byte), 1 (set the byte), 2 (add the signed value to the 32-bit word there) or 3 (add it to
// the 64-bit word there). Offsets wrap around the file size.
void Mutate(std::string_view ops, std::string* f) {
  for (size_t k = 0; k + 4 <= ops.size() && k < 4 * 64; k += 4) {
    const auto b = [&](size_t i) { return static_cast<uint8_t>(ops[k + i]); };
    const size_t off = (b(0) | size_t{b(1)} << 8) % f->size();
    const auto delta = static_cast<int8_t>(b(3));
    switch (b(2) % 4) {
      case 0:
        (*f)[off] = static_cast<char>((*f)[off] ^ b(3));
        break;
      case 1:
        (*f)[off] = static_cast<char>(b(3));
        break;
      case 2:
        if (off + 4 <= f->size()) {
          uint32_t v;
          std::memcpy(&v, f->data() + off, 4);
          v += static_cast<uint32_t>(static_cast<int32_t>(delta));
          std::memcpy(f->data() + off, &v, 4);
        }
        break;
      case 3:
        if (off + 8 <= f->size()) {
          uint64_t v;
          std::memcpy(&v, f->data() + off, 8);
          v += static_cast<uint64_t>(static_cast<int64_t>(delta));
          std::memcpy(f->data() + off, &v, 8);
        }
        break;
    }
  }
}

void FixChecksum(std::string* f) {
  if (f->size() <= g_header_bytes) return;
  const XXH128_hash_t h = ContentHash(*f, g_header_bytes);
  std::memcpy(f->data() + g_hash_offset, &h.low64, 8);
  std::memcpy(f->data() + g_hash_offset + 8, &h.high64, 8);
}

// Reads `bytes` as a cache file; walks and checks what is accepted.
void ReadAndWalk(std::string_view bytes) {
  auto m = ManifestFile::Read(File().Set(bytes), kIdentity);
  if (m.ok()) stitchfs::fuzz::ExerciseManifest(**m);
}

// Write then Read gives the manifest back; the file is refused for another identity, with one
// byte of its checksummed part flipped, and one byte short.
void RoundTrip(std::string_view xml) {
  auto parsed = stitchfs::engine::ParseManifest(xml, "fuzz");
  if (!parsed.ok()) return;
  const Manifest& m = **parsed;
  Require(ManifestFile::Write(File().Set(""), m, kIdentity).ok(), "ManifestFile::Write");
  const std::string f = File().Contents();
  auto back = ManifestFile::Read(File().fd(), kIdentity);
  Require(back.ok(), "a cache file Write made reads back", back.status().ToString());
  const std::string diff = stitchfs::fuzz::DiffEntriesAndNodes(m, **back);
  Require(diff.empty(), "a cache file has the same entries and nodes", diff);
  const std::string header_diff = stitchfs::fuzz::DiffHeaders(m.header(), (*back)->header());
  Require(header_diff.empty(), "a cache file has the same header", header_diff);
  Require(std::ranges::equal(m.by_name(), (*back)->by_name()),
          "a cache file has the same by_name()");
  stitchfs::fuzz::ExerciseManifest(**back);

  ManifestIdentity other = kIdentity;
  other.ino += 1;
  Require(!ManifestFile::Read(File().fd(), other).ok(), "a cache file is refused for another id");
  std::string flipped = f;
  const size_t at = g_header_bytes + xml.size() % (f.size() - g_header_bytes);
  flipped[at] = static_cast<char>(flipped[at] ^ 0x20);
  Require(!ManifestFile::Read(File().Set(flipped), kIdentity).ok(),
          "a cache file with a flipped byte is refused", std::to_string(at));
  Require(
      !ManifestFile::Read(File().Set(std::string_view(f).substr(0, f.size() - 1)), kIdentity).ok(),
      "a cache file cut short is refused");
}

// With STITCHFS_FUZZ_WRITE_SEEDS=DIR, writes the valid cache files as mode 0 inputs into DIR
// and exits: how the raw seeds in fuzz/corpus/manifest_cache/ were made (run it again after a
// change of the cache format).
void WriteSeeds(const char* dir) {
  for (size_t i = 0; i < ValidFiles().size(); ++i) {
    const std::string path = std::string(dir) + "/raw-valid-" + std::to_string(i);
    std::FILE* f = std::fopen(path.c_str(), "wb");
    Require(f != nullptr, "cannot create", path);
    const std::string bytes = '\0' + ValidFiles()[i];
    Require(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size() && std::fclose(f) == 0,
            "cannot write", path);
  }
  std::exit(0);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  MakeValidFiles();
  if (const char* dir = std::getenv("STITCHFS_FUZZ_WRITE_SEEDS")) WriteSeeds(dir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      ReadAndWalk(rest);
      break;
    case 1:
    case 2: {
      if (rest.empty()) return 0;
      std::string f = ValidFiles()[static_cast<uint8_t>(rest[0]) % ValidFiles().size()];
      Mutate(rest.substr(1), &f);
      if (data[0] % 4 == 2) FixChecksum(&f);
      ReadAndWalk(f);
      break;
    }
    case 3:
      RoundTrip(rest);
      break;
  }
  return 0;
}
