#include "engine/base/xml_tree.h"

#include <expat.h>

#include <cctype>

namespace stitchfs::engine {
namespace {

struct ParserDeleter {
  void operator()(XML_ParserStruct* p) const { XML_ParserFree(p); }
};

// Builds the tree as expat reports elements and text.
class TreeBuilder {
 public:
  explicit TreeBuilder(XML_Parser p) : parser_(p) {
    XML_SetUserData(p, this);
    XML_SetElementHandler(p, &TreeBuilder::Start, &TreeBuilder::End);
    XML_SetCharacterDataHandler(p, &TreeBuilder::Text);
  }
  std::unique_ptr<XmlElement> TakeRoot() { return std::move(root_); }
  bool too_deep() const { return too_deep_; }

 private:
  static void Start(void* self, const XML_Char* name, const XML_Char** attrs) {
    auto* b = static_cast<TreeBuilder*>(self);
    if (b->open_.size() >= kMaxXmlTreeDepth) {
      b->too_deep_ = true;
      XML_StopParser(b->parser_, XML_FALSE);
      return;
    }
    auto e = std::make_unique<XmlElement>();
    e->name = name;
    for (size_t i = 0; attrs[i] != nullptr && attrs[i + 1] != nullptr; i += 2) {
      e->attributes.emplace_back(attrs[i], attrs[i + 1]);
    }
    XmlElement* raw = e.get();
    if (b->open_.empty()) {
      b->root_ = std::move(e);
    } else {
      b->open_.back()->children.push_back(std::move(e));
    }
    b->open_.push_back(raw);
  }
  static void End(void* self, const XML_Char*) {
    static_cast<TreeBuilder*>(self)->open_.pop_back();
  }
  static void Text(void* self, const XML_Char* s, int len) {
    auto* b = static_cast<TreeBuilder*>(self);
    if (!b->open_.empty()) b->open_.back()->text.append(s, static_cast<size_t>(len));
  }

  XML_Parser parser_;
  std::unique_ptr<XmlElement> root_;
  std::vector<XmlElement*> open_;
  bool too_deep_ = false;
};

}  // namespace

const std::string* XmlElement::Attribute(std::string_view key) const {
  for (const auto& [k, v] : attributes) {
    if (k == key) return &v;
  }
  return nullptr;
}

const XmlElement* XmlElement::Child(std::string_view child) const {
  for (const auto& c : children) {
    if (c->name == child) return c.get();
  }
  return nullptr;
}

std::string XmlElement::Trimmed() const {
  size_t from = 0, to = text.size();
  while (from < to && std::isspace(static_cast<unsigned char>(text[from]))) ++from;
  while (to > from && std::isspace(static_cast<unsigned char>(text[to - 1]))) --to;
  return text.substr(from, to - from);
}

StatusOr<std::unique_ptr<XmlElement>> ParseXmlTree(std::string_view xml) {
  if (xml.size() > kMaxXmlTreeBytes) return Status::InvalidArgument("larger than 64 MiB");
  std::unique_ptr<XML_ParserStruct, ParserDeleter> parser(XML_ParserCreate("UTF-8"));
  if (!parser) return Status::IOError("XML_ParserCreate", ENOMEM);
  TreeBuilder builder(parser.get());
  const auto ok = XML_Parse(parser.get(), xml.data(), static_cast<int>(xml.size()), XML_TRUE);
  if (builder.too_deep()) return Status::InvalidArgument("elements nested too deep");
  if (ok != XML_STATUS_OK) {
    return Status::InvalidArgument(
        std::string(XML_ErrorString(XML_GetErrorCode(parser.get()))) + " at line " +
        std::to_string(XML_GetCurrentLineNumber(parser.get())) + ", column " +
        std::to_string(XML_GetCurrentColumnNumber(parser.get())));
  }
  auto root = builder.TakeRoot();
  if (!root) return Status::InvalidArgument("no root element");
  return root;
}

}  // namespace stitchfs::engine
