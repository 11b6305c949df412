#include "engine/backends/archive/tar_scanner.h"

#include <algorithm>
#include <cstring>

namespace stitchfs::engine {

namespace {

constexpr uint64_t kBlock = 512;
constexpr uint64_t kMaxMeta = 1 << 20;  // Longest pax or long-name entry accepted.

uint64_t Padded(uint64_t n) { return (n + kBlock - 1) / kBlock * kBlock; }

// An octal field (NUL or space terminated), or GNU's base-256 form; -1 if malformed.
int64_t Number(const char* p, size_t len) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  if (u[0] & 0x80) {
    if (u[0] != 0x80) return -1;  // Negative, or beyond 64 bits.
    uint64_t v = 0;
    for (size_t i = 1; i < len; ++i) {
      if (v >> 55) return -1;
      v = (v << 8) | u[i];
    }
    return v > INT64_MAX ? -1 : static_cast<int64_t>(v);
  }
  size_t i = 0;
  while (i < len && p[i] == ' ') ++i;
  uint64_t v = 0;
  bool any = false;
  for (; i < len && p[i] >= '0' && p[i] <= '7'; ++i, any = true) {
    if (v >> 60) return -1;
    v = v * 8 + static_cast<uint64_t>(p[i] - '0');
  }
  for (; i < len; ++i) {
    if (p[i] != ' ' && p[i] != '\0') return -1;
  }
  return any ? static_cast<int64_t>(v) : 0;
}

std::string Field(const char* p, size_t len) { return std::string(p, strnlen(p, len)); }

bool ChecksumOk(const char* h) {
  const int64_t stored = Number(h + 148, 8);
  uint64_t unsigned_sum = 0;
  int64_t signed_sum = 0;
  for (size_t i = 0; i < kBlock; ++i) {
    const char c = (i >= 148 && i < 156) ? ' ' : h[i];
    unsigned_sum += static_cast<unsigned char>(c);
    signed_sum += static_cast<signed char>(c);
  }
  return stored >= 0 && (static_cast<uint64_t>(stored) == unsigned_sum || stored == signed_sum);
}

// "./a/b" and "/a/b" as "a/b": the leading run of "./" and "/" found first, then erased once
// (one erase per step moved the rest of the name each time: quadratic in a hostile name).
std::string NormalName(std::string name) {
  size_t start = 0;
  for (;;) {
    if (name.compare(start, 2, "./") == 0) {
      start += 2;
    } else if (start < name.size() && name[start] == '/') {
      start += 1;
    } else {
      break;
    }
  }
  name.erase(0, start);
  return name;
}

}  // namespace

Status TarScanner::Damaged(const std::string& what) const {
  return Status::BackupDamaged("archive " + display_ + " is not a readable tar archive: " + what +
                               " at byte " + std::to_string(pos_) + " of the tar stream");
}

void TarScanner::Skip(uint64_t n) {
  n = std::min(n, skippable());
  remaining_ -= n;
  pos_ += n;
  if (state_ == State::kData && remaining_ == 0) state_ = State::kHeader;
}

Status TarScanner::Feed(std::span<const char> data) {
  while (!data.empty() && state_ != State::kEnd) {
    if (state_ == State::kData) {
      const uint64_t n = std::min<uint64_t>(remaining_, data.size());
      Skip(n);
      data = data.subspan(n);
      continue;
    }
    const uint64_t want = state_ == State::kHeader ? kBlock - buffer_.size() : remaining_;
    const size_t n = static_cast<size_t>(std::min<uint64_t>(want, data.size()));
    buffer_.append(data.data(), n);
    data = data.subspan(n);
    pos_ += n;
    if (state_ == State::kMeta) remaining_ -= n;
    if (state_ == State::kHeader && buffer_.size() == kBlock) {
      RETURN_IF_ERROR(Header());
    } else if (state_ == State::kMeta && remaining_ == 0) {
      RETURN_IF_ERROR(Meta());
    }
  }
  return Status::OK();
}

