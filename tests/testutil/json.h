// A small, strict JSON reader for tests: checks that a text is exactly one JSON value (RFC 8259:
// no trailing commas, no control characters in strings, only the standard escapes) and gives
// access to its parts. Bytes from 0x80 on are taken as they are (UTF-8 is not checked).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stitchfs::testutil {

struct Json {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string text;         // A string, unescaped; a number as written.
  std::vector<Json> items;  // An array's.
  // An object's members, in order: keys[i] names values[i]. (Two vectors: a vector of pairs
  // holding Json would need Json complete.)
  std::vector<std::string> keys;
  std::vector<Json> values;

  // The member `key` of an object, or nullptr.
  const Json* Get(std::string_view key) const;
};

// `text` as one JSON value (whitespace around it allowed); nullopt if it is not one, with the
// reason and the byte offset in `*error`.
std::optional<Json> ParseJson(std::string_view text, std::string* error = nullptr);

}  // namespace stitchfs::testutil
