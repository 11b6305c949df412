// S3Bucket::DeleteMany against a scripted HTTP server: batches of at most 1000 keys in one
// DeleteObjects request each, with the Content-MD5 S3 requires; per-key failures in the answer
// retried (transient codes) or reported (others), never taken for deletions; keys XML cannot
// carry, and servers without DeleteObjects, deleted one by one. And MD5/base64 themselves.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "engine/backends/s3/s3_bucket.h"
#include "engine/base/md5.h"

namespace stitchfs::engine {
namespace {

std::string Hex(const std::array<uint8_t, 16>& d) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : d) out += {kHex[b >> 4], kHex[b & 15]};
  return out;
}

std::string Base64Of(std::string_view s) {
  return Base64({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
}

TEST(Md5Test, RfcVectors) {
  EXPECT_EQ(Hex(Md5("")), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(Hex(Md5("a")), "0cc175b9c0f1b6a831c399e269772661");
  EXPECT_EQ(Hex(Md5("abc")), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(Hex(Md5("message digest")), "f96b697d7cb7938d525a2f31aaf161d0");
  EXPECT_EQ(Hex(Md5("abcdefghijklmnopqrstuvwxyz")), "c3fcd3d76192e4007dfb496cca67e13b");
  EXPECT_EQ(Hex(Md5("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")),
            "d174ab98d277d9f5a5611c2c9f419d9f");
  EXPECT_EQ(Hex(Md5("1234567890123456789012345678901234567890"
                    "1234567890123456789012345678901234567890")),
            "57edf4a22be3c955ac49da2e2107b67a");
  EXPECT_EQ(Base64(Md5("")), "1B2M2Y8AsgTpgAmY7PhCfg==");
}

TEST(Md5Test, Base64Rfc4648Vectors) {
  EXPECT_EQ(Base64Of(""), "");
  EXPECT_EQ(Base64Of("f"), "Zg==");
  EXPECT_EQ(Base64Of("fo"), "Zm8=");
  EXPECT_EQ(Base64Of("foo"), "Zm9v");
  EXPECT_EQ(Base64Of("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64Of("fooba"), "Zm9vYmE=");
  EXPECT_EQ(Base64Of("foobar"), "Zm9vYmFy");
}

struct Request {
  std::string head, body;
  std::string method() const { return head.substr(0, head.find(' ')); }
  std::string Header(const std::string& name) const {
    std::smatch m;
    if (!std::regex_search(head, m, std::regex("\r\n" + name + ": ([^\r]*)", std::regex::icase)))
      return "";
    return m[1];
  }
  std::vector<std::string> Keys() const {
    std::vector<std::string> out;
    const std::regex key("<Key>([^<]*)</Key>");
    for (std::sregex_iterator it(body.begin(), body.end(), key), end; it != end; ++it) {
      out.push_back((*it)[1]);
    }
    return out;
  }
};

// Answers each request on 127.0.0.1 with what `answer` returns for it (status, body), and
// keeps every request.
class ScriptedServer {
 public:
  using Answer = std::function<std::pair<int, std::string>(const Request&)>;
  explicit ScriptedServer(Answer answer) : answer_(std::move(answer)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(fd_, 16), 0);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Run(); });
  }
  ~ScriptedServer() {
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<Request> requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  void Run() {
    for (;;) {
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) return;
      Serve(c);
      ::close(c);
    }
  }
  // Requests on one connection until the client closes it.
  void Serve(int c) {
    std::string got;
    char buf[65536];
    for (;;) {
      size_t end;
      while ((end = got.find("\r\n\r\n")) == std::string::npos) {
        const ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0) return;
        got.append(buf, static_cast<size_t>(n));
      }
      Request r{got.substr(0, end + 2), ""};
      const size_t length = std::stoul("0" + r.Header("Content-Length"));
      got.erase(0, end + 4);
      while (got.size() < length) {
        const ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0) return;
        got.append(buf, static_cast<size_t>(n));
      }
      r.body = got.substr(0, length);
      got.erase(0, length);
      auto [status, body] = answer_(r);
      {
        std::lock_guard<std::mutex> lock(mu_);
        requests_.push_back(r);
      }
      const std::string out = "HTTP/1.1 " + std::to_string(status) +
                              " X\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
                              body;
      if (::write(c, out.data(), out.size()) != static_cast<ssize_t>(out.size())) return;
    }
  }

  Answer answer_;
  int fd_ = -1;
  uint16_t port_ = 0;
  mutable std::mutex mu_;
  std::vector<Request> requests_;
  std::thread thread_;
};

std::shared_ptr<S3Bucket> BucketAt(const ScriptedServer& server) {
  S3Config config;
  config.first_backoff_ms = 1;
  config.max_attempts = 3;
  S3Address address;
  address.endpoint = server.endpoint();
  address.bucket = "b";
  return std::make_shared<S3Bucket>(std::make_shared<S3Client>(config, address, S3Credentials{}),
                                    "b");
}

std::string Result(const std::string& errors) {
  return "<?xml version=\"1.0\"?><DeleteResult>" + errors + "</DeleteResult>";
}

std::string Error(const std::string& key, const std::string& code) {
  return "<Error><Key>" + key + "</Key><Code>" + code + "</Code><Message>m</Message></Error>";
}

TEST(S3DeleteTest, ThousandKeysARequestWithTheirMd5) {
  ScriptedServer server([](const Request&) { return std::pair{200, Result("")}; });
  std::vector<std::string> keys;
  for (int i = 0; i < 2500; ++i) keys.push_back("p/d1/file" + std::to_string(i));
  keys.push_back("p/d1/a&b<c>'\"");
  ASSERT_TRUE(BucketAt(server)->DeleteMany(keys).ok());
  const auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 3u) << "1000 + 1000 + 501 keys";
  std::vector<std::string> sent;
  for (const Request& r : reqs) {
    EXPECT_EQ(r.method(), "POST");
    EXPECT_NE(r.head.find("?delete"), std::string::npos) << r.head;
    EXPECT_EQ(r.Header("Content-MD5"), Base64(Md5(r.body)));
    EXPECT_LE(r.Keys().size(), S3Bucket::kMaxDeleteKeys);
    for (const std::string& k : r.Keys()) sent.push_back(k);
  }
  EXPECT_EQ(sent.size(), keys.size());
  EXPECT_EQ(sent.back(), "p/d1/a&amp;b&lt;c&gt;&apos;&quot;") << "escaped in the body";
}

