#include "engine/backends/s3/s3_xml.h"

#include <expat.h>

#include <memory>
#include <string>
#include <vector>

namespace stitchfs::engine {
namespace {

struct ParserDeleter {
  void operator()(XML_ParserStruct* p) const { XML_ParserFree(p); }
};

struct State {
  const std::function<void(std::string_view, std::string_view)>* on_close;
  std::string path;
  std::vector<size_t> starts;  // Length of `path` before each open element.
  std::vector<std::string> texts;

  static void Start(void* self, const XML_Char* name, const XML_Char**) {
    auto* s = static_cast<State*>(self);
    std::string_view n(name);
    if (const size_t sep = n.rfind('|'); sep != n.npos) n.remove_prefix(sep + 1);
    s->starts.push_back(s->path.size());
    if (!s->path.empty()) s->path.push_back('/');
    s->path.append(n);
    s->texts.emplace_back();
  }
  static void End(void* self, const XML_Char*) {
    auto* s = static_cast<State*>(self);
    (*s->on_close)(s->path, s->texts.back());
    s->texts.pop_back();
    s->path.resize(s->starts.back());
    s->starts.pop_back();
  }
  static void Text(void* self, const XML_Char* data, int len) {
    auto* s = static_cast<State*>(self);
    if (!s->texts.empty()) s->texts.back().append(data, static_cast<size_t>(len));
  }
};

}  // namespace

Status ParseS3Xml(std::string_view xml,
                  const std::function<void(std::string_view, std::string_view)>& on_close) {
  std::unique_ptr<XML_ParserStruct, ParserDeleter> parser(XML_ParserCreateNS("UTF-8", '|'));
  if (!parser) return Status::IOError("XML_ParserCreate", ENOMEM);
  State state{&on_close, {}, {}, {}};
  XML_SetUserData(parser.get(), &state);
  XML_SetElementHandler(parser.get(), &State::Start, &State::End);
  XML_SetCharacterDataHandler(parser.get(), &State::Text);
  if (xml.size() > static_cast<size_t>(INT32_MAX) ||
      XML_Parse(parser.get(), xml.data(), static_cast<int>(xml.size()), XML_TRUE) !=
          XML_STATUS_OK) {
    return Status::BackupDamaged(std::string("malformed XML from S3: ") +
                                 XML_ErrorString(XML_GetErrorCode(parser.get())));
  }
  return Status::OK();
}

std::string XmlText(std::string_view xml, std::string_view path) {
  std::string out;
  bool found = false;
  ParseS3Xml(xml, [&](std::string_view p, std::string_view text) {
    if (!found && p == path) {
      out = std::string(text);
      found = true;
    }
  }).IgnoreError();
  return out;
}

}  // namespace stitchfs::engine
