#include "engine/backends/archive/zip_directory.h"

#include <algorithm>
#include <cstring>

#include "engine/backends/archive/archive_index.h"

namespace stitchfs::engine {

namespace {

constexpr uint32_t kEndSig = 0x06054b50, kEnd64Sig = 0x06064b50, kLocator64Sig = 0x07064b50;
constexpr uint32_t kCentralSig = 0x02014b50, kLocalSig = 0x04034b50;
constexpr size_t kEndSize = 22, kCentralSize = 46, kLocalSize = 30;

uint64_t Le(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

struct Directory {
  uint64_t offset = 0, size = 0, entries = 0;
};

class ZipParser {
 public:
  ZipParser(const RandomAccessFile& f, const std::string& display) : f_(f), display_(display) {}

  StatusOr<std::vector<ZipEntry>> Parse() {
    ASSIGN_OR_RETURN(Directory dir, FindDirectory());
    std::string bytes(dir.size, '\0');
    RETURN_IF_ERROR(Read(dir.offset, bytes));
    std::vector<ZipEntry> all;
    std::vector<bool> is_file;
    size_t pos = 0;
    for (uint64_t i = 0; i < dir.entries; ++i) {
      ZipEntry e;
      ASSIGN_OR_RETURN(bool file, ParseCentral(bytes, &pos, &e));
      RETURN_IF_ERROR(FindData(&e));
      all.push_back(std::move(e));
      is_file.push_back(file);
    }
    RETURN_IF_ERROR(CheckDisjoint(all, dir.offset));
    std::vector<ZipEntry> out;
    for (size_t i = 0; i < all.size(); ++i) {
      if (is_file[i]) out.push_back(std::move(all[i]));
    }
    return out;
  }

 private:
  Status Damaged(const std::string& what) const {
    return Status::BackupDamaged("archive " + display_ + " is not a readable zip archive: " + what);
  }

  Status Read(uint64_t offset, std::span<char> dst) const {
    ASSIGN_OR_RETURN(size_t n, f_.ReadAt(offset, dst));
    if (n != dst.size()) return Damaged("cut short at byte " + std::to_string(offset + n));
    return Status::OK();
  }

  // The end-of-central-directory record, searched backwards over the longest comment.
  StatusOr<Directory> FindDirectory() const {
    const uint64_t size = f_.size();
    if (size < kEndSize) return Damaged("too short");
    const uint64_t tail_len = std::min<uint64_t>(size, kEndSize + 65535);
    std::string tail(tail_len, '\0');
    RETURN_IF_ERROR(Read(size - tail_len, tail));
    for (size_t i = tail_len - kEndSize + 1; i-- > 0;) {
      const char* p = tail.data() + i;
      if (Le(p, 4) != kEndSig || i + kEndSize + Le(p + 20, 2) != tail_len) continue;
      Directory d{Le(p + 16, 4), Le(p + 12, 4), Le(p + 10, 2)};
      const uint64_t end_at = size - tail_len + i;
      if (d.offset == 0xffffffff || d.size == 0xffffffff || d.entries == 0xffff) {
        ASSIGN_OR_RETURN(d, Zip64Directory(end_at));
      }
      if (d.offset > end_at || d.size > end_at - d.offset)
        return Damaged("directory out of bounds");
      if (d.entries > d.size / kCentralSize) return Damaged("too many directory entries");
      return d;
    }
    return Damaged("no end of central directory");
  }

  StatusOr<Directory> Zip64Directory(uint64_t end_at) const {
    if (end_at < 20) return Damaged("no ZIP64 locator");
    char loc[20];
    RETURN_IF_ERROR(Read(end_at - 20, loc));
    if (Le(loc, 4) != kLocator64Sig) return Damaged("no ZIP64 locator");
    const uint64_t rec_at = Le(loc + 8, 8);
    char rec[56];
    if (rec_at > end_at || end_at - rec_at < sizeof rec) return Damaged("bad ZIP64 locator");
    RETURN_IF_ERROR(Read(rec_at, rec));
    if (Le(rec, 4) != kEnd64Sig) return Damaged("no ZIP64 end record");
    return Directory{Le(rec + 48, 8), Le(rec + 40, 8), Le(rec + 32, 8)};
  }

  // One central header at `*pos`: false for a folder entry.
  StatusOr<bool> ParseCentral(const std::string& dir, size_t* pos, ZipEntry* e) const {
    if (dir.size() - *pos < kCentralSize) return Damaged("directory cut short");
    const char* p = dir.data() + *pos;
    if (Le(p, 4) != kCentralSig) return Damaged("bad directory entry");
    const size_t name_len = Le(p + 28, 2), extra_len = Le(p + 30, 2), comment_len = Le(p + 32, 2);
    if (dir.size() - *pos - kCentralSize < name_len + extra_len + comment_len)
      return Damaged("directory entry cut short");
    e->flags = static_cast<uint16_t>(Le(p + 8, 2));
    e->method = static_cast<uint16_t>(Le(p + 10, 2));
    e->crc32 = static_cast<uint32_t>(Le(p + 16, 4));
    e->packed_size = Le(p + 20, 4);
    e->size = Le(p + 24, 4);
    e->header_offset = Le(p + 42, 4);
    e->name.assign(p + kCentralSize, name_len);
    RETURN_IF_ERROR(ApplyZip64(std::string_view(p + kCentralSize + name_len, extra_len), e));
    *pos += kCentralSize + name_len + extra_len + comment_len;
    return !e->name.empty() && e->name.back() != '/';
  }

  // The ZIP64 extra field gives, in order, those of size, packed size and offset that are
  // 0xffffffff in the header.
  Status ApplyZip64(std::string_view extra, ZipEntry* e) const {
    while (extra.size() >= 4) {
      const uint64_t id = Le(extra.data(), 2), len = Le(extra.data() + 2, 2);
      if (len > extra.size() - 4) return Damaged("bad extra field of " + ShownName(e->name));
      std::string_view body = extra.substr(4, len);
      extra.remove_prefix(4 + len);
      if (id != 1) continue;
      for (uint64_t* v : {&e->size, &e->packed_size, &e->header_offset}) {
        if (*v != 0xffffffff) continue;
        if (body.size() < 8) return Damaged("bad ZIP64 field of " + ShownName(e->name));
        *v = Le(body.data(), 8);
        body.remove_prefix(8);
      }
    }
    return Status::OK();
  }

  Status FindData(ZipEntry* e) const {
    char h[kLocalSize];
    const uint64_t size = f_.size();
    if (e->header_offset > size || size - e->header_offset < kLocalSize)
      return Damaged("member " + ShownName(e->name) + " out of bounds");
    RETURN_IF_ERROR(Read(e->header_offset, h));
    if (Le(h, 4) != kLocalSig) return Damaged("no local header for member " + ShownName(e->name));
    e->data_offset = e->header_offset + kLocalSize + Le(h + 26, 2) + Le(h + 28, 2);
    if (e->data_offset > size || e->packed_size > size - e->data_offset)
      return Damaged("member " + ShownName(e->name) + " runs past the end of the archive");
    if (e->method == 0 && e->packed_size != e->size)
      return Damaged("stored member " + ShownName(e->name) + " has two sizes");
    return Status::OK();
  }

  // No two members' local headers and data share a byte, and none reaches the central
  // directory at `dir_offset`. (A data descriptor after a member's data is not counted: its
  // length is not recorded, and nothing is read from it.)
  Status CheckDisjoint(const std::vector<ZipEntry>& entries, uint64_t dir_offset) const {
    std::vector<size_t> order(entries.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&entries](size_t a, size_t b) {
      return entries[a].header_offset < entries[b].header_offset;
    });
    const ZipEntry* reach = nullptr;  // The member whose bytes end last so far.
    for (size_t i : order) {
      const ZipEntry& e = entries[i];
      if (reach != nullptr && e.header_offset < End(*reach)) {
        return Damaged("members " + ShownName(reach->name) + " and " + ShownName(e.name) +
                       " overlap (bytes " + Span(*reach) + " and " + Span(e) + ")");
      }
      if (End(e) > dir_offset) {
        return Damaged("member " + ShownName(e.name) + " (bytes " + Span(e) +
                       ") overlaps the central directory at byte " + std::to_string(dir_offset));
      }
      if (reach == nullptr || End(e) > End(*reach)) reach = &e;
    }
    return Status::OK();
  }
  static uint64_t End(const ZipEntry& e) { return e.data_offset + e.packed_size; }
  static std::string Span(const ZipEntry& e) {
    return std::to_string(e.header_offset) + "-" + std::to_string(End(e));
  }

  const RandomAccessFile& f_;
  const std::string& display_;
};

}  // namespace

StatusOr<std::vector<ZipEntry>> ReadZipDirectory(const RandomAccessFile& file,
                                                 const std::string& display) {
  return ZipParser(file, display).Parse();
}

}  // namespace stitchfs::engine
