// MD5 (RFC 1321) and base64 (RFC 4648), for the one place a protocol demands them: the
// Content-MD5 header S3 requires on a multi-object delete. Not for the integrity of backups
// (their checksums are ClickHouse's CityHash and XXH3).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace stitchfs::engine {

// The MD5 digest of `data`.
std::array<uint8_t, 16> Md5(std::string_view data);

// `bytes` in base64 with padding.
std::string Base64(std::span<const uint8_t> bytes);

}  // namespace stitchfs::engine