Status TarScanner::Header() {
  std::string h = std::move(buffer_);
  buffer_.clear();
  if (std::all_of(h.begin(), h.end(), [](char c) { return c == 0; })) {
    state_ = State::kEnd;
    return Status::OK();
  }
  if (!ChecksumOk(h.data())) return Damaged("a header with a wrong checksum");
  const int64_t field_size = Number(h.data() + 124, 12);
  if (field_size < 0) return Damaged("a header with a malformed size");
  const char type = h[156];
  if (type == 'x' || type == 'g' || type == 'L' || type == 'K') {
    if (static_cast<uint64_t>(field_size) > kMaxMeta) return Damaged("an oversized meta entry");
    meta_type_ = type;
    meta_size_ = static_cast<uint64_t>(field_size);
    remaining_ = Padded(meta_size_);
    state_ = remaining_ == 0 ? State::kHeader : State::kMeta;
    if (remaining_ == 0) return Meta();
    return Status::OK();
  }
  if (type == 'S') return Damaged("a sparse member (not written by ClickHouse)");
  std::string name = next_name_;
  if (name.empty()) {
    name = Field(h.data(), 100);
    if (std::memcmp(h.data() + 257, "ustar", 5) == 0 && h[345] != '\0') {
      name = Field(h.data() + 345, 155) + "/" + name;
    }
  }
  const uint64_t size =
      next_size_ >= 0 ? static_cast<uint64_t>(next_size_) : static_cast<uint64_t>(field_size);
  next_name_.clear();
  next_size_ = -1;
  const bool has_data = type == '0' || type == '\0' || type == '7';
  const uint64_t data_size = (has_data || !(type >= '1' && type <= '6')) ? size : 0;
  last_name_ = NormalName(std::move(name));
  if (data_size > stream_limit_ || pos_ > stream_limit_ - data_size) {
    return Status::BackupDamaged("archive " + display_ + " member " + ShownName(last_name_) +
                                 " declares " + std::to_string(data_size) + " bytes at byte " +
                                 std::to_string(pos_) +
                                 " of the tar stream, beyond the most it may hold (" +
                                 std::to_string(stream_limit_) + " bytes)");
  }
  if (has_data && !last_name_.empty() && last_name_.back() != '/') {
    if (budget_ != nullptr) {
      RETURN_IF_ERROR(budget_->Index(sizeof(ArchiveMember) + last_name_.size(),
                                     display_ + " member " + ShownName(last_name_)));
    }
    members_.push_back({last_name_, 0, pos_, size});
  }
  remaining_ = Padded(data_size);
  state_ = remaining_ == 0 ? State::kHeader : State::kData;
  return Status::OK();
}

Status TarScanner::Meta() {
  std::string body = std::move(buffer_);
  buffer_.clear();
  body.resize(meta_size_);
  state_ = State::kHeader;
  if (meta_type_ == 'L') {
    next_name_ = Field(body.data(), body.size());
    return Status::OK();
  }
  if (meta_type_ != 'x') return Status::OK();  // Global pax and long link names change nothing.
  std::string_view rest = body;
  while (!rest.empty()) {  // Records "<length> <key>=<value>\n".
    const size_t space = rest.find(' ');
    uint64_t n = 0;
    for (size_t i = 0; space != std::string_view::npos && i < space; ++i) {
      if (rest[i] < '0' || rest[i] > '9' || n > kMaxMeta) return Damaged("a malformed pax record");
      n = n * 10 + static_cast<uint64_t>(rest[i] - '0');
    }
    if (space == std::string_view::npos || n <= space + 1 || n > rest.size() || rest[n - 1] != '\n')
      return Damaged("a malformed pax record");
    const std::string_view record = rest.substr(space + 1, n - space - 2);
    rest.remove_prefix(n);
    const size_t eq = record.find('=');
    if (eq == std::string_view::npos) return Damaged("a malformed pax record");
    const std::string_view key = record.substr(0, eq), value = record.substr(eq + 1);
    if (key == "path") next_name_ = std::string(value);
    if (key == "size") {
      uint64_t v = 0;
      for (char c : value) {
        if (c < '0' || c > '9' || v > (UINT64_MAX - 9) / 10) return Damaged("a malformed pax size");
        v = v * 10 + static_cast<uint64_t>(c - '0');
      }
      if (value.empty() || v > INT64_MAX) return Damaged("a malformed pax size");
      next_size_ = static_cast<int64_t>(v);
    }
  }
  return Status::OK();
}

Status TarScanner::Finish() const {
  if (state_ == State::kEnd || (state_ == State::kHeader && buffer_.empty())) return Status::OK();
  return Damaged("the stream ends inside a member");
}

}  // namespace stitchfs::engine
