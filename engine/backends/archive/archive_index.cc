#include "engine/backends/archive/archive_index.h"

#include <algorithm>
#include <cstring>

#include "engine/base/index_codec.h"

namespace stitchfs::engine {

namespace {

// Sections (index_codec.h): the archive's stamp and kind, then one table each.
constexpr uint32_t kArchiveHead = IndexTag("HEAD"), kStreams = IndexTag("STRM"),
                   kMembers = IndexTag("MEMB"), kPoints = IndexTag("PNTS"),
                   kWindows = IndexTag("WNDW"), kPieceSums = IndexTag("SUMS");
constexpr uint32_t kArchiveTags[] = {kArchiveHead, kStreams, kMembers,
                                     kPoints,      kWindows, kPieceSums};
// 2: built under IndexBudget, zip members sharing no bytes; an index an older stitch built (and
// cached) for a hostile archive is not trusted, and the archive is indexed again. 3: in the
// index codec's container.
constexpr IndexKind kArchiveKind{
    "archive index", {'S', 'T', 'F', 'S', 'A', 'I', 'D', 'X'}, 3, kArchiveTags};

struct HeadRecord {
  uint64_t dev, ino, size;  // The archive's stamp.
  int64_t mtime_sec, mtime_nsec, ctime_sec, ctime_nsec;
  uint64_t container, codec, cached_size;
};

struct StreamRecord {
  uint64_t method, in_offset, in_length, out_size;
  uint32_t first_point, point_count;
};

struct PointRecord {
  uint64_t in_bit, out, window_offset;
  uint32_t window_size, pad;
};

// A member: its name (a string), stream (u32), offset and size (u64).
constexpr size_t kMemberMinBytes = 4 + 4 + 8 + 8;

HeadRecord HeadOf(const ArchiveIndex& x, const ArchiveStamp& s) {
  return {s.dev,
          s.ino,
          s.size,
          s.mtime.sec,
          s.mtime.nsec,
          s.ctime.sec,
          s.ctime.nsec,
          static_cast<uint64_t>(x.kind.container),
          static_cast<uint64_t>(x.kind.codec),
          x.cached_size};
}

std::string MembersOf(const ArchiveIndex& x) {
  std::string out;
  const auto put = [&out](const auto& v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
  };
  put(uint64_t{x.members.size()});
  for (const ArchiveMember& m : x.members) {
    put(static_cast<uint32_t>(m.name.size()));
    out += m.name;
    put(m.stream);
    put(m.offset);
    put(m.size);
  }
  return out;
}

Status Refused(const std::string& why) {
  return Status::BackupDamaged("archive index is damaged or stale: " + why);
}

Status ReadHead(const IndexView& v, const ArchiveStamp& s, ArchiveIndex& x) {
  HeadRecord h;
  RETURN_IF_ERROR(v.Record(kArchiveHead, &h));
  if (h.dev != s.dev || h.ino != s.ino || h.size != s.size || h.mtime_sec != s.mtime.sec ||
      h.mtime_nsec != s.mtime.nsec || h.ctime_sec != s.ctime.sec || h.ctime_nsec != s.ctime.nsec) {
    return Refused("made for another version of the archive");
  }
  if (h.container > 2 || h.codec > 5) return Refused("kind");
  x.kind = {static_cast<ArchiveContainer>(h.container), static_cast<StreamCodec>(h.codec)};
  x.cached_size = h.cached_size;
  return Status::OK();
}

Status ReadStreams(const IndexView& v, ArchiveIndex& x) {
  ASSIGN_OR_RETURN(IndexCursor c, v.Section(kStreams));
  std::vector<StreamRecord> copied;
  RETURN_IF_ERROR(c.CopyRest(&copied));
  for (const StreamRecord& r : copied) {
    if (r.method > 2) return Refused("stream method");
    x.streams.push_back({static_cast<StreamMethod>(r.method), r.in_offset, r.in_length, r.out_size,
                         r.first_point, r.point_count});
  }
  return Status::OK();
}

Status ReadMembers(const IndexView& v, ArchiveIndex& x) {
  ASSIGN_OR_RETURN(IndexCursor c, v.Section(kMembers));
  uint64_t n;
  RETURN_IF_ERROR(c.Count(&n, kMemberMinBytes));
  x.members.resize(n);
  for (ArchiveMember& m : x.members) {
    RETURN_IF_ERROR(c.String(&m.name));
    RETURN_IF_ERROR(c.U32(&m.stream));
    RETURN_IF_ERROR(c.U64(&m.offset));
    RETURN_IF_ERROR(c.U64(&m.size));
    if (m.stream >= x.streams.size()) return Refused("member's stream");
  }
  return c.End();
}

Status ReadPoints(const IndexView& v, ArchiveIndex& x) {
  ASSIGN_OR_RETURN(IndexCursor c, v.Section(kPoints));
  std::vector<PointRecord> copied;
  RETURN_IF_ERROR(c.CopyRest(&copied));
  for (const PointRecord& r : copied) {
    if (r.window_size > 32768 || r.pad != 0) return Refused("restart point");
    x.points.push_back({r.in_bit, r.out, r.window_offset, r.window_size});
  }
  return Status::OK();
}

Status ReadTables(const IndexView& v, const ArchiveStamp& stamp, ArchiveIndex& x) {
  RETURN_IF_ERROR(ReadHead(v, stamp, x));
  RETURN_IF_ERROR(ReadStreams(v, x));
  RETURN_IF_ERROR(ReadMembers(v, x));
  RETURN_IF_ERROR(ReadPoints(v, x));
  RETURN_IF_ERROR(v.Bytes(kWindows, &x.mapped_windows));
  ASSIGN_OR_RETURN(IndexCursor sums, v.Section(kPieceSums));
  return sums.CopyRest(&x.piece_sums);
}

// Every offset within its table or the archive, so readers need no check of their own.
bool Consistent(const ArchiveIndex& x, uint64_t archive_size) {
  for (const ArchiveStream& s : x.streams) {
    if (s.method != StreamMethod::kCached &&
        (s.in_offset > archive_size || s.in_length > archive_size - s.in_offset))
      return false;
    if (s.method == StreamMethod::kStored && s.out_size != s.in_length) return false;
    if (s.method == StreamMethod::kCached && s.out_size != x.cached_size) return false;
    if (s.method == StreamMethod::kDeflate &&
        (s.point_count == 0 || s.first_point > x.points.size() ||
         s.point_count > x.points.size() - s.first_point))
      return false;
  }
  for (const RestartPoint& p : x.points) {
    const size_t windows = x.Windows().size();
    if (p.window_offset > windows || p.window_size > windows - p.window_offset ||
        p.in_bit / 8 > archive_size)
      return false;
  }
  for (const ArchiveMember& m : x.members) {
    const ArchiveStream& s = x.streams[m.stream];
    if (m.offset > s.out_size || m.size > s.out_size - m.offset) return false;
  }
  const uint64_t pieces =
      (x.cached_size + ArchiveIndex::kCachedPiece - 1) / ArchiveIndex::kCachedPiece;
  return x.piece_sums.size() == pieces &&
         std::is_sorted(
             x.members.begin(), x.members.end(),
             [](const ArchiveMember& a, const ArchiveMember& b) { return a.name < b.name; });
}

}  // namespace

std::string ShownName(std::string_view name) {
  constexpr size_t kShown = 256;
  return name.size() <= kShown ? std::string(name) : std::string(name.substr(0, kShown)) + "...";
}

const ArchiveMember* ArchiveIndex::Find(std::string_view name) const {
  auto it = std::lower_bound(members.begin(), members.end(), name,
                             [](const ArchiveMember& m, std::string_view n) { return m.name < n; });
  return it != members.end() && it->name == name ? &*it : nullptr;
}

void ArchiveIndex::SortMembers() {
  std::stable_sort(members.begin(), members.end(),
                   [](const ArchiveMember& a, const ArchiveMember& b) { return a.name < b.name; });
  std::vector<ArchiveMember> unique;
  for (size_t i = 0; i < members.size(); ++i) {
    if (i + 1 < members.size() && members[i + 1].name == members[i].name) continue;
    unique.push_back(std::move(members[i]));
  }
  members = std::move(unique);
}

std::string EncodeArchiveIndex(const ArchiveIndex& x, const ArchiveStamp& stamp) {
  std::vector<StreamRecord> streams;
  for (const ArchiveStream& s : x.streams) {
    streams.push_back({static_cast<uint64_t>(s.method), s.in_offset, s.in_length, s.out_size,
                       s.first_point, s.point_count});
  }
  std::vector<PointRecord> points;
  for (const RestartPoint& p : x.points) {
    points.push_back({p.in_bit, p.out, p.window_offset, p.window_size, 0});
  }
  IndexEncoder e(kArchiveKind);
  e.AddRecord(kArchiveHead, HeadOf(x, stamp));
  e.AddArray(kStreams, std::span<const StreamRecord>(streams));
  e.Add(kMembers, MembersOf(x));
  e.AddArray(kPoints, std::span<const PointRecord>(points));
  e.Add(kWindows, x.Windows());
  e.AddArray(kPieceSums, std::span<const uint64_t>(x.piece_sums));
  return e.Finish();
}

StatusOr<ArchiveIndex> DecodeArchiveIndex(std::string_view bytes, const ArchiveStamp& stamp,
                                          std::shared_ptr<const void> owner) {
  ASSIGN_OR_RETURN(const IndexView v, IndexView::Open(bytes, kArchiveKind));
  ArchiveIndex x;
  RETURN_IF_ERROR(ReadTables(v, stamp, x));
  if (owner) {
    x.windows_owner = std::move(owner);  // The windows stay in `bytes`.
  } else {
    x.windows.assign(x.mapped_windows);
    x.mapped_windows = {};
  }
  if (!Consistent(x, stamp.size)) return Refused("offsets out of bounds or members unsorted");
  return x;
}

}  // namespace stitchfs::engine
