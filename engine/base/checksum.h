// Checksum: a 128-bit file checksum, the algorithms that produce it, and its manifest text.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "engine/base/city_hash.h"

struct XXH3_state_s;

namespace stitchfs::engine {

enum class ChecksumAlgorithm {
  kClickHouse,  // CityHash128WithSeed v1.0.2 chained over 2048-byte blocks (ClickHouse's).
  kXxh3,        // XXH3-128 (stitchfs's default for new chains).
};

// The manifest name of an algorithm ("cityhash102" / "xxh3_128") and back.
const char* ChecksumAlgorithmName(ChecksumAlgorithm a);
std::optional<ChecksumAlgorithm> ParseChecksumAlgorithm(std::string_view name);

// A 128-bit value. Ordered (by high, then low) so it can key sorted tables. Thread-compatible.
struct Checksum {
  uint64_t low = 0;
  uint64_t high = 0;

  // 32 lowercase hex digits: hex16(high) then hex16(low), as ClickHouse prints it.
  std::string ToHex() const;
  // Parses exactly 32 hex digits (either case); nullopt otherwise.
  static std::optional<Checksum> FromHex(std::string_view hex);

  friend bool operator==(const Checksum&, const Checksum&) = default;
  friend auto operator<=>(const Checksum& a, const Checksum& b) {
    if (auto c = a.high <=> b.high; c != 0) return c;
    return a.low <=> b.low;
  }
};

// Streaming hasher for either algorithm. Digest() may be taken at any point and leaves the
// state unchanged, so one pass over a file yields both the prefix checksum (at base_size) and
// the full checksum. The digest of zero bytes is 0 for both algorithms, as ClickHouse records
// empty files. Move-only (owns the XXH3 state). Not thread-safe.
class Hasher {
 public:
  explicit Hasher(ChecksumAlgorithm algorithm);
  Hasher(Hasher&&) noexcept;
  Hasher& operator=(Hasher&&) noexcept;
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;
  ~Hasher();

  void Update(std::string_view data);
  Checksum Digest() const;
  uint64_t bytes() const { return bytes_; }
  ChecksumAlgorithm algorithm() const { return algorithm_; }

  // Hashes a whole buffer at once.
  static Checksum Of(ChecksumAlgorithm algorithm, std::string_view data);

 private:
  static constexpr size_t kBlock = 2048;  // ClickHouse's DBMS_DEFAULT_HASHING_BLOCK_SIZE.
  struct XxhDeleter {
    void operator()(XXH3_state_s* s) const;
  };

  ChecksumAlgorithm algorithm_;
  uint64_t bytes_ = 0;
  // kClickHouse: chained state and the partial block.
  City128 city_state_;
  size_t pending_ = 0;
  std::unique_ptr<char[]> block_;
  // kXxh3.
  std::unique_ptr<XXH3_state_s, XxhDeleter> xxh_;
};

}  // namespace stitchfs::engine
