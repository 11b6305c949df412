#include "engine/backends/s3/s3_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>

#include "engine/backends/s3/curl_library.h"

namespace stitchfs::engine {
namespace {

struct CurlDeleter {
  void operator()(CURL* c) const { LoadedCurl().easy_cleanup(c); }
};
using CurlPtr = std::unique_ptr<CURL, CurlDeleter>;

struct SlistDeleter {
  void operator()(curl_slist* l) const { LoadedCurl().slist_free_all(l); }
};
using SlistPtr = std::unique_ptr<curl_slist, SlistDeleter>;

bool IsRetryableCurl(CURLcode c) {
  switch (c) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SEND_FAIL_REWIND:  // A reused connection died mid-body: sent again from the start.
      return true;
    default:
      return false;
  }
}

std::optional<uint64_t> ParseU64(std::string_view s) {
  uint64_t v = 0;
  if (s.empty()) return std::nullopt;
  for (char c : s) {
    if (c < '0' || c > '9' || v > (UINT64_MAX - 9) / 10) return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

std::string_view TrimView(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == '\r' || s.back() == '\n' || s.back() == ' '))
    s.remove_suffix(1);
  return s;
}

bool HeaderIs(std::string_view line, std::string_view name) {
  return line.size() > name.size() && line[name.size()] == ':' &&
         strncasecmp(line.data(), name.data(), name.size()) == 0;
}

}  // namespace

// The state of one transfer, reached from curl's callbacks.
struct S3Client::Attempt {
  const S3Request* request;
  S3Response response;
  CURL* curl;
  Reported* reported;  // Sink bytes a reader may already use (S3Request::report).
  size_t body_sent = 0;
  bool head_done = false;  // The empty line that ends the headers came.

  static size_t OnHeader(char* data, size_t size, size_t n, void* self) {
    auto* a = static_cast<Attempt*>(self);
    std::string_view line(data, size * n);
    S3Response& r = a->response;
    if (line.substr(0, 5) == "HTTP/") {  // A new response (after 100 Continue): start again.
      r = S3Response{};
      a->head_done = false;
    } else if (line == "\r\n" || line == "\n") {
      a->head_done = true;
    } else if (HeaderIs(line, "etag")) {
      std::string_view v = TrimView(line.substr(5));
      if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
      r.etag = std::string(v);
    } else if (HeaderIs(line, "content-length")) {
      r.content_length = ParseU64(TrimView(line.substr(15)));
    } else if (HeaderIs(line, "content-range")) {
      std::string_view v = TrimView(line.substr(14));
      if (const size_t slash = v.rfind('/'); slash != v.npos) {
        r.total_size = ParseU64(v.substr(slash + 1));
      }
      if (v.substr(0, 6) == "bytes ") r.range_start = ParseU64(v.substr(6, v.find('-') - 6));
    }
    return size * n;
  }

  static size_t OnBody(char* data, size_t size, size_t n, void* self) {
    auto* a = static_cast<Attempt*>(self);
    const size_t len = size * n;
    long status = 0;
    LoadedCurl().easy_getinfo(a->curl, CURLINFO_RESPONSE_CODE, &status);
    std::span<char> sink = a->request->sink;
    if (sink.empty() || status / 100 != 2) {
      a->response.body.append(data, len);
      return len;
    }
    S3Response& r = a->response;
    if (len > sink.size() - r.sink_bytes) {
      r.sink_overflow = true;
      return 0;  // Aborts the transfer (CURLE_WRITE_ERROR).
    }
    const uint64_t at = r.sink_bytes, kept = std::max(a->reported->bytes, at);
    if (at + len > kept) std::memcpy(sink.data() + kept, data + (kept - at), at + len - kept);
    r.sink_bytes += len;
    return a->Report(status) ? len : 0;
  }

