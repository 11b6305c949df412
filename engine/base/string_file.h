// StringFile: a RandomAccessFile over bytes held in memory (an index or a test's archive).
#pragma once

#include <algorithm>
#include <cstring>
#include <string>

#include "engine/base/random_access_file.h"

namespace stitchfs::engine {

// Thread-safe (immutable).
class StringFile final : public RandomAccessFile {
 public:
  explicit StringFile(std::string data) : data_(std::move(data)) {}
  StatusOr<size_t> ReadAt(uint64_t offset, std::span<char> dst) const override {
    if (offset >= data_.size()) return size_t{0};
    const size_t n = std::min<size_t>(dst.size(), data_.size() - offset);
    std::memcpy(dst.data(), data_.data() + offset, n);
    return n;
  }
  uint64_t size() const override { return data_.size(); }

 private:
  const std::string data_;
};

}  // namespace stitchfs::engine
