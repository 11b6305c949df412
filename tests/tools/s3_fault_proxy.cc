// s3_fault_proxy [-v] PORT UPSTREAM_HOST:UPSTREAM_PORT RULES: an HTTP/1.1 reverse proxy on
// 127.0.0.1:PORT (0: any free port; the port is printed on stdout) in front of an S3 server,
// which answers some requests wrongly on purpose, as the rule file RULES says. The file is
// read again at every request, so a test can change the faults while the proxy runs; each
// change (new contents or a new mtime) re-arms every rule. One rule a line, `#` comments:
//
//   METHOD KEY_SUBSTRING ACTION [COUNT]
//
// METHOD is GET, HEAD, PUT, POST, DELETE or `*`; KEY_SUBSTRING is looked for in the request
// target (path and query), as sent and percent-decoded, `*` matches any. The first rule that
// matches and is not spent acts; COUNT is how many requests it acts on (absent: all). ACTION:
//   503, 500, 429     an S3 error answer (SlowDown, InternalError), not forwarded
//   reset             the client's connection closed with a TCP reset, nothing forwarded
//   reset-mid-body    forwarded; the answer cut half-way through its body (through its head
//                     if it has none), then a TCP reset
//   short-body        forwarded; the answer's head and half its body (half its head if it has
//                     no body), then an orderly close
//   short-head        forwarded; only the answer's status line, then an orderly close
//   delay=MS          forwarded after MS milliseconds
//   wrong-length[=D]  forwarded; the total of a ranged GET's Content-Range changed by D
//                     (default 1); acts on GETs with a Range header only
//   truncate-upload   half the request body forwarded, then both connections closed; acts on
//                     requests with a body only
//   flip-upload       forwarded with one byte in the middle of the request body changed (the
//                     headers as they were); acts on requests with a body only
//   flip-body         forwarded; one byte in the middle of the answer's body changed (a GET's
//                     bytes silently wrong on the way)
//   hold              not forwarded: the request's body is written to RULES.held and the
//                     request waits unanswered until the client goes away or RULES.go appears,
//                     then is answered as RULES.go says (503, 500 or 429), else reset
// -v logs every request and every fault on stderr.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "s3_fault_hold.h"
#include "s3_fault_http.h"

namespace s3fault {
namespace {

enum class Act {
  kNone,
  kError,
  kReset,
  kResetMidBody,
  kShortBody,
  kShortHead,
  kDelay,
  kWrongLength,
  kTruncateUpload,
  kFlipUpload,
  kFlipBody,
  kHold
};

struct Rule {
  std::string method, key, text;
  Act act = Act::kNone;
  long arg = 0;     // The status of kError, the ms of kDelay, the change of kWrongLength.
  long count = -1;  // -1: every matching request.
};

struct Fault {
  Act act = Act::kNone;
  long arg = 0;
  std::string rule;  // Its line, for the log.
};

struct Options {
  bool verbose = false;
  std::string host, port;
};

bool ParseAction(const std::string& a, Rule* r) {
  const size_t eq = a.find('=');
  const std::string name = a.substr(0, eq);
  const std::string value = eq == std::string::npos ? "" : a.substr(eq + 1);
  char* end = nullptr;
  const long v = std::strtol(value.c_str(), &end, 10);
  const bool number = !value.empty() && *end == '\0';
  if (a == "503" || a == "500" || a == "429") {
    r->act = Act::kError;
    r->arg = std::stol(a);
  } else if (a == "reset") {
    r->act = Act::kReset;
  } else if (a == "reset-mid-body") {
    r->act = Act::kResetMidBody;
  } else if (a == "short-body") {
    r->act = Act::kShortBody;
  } else if (a == "short-head") {
    r->act = Act::kShortHead;
  } else if (a == "truncate-upload") {
    r->act = Act::kTruncateUpload;
  } else if (a == "flip-upload") {
    r->act = Act::kFlipUpload;
  } else if (a == "flip-body") {
    r->act = Act::kFlipBody;
  } else if (a == "hold") {
    r->act = Act::kHold;
  } else if (name == "delay" && number && v >= 0) {
    r->act = Act::kDelay;
    r->arg = v;
  } else if (name == "wrong-length" && (eq == std::string::npos || (number && v != 0))) {
    r->act = Act::kWrongLength;
    r->arg = eq == std::string::npos ? 1 : v;
  } else {
    return false;
  }
  return true;
}

// The rule file, its rules, and how many requests each has acted on since the file changed.
class RuleBook {
 public:
  explicit RuleBook(std::string path) : path_(std::move(path)) {}
  const std::string& path() const { return path_; }

