#include "engine/storage/manifest_file.h"

#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <tuple>
#include <type_traits>

#include "engine/base/path_check.h"
#include "engine/format/hard_links.h"

namespace stitchfs::engine {
namespace {

constexpr char kMagic[8] = {'S', 'T', 'C', 'H', 'M', 'F', '0', '3'};
constexpr uint64_t kNone = UINT64_MAX;  // No data file name (same as the name).

struct DiskRecord {
  uint64_t size, base_size;
  Checksum checksum, base_checksum;
  uint64_t name, data_file;  // Offsets into the names section.
  uint32_t name_len, data_file_len, flags, meta_index;
};
struct DiskNode {
  uint64_t name, target;
  uint32_t name_len, target_len, type, pad;
  PosixMeta meta;
};
struct FileHeader {
  char magic[8];
  uint32_t record_size, node_size, meta_size, pad;
  ManifestIdentity id;
  uint64_t strings, entries, metas, nodes, by_name, by_content, names;
  uint64_t hash_low, hash_high;  // XXH3-128 of everything after the header.
};
static_assert(std::is_trivially_copyable_v<PosixMeta> && std::is_trivially_copyable_v<FileHeader>);

// Buffered positional writes after the header, hashed on the way.
class Out {
 public:
  explicit Out(int fd) : fd_(fd), state_(XXH3_createState()) { XXH3_128bits_reset(state_); }
  ~Out() { XXH3_freeState(state_); }
  void Put(const void* p, size_t n) {
    XXH3_128bits_update(state_, p, n);
    const char* c = static_cast<const char*>(p);
    buf_.append(c, n);
    if (buf_.size() >= (1 << 20)) Flush();
  }
  template <typename T>
  void PutValue(const T& v) {
    Put(&v, sizeof v);
  }
  void PutString(const std::string& s) {
    PutValue(static_cast<uint32_t>(s.size()));
    Put(s.data(), s.size());
  }
  bool Flush() {
    size_t done = 0;
    while (ok_ && done < buf_.size()) {
      ssize_t w = ::pwrite(fd_, buf_.data() + done, buf_.size() - done, static_cast<off_t>(pos_));
      if (w <= 0 && errno == EINTR) continue;
      ok_ = w > 0;
      done += w > 0 ? static_cast<size_t>(w) : 0;
      pos_ += w > 0 ? static_cast<uint64_t>(w) : 0;
    }
    buf_.clear();
    return ok_;
  }
  XXH128_hash_t Digest() const { return XXH3_128bits_digest(state_); }

 private:
  int fd_;
  XXH3_state_t* state_;
  std::string buf_;
  uint64_t pos_ = sizeof(FileHeader);
  bool ok_ = true;
};

// Sequential buffered reads after the header, hashed on the way.
class In {
 public:
  explicit In(int fd) : fd_(fd), state_(XXH3_createState()) { XXH3_128bits_reset(state_); }
  ~In() { XXH3_freeState(state_); }
  bool Get(void* p, size_t n) {
    char* c = static_cast<char*>(p);
    while (n > 0) {
      if (have_ == used_) {
        if (n >= kBuffer) return Direct(c, n);  // Large sections skip the buffer.
        if (!Fill(buf_.get(), kBuffer, &have_, false)) return false;
        used_ = 0;
      }
      const size_t k = std::min(n, have_ - used_);
      std::memcpy(c, buf_.get() + used_, k);
      used_ += k;
      c += k;
      n -= k;
    }
    return true;
  }
  XXH128_hash_t Digest() const { return XXH3_128bits_digest(state_); }

 private:
  static constexpr size_t kBuffer = 1 << 20;
  bool Direct(char* c, size_t n) {
    size_t got = 0;
    return Fill(c, n, &got, true) && got == n;
  }
  // Reads up to `n` bytes (exactly `n` if `exact`) at the current position and hashes them.
  bool Fill(char* c, size_t n, size_t* got, bool exact) {
    *got = 0;
    while (*got < n) {
      ssize_t r = ::pread(fd_, c + *got, n - *got, static_cast<off_t>(pos_));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return false;
      if (r == 0) break;
      *got += static_cast<size_t>(r);
      pos_ += static_cast<uint64_t>(r);
      if (!exact) break;
    }
    XXH3_128bits_update(state_, c, *got);
    return *got > 0;
  }