  // Tells S3Request::report what is in place, if the answer is the range asked for; false if
  // it stopped the transfer.
  bool Report(long status) {
    S3Response& r = response;
    if (request->report == nullptr) return true;
    std::optional<uint64_t> size;
    if (status == 206 && r.range_start == request->range_offset) size = r.total_size;
    if (status == 200 && request->range_offset == 0) size = r.content_length;
    if (!size) return true;
    if (reported->etag.empty()) reported->etag = r.etag;
    reported->bytes = std::max<uint64_t>(reported->bytes, r.sink_bytes);
    if ((*request->report)(reported->bytes, *size)) return true;
    r.sink_stopped = true;
    return false;
  }

  // curl's progress callback, called often while bytes flow and about once a second while
  // they do not: non-zero ends the transfer (S3Request::cancel).
  static int OnProgress(void* self, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    const auto* a = static_cast<const Attempt*>(self);
    return a->request->cancel->load(std::memory_order_relaxed) ? 1 : 0;
  }

  static size_t OnRead(char* buf, size_t size, size_t n, void* self) {
    auto* a = static_cast<Attempt*>(self);
    const std::string_view body = a->request->body;
    const size_t len = std::min(size * n, body.size() - a->body_sent);
    std::memcpy(buf, body.data() + a->body_sent, len);
    a->body_sent += len;
    return len;
  }
};

class S3Client::Pool {
 public:
  CurlPtr Take() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_.empty()) {
        CurlPtr c = std::move(free_.back());
        free_.pop_back();
        return c;
      }
    }
    return CurlPtr(LoadedCurl().easy_init());
  }
  void Give(CurlPtr c) {
    std::lock_guard<std::mutex> lock(mu_);
    if (free_.size() < 64) free_.push_back(std::move(c));
  }

  std::atomic<uint64_t> requests{0}, retries{0}, sent{0}, received{0};

 private:
  std::mutex mu_;
  std::vector<CurlPtr> free_;
};

namespace {

Status Cancelled() { return Status::IOError("cancelled", ECANCELED); }

// Sleeps `d`, in slices, unless request.cancel is or becomes true (then false, at once).
bool SleepUnlessCancelled(const S3Request& request, std::chrono::milliseconds d) {
  constexpr std::chrono::milliseconds kSlice{20};
  const auto until = std::chrono::steady_clock::now() + d;
  for (;;) {
    if (request.cancel != nullptr && request.cancel->load()) return false;
    const auto now = std::chrono::steady_clock::now();
    if (now >= until) return true;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(kSlice, until - now));
  }
}

}  // namespace

bool IsRetryableStatus(long status) {
  return status == 500 || status == 502 || status == 503 || status == 504 || status == 429;
}

namespace {

// A body the server received other than it was sent (its Content-MD5 did not match): worth
// sending again, as a reset connection is.
bool IsBadDigest(const S3Response& r) {
  return r.status == 400 && r.body.find("<Code>BadDigest</Code>") != std::string::npos;
}

}  // namespace

S3Client::S3Client(const S3Config& config, const S3Address& address, S3Credentials credentials)
    : config_(config), credentials_(std::move(credentials)), pool_(std::make_unique<Pool>()) {
  std::string region = config.region.empty() ? address.region : config.region;
  if (region.empty()) region = "us-east-1";
  sigv4_ = "aws:amz:" + region + ":s3";
  if (address.virtual_hosted) {
    base_url_ = address.endpoint;
  } else if (!address.endpoint.empty()) {
    base_url_ = address.endpoint + "/" + address.bucket;
  } else if (!config.endpoint.empty()) {
    base_url_ = config.endpoint + "/" + address.bucket;
  } else {
    base_url_ = "https://" + address.bucket + ".s3." + region + ".amazonaws.com";
  }
  display_ = RedactUrl(base_url_);
  std::string host = base_url_;
  if (address.virtual_hosted) {
    const size_t at = host.find(address.bucket + ".");
    if (at != std::string::npos) host.erase(at, address.bucket.size() + 1);
  } else {
    host.resize(host.size() - address.bucket.size() - 1);
  }
  service_ = host + "\n" + credentials_.access_key;
}

S3Client::~S3Client() = default;

