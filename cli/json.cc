#include "cli/json.h"

#include <cstdio>

#include "engine/json_string.h"

namespace stitchfs::cli {

void Json::Comma() {
  if (need_comma_) out_.push_back(',');
  need_comma_ = true;
}

Json& Json::Open(char c) {
  Comma();
  out_.push_back(c);
  need_comma_ = false;
  return *this;
}

Json& Json::Close(char c) {
  out_.push_back(c);
  need_comma_ = true;
  return *this;
}

Json& Json::Key(std::string_view k) {
  String(k);
  out_.push_back(':');
  need_comma_ = false;
  return *this;
}

Json& Json::String(std::string_view v) {
  Comma();
  engine::AppendJsonString(&out_, v);
  return *this;
}

Json& Json::Number(uint64_t v) {
  Comma();
  out_ += std::to_string(v);
  return *this;
}

Json& Json::Bool(bool v) {
  Comma();
  out_ += v ? "true" : "false";
  return *this;
}

Json& Json::Null() {
  Comma();
  out_ += "null";
  return *this;
}

}  // namespace stitchfs::cli
