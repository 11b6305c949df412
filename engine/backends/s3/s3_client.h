// S3Client: signed HTTP requests to one bucket of S3-compatible object storage, through
// libcurl (its SigV4 signer, its TLS with the system's CA store, its connection reuse). The
// client only transports: it sorts and encodes the query, sets the headers SigV4 needs, and
// retries what is worth retrying (5xx, 429, SlowDown, resets, timeouts) with a doubling,
// jittered backoff. What an answer means is s3_objects.h's business.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/backends/s3/s3_config.h"
#include "engine/base/status_or.h"
#include "engine/location/s3_address.h"

namespace stitchfs::engine {

// Lets a caller read a GET's sink while it fills. Called after bytes land in the sink, with how
// many bytes from its start are in place (only growing: a retried GET does not write those
// again) and the object's length from the answer; returning false stops the transfer. Only
// called while the answer is the range asked for (206 from range_offset, or 200 from offset 0).
using SinkReport = std::function<bool(uint64_t filled, uint64_t object_size)>;

struct S3Request {
  const char* method = "GET";  // GET, HEAD, PUT, POST, DELETE.
  std::string key;             // Object key, unencoded; empty for a bucket request.
  std::vector<std::pair<std::string, std::string>> query;  // Unencoded; any order.
  std::vector<std::string> headers;                        // "Name: value".
  std::string_view body;                                   // PUT or POST payload.
  uint64_t range_offset = 0, range_length = 0;             // range_length > 0: a Range header.
  // If not empty, a 2xx body goes here (up to its size; more is an error) instead of `body`.
  std::span<char> sink;
  const SinkReport* report = nullptr;  // Optional, with `sink`.
  // Optional: once it is true, the request ends as soon as it can (within about a second while
  // it waits for bytes, before any retry) with kIOError and errno ECANCELED.
  const std::atomic<bool>* cancel = nullptr;
};

struct S3Response {
  long status = 0;
  std::string body;  // Error bodies always land here.
  std::string etag;  // Without quotes.
  std::optional<uint64_t> content_length;
  std::optional<uint64_t> range_start;  // From Content-Range: bytes A-B/TOTAL.
  std::optional<uint64_t> total_size;
  size_t sink_bytes = 0;       // Bytes written into S3Request::sink.
  bool sink_overflow = false;  // The server sent more than the sink holds.
  bool sink_stopped = false;   // S3Request::report stopped the transfer.
};

// Counters of what a client sent, for benchmarks and `--json` reports.
struct S3Counters {
  uint64_t requests = 0, retries = 0, bytes_sent = 0, bytes_received = 0;
};

// Thread-safe: curl handles are leased from a pool, one per request in flight.
class S3Client {
 public:
  // Requests go to `address`'s bucket at its endpoint (or `config.endpoint`, or AWS), signed
  // with `credentials` if present.
  S3Client(const S3Config& config, const S3Address& address, S3Credentials credentials);
  ~S3Client();
  S3Client(const S3Client&) = delete;
  S3Client& operator=(const S3Client&) = delete;

  // Sends `request` until it gets an answer that is not worth retrying, or the attempts run
  // out. Any HTTP status is returned as a response; kIOError if no answer came (naming the
  // endpoint and the curl error, never a secret).
  StatusOr<S3Response> Send(const S3Request& request) const;

  // "https://host/bucket", for messages.
  const std::string& display() const { return display_; }
  // `text` with this client's secret key and session token, wherever they occur, replaced by
  // "[HIDDEN]": what every message built from a server's or curl's words goes through.
  std::string Redact(std::string text) const;
  // The service requests go to and who signs them (endpoint without the bucket, access key):
  // two clients with the same one can copy between their buckets.
  const std::string& service() const { return service_; }
  // Where the credentials came from (never the credentials), for messages.
  const std::string& credentials_source() const { return credentials_.source; }
  // True if requests are signed (credentials present).
  bool signs() const { return credentials_.present(); }
  const S3Config& config() const { return config_; }
  S3Counters counters() const;

 private:
  class Pool;
  struct Attempt;
  // What earlier attempts of one request reported (S3Request::report): those sink bytes are
  // not written again, and a retry asks for the same version (If-Match).
  struct Reported {
    uint64_t bytes = 0;
    std::string etag;
  };
  StatusOr<S3Response> SendOnce(const S3Request& request, Reported* reported,
                                std::string* curl_error) const;
  std::string Url(const S3Request& request) const;

  const S3Config config_;
  const S3Credentials credentials_;
  std::string base_url_;  // Scheme, host, and "/bucket" in path style.
  std::string display_;
  std::string service_;
  std::string sigv4_;  // "aws:amz:REGION:s3".
  std::unique_ptr<Pool> pool_;
};

// True for a status S3 asks to retry (500, 502, 503, 504, 429).
bool IsRetryableStatus(long status);

}  // namespace stitchfs::engine