  Fault Pick(const std::string& method, const std::string& target, bool ranged, bool has_body) {
    std::lock_guard<std::mutex> lock(mu_);
    Reload();
    const std::string decoded = PercentDecode(target);
    for (size_t i = 0; i < rules_.size(); ++i) {
      const Rule& r = rules_[i];
      if (r.method != "*" && r.method != method) continue;
      if (r.key != "*" && target.find(r.key) == std::string::npos &&
          decoded.find(r.key) == std::string::npos) {
        continue;
      }
      if (r.act == Act::kWrongLength && !(method == "GET" && ranged)) continue;
      if ((r.act == Act::kTruncateUpload || r.act == Act::kFlipUpload) && !has_body) continue;
      if (r.count >= 0 && used_[i] >= r.count) continue;
      ++used_[i];
      return {r.act, r.arg, r.text};
    }
    return {};
  }

 private:
  // Reads the file again; a file that changed resets every rule's count.
  void Reload() {
    std::ifstream in(path_);
    std::stringstream text;
    text << in.rdbuf();
    struct stat st {};
    const bool there = ::stat(path_.c_str(), &st) == 0;
    const std::string stamp = text.str() + "\n" + std::to_string(st.st_ino) + ":" +
                              std::to_string(st.st_mtim.tv_sec) + "." +
                              std::to_string(st.st_mtim.tv_nsec);
    if (!there) {
      rules_.clear();
      used_.clear();
      stamp_.clear();
      return;
    }
    if (stamp == stamp_) return;
    stamp_ = stamp;
    rules_.clear();
    std::istringstream lines(text.str());
    std::string line;
    while (std::getline(lines, line)) {
      if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
      std::istringstream words(line);
      Rule r;
      std::string action, count, extra;
      if (!(words >> r.method)) continue;
      r.text = line;
      bool good = (words >> r.key >> action) && ParseAction(action, &r);
      if (good && (words >> count)) {
        char* end = nullptr;
        r.count = std::strtol(count.c_str(), &end, 10);
        good = r.count >= 1 && *end == '\0' && !(words >> extra);
      }
      if (!good) {
        std::fprintf(stderr, "s3_fault_proxy: ignoring rule line: %s\n", line.c_str());
        continue;
      }
      rules_.push_back(r);
    }
    used_.assign(rules_.size(), 0);
  }

