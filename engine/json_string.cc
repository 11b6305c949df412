#include "engine/json_string.h"

namespace stitchfs::engine {

void AppendJsonString(std::string* out, std::string_view v) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (char ch : v) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(ch);
    } else if (c < 0x20) {
      out->append("\\u00");
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 15]);
    } else {
      out->push_back(ch);
    }
  }
  out->push_back('"');
}

}  // namespace stitchfs::engine