std::string S3Client::Redact(std::string text) const {
  for (const std::string* secret : {&credentials_.secret_key, &credentials_.session_token}) {
    if (secret->empty()) continue;
    for (size_t at = text.find(*secret); at != std::string::npos; at = text.find(*secret, at + 8)) {
      text.replace(at, secret->size(), "[HIDDEN]");
    }
  }
  return text;
}

S3Counters S3Client::counters() const {
  return {pool_->requests.load(), pool_->retries.load(), pool_->sent.load(),
          pool_->received.load()};
}

std::string S3Client::Url(const S3Request& request) const {
  std::string url = base_url_ + "/" + UriEncode(request.key, true);
  std::vector<std::string> params;
  for (const auto& [k, v] : request.query)
    params.push_back(UriEncode(k, false) + "=" + UriEncode(v, false));
  std::sort(params.begin(), params.end());
  for (size_t i = 0; i < params.size(); ++i) url += (i == 0 ? "?" : "&") + params[i];
  return url;
}

StatusOr<S3Response> S3Client::SendOnce(const S3Request& request, Reported* reported,
                                        std::string* curl_error) const {
  ASSIGN_OR_RETURN(const CurlApi* api, Curl());  // Loaded on first use.
  CurlPtr curl = pool_->Take();
  if (!curl) return Status::IOError("curl_easy_init", ENOMEM);
  CURL* c = curl.get();
  api->easy_reset(c);
  Attempt a{&request, {}, c, reported};
  const std::string url = Url(request);
  SlistPtr headers;
  auto add = [&](const std::string& h) {
    headers.reset(api->slist_append(headers.release(), h.c_str()));
  };
  bool pinned = false;
  for (const std::string& h : request.headers) {
    add(h);
    pinned = pinned || HeaderIs(h, "if-match");
  }
  if (!pinned && !reported->etag.empty()) add("If-Match: \"" + reported->etag + "\"");
  if (request.range_length > 0) {
    add("Range: bytes=" + std::to_string(request.range_offset) + "-" +
        std::to_string(request.range_offset + request.range_length - 1));
  }
  if (credentials_.present()) {
    add("x-amz-content-sha256: UNSIGNED-PAYLOAD");
    if (!credentials_.session_token.empty())
      add("x-amz-security-token: " + credentials_.session_token);
    api->easy_setopt(c, CURLOPT_AWS_SIGV4, sigv4_.c_str());
    api->easy_setopt(c, CURLOPT_USERNAME, credentials_.access_key.c_str());
    api->easy_setopt(c, CURLOPT_PASSWORD, credentials_.secret_key.c_str());
  }
  char error[CURL_ERROR_SIZE] = {0};
  api->easy_setopt(c, CURLOPT_URL, url.c_str());
  api->easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  api->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  api->easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  api->easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(config_.connect_timeout_ms));
  api->easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
  api->easy_setopt(c, CURLOPT_LOW_SPEED_TIME, static_cast<long>(config_.stall_timeout_s));
  api->easy_setopt(c, CURLOPT_EXPECT_100_TIMEOUT_MS, 0L);
  // Large socket reads and writes: a GiB goes through in far fewer system calls and callbacks
  // than with curl's 16 KiB and 64 KiB defaults.
  api->easy_setopt(c, CURLOPT_BUFFERSIZE, 512L << 10);
  api->easy_setopt(c, CURLOPT_UPLOAD_BUFFERSIZE, 1L << 20);
  api->easy_setopt(c, CURLOPT_HEADERFUNCTION, &Attempt::OnHeader);
  api->easy_setopt(c, CURLOPT_HEADERDATA, &a);
  api->easy_setopt(c, CURLOPT_WRITEFUNCTION, &Attempt::OnBody);
  api->easy_setopt(c, CURLOPT_WRITEDATA, &a);
  if (request.cancel != nullptr) {
    api->easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    api->easy_setopt(c, CURLOPT_XFERINFOFUNCTION, &Attempt::OnProgress);
    api->easy_setopt(c, CURLOPT_XFERINFODATA, &a);
  }
  const std::string_view method = request.method;
  if (method == "HEAD") {
    api->easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else if (method == "PUT") {
    api->easy_setopt(c, CURLOPT_UPLOAD, 1L);
    api->easy_setopt(c, CURLOPT_READFUNCTION, &Attempt::OnRead);
    api->easy_setopt(c, CURLOPT_READDATA, &a);
    api->easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  } else if (method == "POST") {
    api->easy_setopt(c, CURLOPT_POST, 1L);
    api->easy_setopt(c, CURLOPT_POSTFIELDS, request.body.data());
    api->easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  } else if (method != "GET") {
    api->easy_setopt(c, CURLOPT_CUSTOMREQUEST, request.method);
  }
  api->easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  const CURLcode rc = api->easy_perform(c);
  pool_->requests++;
  pool_->sent += a.body_sent + (method == "POST" ? request.body.size() : 0);
  pool_->received += a.response.sink_bytes + a.response.body.size();
  const bool stopped = a.response.sink_overflow || a.response.sink_stopped;
  if (rc == CURLE_ABORTED_BY_CALLBACK) return Cancelled();
  if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && stopped)) {
    // curl's words may quote the URL or what the server said: never a secret of ours.
    *curl_error =
        Redact(std::string(api->easy_strerror(rc)) + (error[0] ? std::string(": ") + error : ""));
    if (!IsRetryableCurl(rc)) return Status::IOError(*curl_error, EIO);
    return Status(ErrorCode::kIOError, "retry", EAGAIN);
  }
  // HTTP/1 ends the headers with an empty line; libcurl takes a connection closed before it
  // for a whole answer (without the headers that did not come). HTTP/2 and 3 frame them.
  long version = 0;
  api->easy_getinfo(c, CURLINFO_HTTP_VERSION, &version);
  if (!a.head_done && version <= CURL_HTTP_VERSION_1_1) {
    *curl_error = "the answer ended inside its headers";
    return Status(ErrorCode::kIOError, "retry", EAGAIN);
  }
  api->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &a.response.status);
  pool_->Give(std::move(curl));
  return std::move(a.response);
}