  int fd_;
  XXH3_state_t* state_;
  std::unique_ptr<char[]> buf_{new char[kBuffer]};
  size_t have_ = 0, used_ = 0;
  uint64_t pos_ = sizeof(FileHeader);
};

// The header's strings, then the missing files, then five flag bytes.
std::string HeaderStrings(const Manifest& m) {
  const ManifestHeader& h = m.header();
  std::string s;
  auto put = [&s](const std::string& v) {
    const auto n = static_cast<uint32_t>(v.size());
    s.append(reinterpret_cast<const char*>(&n), 4).append(v);
  };
  for (const std::string* v : {&h.timestamp, &h.uuid, &h.backup_id, &h.data_file_name_generator,
                               &h.base_backup, &h.original_endpoint, &h.original_namespace}) {
    put(*v);
  }
  put(h.base_backup_uuid.value_or(""));
  put(std::to_string(m.missing().size()));
  for (const MissingFile& f : m.missing()) {
    put(f.name);
    put(f.reason);
  }
  s.push_back(h.base_backup_uuid ? 1 : 0);
  s.push_back(static_cast<char>(h.deduplicate_files ? 1 + *h.deduplicate_files : 0));
  s.push_back(static_cast<char>(h.algorithm));
  s.push_back(static_cast<char>(h.version));
  s.push_back(h.copy_s3_credentials ? 1 : 0);
  return s;
}

bool ParseHeaderStrings(std::string_view s, ManifestHeader* h, std::vector<MissingFile>* missing) {
  auto get = [&s](std::string* v) {
    uint32_t n;
    if (s.size() < 4) return false;
    std::memcpy(&n, s.data(), 4);
    if (s.size() - 4 < n) return false;
    v->assign(s.substr(4, n));
    s.remove_prefix(4 + n);
    return true;
  };
  std::string base_uuid, count;
  for (std::string* v :
       {&h->timestamp, &h->uuid, &h->backup_id, &h->data_file_name_generator, &h->base_backup,
        &h->original_endpoint, &h->original_namespace, &base_uuid, &count}) {
    if (!get(v)) return false;
  }
  auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), h->incomplete);
  if (ec != std::errc() || end != count.data() + count.size() || h->incomplete > s.size() / 8) {
    return false;
  }
  missing->resize(h->incomplete);
  for (MissingFile& f : *missing) {
    if (!get(&f.name) || !get(&f.reason)) return false;
  }
  const auto flag = [&s](size_t i) { return static_cast<unsigned char>(s[i]); };
  if (s.size() != 5 || flag(0) > 1 || flag(1) > 2 || flag(2) > 1 || flag(3) < 1 || flag(3) > 2 ||
      flag(4) > 1) {
    return false;
  }
  if (s[0]) h->base_backup_uuid = base_uuid;
  if (s[1]) h->deduplicate_files = s[1] == 2;
  h->algorithm = static_cast<ChecksumAlgorithm>(s[2]);
  h->version = s[3];
  h->copy_s3_credentials = s[4] == 1;
  return true;
}

}  // namespace

Status ManifestFile::Write(int fd, const Manifest& m, const ManifestIdentity& id) {
  FileHeader h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.record_size = sizeof(DiskRecord);
  h.node_size = sizeof(DiskNode);
  h.meta_size = sizeof(PosixMeta);
  h.id = id;
  const std::string strings = HeaderStrings(m);
  h.strings = strings.size();
  const ManifestTables& t = m.tables();
  h.entries = t.entries.size();
  h.metas = t.meta.size();
  h.nodes = t.nodes.size();
  h.by_name = t.by_name.size();
  h.by_content = t.by_content.size();
  Out out(fd);
  out.Put(strings.data(), strings.size());
  uint64_t off = 0;  // Names are laid out in the order records and nodes name them.
  for (const ManifestTables::Record& r : t.entries) {
    DiskRecord d{r.size, r.base_size, r.checksum,      r.base_checksum, off,
                 kNone,  r.name_len,  r.data_file_len, r.flags,         r.meta_index};
    off += r.name_len;
    if (r.data_file) {
      d.data_file = off;
      off += r.data_file_len;
    }
    out.PutValue(d);
  }
  out.Put(t.meta.data(), t.meta.size() * sizeof(PosixMeta));
  for (const ManifestTables::NodeRecord& n : t.nodes) {
    DiskNode d{off,   off + n.name_len, n.name_len, n.target_len, static_cast<uint32_t>(n.type), 0,
               n.meta};
    off += n.name_len + n.target_len;
    out.PutValue(d);
  }
  out.Put(t.by_name.data(), t.by_name.size() * 4);
  out.Put(t.by_content.data(), t.by_content.size() * 4);
  for (const ManifestTables::Record& r : t.entries) {
    out.Put(r.name, r.name_len);
    if (r.data_file) out.Put(r.data_file, r.data_file_len);
  }
  for (const ManifestTables::NodeRecord& n : t.nodes) {
    out.Put(n.name, n.name_len);
    out.Put(n.target, n.target_len);
  }
  h.names = off;
  const XXH128_hash_t digest = out.Digest();
  h.hash_low = digest.low64;
  h.hash_high = digest.high64;
  if (!out.Flush() || ::pwrite(fd, &h, sizeof h, 0) != static_cast<ssize_t>(sizeof h)) {
    return Status::IOError("writing a cached manifest", errno);
  }
  return Status::OK();
}

