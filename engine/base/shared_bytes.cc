#include "engine/base/shared_bytes.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "engine/base/posix_file.h"

namespace stitchfs::engine {
namespace {

// Owns one mapping.
class Mapping {
 public:
  Mapping(void* addr, size_t size) : addr_(addr), size_(size) {}
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() { ::munmap(addr_, size_); }

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
