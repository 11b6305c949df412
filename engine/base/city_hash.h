// CityHash v1.0.2 (Geoff Pike and Jyrki Alakuijala, 2011), the 128-bit seeded function only:
// the building block of ClickHouse's backup checksum. Implemented from the published algorithm.
// Versions 1.0.3 and later give different values; ClickHouse pins 1.0.2.
#pragma once

#include <cstddef>
#include <cstdint>

namespace stitchfs::engine {

struct City128 {
  uint64_t low = 0;
  uint64_t high = 0;
  friend bool operator==(const City128&, const City128&) = default;
};

// CityHash128WithSeed of v1.0.2 over `data[0, len)`.
City128 CityHash128WithSeed102(const char* data, size_t len, City128 seed);

// Unseeded CityHash128 of v1.0.2 (used only to test against published vectors).
City128 CityHash128V102(const char* data, size_t len);

}  // namespace stitchfs::engine
