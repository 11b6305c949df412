#include "engine/base/shared_bytes.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <unordered_set>

#include "engine/base/posix_file.h"

namespace stitchfs::engine {
namespace {

class Mapping;

// Every live Mapping, so that ReleaseMappedPages finds them. The lock is held from before a
// mapping is advised until after, and a mapping is unmapped under it: an address range is never
// advised after it was unmapped (and perhaps reused by other memory).
struct Mappings {
  std::mutex mu;
  std::unordered_set<const Mapping*> live;
  static Mappings& Get() {
    static Mappings* all = new Mappings;  // Never destroyed: mappings may outlive main.
    return *all;
  }
};

// Owns one mapping.
class Mapping {
 public:
  Mapping(void* addr, size_t size) : addr_(addr), size_(size) {
    Mappings& all = Mappings::Get();
    std::lock_guard<std::mutex> lock(all.mu);
    all.live.insert(this);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() {
    Mappings& all = Mappings::Get();
    std::lock_guard<std::mutex> lock(all.mu);
    all.live.erase(this);
    ::munmap(addr_, size_);
  }
  // REQUIRES: Mappings::Get().mu held.
  size_t Release() const { return ::madvise(addr_, size_, MADV_DONTNEED) == 0 ? size_ : 0; }

 private:
  void* addr_;
  size_t size_;
};

}  // namespace

std::pair<SharedBytes, std::span<char>> SharedBytes::Allocate(size_t size) {
  // uint64_t elements: aligned for any record; `new T[n]` leaves them uninitialised (the
  // caller overwrites every byte, so no time goes into zeroing them first).
  std::shared_ptr<uint64_t[]> buffer(new uint64_t[size / 8 + 1]);
  char* data = reinterpret_cast<char*>(buffer.get());
  SharedBytes out;
  out.view_ = std::string_view(data, size);
  out.owner_ = std::move(buffer);
  return {std::move(out), std::span<char>(data, size)};
}

SharedBytes SharedBytes::Copy(std::string_view s) {
  auto [out, dst] = Allocate(s.size());
  if (!s.empty()) std::memcpy(dst.data(), s.data(), s.size());
  return out;
}

StatusOr<SharedBytes> SharedBytes::Read(int fd, size_t size, const std::string& name) {
  auto [out, dst] = Allocate(size);
  RETURN_IF_ERROR(PreadFully(fd, 0, dst, name));
  return out;
}

size_t SharedBytes::ReleaseMappedPages() {
  Mappings& all = Mappings::Get();
  std::lock_guard<std::mutex> lock(all.mu);
  size_t bytes = 0;
  for (const Mapping* m : all.live) bytes += m->Release();
  return bytes;
}

StatusOr<SharedBytes> SharedBytes::Map(int fd, size_t size, const std::string& name,
                                       bool populate) {
  if (size == 0) return SharedBytes();
  void* addr = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | (populate ? MAP_POPULATE : 0), fd, 0);
  if (addr == MAP_FAILED) return Status::IOError("map " + name, errno);
  SharedBytes out;
  out.owner_ = std::make_shared<Mapping>(addr, size);
  out.view_ = std::string_view(static_cast<const char*>(addr), size);
  return out;
}

}  // namespace stitchfs::engine