TEST(S3DeleteTest, PerKeyFailuresAreRetriedOrReportedNeverTakenForDeleted) {
  int calls = 0;
  ScriptedServer server([&](const Request&) {
    ++calls;
    if (calls == 1) {
      return std::pair{200, Result(Error("k1", "InternalError") + Error("k2", "AccessDenied") +
                                   Error("k3", "NoSuchKey") + Error("k4", "SlowDown"))};
    }
    if (calls == 2) return std::pair{200, Result(Error("k4", "SlowDown"))};
    return std::pair{200, Result("")};
  });
  const Status s = BucketAt(server)->DeleteMany({"k1", "k2", "k3", "k4", "k5"});
  EXPECT_EQ(s.code(), ErrorCode::kAccessDenied) << s.ToString();
  EXPECT_NE(s.message().find("k2"), std::string::npos) << s.message();
  const auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[1].Keys(), (std::vector<std::string>{"k1", "k4"})) << "the transient ones";
  EXPECT_EQ(reqs[2].Keys(), (std::vector<std::string>{"k4"}));
}

TEST(S3DeleteTest, AKeyThatStaysFailingIsAnError) {
  ScriptedServer server([](const Request&) {
    return std::pair{200, Result(Error("k1", "InternalError"))};
  });
  const Status s = BucketAt(server)->DeleteMany({"k1", "k2"});
  EXPECT_EQ(s.code(), ErrorCode::kIOError) << s.ToString();
  EXPECT_NE(s.message().find("InternalError"), std::string::npos) << s.message();
  EXPECT_EQ(server.requests().size(), 3u) << "max_attempts";
}

TEST(S3DeleteTest, AnAnswerWithoutAResultIsNoProof) {
  ScriptedServer server([](const Request&) { return std::pair{200, std::string("<Delete")}; });
  EXPECT_FALSE(BucketAt(server)->DeleteMany({"k1"}).ok());
}

TEST(S3DeleteTest, ControlCharactersAndServersWithoutIt) {
  ScriptedServer server([](const Request& r) {
    if (r.method() == "POST") return std::pair{501, std::string("<Error><Code>NotImplemented")};
    return std::pair{204, std::string()};
  });
  ASSERT_TRUE(BucketAt(server)->DeleteMany({"new\nline", "k1", "bad\xff", "k2"}).ok());
  const auto reqs = server.requests();
  int deletes = 0, posts = 0;
  for (const Request& r : reqs) (r.method() == "DELETE" ? deletes : posts)++;
  EXPECT_EQ(deletes, 4) << "one for each key XML cannot carry, then each after the 501";
  EXPECT_EQ(posts, 1);
  EXPECT_NE(reqs[0].head.find("new%0Aline"), std::string::npos) << reqs[0].head;
}

}  // namespace
}  // namespace stitchfs::engine
