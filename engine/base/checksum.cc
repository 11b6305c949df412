#include "engine/base/checksum.h"

#include <xxhash.h>

#include <array>
#include <cstring>
#include <new>

namespace stitchfs::engine {

const char* ChecksumAlgorithmName(ChecksumAlgorithm a) {
  switch (a) {
    case ChecksumAlgorithm::kClickHouse:
      return "cityhash102";
    case ChecksumAlgorithm::kXxh3:
      return "xxh3_128";
  }
  return "unknown";
}

std::optional<ChecksumAlgorithm> ParseChecksumAlgorithm(std::string_view name) {
  if (name == "cityhash102") return ChecksumAlgorithm::kClickHouse;
  if (name == "xxh3_128") return ChecksumAlgorithm::kXxh3;
  return std::nullopt;
}

namespace {
void PutHex16(uint64_t v, char* out) {
  static constexpr char kDigits[] = "0123456789abcdef";
  for (int i = 15; i >= 0; --i) {
    out[i] = kDigits[v & 0xf];
    v >>= 4;
  }
}
// -1 for bytes that are not hex digits.
constexpr auto kHexValues = [] {
  std::array<int8_t, 256> t{};
  for (auto& v : t) v = -1;
  for (int i = 0; i < 10; ++i) t['0' + i] = static_cast<int8_t>(i);
  for (int i = 0; i < 6; ++i) t['a' + i] = t['A' + i] = static_cast<int8_t>(10 + i);
  return t;
}();
int HexValue(char c) { return kHexValues[static_cast<unsigned char>(c)]; }
}  // namespace

std::string Checksum::ToHex() const {
  std::string s(32, '0');
  PutHex16(high, s.data());
  PutHex16(low, s.data() + 16);
  return s;
}

std::optional<Checksum> Checksum::FromHex(std::string_view hex) {
  if (hex.size() != 32) return std::nullopt;
  Checksum c;
  for (size_t i = 0; i < 32; ++i) {
    int d = HexValue(hex[i]);
    if (d < 0) return std::nullopt;
    uint64_t& half = i < 16 ? c.high : c.low;
    half = (half << 4) | static_cast<uint64_t>(d);
  }
  return c;
}

void Hasher::XxhDeleter::operator()(XXH3_state_s* s) const { XXH3_freeState(s); }

Hasher::Hasher(ChecksumAlgorithm algorithm) : algorithm_(algorithm) {
  if (algorithm_ == ChecksumAlgorithm::kClickHouse) {
    block_ = std::make_unique<char[]>(kBlock);
    return;
  }
  xxh_.reset(XXH3_createState());
  if (!xxh_) throw std::bad_alloc();  // Only bad_alloc may leave the engine (STYLE §3.3).
  XXH3_128bits_reset(xxh_.get());
}

Hasher::Hasher(Hasher&&) noexcept = default;
Hasher& Hasher::operator=(Hasher&&) noexcept = default;
Hasher::~Hasher() = default;

void Hasher::Update(std::string_view data) {
  if (data.empty()) return;
  bytes_ += data.size();
  if (algorithm_ == ChecksumAlgorithm::kXxh3) {
    XXH3_128bits_update(xxh_.get(), data.data(), data.size());
    return;
  }
  const char* p = data.data();
  size_t left = data.size();
  if (pending_ > 0) {
    size_t take = std::min(left, kBlock - pending_);
    std::memcpy(block_.get() + pending_, p, take);
    pending_ += take;
    p += take;
    left -= take;
    if (pending_ < kBlock) return;
    city_state_ = CityHash128WithSeed102(block_.get(), kBlock, city_state_);
    pending_ = 0;
  }
  for (; left >= kBlock; p += kBlock, left -= kBlock) {
    city_state_ = CityHash128WithSeed102(p, kBlock, city_state_);
  }
  std::memcpy(block_.get(), p, left);
  pending_ = left;
}

Checksum Hasher::Digest() const {
  if (bytes_ == 0) return Checksum{};
  if (algorithm_ == ChecksumAlgorithm::kXxh3) {
    XXH128_hash_t h = XXH3_128bits_digest(xxh_.get());
    return Checksum{h.low64, h.high64};
  }
  City128 r =
      pending_ == 0 ? city_state_ : CityHash128WithSeed102(block_.get(), pending_, city_state_);
  return Checksum{r.low, r.high};
}

Checksum Hasher::Of(ChecksumAlgorithm algorithm, std::string_view data) {
  Hasher h(algorithm);
  h.Update(data);
  return h.Digest();
}

}  // namespace stitchfs::engine
