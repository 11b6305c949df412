// XmlElement: a small XML document read whole into a tree (element names, attributes, text),
// for configuration files. Namespaces are not interpreted.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/base/status_or.h"

namespace stitchfs::engine {

struct XmlElement {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;  // In document order.
  std::string text;  // The character data directly inside the element, concatenated.
  std::vector<std::unique_ptr<XmlElement>> children;

  // The value of attribute `key`, or nullptr.
  const std::string* Attribute(std::string_view key) const;
  // The first child named `name`, or nullptr.
  const XmlElement* Child(std::string_view name) const;
  // `text` without leading and trailing white space.
  std::string Trimmed() const;
};

// Parses `xml` (at most kMaxXmlTreeBytes, nesting at most kMaxXmlTreeDepth): its root element.
// kInvalidArgument saying where it is not well-formed (line and column), or too large or deep.
constexpr size_t kMaxXmlTreeBytes = 64 << 20;
constexpr size_t kMaxXmlTreeDepth = 64;
StatusOr<std::unique_ptr<XmlElement>> ParseXmlTree(std::string_view xml);

}  // namespace stitchfs::engine
