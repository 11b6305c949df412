// S3Client's cancel flag against a real socket: a server that never answers, and one that
// answers 503 so that the client backs off between attempts. Either way a set flag ends the
// request within about a second, instead of after the stall timeout and every retry.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "engine/backends/s3/s3_client.h"
#include "engine/backends/s3/s3_config.h"
#include "engine/location/s3_address.h"

namespace stitchfs::engine {
namespace {

using Clock = std::chrono::steady_clock;

// Accepts connections on 127.0.0.1 and, for each, reads the request and then either keeps
// silent or answers 503, until destroyed.
class TinyServer {
 public:
  explicit TinyServer(bool answer_503) : answer_503_(answer_503) {
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
  ~TinyServer() {
    done_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    for (int c : clients_) ::close(c);
    ::close(fd_);
  }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int requests() const { return requests_.load(); }

 private:
  void Run() {
    while (!done_) {
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) return;
      clients_.push_back(c);
      char buf[4096];
      std::string got;
      while (got.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0) break;
        got.append(buf, static_cast<size_t>(n));
      }
      ++requests_;
      if (answer_503_) {
        const std::string r = "HTTP/1.1 503 Slow Down\r\nContent-Length: 0\r\n\r\n";
        (void)!::write(c, r.data(), r.size());
      }
    }
  }

  const bool answer_503_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> done_{false};
  std::atomic<int> requests_{0};
  std::vector<int> clients_;
  std::thread thread_;
};

// Sends a GET to `server` with `cancel` set 300 ms in; returns how long Send took.
std::pair<Status, double> CancelledGet(const TinyServer& server, int stall_s, int backoff_ms) {
  S3Config config;
  config.stall_timeout_s = stall_s;
  config.first_backoff_ms = backoff_ms;
  S3Address address;
  address.endpoint = server.endpoint();
  address.bucket = "b";
  S3Client client(config, address, {});
  std::string sink(1 << 20, '\0');
  std::atomic<bool> cancel{false};
  S3Request req;
  req.key = "k";
  req.range_length = sink.size();
  req.sink = {sink.data(), sink.size()};
  req.cancel = &cancel;
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancel = true;
  });
  const auto start = Clock::now();
  auto r = client.Send(req);
  const double s = std::chrono::duration<double>(Clock::now() - start).count();
  setter.join();
  return {r.ok() ? Status::OK() : r.status(), s};
}

TEST(S3ClientCancelTest, ASilentServerIsLeftWithinAboutASecond) {
  TinyServer server(/*answer_503=*/false);
  auto [st, seconds] = CancelledGet(server, /*stall_s=*/60, /*backoff_ms=*/200);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.sys_errno(), ECANCELED) << st.message();
  EXPECT_NE(st.message().find("cancelled"), std::string::npos) << st.message();
  EXPECT_LT(seconds, 10.0);  // Not the 60 s stall timeout.
}

TEST(S3ClientCancelTest, ABackoffBetweenRetriesEndsAtOnce) {
  TinyServer server(/*answer_503=*/true);
  auto [st, seconds] = CancelledGet(server, /*stall_s=*/60, /*backoff_ms=*/20000);
  EXPECT_EQ(st.sys_errno(), ECANCELED) << st.message();
  EXPECT_EQ(server.requests(), 1);  // The first attempt, then a backoff of 10 s or more.
  EXPECT_LT(seconds, 5.0);
}

}  // namespace
}  // namespace stitchfs::engine
