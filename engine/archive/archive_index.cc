#include "engine/archive/archive_index.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>

namespace stitchfs::engine {

namespace {

// 2: built under IndexBudget, zip members sharing no bytes; an index an older stitch built (and
// cached) for a hostile archive is not trusted, and the archive is indexed again.
constexpr char kMagic[8] = {'S', 'T', 'I', 'T', 'C', 'H', 'A', '2'};

class Writer {
 public:
  void U64(uint64_t v) { out_.append(reinterpret_cast<const char*>(&v), 8); }
  void Str(std::string_view s) {
    U64(s.size());
    out_.append(s);
  }
  std::string Finish() {
    const uint64_t sum = XXH3_64bits(out_.data(), out_.size());
    U64(sum);
    return std::move(out_);
  }

 private:
  std::string out_{kMagic, sizeof kMagic};
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool U64(uint64_t* v) {
    if (in_.size() < 8) return false;
    std::memcpy(v, in_.data(), 8);
    in_.remove_prefix(8);
    return true;
  }
  bool Str(std::string* s) {
    std::string_view v;
    if (!View(&v)) return false;
    s->assign(v);
    return true;
  }
  bool View(std::string_view* v) {
    uint64_t n;
    if (!U64(&n) || n > in_.size()) return false;
    *v = in_.substr(0, n);
    in_.remove_prefix(n);
    return true;
  }
  bool Count(uint64_t* n, uint64_t record_bytes) {
    return U64(n) && *n <= in_.size() / record_bytes;  // No allocation beyond the input.
  }
  bool done() const { return in_.empty(); }

 private:
  std::string_view in_;
};

void PutStamp(Writer& w, const ArchiveStamp& s) {
  for (uint64_t v : {s.dev, s.ino, s.size, static_cast<uint64_t>(s.mtime.sec),
                     static_cast<uint64_t>(s.mtime.nsec), static_cast<uint64_t>(s.ctime.sec),
                     static_cast<uint64_t>(s.ctime.nsec)}) {
    w.U64(v);
  }
}

bool StampMatches(Reader& r, const ArchiveStamp& s) {
  uint64_t v[7];
  for (uint64_t& x : v) {
    if (!r.U64(&x)) return false;
  }
  return v[0] == s.dev && v[1] == s.ino && v[2] == s.size &&
         v[3] == static_cast<uint64_t>(s.mtime.sec) &&
         v[4] == static_cast<uint64_t>(s.mtime.nsec) &&
         v[5] == static_cast<uint64_t>(s.ctime.sec) && v[6] == static_cast<uint64_t>(s.ctime.nsec);
}

bool ReadStreams(Reader& r, ArchiveIndex& x) {
  uint64_t n;
  if (!r.Count(&n, 48)) return false;
  x.streams.resize(n);
  for (ArchiveStream& s : x.streams) {
    uint64_t method, first, count;
    if (!r.U64(&method) || !r.U64(&s.in_offset) || !r.U64(&s.in_length) || !r.U64(&s.out_size) ||
        !r.U64(&first) || !r.U64(&count) || method > 2 || first > UINT32_MAX ||
        count > UINT32_MAX) {
      return false;
    }
    s.method = static_cast<StreamMethod>(method);
    s.first_point = static_cast<uint32_t>(first);
    s.point_count = static_cast<uint32_t>(count);
  }
  return true;
}

bool ReadTables(Reader& r, ArchiveIndex& x) {
  uint64_t n;
  if (!ReadStreams(r, x) || !r.Count(&n, 32)) return false;
  x.members.resize(n);
  for (ArchiveMember& m : x.members) {
    uint64_t stream;
    if (!r.Str(&m.name) || !r.U64(&stream) || !r.U64(&m.offset) || !r.U64(&m.size) ||
        stream >= x.streams.size()) {
      return false;
    }
    m.stream = static_cast<uint32_t>(stream);
  }
  if (!r.Count(&n, 32)) return false;
  x.points.resize(n);
  for (RestartPoint& p : x.points) {
    uint64_t ws;
    if (!r.U64(&p.in_bit) || !r.U64(&p.out) || !r.U64(&p.window_offset) || !r.U64(&ws) ||
        ws > 32768) {
      return false;
    }
    p.window_size = static_cast<uint32_t>(ws);
  }
  if (!r.View(&x.mapped_windows) || !r.U64(&x.cached_size) || !r.Count(&n, 8)) return false;
  x.piece_sums.resize(n);
  for (uint64_t& s : x.piece_sums) {
    if (!r.U64(&s)) return false;
  }
  return r.done();
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
  Writer w;
  PutStamp(w, stamp);
  w.U64(static_cast<uint64_t>(x.kind.container));
  w.U64(static_cast<uint64_t>(x.kind.codec));
  w.U64(x.streams.size());
  for (const ArchiveStream& s : x.streams) {
    for (uint64_t v : {static_cast<uint64_t>(s.method), s.in_offset, s.in_length, s.out_size,
                       uint64_t{s.first_point}, uint64_t{s.point_count}}) {
      w.U64(v);
    }
  }
  w.U64(x.members.size());
  for (const ArchiveMember& m : x.members) {
    w.Str(m.name);
    w.U64(m.stream);
    w.U64(m.offset);
    w.U64(m.size);
  }
  w.U64(x.points.size());
  for (const RestartPoint& p : x.points) {
    for (uint64_t v : {p.in_bit, p.out, p.window_offset, uint64_t{p.window_size}}) w.U64(v);
  }
  w.Str(x.Windows());
  w.U64(x.cached_size);
  w.U64(x.piece_sums.size());
  for (uint64_t s : x.piece_sums) w.U64(s);
  return w.Finish();
}

StatusOr<ArchiveIndex> DecodeArchiveIndex(std::string_view bytes, const ArchiveStamp& stamp,
                                          std::shared_ptr<const void> owner) {
  const Status bad = Status::BackupDamaged("archive index is damaged or stale");
  if (bytes.size() < sizeof kMagic + 8 || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    return bad;
  uint64_t sum;
  std::memcpy(&sum, bytes.data() + bytes.size() - 8, 8);
  bytes.remove_suffix(8);
  if (XXH3_64bits(bytes.data(), bytes.size()) != sum) return bad;
  Reader r(bytes.substr(sizeof kMagic));
  ArchiveIndex x;
  uint64_t container, codec;
  if (!StampMatches(r, stamp) || !r.U64(&container) || !r.U64(&codec) || container > 2 ||
      codec > 5 || !ReadTables(r, x)) {
    return bad;
  }
  if (owner) {
    x.windows_owner = std::move(owner);  // The windows stay in `bytes`.
  } else {
    x.windows.assign(x.mapped_windows);
    x.mapped_windows = {};
  }
  if (!Consistent(x, stamp.size)) return bad;
  x.kind = {static_cast<ArchiveContainer>(container), static_cast<StreamCodec>(codec)};
  return x;
}

}  // namespace stitchfs::engine
