#include "engine/storage/lock_text.h"

namespace stitchfs::engine {

std::string LockText(const WriterIntent& w, std::string_view more) {
  std::string out = w.uuid + "\n";
  if (!w.base_uuid.empty()) {
    out += "base_uuid " + w.base_uuid + "\n";
    std::string where;
    for (char c : w.base_location) where.push_back(c == '\n' ? ' ' : c);  // One line.
    out += "base " + where + "\n";
  }
  out += more;
  return out;
}

LockFields ParseLockText(std::string_view text) {
  LockFields f;
  bool first = true;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    const size_t sp = line.find(' ');
    if (first && sp == std::string_view::npos) {
      f.uuid = std::string(line);  // LockText's and ClickHouse's first line: the bare uuid.
    } else if (sp != std::string_view::npos) {
      const std::string key(line.substr(0, sp));
      const std::string value(line.substr(sp + 1));
      if (key == "uuid") {
        f.uuid = value;
      } else if (key == "base_uuid") {
        f.base_uuid = value;
      } else if (key == "base") {
        f.base_location = value;
      } else {
        f.other[key] = value;
      }
    }
    first = false;
  }
  return f;
}

}  // namespace stitchfs::engine
