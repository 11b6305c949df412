// A small streaming JSON writer for `--json` output.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stitchfs::cli {

// Builds one JSON document in memory. Keys and values are escaped; commas are automatic.
// Not thread-safe.
class Json {
 public:
  Json& BeginObject() { return Open('{'); }
  Json& EndObject() { return Close('}'); }
  Json& BeginArray() { return Open('['); }
  Json& EndArray() { return Close(']'); }
  Json& Key(std::string_view k);
  Json& String(std::string_view v);
  Json& Number(uint64_t v);
  Json& Bool(bool v);
  Json& Null();
  const std::string& str() const { return out_; }

 private:
  Json& Open(char c);
  Json& Close(char c);
  void Comma();
  std::string out_;
  bool need_comma_ = false;
};

}  // namespace stitchfs::cli