StatusOr<S3Response> S3Client::Send(const S3Request& request) const {
  thread_local std::minstd_rand jitter(std::random_device{}());
  int backoff = config_.first_backoff_ms;
  std::string last;
  Reported reported;
  for (int attempt = 1;; ++attempt) {
    std::string curl_error;
    auto r = SendOnce(request, &reported, &curl_error);
    if (!r.ok() && (r.status().sys_errno() == ECANCELED ||
                    r.status().code() == ErrorCode::kNotSupported)) {  // Cancelled; no libcurl.
      return r.status().WithPrefix("S3 " + std::string(request.method) + " " + display_ + "/" +
                                   EscapeForMessage(request.key) + ": ");
    }
    const bool retry_io = !r.ok() && r.status().sys_errno() == EAGAIN;
    if (!r.ok() && !retry_io) {
      return Status::IOError("S3 " + std::string(request.method) + " " + display_ + "/" +
                                 EscapeForMessage(request.key) + ": " + curl_error,
                             EIO);
    }
    if (r.ok() && !IsRetryableStatus(r->status) && !IsBadDigest(*r)) return r;
    last = !r.ok()           ? curl_error
           : IsBadDigest(*r) ? "HTTP 400 BadDigest (the body arrived changed)"
                             : "HTTP " + std::to_string(r->status);
    if (attempt >= config_.max_attempts) break;
    pool_->retries++;
    const int sleep =
        backoff / 2 + static_cast<int>(jitter() % static_cast<unsigned>(backoff / 2 + 1));
    if (!SleepUnlessCancelled(request, std::chrono::milliseconds(sleep))) {
      return Cancelled().WithPrefix("S3 " + std::string(request.method) + " " + display_ + "/" +
                                    EscapeForMessage(request.key) + ": ");
    }
    backoff = std::min(backoff * 2, 5000);
  }
  return Status::IOError("S3 " + std::string(request.method) + " " + display_ + "/" +
                             EscapeForMessage(request.key) + ": " + last + " after " +
                             std::to_string(config_.max_attempts) + " attempts",
                         EIO);
}

}  // namespace stitchfs::engine
