#include "engine/base/city_hash.h"

#include <cstring>
#include <utility>

namespace stitchfs::engine {
namespace {

constexpr uint64_t kP0 = 0xc3a5c85c97cb3127ULL;
constexpr uint64_t kP1 = 0xb492b66fbe98f273ULL;
constexpr uint64_t kP2 = 0x9ae16a3b2f90404fULL;
constexpr uint64_t kP3 = 0xc949d7c7509e6557ULL;
constexpr uint64_t kMul = 0x9ddfea08eb382d69ULL;

// Little-endian loads (this project builds for little-endian hosts only; see CMakeLists).
uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
uint32_t Load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

uint64_t Ror(uint64_t v, int s) { return s == 0 ? v : (v >> s) | (v << (64 - s)); }
uint64_t Mix47(uint64_t v) { return v ^ (v >> 47); }

// Folds 128 bits to 64 (Murmur-inspired), as in CityHash's header.
uint64_t Fold(uint64_t lo, uint64_t hi) {
  uint64_t a = (lo ^ hi) * kMul;
  a ^= a >> 47;
  uint64_t b = (hi ^ a) * kMul;
  b ^= b >> 47;
  return b * kMul;
}

uint64_t ShortHash(const char* s, size_t len) {  // 0 <= len <= 16
  if (len > 8) {
    uint64_t a = Load64(s);
    uint64_t b = Load64(s + len - 8);
    return Fold(a, Ror(b + len, static_cast<int>(len))) ^ b;
  }
  if (len >= 4) {
    uint64_t a = Load32(s);
    return Fold(len + (a << 3), Load32(s + len - 4));
  }
  if (len > 0) {
    uint32_t first = static_cast<uint8_t>(s[0]);
    uint32_t middle = static_cast<uint8_t>(s[len >> 1]);
    uint32_t last = static_cast<uint8_t>(s[len - 1]);
    uint32_t y = first + (middle << 8);
    uint32_t z = static_cast<uint32_t>(len) + (last << 2);
    return Mix47(y * kP2 ^ z * kP3) * kP2;
  }
  return kP2;
}

struct Pair {
  uint64_t first;
  uint64_t second;
};

Pair Weak32(uint64_t w, uint64_t x, uint64_t y, uint64_t z, uint64_t a, uint64_t b) {
  a += w;
  b = Ror(b + a + z, 21);
  uint64_t c = a;
  a += x;
  a += y;
  b += Ror(a, 44);
  return {a + z, b + c};
}

Pair Weak32(const char* s, uint64_t a, uint64_t b) {
  return Weak32(Load64(s), Load64(s + 8), Load64(s + 16), Load64(s + 24), a, b);
}

// The Murmur-style path used below 128 bytes.
City128 MurmurPath(const char* s, size_t len, City128 seed) {
  uint64_t a = seed.low;
  uint64_t b = seed.high;
  uint64_t c = 0;
  uint64_t d = 0;
  if (len <= 16) {
    a = Mix47(a * kP1) * kP1;
    c = b * kP1 + ShortHash(s, len);
    d = Mix47(a + (len >= 8 ? Load64(s) : c));
  } else {
    c = Fold(Load64(s + len - 8) + kP1, a);
    d = Fold(b + len, c + Load64(s + len - 16));
    a += d;
    long left = static_cast<long>(len) - 16;
    do {
      a ^= Mix47(Load64(s) * kP1) * kP1;
      a *= kP1;
      b ^= a;
      c ^= Mix47(Load64(s + 8) * kP1) * kP1;
      c *= kP1;
      d ^= c;
      s += 16;
      left -= 16;
    } while (left > 0);
  }
  a = Fold(a, c);
  b = Fold(d, b);
  return {a ^ b, Fold(b, a)};
}

struct LongState {
  Pair v, w;
  uint64_t x, y, z;
};

void Round64(LongState& st, const char* s) {
  st.x = Ror(st.x + st.y + st.v.first + Load64(s + 16), 37) * kP1;
  st.y = Ror(st.y + st.v.second + Load64(s + 48), 42) * kP1;
  st.x ^= st.w.second;
  st.y ^= st.v.first;
  st.z = Ror(st.z ^ st.w.first, 33);
  st.v = Weak32(s, st.v.second * kP1, st.x + st.w.first);
  st.w = Weak32(s + 32, st.z + st.w.second, st.y);
  std::swap(st.z, st.x);
}

}  // namespace

City128 CityHash128WithSeed102(const char* s, size_t len, City128 seed) {
  if (len < 128) return MurmurPath(s, len, seed);
  LongState st;
  st.x = seed.low;
  st.y = seed.high;
  st.z = len * kP1;
  st.v.first = Ror(st.y ^ kP1, 49) * kP1 + Load64(s);
  st.v.second = Ror(st.v.first, 42) * kP1 + Load64(s + 8);
  st.w.first = Ror(st.y + st.z, 35) * kP1 + st.x;
  st.w.second = Ror(st.x + Load64(s + 88), 53) * kP1;
  do {
    Round64(st, s);
    Round64(st, s + 64);
    s += 128;
    len -= 128;
  } while (len >= 128);
  st.y += Ror(st.w.first, 37) * kP0 + st.z;
  st.x += Ror(st.v.first + st.z, 49) * kP0;
  // Up to four 32-byte chunks from the end (they may overlap bytes already hashed).
  for (size_t done = 0; done < len;) {
    done += 32;
    st.y = Ror(st.y - st.x, 42) * kP0 + st.v.second;
    st.w.first += Load64(s + len - done + 16);
    st.x = Ror(st.x, 49) * kP0 + st.w.first;
    st.w.first += st.v.first;
    st.v = Weak32(s + len - done, st.v.first, st.v.second);
  }
  st.x = Fold(st.x, st.v.first);
  st.y = Fold(st.y, st.w.first);
  return {Fold(st.x + st.v.second, st.w.second) + st.y,
          Fold(st.x + st.w.second, st.y + st.v.second)};
}

City128 CityHash128V102(const char* s, size_t len) {
  if (len >= 16) {
    return CityHash128WithSeed102(s + 16, len - 16, {Load64(s) ^ kP3, Load64(s + 8)});
  }
  if (len >= 8) {
    return CityHash128WithSeed102(nullptr, 0, {Load64(s) ^ (len * kP0), Load64(s + len - 8) ^ kP1});
  }
  return CityHash128WithSeed102(s, len, {kP0, kP1});
}

}  // namespace stitchfs::engine
