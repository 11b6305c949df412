// JsonWriter: the one JSON writer, behind `stitch ... --json` and the mount's JSON extended
// attributes (user.stitchfs.source, .chain, .stats, .incomplete). Compact output, no spaces.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stitchfs::engine {

// Builds one JSON document in memory; commas and colons are placed automatically. Strings (keys
// and values) are arbitrary bytes and always come out as valid JSON in valid UTF-8:
//   - `"` and `\` are escaped with a backslash;
//   - control characters (C0 U+0000-U+001F, DEL U+007F and C1 U+0080-U+009F) are written as
//     \u00xx with lowercase hex digits, never raw (so a name cannot move a terminal's cursor);
//   - a byte that does not belong to a well-formed UTF-8 sequence (RFC 3629: no overlong forms,
//     no surrogates, nothing above U+10FFFF; a truncated sequence counts byte by byte) is
//     written as \ufffd, one per such byte, so invalid input gives the same output every time;
//   - every other well-formed sequence is copied as it is.
// The caller nests Begin/End calls correctly and gives every object member a Key first; the
// writer does not check. Not thread-safe.
class JsonWriter {
 public:
  JsonWriter& BeginObject() { return Open('{'); }
  JsonWriter& EndObject() { return Close('}'); }
  JsonWriter& BeginArray() { return Open('['); }
  JsonWriter& EndArray() { return Close(']'); }
  // The key of the next object member, escaped as a string.
  JsonWriter& Key(std::string_view k);
  JsonWriter& String(std::string_view v);
  // A non-negative integer in decimal.
  JsonWriter& Number(uint64_t v);
  JsonWriter& Bool(bool v);
  JsonWriter& Null();

  // The document so far.
  const std::string& str() const { return out_; }
  // The document, moved out; the writer is left empty, ready for a new document.
  std::string Take();

 private:
  JsonWriter& Open(char c);
  JsonWriter& Close(char c);
  void Comma();
  std::string out_;
  bool need_comma_ = false;
};

}  // namespace stitchfs::engine
