#include "engine/base/index_stream.h"

#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>

namespace stitchfs::engine {
namespace {

constexpr size_t kFlushBytes = 1 << 20;

std::unique_ptr<XXH3_state_s, IndexHashDeleter> NewHashState() {
  std::unique_ptr<XXH3_state_s, IndexHashDeleter> s(XXH3_createState());
  if (s) XXH3_128bits_reset(s.get());
  return s;
}

// Reads exactly `n` bytes at `offset`: kBackupDamaged if the file ends first.
Status PreadExactly(int fd, uint64_t offset, char* dst, uint64_t n, const IndexKind& kind) {
  uint64_t done = 0;
  while (done < n) {
    const ssize_t r = ::pread(fd, dst + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Status::IOError("reading a " + std::string(kind.name), errno);
    if (r == 0) {
      return Status::BackupDamaged(std::string(kind.name) + ": cut short at " +
                                   std::to_string(offset + done));
    }
    done += static_cast<uint64_t>(r);
  }
  return Status::OK();
}

}  // namespace

void IndexHashDeleter::operator()(XXH3_state_s* s) const { XXH3_freeState(s); }

IndexFileWriter::IndexFileWriter(int fd, const IndexKind& kind,
                                 const std::vector<std::pair<uint32_t, uint64_t>>& sections)
    : fd_(fd), state_(NewHashState()) {
  for (const auto& [tag, length] : sections) {
    sections_.push_back({tag, IndexLayout::kRequired, 0, length});
  }
  prefix_ = IndexLayout::Prefix(kind, &sections_);
  if (!state_) status_ = Status::Internal("no memory for a hash state");
  flushed_ = IndexLayout::kHeaderBytes;
  Append(std::string_view(prefix_).substr(IndexLayout::kHeaderBytes));
}

void IndexFileWriter::Put(uint32_t tag, std::string_view bytes) {
  if (!status_.ok()) return;
  size_t i = current_;
  while (i < sections_.size() && sections_[i].tag != tag) ++i;
  if (i == sections_.size()) {
    status_ = Status::Internal("index section " + IndexTagName(tag) + " written out of order");
    return;
  }
  if (!Advance(i)) return;
  if (bytes.size() > sections_[i].length - written_) {
    status_ = Status::Internal("index section " + IndexTagName(tag) + " longer than declared");
    return;
  }
  Append(bytes);
  written_ += bytes.size();
}

bool IndexFileWriter::Advance(size_t to) {
  for (; current_ < to; ++current_, written_ = 0) {
    if (written_ != sections_[current_].length) {
      status_ = Status::Internal("index section " + IndexTagName(sections_[current_].tag) +
                                 " shorter than declared");
      return false;
    }
  }
  if (current_ < sections_.size() && written_ == 0) PadTo(sections_[current_].offset);
  return true;
}

void IndexFileWriter::PadTo(uint64_t offset) {
  const uint64_t end = flushed_ + buf_.size();
  if (offset > end) Append(std::string(offset - end, '\0'));
}

void IndexFileWriter::Append(std::string_view bytes) {
  if (!status_.ok() || bytes.empty()) return;
  XXH3_128bits_update(state_.get(), bytes.data(), bytes.size());
  buf_.append(bytes);
  if (buf_.size() >= kFlushBytes) Flush();
}

void IndexFileWriter::Flush() {
  size_t done = 0;
  while (status_.ok() && done < buf_.size()) {
    const ssize_t w =
        ::pwrite(fd_, buf_.data() + done, buf_.size() - done, static_cast<off_t>(flushed_));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      status_ = Status::IOError("writing an index file", w < 0 ? errno : EIO);
      break;
    }
    done += static_cast<size_t>(w);
    flushed_ += static_cast<uint64_t>(w);
  }
  buf_.clear();
}

Status IndexFileWriter::Finish() {
  if (status_.ok() && Advance(sections_.size())) {
    IndexLayout::Header h;
    std::memcpy(&h, prefix_.data(), sizeof h);
    PadTo(h.length);
    Flush();
    const XXH128_hash_t hash = XXH3_128bits_digest(state_.get());
    h.hash_low = hash.low64;
    h.hash_high = hash.high64;
    if (status_.ok() && ::pwrite(fd_, &h, sizeof h, 0) != static_cast<ssize_t>(sizeof h)) {
      status_ = Status::IOError("writing an index file's header", errno);
    }
  }
  return status_;
}

IndexFileReader::IndexFileReader(int fd, const IndexKind& kind, IndexLayout::Header h,
                                 std::vector<IndexLayout::Section> sections)
    : fd_(fd),
      kind_(&kind),
      h_(h),
      sections_(std::move(sections)),
      read_(sections_.size(), 0),
      state_(NewHashState()),
      buf_(new char[kBuffer]) {}

StatusOr<IndexFileReader> IndexFileReader::Open(int fd, const IndexKind& kind) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return Status::IOError("reading a " + std::string(kind.name), errno);
  const auto size = static_cast<uint64_t>(st.st_size);
  char head[IndexLayout::kHeaderBytes];
  const uint64_t got = std::min<uint64_t>(size, sizeof head);
  RETURN_IF_ERROR(PreadExactly(fd, 0, head, got, kind));
  ASSIGN_OR_RETURN(const IndexLayout::Header h,
                   IndexLayout::ParseHeader({head, static_cast<size_t>(got)}, kind, size));
  std::string table(h.section_count * IndexLayout::kEntryBytes, '\0');
  RETURN_IF_ERROR(PreadExactly(fd, IndexLayout::kHeaderBytes, table.data(), table.size(), kind));
  ASSIGN_OR_RETURN(std::vector<IndexLayout::Section> sections,
                   IndexLayout::ParseTable(table, h, kind));
  IndexFileReader r(fd, kind, h, std::move(sections));
  if (!r.state_) return Status::Internal("no memory for a hash state");
  XXH3_128bits_update(r.state_.get(), table.data(), table.size());
  r.fetched_ = IndexLayout::kHeaderBytes + table.size();
  return r;
}

