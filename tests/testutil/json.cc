#include "tests/testutil/json.h"

#include <cstdlib>

namespace stitchfs::testutil {
namespace {

constexpr int kMaxDepth = 64;

// Recursive descent over `in`; the first failure stops everything.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}

  std::optional<Json> Document() {
    Json v;
    if (!Value(&v, 0)) return std::nullopt;
    Space();
    if (pos_ != in_.size()) return Fail("text after the value");
    return v;
  }
  const std::string& error() const { return error_; }

 private:
  std::nullopt_t Fail(const std::string& why) {
    if (error_.empty()) error_ = why + " at byte " + std::to_string(pos_);
    return std::nullopt;
  }
  bool Bad(const std::string& why) {
    Fail(why);
    return false;
  }
  void Space() {
    while (pos_ < in_.size() &&
           (in_[pos_] == ' ' || in_[pos_] == '\t' || in_[pos_] == '\n' || in_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Eat(char c) {
    Space();
    if (pos_ >= in_.size() || in_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  bool Word(std::string_view w) {
    if (in_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }

  bool Value(Json* v, int depth) {
    if (depth > kMaxDepth) return Bad("nested too deep");
    Space();
    if (pos_ == in_.size()) return Bad("a value expected");
    const char c = in_[pos_];
    if (c == '{') return Object(v, depth);
    if (c == '[') return Array(v, depth);
    if (c == '"') {
      v->kind = Json::Kind::kString;
      return String(&v->text);
    }
    if (Word("true")) {
      v->kind = Json::Kind::kBool;
      v->boolean = true;
      return true;
    }
    if (Word("false")) {
      v->kind = Json::Kind::kBool;
      return true;
    }
    if (Word("null")) return true;
    return Number(v);
  }

  bool Object(Json* v, int depth) {
    v->kind = Json::Kind::kObject;
    ++pos_;
    if (Eat('}')) return true;
    do {
      Space();
      std::string key;
      if (pos_ >= in_.size() || in_[pos_] != '"' || !String(&key)) return Bad("a key expected");
      if (!Eat(':')) return Bad("':' expected");
      Json member;
      if (!Value(&member, depth + 1)) return false;
      v->keys.push_back(std::move(key));
      v->values.push_back(std::move(member));
    } while (Eat(','));
    return Eat('}') || Bad("'}' expected");
  }

  bool Array(Json* v, int depth) {
    v->kind = Json::Kind::kArray;
    ++pos_;
    if (Eat(']')) return true;
    do {
      Json item;
      if (!Value(&item, depth + 1)) return false;
      v->items.push_back(std::move(item));
    } while (Eat(','));
    return Eat(']') || Bad("']' expected");
  }

  bool Number(Json* v) {
    const size_t start = pos_;
    auto digits = [&] {
      const size_t from = pos_;
      while (pos_ < in_.size() && in_[pos_] >= '0' && in_[pos_] <= '9') ++pos_;
      return pos_ > from;
    };
    if (pos_ < in_.size() && in_[pos_] == '-') ++pos_;
    if (pos_ < in_.size() && in_[pos_] == '0') {
      ++pos_;
    } else if (!digits()) {
      return Bad("a value expected");
    }
    if (pos_ < in_.size() && in_[pos_] == '.') {
      ++pos_;
      if (!digits()) return Bad("bad fraction");
    }
    if (pos_ < in_.size() && (in_[pos_] == 'e' || in_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < in_.size() && (in_[pos_] == '+' || in_[pos_] == '-')) ++pos_;
      if (!digits()) return Bad("bad exponent");
    }
    v->kind = Json::Kind::kNumber;
    v->text = std::string(in_.substr(start, pos_ - start));
    v->number = std::strtod(v->text.c_str(), nullptr);
    return true;
  }

  bool String(std::string* out) {
    ++pos_;  // The opening quote.
    while (pos_ < in_.size()) {
      const auto c = static_cast<unsigned char>(in_[pos_++]);
      if (c == '"') return true;
      if (c < 0x20) return Bad("a control character in a string");
      if (c != '\\') {
        out->push_back(static_cast<char>(c));
      } else if (!Escape(out)) {
        return false;
      }
    }
    return Bad("an unterminated string");
  }

  bool Escape(std::string* out) {
    if (pos_ >= in_.size()) return Bad("an unterminated escape");
    const char e = in_[pos_++];
    static constexpr std::string_view kFrom = "\"\\/bfnrt", kTo = "\"\\/\b\f\n\r\t";
    if (const size_t i = kFrom.find(e); i != std::string_view::npos) {
      out->push_back(kTo[i]);
      return true;
    }
    if (e != 'u') return Bad("a bad escape");
    unsigned cp = 0;
    if (!Hex4(&cp)) return false;
    if (cp >= 0xd800 && cp < 0xdc00) {  // A surrogate pair.
      unsigned low = 0;
      if (!Word("\\u") || !Hex4(&low) || low < 0xdc00 || low > 0xdfff) {
        return Bad("a lone surrogate");
      }
      cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
    } else if (cp >= 0xdc00 && cp < 0xe000) {
      return Bad("a lone surrogate");
    }
    Utf8(cp, out);
    return true;
  }

  bool Hex4(unsigned* cp) {
    if (pos_ + 4 > in_.size()) return Bad("a short \\u escape");
    for (int i = 0; i < 4; ++i) {
      const char h = in_[pos_++];
      const int d = h >= '0' && h <= '9'   ? h - '0'
                    : h >= 'a' && h <= 'f' ? h - 'a' + 10
                    : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                           : -1;
      if (d < 0) return Bad("a bad \\u escape");
      *cp = *cp * 16 + static_cast<unsigned>(d);
    }
    return true;
  }

  static void Utf8(unsigned cp, std::string* out) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else {
      out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    }
  }

  std::string_view in_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace

const Json* Json::Get(std::string_view key) const {
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == key) return &values[i];
  }
  return nullptr;
}

std::optional<Json> ParseJson(std::string_view text, std::string* error) {
  Reader r(text);
  std::optional<Json> v = r.Document();
  if (!v && error) *error = r.error();
  return v;
}

}  // namespace stitchfs::testutil
