#include "engine/write/file_pass.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "engine/base/interrupt.h"
#include "engine/base/unique_fd.h"

namespace stitchfs::engine {
namespace {

constexpr size_t kPassBuffer = 1 << 20;

class Pass {
 public:
  explicit Pass(const FilePassInput& in) : in_(in), buf_(new char[kPassBuffer]) {
    ::posix_fadvise(in.fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  }

  // Reads [from, to) into `h`, and into the data file `out` if there is one.
  Status Read(uint64_t from, uint64_t to, Hasher& h, WritableFile* out) {
    for (uint64_t off = from; off < to;) {
      // A stop (SIGINT, SIGTERM) ends the backup as a failure to write would, between buffers:
      // a backup that only reads (a tree unchanged since its base) stops as soon.
      RETURN_IF_ERROR(Dest(CheckStop()));
      size_t want = static_cast<size_t>(std::min<uint64_t>(kPassBuffer, to - off));
      ssize_t n = ::pread(in_.fd, buf_.get(), want, static_cast<off_t>(off));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Status::IOError("read " + in_.name, errno);
      if (n == 0) return ChangedWhileRead(in_.name);  // Shrank.
      h.Update(std::string_view(buf_.get(), static_cast<size_t>(n)));
      if (out != nullptr) {
        RETURN_IF_ERROR(Dest(out->Append(std::string_view(buf_.get(), static_cast<size_t>(n)))));
      }
      off += static_cast<uint64_t>(n);
      result_.bytes_read += static_cast<uint64_t>(n);
      if (in_.read_progress != nullptr) {  // Relaxed: a progress counter.
        in_.read_progress->fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
      }
    }
    return Status::OK();
  }

  // Does the file go on after `size` bytes? An immutable one must not.
  Status CheckEnd() {
    char c;
    ssize_t n;
    do {
      n = ::pread(in_.fd, &c, 1, static_cast<off_t>(in_.size));
    } while (n < 0 && errno == EINTR);
    if (n < 0) return Status::IOError("read " + in_.name, errno);
    result_.grew = n > 0;
    if (result_.grew && in_.immutable) {
      return Status::ExpectedEndOfFile("Size of immutable file " + in_.name +
                                       " increased unexpectedly while calculating its checksum");
    }
    return Status::OK();
  }

  StatusOr<std::unique_ptr<WritableFile>> CreateData() {
    auto file = in_.writer->CreateStaged(in_.staged_id, in_.data_name);
    if (!file.ok()) return Dest(file.status().WithPrefix("data file for " + in_.name + ": "));
    result_.stored = true;
    return file;
  }

  // Closes a data file; a failure loses written data and is the destination's.
  Status CloseData(std::unique_ptr<WritableFile>& out) { return Dest(out->Close()); }
  bool destination_failed() const { return dest_failed_; }

  // Hashes the whole file and stores all of it.
  Status StoreWhole() {
    ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> out, CreateData());
    Hasher h(in_.algorithm);
    RETURN_IF_ERROR(Read(0, in_.size, h, out.get()));
    result_.checksum = h.Digest();
    return CloseData(out);
  }

  // Same size as the base's copy: hash only; store (verified) only if it differs.
  Status SameSize(const Checksum& base_sum) {
    Hasher h(in_.algorithm);
    RETURN_IF_ERROR(Read(0, in_.size, h, nullptr));
    const Checksum first = h.Digest();
    if (first == base_sum) {
      result_.checksum = first;
      result_.base_size = in_.size;
      result_.base_checksum = first;
      return Status::OK();
    }
    RETURN_IF_ERROR(StoreWhole());
    return result_.checksum == first ? Status::OK() : ChangedWhileRead(in_.name);
  }

  // The base's copy is shorter: hash its length, and if the prefix matches store only the rest.
  Status Longer(uint64_t base_size, const Checksum& base_sum) {
    Hasher h(in_.algorithm);
    RETURN_IF_ERROR(Read(0, base_size, h, nullptr));
    const Checksum prefix = h.Digest();
    if (prefix != base_sum) {
      Hasher again(in_.algorithm);
      ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> out, CreateData());
      RETURN_IF_ERROR(Read(0, base_size, again, out.get()));
      if (again.Digest() != prefix) return ChangedWhileRead(in_.name);
      RETURN_IF_ERROR(Read(base_size, in_.size, again, out.get()));
      result_.checksum = again.Digest();
      return CloseData(out);
    }
    ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> out, CreateData());
    RETURN_IF_ERROR(Read(base_size, in_.size, h, out.get()));
    result_.checksum = h.Digest();
    result_.base_size = base_size;
    result_.base_checksum = prefix;
    return CloseData(out);
  }

  StatusOr<FilePassResult> Run() {
    const auto& base = in_.base;
    if (in_.size == 0) {
      // Empty: nothing to hash or store.
    } else if (!base || base->first == 0 || in_.size < base->first) {
      RETURN_IF_ERROR(StoreWhole());  // HasNothing
    } else if (in_.size == base->first) {
      RETURN_IF_ERROR(SameSize(base->second));  // HasFull
    } else if (in_.immutable) {
      RETURN_IF_ERROR(StoreWhole());  // Immutable files never reuse a prefix.
    } else {
      RETURN_IF_ERROR(Longer(base->first, base->second));  // HasPrefix
    }
    RETURN_IF_ERROR(CheckEnd());
    return result_;
  }

 private:
  Status Dest(Status s) {
    if (!s.ok()) dest_failed_ = true;
    return s;
  }

  const FilePassInput& in_;
  std::unique_ptr<char[]> buf_;
  FilePassResult result_;
  bool dest_failed_ = false;
};

}  // namespace

Status ChangedWhileRead(const std::string& name, const char* how) {
  return Status(ErrorCode::kIOError, "file " + name + " " + how + " while it was read", EAGAIN);
}

bool IsChangedWhileRead(const Status& s) {
  return s.code() == ErrorCode::kIOError && s.sys_errno() == EAGAIN;
}

StatusOr<Checksum> HashPrefix(int fd, uint64_t size, ChecksumAlgorithm algorithm,
                              const std::string& name) {
  FilePassInput in;
  in.fd = fd;
  in.size = size;
  in.name = name;
  Pass pass(in);
  Hasher h(algorithm);
  RETURN_IF_ERROR(pass.Read(0, size, h, nullptr));
  return h.Digest();
}

StatusOr<FilePassResult> RunFilePass(const FilePassInput& in, PassFault* fault) {
  Pass pass(in);
  auto r = pass.Run();
  *fault = r.ok()                      ? PassFault::kNone
           : pass.destination_failed() ? PassFault::kDestination
                                       : PassFault::kSource;
  return r;
}

}  // namespace stitchfs::engine
