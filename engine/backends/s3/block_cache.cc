#include "engine/backends/s3/block_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "engine/base/cache_dir.h"
#include "engine/base/posix_file.h"
#include "engine/base/temp_name.h"
#include "engine/base/unique_fd.h"

namespace stitchfs::engine {
namespace {

constexpr char kMagic[8] = {'S', 'T', 'B', 'L', 'K', '0', '0', '2'};
constexpr uint64_t kPiece = 64 << 10;  // Checksummed apart: a small read reads a piece.
constexpr size_t kPieces = BlockCache::kBlockBytes / kPiece;

// The file header: magic, key, length of the bytes, a checksum of each 64 KiB piece of them.
struct Header {
  char magic[8];
  uint64_t key_high, key_low, length;
  uint64_t checksums[kPieces];
};

XXH128_hash_t KeyOf(std::string_view object, uint64_t index) {
  std::string k(object);
  k += '\n' + std::to_string(index);
  return XXH3_128bits(k.data(), k.size());
}

// "ab/cdef...": 256 sub-folders keep each folder small.
std::string NameOf(const XXH128_hash_t& key) {
  char name[40];
  std::snprintf(name, sizeof name, "%02llx/%014llx%016llx",
                static_cast<unsigned long long>(key.high64 >> 56),
                static_cast<unsigned long long>(key.high64 & 0xffffffffffffffull),
                static_cast<unsigned long long>(key.low64));
  return name;
}

bool ReadAll(int fd, char* dst, size_t n) {
  while (n > 0) {
    const ssize_t r = ::read(fd, dst, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    dst += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

}  // namespace

std::shared_ptr<BlockCache> BlockCache::Open(const std::string& dir, uint64_t capacity) {
  if (capacity == 0 || dir.empty()) return nullptr;
  if (!PrivateFolder(dir).ok() || ::access(dir.c_str(), W_OK) != 0) return nullptr;
  std::shared_ptr<BlockCache> cache(new BlockCache(dir, capacity));
  cache->Adopt();
  return cache;
}

void BlockCache::Adopt() {
  struct Found {
    int64_t mtime;
    std::string name;
    uint64_t size;
  };
  std::vector<Found> found;
  uint64_t pinned = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir_, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    struct stat st;
    if (::lstat(it->path().c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) PrivateFolder(it->path().string()).IgnoreError();  // An older 0755.
    if (!S_ISREG(st.st_mode)) continue;
    const std::string name = it->path().lexically_relative(dir_).string();
    if (OwnerOfTemp(it->path().filename().string()) != TempOwner::kNotTemp) {
      std::error_code rm;
      if (IsLeftoverTemp(it->path().filename().string(), st.st_mtime) &&
          std::filesystem::remove(it->path(), rm)) {
        continue;  // Left by a writer that died.
      }
      pinned += static_cast<uint64_t>(st.st_size);  // Another process's, being written.
      continue;
    }
    found.push_back({st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec, name,
                     static_cast<uint64_t>(st.st_size)});
  }
  std::sort(found.begin(), found.end(),
            [](const Found& a, const Found& b) { return a.mtime < b.mtime; });
  std::lock_guard<std::mutex> lock(mu_);
  pinned_ = pinned;
  for (const Found& f : found) Touch(f.name, f.size);  // The newest ends up first.
  Evict();
}

void BlockCache::Touch(const std::string& name, uint64_t size) {
  if (!blocks_.Get(name)) blocks_.Put(name, true, size);
}

void BlockCache::Forget(const std::string& name) { blocks_.Erase(name); }

void BlockCache::Evict() {
  const uint64_t room = capacity_ > pinned_ ? capacity_ - pinned_ : 0;
  blocks_.Trim(
      {.max_weight = room}, [](const std::string&, bool) { return false; },
      [&](const std::string& victim, bool) { ::unlink((dir_ + "/" + victim).c_str()); });
}

bool BlockCache::Get(std::string_view object, uint64_t index, uint64_t length, uint64_t offset,
                     std::span<char> dst) {
  const XXH128_hash_t key = KeyOf(object, index);
  const std::string name = NameOf(key);
  const std::string path = dir_ + "/" + name;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  Header h;
  bool ok = fd && length <= kBlockBytes && offset + dst.size() <= length &&
            ReadAll(fd.get(), reinterpret_cast<char*>(&h), sizeof h) &&
            std::memcmp(h.magic, kMagic, sizeof kMagic) == 0 && h.key_high == key.high64 &&
            h.key_low == key.low64 && h.length == length;
  // Only the pieces `dst` needs are read, each checked.
  const uint64_t first = offset / kPiece,
                 end = dst.empty() ? first : (offset + dst.size() - 1) / kPiece + 1;
  std::string pieces;
  if (ok) {
    const uint64_t from = first * kPiece, to = std::min(end * kPiece, length);
    pieces.resize(to - from);
    ok = PreadFully(fd.get(), sizeof h + from, {pieces.data(), pieces.size()}, path).ok();
    for (uint64_t p = first; ok && p < end; ++p) {
      const uint64_t at = p * kPiece - from, n = std::min(kPiece, length - p * kPiece);
      ok = XXH3_64bits(pieces.data() + at, n) == h.checksums[p];
    }
    if (ok) std::memcpy(dst.data(), pieces.data() + (offset - from), dst.size());
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!ok) {
    ++misses_;
    if (fd) {  // There but not right: never again.
      ::unlink(path.c_str());
      Forget(name);
    }
    return false;
  }
  ++hits_;
  Touch(name, sizeof h + length);
  return true;
}

void BlockCache::Put(std::string_view object, uint64_t index, std::string_view bytes) {
  const XXH128_hash_t key = KeyOf(object, index);
  const std::string name = NameOf(key);
  const std::string path = dir_ + "/" + name;
  Header h;
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.key_high = key.high64;
  h.key_low = key.low64;
  if (bytes.size() > kBlockBytes) return;
  h.length = bytes.size();
  for (size_t p = 0; p < kPieces; ++p) {
    const uint64_t at = std::min<uint64_t>(p * kPiece, bytes.size());
    h.checksums[p] = XXH3_64bits(bytes.data() + at, std::min<uint64_t>(kPiece, bytes.size() - at));
  }
  const std::string tmp = path + TempSuffix();
  const int flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW;
  UniqueFd fd(::open(tmp.c_str(), flags, 0600));
  if (!fd && errno == ENOENT &&  // The sub-folder's first block.
      PrivateFolder(std::filesystem::path(path).parent_path().string()).ok()) {
    fd = UniqueFd(::open(tmp.c_str(), flags, 0600));
  }
  if (!fd) return;
  const bool written =
      WriteFully(fd.get(), {reinterpret_cast<const char*>(&h), sizeof h}, tmp).ok() &&
      WriteFully(fd.get(), bytes, tmp).ok() && fd.Close(tmp.c_str()).ok();
  std::lock_guard<std::mutex> lock(mu_);  // The rename and its Touch are one step for Drop.
  if (!written || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return;
  }
  Touch(name, sizeof h + bytes.size());
  Evict();
}

bool BlockCache::Drop(std::string_view object, uint64_t index) {
  const std::string name = NameOf(KeyOf(object, index));
  std::lock_guard<std::mutex> lock(mu_);  // (Not between a Put's rename and its Touch.)
  Forget(name);
  return ::unlink((dir_ + "/" + name).c_str()) == 0;
}

uint64_t BlockCache::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return blocks_.weight();
}
uint64_t BlockCache::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}
uint64_t BlockCache::misses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return misses_;
}

}  // namespace stitchfs::engine