StatusOr<size_t> IndexFileReader::Find(uint32_t tag) const {
  for (size_t i = 0; i < sections_.size(); ++i) {
    if (sections_[i].tag == tag) return i;
  }
  return Status::BackupDamaged(std::string(kind_->name) + ": no section " + IndexTagName(tag));
}

StatusOr<uint64_t> IndexFileReader::Length(uint32_t tag) const {
  ASSIGN_OR_RETURN(const size_t i, Find(tag));
  return sections_[i].length;
}

StatusOr<uint64_t> IndexFileReader::Count(uint32_t tag, size_t size) const {
  ASSIGN_OR_RETURN(const uint64_t length, Length(tag));
  if (length % size != 0) {
    return Status::BackupDamaged(std::string(kind_->name) + ": section " + IndexTagName(tag) +
                                 ": " + std::to_string(length) +
                                 " bytes are not a whole number of records of " +
                                 std::to_string(size));
  }
  return length / size;
}

Status IndexFileReader::Read(uint32_t tag, std::span<char> dst) {
  ASSIGN_OR_RETURN(const size_t i, Find(tag));
  const IndexLayout::Section& s = sections_[i];
  if (dst.size() > s.length - read_[i]) {
    return Status::BackupDamaged(std::string(kind_->name) + ": section " + IndexTagName(tag) +
                                 ": " + std::to_string(dst.size()) + " bytes wanted at " +
                                 std::to_string(read_[i]) + ", " +
                                 std::to_string(s.length - read_[i]) + " left");
  }
  const uint64_t at = s.offset + read_[i];
  if (at < position()) {
    return Status::Internal(std::string(kind_->name) + ": section " + IndexTagName(tag) +
                            " read after a later one");
  }
  RETURN_IF_ERROR(Take(nullptr, at - position()));
  RETURN_IF_ERROR(Take(dst.data(), dst.size()));
  read_[i] += dst.size();
  return Status::OK();
}

Status IndexFileReader::Take(char* dst, uint64_t n) {
  while (n > 0) {
    if (used_ == have_) {
      if (dst != nullptr && n >= kBuffer) return Fetch(dst, n);  // Large reads skip the buffer.
      const uint64_t m = std::min<uint64_t>(kBuffer, h_.length - fetched_);
      RETURN_IF_ERROR(Fetch(buf_.get(), m));
      used_ = 0;
      have_ = m;
    }
    const uint64_t k = std::min(n, have_ - used_);
    if (dst != nullptr) {
      std::memcpy(dst, buf_.get() + used_, k);
      dst += k;
    }
    used_ += k;
    n -= k;
  }
  return Status::OK();
}

Status IndexFileReader::Fetch(char* dst, uint64_t n) {
  if (n == 0 || n > h_.length - fetched_) {
    return Status::BackupDamaged(std::string(kind_->name) + ": read past the end");
  }
  RETURN_IF_ERROR(PreadExactly(fd_, fetched_, dst, n, *kind_));
  XXH3_128bits_update(state_.get(), dst, n);
  fetched_ += n;
  return Status::OK();
}

Status IndexFileReader::Finish() {
  RETURN_IF_ERROR(Take(nullptr, h_.length - position()));
  const XXH128_hash_t hash = XXH3_128bits_digest(state_.get());
  if (hash.low64 != h_.hash_low || hash.high64 != h_.hash_high) {
    return Status::BackupDamaged(std::string(kind_->name) + ": checksum does not match");
  }
  return Status::OK();
}

}  // namespace stitchfs::engine
