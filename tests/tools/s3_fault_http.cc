#include "s3_fault_http.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace s3fault {
namespace {

constexpr size_t kMaxHead = 64 << 10;

bool SameName(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

std::string Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && std::string_view(" \t\r\n").find(s.back()) != std::string_view::npos) {
    s.remove_suffix(1);
  }
  return std::string(s);
}

std::optional<uint64_t> ParseNumber(const std::string& s, int base) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s.c_str(), &end, base);
  if (errno != 0 || *end != '\0') return std::nullopt;
  return v;
}

// Sets the body kind a request's headers announce (a response's, before SetResponseKind).
bool SetKindFromHeaders(Message* m) {
  const auto te = m->Header("Transfer-Encoding");
  if (te && te->find("chunked") != std::string::npos) {
    m->kind = BodyKind::kChunked;
    return true;
  }
  if (const auto cl = m->Header("Content-Length")) {
    const auto n = ParseNumber(*cl, 10);
    if (!n) return false;
    m->kind = *n > 0 ? BodyKind::kLength : BodyKind::kNone;
    m->length = *n;
    return true;
  }
  m->kind = BodyKind::kNone;
  return true;
}

}  // namespace

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    Reset();
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

void Fd::Reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void Fd::Abort() {
  if (fd_ < 0) return;
  const linger l{1, 0};
  ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
  Reset();
}

bool Conn::Fill() {
  if (pos_ > 0 && pos_ == buf_.size()) {
    buf_.clear();
    pos_ = 0;
  }
  char chunk[64 << 10];
  for (;;) {
    const ssize_t n = ::recv(fd_.get(), chunk, sizeof(chunk), 0);
    if (n > 0) {
      buf_.append(chunk, static_cast<size_t>(n));
      return true;
    }
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
}

bool Conn::ReadHead(std::string* head) {
  for (;;) {
    const size_t end = buf_.find("\r\n\r\n", pos_);
    if (end != std::string::npos) {
      head->assign(buf_, pos_, end + 4 - pos_);
      pos_ = end + 4;
      return true;
    }
    if (buf_.size() - pos_ > kMaxHead || !Fill()) return false;
  }
}

bool Conn::ReadLine(std::string* line) {
  for (;;) {
    const size_t end = buf_.find("\r\n", pos_);
    if (end != std::string::npos) {
      line->assign(buf_, pos_, end + 2 - pos_);
      pos_ = end + 2;
      return true;
    }
    if (buf_.size() - pos_ > kMaxHead || !Fill()) return false;
  }
}

bool Conn::ReadExact(size_t n, std::string* out) {
  while (n > 0) {
    if (pos_ == buf_.size() && !Fill()) return false;
    const size_t take = std::min(n, buf_.size() - pos_);
    out->append(buf_, pos_, take);
    pos_ += take;
    n -= take;
  }
  return true;
}

void Conn::ReadToEnd(std::string* out) {
  do {
    out->append(buf_, pos_, std::string::npos);
    pos_ = buf_.size();
  } while (Fill());
}

bool Conn::WriteAll(std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd_.get(), data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::optional<std::string> Message::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (SameName(k, name)) return v;
  }
  return std::nullopt;
}

void Message::Remove(std::string_view name) {
  std::erase_if(headers, [&](const auto& h) { return SameName(h.first, name); });
}

void Message::Set(const std::string& name, const std::string& value) {
  for (auto& [k, v] : headers) {
    if (SameName(k, name)) {
      v = value;
      return;
    }
  }
  headers.emplace_back(name, value);
}

std::string Message::Head() const {
  std::string h = start + "\r\n";
  for (const auto& [k, v] : headers) h += k + ": " + v + "\r\n";
  return h + "\r\n";
}

std::string Message::Method() const { return start.substr(0, start.find(' ')); }

std::string Message::Target() const {
  const size_t a = start.find(' ');
  if (a == std::string::npos) return "";
  const size_t b = start.find(' ', a + 1);
  return start.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1);
}

int Message::Status() const {
  const size_t a = start.find(' ');
  if (a == std::string::npos) return 0;
  return std::atoi(start.c_str() + a + 1);
}

bool ParseHead(const std::string& head, Message* m) {
  *m = Message{};
  size_t pos = head.find("\r\n");
  if (pos == std::string::npos || pos == 0) return false;
  m->start = head.substr(0, pos);
  pos += 2;
  for (;;) {
    const size_t end = head.find("\r\n", pos);
    if (end == std::string::npos || end == pos) break;
    const std::string line = head.substr(pos, end - pos);
    const size_t colon = line.find(':');
    if (colon == std::string::npos || colon == 0) return false;
    m->headers.emplace_back(line.substr(0, colon), Trim(line.substr(colon + 1)));
    pos = end + 2;
  }
  return SetKindFromHeaders(m);
}

void SetResponseKind(const std::string& request_method, Message* m) {
  const int status = m->Status();
  if (request_method == "HEAD" || status / 100 == 1 || status == 204 || status == 304) {
    m->kind = BodyKind::kNone;
  } else if (m->kind == BodyKind::kNone && !m->Header("Content-Length")) {
    m->kind = BodyKind::kToEnd;
  }
}

bool ReadBody(Conn& conn, Message* m) {
  switch (m->kind) {
    case BodyKind::kNone:
      return true;
    case BodyKind::kLength:
      return conn.ReadExact(m->length, &m->body);
    case BodyKind::kToEnd:
      conn.ReadToEnd(&m->body);
      return true;
    case BodyKind::kChunked:
      for (;;) {
        std::string line;
        if (!conn.ReadLine(&line)) return false;
        m->body += line;
        const auto size = ParseNumber(Trim(line.substr(0, line.find(';'))), 16);
        if (!size) return false;
        if (*size == 0) break;
        if (!conn.ReadExact(*size + 2, &m->body)) return false;
      }
      for (;;) {  // Trailers, up to the empty line.
        std::string line;
        if (!conn.ReadLine(&line)) return false;
        m->body += line;
        if (line == "\r\n") return true;
      }
  }
  return false;
}

Fd Connect(const std::string& host, const std::string& port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0) return Fd();
  Fd fd;
  for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
    Fd s(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (s && ::connect(s.get(), a->ai_addr, a->ai_addrlen) == 0) {
      fd = std::move(s);
      break;
    }
  }
  ::freeaddrinfo(res);
  if (fd) {
    const int one = 1;
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  return fd;
}

std::string PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::strtol(std::string(s.substr(i + 1, 2)).c_str(), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace s3fault