  std::mutex mu_;
  const std::string path_;
  std::string stamp_;
  std::vector<Rule> rules_;
  std::vector<long> used_;
};

std::string ErrorAnswer(long code, bool head_only, bool keep) {
  const char* reason = code == 503   ? "Service Unavailable"
                       : code == 429 ? "Too Many Requests"
                                     : "Internal Server Error";
  const char* s3_code = code == 500 ? "InternalError" : "SlowDown";
  const std::string body = std::string("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>") +
                           s3_code +
                           "</Code><Message>injected by s3_fault_proxy</Message>"
                           "<RequestId>fault</RequestId></Error>";
  std::string a =
      "HTTP/1.1 " + std::to_string(code) + " " + reason +
      "\r\nContent-Type: application/xml\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\n" + (keep ? "" : "Connection: close\r\n") + "\r\n";
  return head_only ? a : a + body;
}

// Sends `req` upstream, `body_bytes` of its body only (then closes) if not all of it.
// The answer goes to `resp`; false if the upstream failed or was cut off on purpose.
bool Forward(const Options& o, const Message& req, size_t body_bytes, Message* resp) {
  Fd fd = Connect(o.host, o.port);
  if (!fd) return false;
  const timeval timeout{120, 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  Conn up(std::move(fd));
  Message out;  // The head only: the body goes as it is.
  out.start = req.start;
  out.headers = req.headers;
  out.Remove("Expect");  // The whole body is here already.
  out.Remove("Keep-Alive");
  out.Set("Connection", "close");
  if (!up.WriteAll(out.Head()) || !up.WriteAll(std::string_view(req.body).substr(0, body_bytes))) {
    return false;
  }
  if (body_bytes < req.body.size()) {
    up.Abort();
    return false;
  }
  std::string head;
  do {  // Interim (1xx) answers are dropped.
    if (!up.ReadHead(&head) || !ParseHead(head, resp)) return false;
  } while (resp->Status() / 100 == 1);
  SetResponseKind(req.Method(), resp);
  return ReadBody(up, resp);
}

// "bytes A-B/TOTAL" with TOTAL changed by `delta`; false if there is no such header.
bool ChangeTotal(Message* resp, long delta) {
  const auto range = resp->Header("Content-Range");
  if (!range) return false;
  const size_t slash = range->rfind('/');
  if (slash == std::string::npos) return false;
  const long long total = std::atoll(range->c_str() + slash + 1);
  resp->Set("Content-Range", range->substr(0, slash + 1) + std::to_string(total + delta));
  return true;
}

void Log(const Options& o, const std::string& line) {
  if (o.verbose) std::fprintf(stderr, "s3_fault_proxy: %s\n", line.c_str());
}

// Serves one client connection, request after request, until either side closes it.
void Serve(Conn client, const Options& o, RuleBook* rules) {
  for (;;) {
    std::string head;
    Message req;
    if (!client.ReadHead(&head) || !ParseHead(head, &req)) return;
    const auto expect = req.Header("Expect");
    if (expect && expect->find("100") != std::string::npos &&
        !client.WriteAll("HTTP/1.1 100 Continue\r\n\r\n")) {
      return;
    }
    if (!ReadBody(client, &req)) return;
    const std::string method = req.Method(), target = req.Target();
    const auto connection = req.Header("Connection");
    const bool keep = req.start.ends_with("HTTP/1.1") &&
                      !(connection && connection->find("close") != std::string::npos);
    const Fault f = rules->Pick(method, target, req.Header("Range").has_value(), !req.body.empty());
    Log(o, method + " " + target + (f.act == Act::kNone ? "" : "  [fault: " + f.rule + "]"));
    switch (f.act) {
      case Act::kError:
        if (!client.WriteAll(ErrorAnswer(f.arg, method == "HEAD", keep)) || !keep) return;
        continue;
      case Act::kReset:
        client.Abort();
        return;
      case Act::kHold: {
        const std::string then = Hold(client.fd(), req.body, rules->path());
        Log(o, "  -> held, then " + (then.empty() ? "the client went away" : then));
        if (then == "503" || then == "500" || then == "429") {
          client.WriteAll(ErrorAnswer(std::stol(then), method == "HEAD", false));
          return;
        }
        client.Abort();
        return;
      }
      case Act::kTruncateUpload: {
        Message ignored;
        Forward(o, req, req.body.size() / 2, &ignored);
        client.Abort();
        return;
      }
      case Act::kDelay:
        std::this_thread::sleep_for(std::chrono::milliseconds(f.arg));
        break;
      case Act::kFlipUpload:
        req.body[req.body.size() / 2] ^= 0x01;
        break;
      case Act::kNone:
      case Act::kFlipBody:
      case Act::kResetMidBody:
      case Act::kShortBody:
      case Act::kShortHead:
      case Act::kWrongLength:
        break;  // They act on the answer.
    }
    Message resp;
    if (!Forward(o, req, req.body.size(), &resp)) {
      Log(o, "  -> upstream failed: 502");
      const std::string bad = "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n";
      if (!client.WriteAll(bad)) return;
      continue;
    }
    Log(o, "  -> " + resp.start);
    resp.Remove("Connection");
    resp.Remove("Keep-Alive");
    if (resp.kind == BodyKind::kToEnd) {
      resp.Set("Content-Length", std::to_string(resp.body.size()));
      resp.kind = BodyKind::kLength;
    }
    if (!keep) resp.Set("Connection", "close");
    if (f.act == Act::kWrongLength && !ChangeTotal(&resp, f.arg)) {
      Log(o, "  (no Content-Range to change)");
    }
    if (f.act == Act::kFlipBody && !resp.body.empty()) resp.body[resp.body.size() / 2] ^= 0x01;
    const std::string wire = resp.Head() + resp.body;
    if (f.act == Act::kResetMidBody || f.act == Act::kShortBody || f.act == Act::kShortHead) {
      const size_t head_size = wire.size() - resp.body.size();
      size_t cut = resp.body.empty() ? head_size / 2 : head_size + resp.body.size() / 2;
      if (f.act == Act::kShortHead) cut = resp.start.size() + 2;
      client.WriteAll(std::string_view(wire).substr(0, cut));
      if (f.act == Act::kResetMidBody) {
        client.Abort();
      } else {
        client.Close();
      }
      return;
    }
    if (!client.WriteAll(wire) || !keep) return;
  }
}

int Main(int argc, char** argv) {
  Options o;
  int arg = 1;
  if (arg < argc && std::string(argv[arg]) == "-v") {
    o.verbose = true;
    ++arg;
  }
  if (argc - arg != 3) {
    std::fprintf(stderr, "usage: s3_fault_proxy [-v] PORT UPSTREAM_HOST:PORT RULE_FILE\n");
    return 2;
  }
  const std::string upstream = argv[arg + 1];
  const size_t colon = upstream.rfind(':');
  if (colon == std::string::npos) {
    std::fprintf(stderr, "s3_fault_proxy: upstream must be HOST:PORT\n");
    return 2;
  }
  o.host = upstream.substr(0, colon);
  o.port = upstream.substr(colon + 1);
  RuleBook rules(argv[arg + 2]);
  std::signal(SIGPIPE, SIG_IGN);

  Fd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const int one = 1;
  ::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::atoi(argv[arg])));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (!listener || ::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      ::listen(listener.get(), 128) != 0 ||
      ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::perror("s3_fault_proxy: listen");
    return 1;
  }
  std::printf("%d\n", ntohs(addr.sin_port));
  std::fflush(stdout);
  for (;;) {
    Fd c(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!c) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE) {  // Until a connection ends.
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      std::perror("s3_fault_proxy: accept");
      return 1;
    }
    ::setsockopt(c.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    std::thread(Serve, Conn(std::move(c)), std::cref(o), &rules).detach();
  }
}

}  // namespace
}  // namespace s3fault

int main(int argc, char** argv) { return s3fault::Main(argc, argv); }