namespace {

// Layout, identity and length: the file is one Write made for `id`.
bool HeaderFits(const FileHeader& h, const ManifestIdentity& id, uint64_t file_size) {
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.record_size != sizeof(DiskRecord) ||
      h.node_size != sizeof(DiskNode) || h.meta_size != sizeof(PosixMeta) || !(h.id == id)) {
    return false;
  }
  constexpr uint64_t kMaxCount = UINT32_MAX, kMaxBytes = uint64_t{1} << 40;
  if (h.entries > kMaxCount || h.metas > kMaxCount || h.nodes > kMaxCount ||
      h.by_name > h.entries || h.by_content > h.entries || h.strings > kMaxBytes ||
      h.names > kMaxBytes) {
    return false;
  }
  return file_size == sizeof h + h.strings + h.entries * sizeof(DiskRecord) +
                          h.metas * sizeof(PosixMeta) + h.nodes * sizeof(DiskNode) +
                          (h.by_name + h.by_content) * 4 + h.names;
}

// A pointer into `names` for [off, off + len), or nullptr if that is out of bounds.
const char* NameAt(const char* names, uint64_t names_size, uint64_t off, uint64_t len) {
  if (off > names_size || len > names_size - off) return nullptr;
  return len == 0 ? "" : names + off;
}

}  // namespace

StatusOr<std::unique_ptr<const Manifest>> ManifestFile::Read(int fd, const ManifestIdentity& id) {
  const Status bad = Status::BackupDamaged("cached manifest does not match");
  struct stat st;
  FileHeader h;
  if (::fstat(fd, &st) != 0 || ::pread(fd, &h, sizeof h, 0) != static_cast<ssize_t>(sizeof h)) {
    return Status::IOError("reading a cached manifest", errno);
  }
  if (!HeaderFits(h, id, static_cast<uint64_t>(st.st_size))) return bad;
  auto m = std::make_unique<ManifestTables>();
  In in(fd);
  std::string strings(h.strings, '\0');
  if (!in.Get(strings.data(), strings.size()) ||
      !ParseHeaderStrings(strings, &m->header, &m->missing) || !CheckHeader(&m->header).ok()) {
    return bad;
  }
  auto names = std::unique_ptr<char[]>(new char[h.names + 1]);
  m->entries.resize(h.entries);
  for (ManifestTables::Record& r : m->entries) {
    DiskRecord d;
    if (!in.Get(&d, sizeof d)) return bad;
    r = {
        d.size,
        d.base_size,
        d.checksum,
        d.base_checksum,
        NameAt(names.get(), h.names, d.name, d.name_len),
        d.data_file == kNone ? nullptr : NameAt(names.get(), h.names, d.data_file, d.data_file_len),
        d.name_len,
        d.data_file_len,
        d.flags,
        d.meta_index};
    if (!r.name || (d.data_file != kNone && !r.data_file)) return bad;
    if (r.meta_index != ManifestTables::kNoMeta && r.meta_index >= h.metas) return bad;
  }
  m->meta.resize(h.metas);
  if (!in.Get(m->meta.data(), h.metas * sizeof(PosixMeta))) return bad;
  m->nodes.resize(h.nodes);
  for (ManifestTables::NodeRecord& n : m->nodes) {
    DiskNode d;
    if (!in.Get(&d, sizeof d) || d.type > 1) return bad;
    n = {NameAt(names.get(), h.names, d.name, d.name_len),
         NameAt(names.get(), h.names, d.target, d.target_len),
         d.name_len,
         d.target_len,
         static_cast<NodeType>(d.type),
         d.meta};
    if (!n.name || !n.target) return bad;
  }
  m->by_name.resize(h.by_name);
  m->by_content.resize(h.by_content);
  if (!in.Get(m->by_name.data(), h.by_name * 4) ||
      !in.Get(m->by_content.data(), h.by_content * 4) || !in.Get(names.get(), h.names)) {
    return bad;
  }
  const XXH128_hash_t digest = in.Digest();
  if (digest.low64 != h.hash_low || digest.high64 != h.hash_high) return bad;
  m->arena_bytes = h.names;
  m->arena_blocks.push_back(std::move(names));
  std::unique_ptr<const Manifest> checked = Consistent(std::move(*m));
  if (!checked) return bad;
  return checked;
}

}  // namespace stitchfs::engine
