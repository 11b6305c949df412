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
  uint64_t size() const override { return data_.size(); }

 protected:
  Status ReadExact(uint64_t offset, std::span<char> dst) const override {
    std::memcpy(dst.data(), data_.data() + offset, dst.size());
    return Status::OK();
  }

 private:
  const std::string data_;
};

}  // namespace stitchfs::engine
