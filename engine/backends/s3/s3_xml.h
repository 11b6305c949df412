// The small XML answers of S3 (listings, multipart uploads, errors), read with expat as a
// flat sequence of closed elements.
#pragma once

#include <functional>
#include <string_view>

#include "engine/base/status.h"

namespace stitchfs::engine {

// Calls `on_close(path, text)` for every element as it closes, in document order: `path` is
// the element names from the root joined by '/' (namespaces dropped), `text` the character
// data directly inside it. kBackupDamaged if `xml` is not well-formed.
Status ParseS3Xml(
    std::string_view xml,
    const std::function<void(std::string_view path, std::string_view text)>& on_close);

// The text of the first element at `path` in `xml`, or "" (also for malformed XML).
std::string XmlText(std::string_view xml, std::string_view path);

}  // namespace stitchfs::engine
