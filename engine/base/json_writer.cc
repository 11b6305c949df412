#include "engine/base/json_writer.h"

#include <utility>

namespace stitchfs::engine {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void AppendEscape(std::string* out, uint32_t code_point) {
  out->append("\\u");
  for (int shift = 12; shift >= 0; shift -= 4) out->push_back(kHex[(code_point >> shift) & 15]);
}

bool InRange(unsigned char c, unsigned char lo, unsigned char hi) { return c >= lo && c <= hi; }

// The length of the well-formed UTF-8 sequence starting at s[i] (a lead byte from 0x80 on), or 0
// if there is none. The ranges are those of Unicode's table of well-formed byte sequences.
size_t SequenceLength(std::string_view s, size_t i) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char lead = at(0);
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // The range of the second byte.
  if (InRange(lead, 0xc2, 0xdf)) {
    n = 2;
  } else if (InRange(lead, 0xe0, 0xef)) {
    n = 3;
    if (lead == 0xe0) lo = 0xa0;  // Overlong below.
    if (lead == 0xed) hi = 0x9f;  // Surrogates above.
  } else if (InRange(lead, 0xf0, 0xf4)) {
    n = 4;
    if (lead == 0xf0) lo = 0x90;  // Overlong below.
    if (lead == 0xf4) hi = 0x8f;  // Beyond U+10FFFF above.
  } else {
    return 0;
  }
  if (s.size() - i < n || !InRange(at(1), lo, hi)) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (!InRange(at(k), 0x80, 0xbf)) return 0;
  }
  return n;
}

// Appends `v` as a quoted JSON string by the rules in the header.
void AppendString(std::string* out, std::string_view v) {
  out->push_back('"');
  for (size_t i = 0; i < v.size();) {
    const auto c = static_cast<unsigned char>(v[i]);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(v[i++]);
    } else if (c < 0x20 || c == 0x7f) {
      AppendEscape(out, c);
      ++i;
    } else if (c < 0x80) {
      out->push_back(v[i++]);
    } else if (const size_t n = SequenceLength(v, i); n == 0) {
      AppendEscape(out, 0xfffd);
      ++i;
    } else if (c == 0xc2 && static_cast<unsigned char>(v[i + 1]) < 0xa0) {
      AppendEscape(out, static_cast<unsigned char>(v[i + 1]));  // C1 control U+0080-U+009F.
      i += n;
    } else {
      out->append(v.substr(i, n));
      i += n;
    }
  }
  out->push_back('"');
}

}  // namespace

void JsonWriter::Comma() {
  if (need_comma_) out_.push_back(',');
  need_comma_ = true;
}

JsonWriter& JsonWriter::Open(char c) {
  Comma();
  out_.push_back(c);
  need_comma_ = false;
  return *this;
}

JsonWriter& JsonWriter::Close(char c) {
  out_.push_back(c);
  need_comma_ = true;
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view k) {
  String(k);
  out_.push_back(':');
  need_comma_ = false;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view v) {
  Comma();
  AppendString(&out_, v);
  return *this;
}

JsonWriter& JsonWriter::Number(uint64_t v) {
  Comma();
  out_ += std::to_string(v);
  return *this;
}

JsonWriter& JsonWriter::Bool(bool v) {
  Comma();
  out_ += v ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::Null() {
  Comma();
  out_ += "null";
  return *this;
}

std::string JsonWriter::Take() {
  std::string out = std::move(out_);
  out_.clear();
  need_comma_ = false;
  return out;
}

}  // namespace stitchfs::engine
