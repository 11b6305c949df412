// The HTTP/1.1 plumbing of s3_fault_proxy: an owned socket, a buffered connection, and
// messages read whole (head, then the body as it was framed on the wire: Content-Length,
// chunked, or up to the end of the connection).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace s3fault {

// A move-only file descriptor owner.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Reset(); }

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  void Reset();
  // Closes with a TCP reset (SO_LINGER 0) instead of an orderly FIN.
  void Abort();

 private:
  int fd_ = -1;
};

// A socket with a read buffer.
class Conn {
 public:
  explicit Conn(Fd fd) : fd_(std::move(fd)) {}

  // The head up to and including the empty line; false at the end of the stream, on an
  // error, or for a head over 64 KiB.
  bool ReadHead(std::string* head);
  bool ReadLine(std::string* line);            // With its CRLF.
  bool ReadExact(size_t n, std::string* out);  // Appends.
  void ReadToEnd(std::string* out);            // Appends.
  bool WriteAll(std::string_view data);

  void Close() { fd_.Reset(); }
  void Abort() { fd_.Abort(); }
  int fd() const { return fd_.get(); }

 private:
  bool Fill();  // False at the end of the stream or on an error.

  Fd fd_;
  std::string buf_;
  size_t pos_ = 0;
};

enum class BodyKind { kNone, kLength, kChunked, kToEnd };

struct Message {
  std::string start;  // The request or status line, without its CRLF.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // As framed on the wire (chunk sizes kept for a chunked body).
  BodyKind kind = BodyKind::kNone;
  uint64_t length = 0;  // The Content-Length, for kLength.

  // The value of header `name` (any case), or nullopt.
  std::optional<std::string> Header(std::string_view name) const;
  void Remove(std::string_view name);
  void Set(const std::string& name, const std::string& value);  // Replaces or appends.
  std::string Head() const;                                     // Start line, headers, CRLF.
  // The request line's method and target, or the status line's code (0 if unparsable).
  std::string Method() const;
  std::string Target() const;
  int Status() const;
};

// Parses `head` (as ReadHead gives it) and sets `kind` and `length` as for a request (a
// response's body kind also depends on the request: ResponseKind).
bool ParseHead(const std::string& head, Message* m);
// What frames a response's body, given the request's method.
void SetResponseKind(const std::string& request_method, Message* m);
// Reads the body `m->kind` announces into `m->body`.
bool ReadBody(Conn& conn, Message* m);

// A connection to host:port, or an invalid Fd.
Fd Connect(const std::string& host, const std::string& port);
// Percent-decoding of a request target (invalid escapes kept as they are).
std::string PercentDecode(std::string_view s);

}  // namespace s3fault
