#include "fs/fuse_read.h"

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "engine/read/content_check.h"
#include "fs/fuse_request.h"
#include "fs/sequential_check.h"
#include "fs/walk_ahead.h"

namespace stitchfs::fs {
namespace {

// A read of an open file, registered with the file's check (Begin) while it is served and
// taken off it (Cancel) if it ends without its bytes reaching the check (an error, or an
// exception Guard answers).
class CheckedRead {
 public:
  CheckedRead(std::shared_ptr<SequentialCheck> check, const engine::RandomAccessFile& reader,
              off_t off, size_t size)
      : check_(std::move(check)), reader_(reader), at_(static_cast<uint64_t>(off)) {
    if (check_) check_->Begin(at_, size);
  }
  ~CheckedRead() {
    if (check_) check_->Cancel(at_);
  }
  CheckedRead(const CheckedRead&) = delete;
  CheckedRead& operator=(const CheckedRead&) = delete;

  // Replies `bytes`, which the read of `f` (inode `ino`) got (into `buffer`, if not null),
  // and has them checked: the read of the file's end, which may complete a file that does not
  // match its checksum, before it is answered (EIO then, logging the file and the backup with
  // the bad bytes, and dropping copies of its bytes kept on the way, so that a new mount reads
  // them from the storage); every other read after it is answered, since its bytes cannot fail it
  // (the kernel and the reader get on meanwhile; the check is shared, so it outlives a release the
  // answer lets in; a read ahead of the ones before it hands its buffer over to the check).
  void Reply(fuse_req_t req, fuse_ino_t ino, std::string_view bytes, ReadBuffer* buffer = nullptr) {
    const std::shared_ptr<SequentialCheck> check = std::move(check_);
    if (!check) return (void)fuse_reply_buf(req, bytes.data(), bytes.size());
    if (bytes.empty() ||
        (at_ + bytes.size() < check->size() && !check->Completes(at_, bytes.size()))) {
      fuse_reply_buf(req, bytes.data(), bytes.size());
      engine::Status late = buffer != nullptr ? check->AcceptAnswered(at_, *buffer, bytes.size())
                                              : check->AcceptAnswered(at_, bytes);
      if (!late.ok()) {  // (Read again after it: no read left to fail, so it is logged.)
        LogError(Ctx(req), Damaged(req, ino, late).ToString());
      }
      return;
    }
    bool found_now = false;
    engine::Status s = check->Accept(at_, bytes, &found_now);
    if (!s.ok() && found_now) s = Damaged(req, ino, s);
    if (!s.ok()) return ReplyError(req, s);
    fuse_reply_buf(req, bytes.data(), bytes.size());
  }

 private:
  // A mismatch just found: kept copies of the file's bytes dropped (so that a new mount reads
  // them from the storage) and the file noted as damaged for later checks. Returns `s` with
  // what was dropped said.
  engine::Status Damaged(fuse_req_t req, fuse_ino_t ino, engine::Status s) {
    if (reader_.DropCached()) {
      s = s.WithSuffix(std::string(engine::kKeptCopiesDropped) +
                       ": a new mount reads them from the storage");
    }
    Ns(req).NoteDamaged(ino, s);
    return s;
  }

  std::shared_ptr<SequentialCheck> check_;  // Until its bytes reach it.
  const engine::RandomAccessFile& reader_;
  const uint64_t at_;
};

// Replies the read of `size` bytes at `off` of `ino` and returns OK, or returns why it could
// not (nothing replied).
engine::Status ServeRead(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off) {
  auto f = Ns(req).Reads(ino);
  RETURN_IF_ERROR(f.status());
  const engine::RandomAccessFile& reader = *(*f)->reader();
  if (off == 0 && Ctx(req).walk != nullptr) Ctx(req).walk->Started(ino);
  CheckedRead read(
      Ctx(req).verify_reads ? (*f)->CheckFor(static_cast<uint64_t>(off), size) : nullptr, reader,
      off, size);
  // Bytes the reader holds in memory (an object store's read-ahead) go out as they are.
  auto loan = reader.Lend(static_cast<uint64_t>(off), size);
  RETURN_IF_ERROR(loan.status());
  if (!loan->bytes.empty()) {
    read.Reply(req, ino, loan->bytes);
    return engine::Status::OK();
  }
  // One buffer per worker thread, grown but never zero-filled (the read overwrites it); a
  // check that keeps it leaves the thread to take another (ReadBuffer).
  ReadBuffer& buf = ThreadReadBuffer();
  buf.Reserve(size);
  auto n = reader.ReadAt(static_cast<uint64_t>(off), std::span<char>(buf.data.get(), size));
  RETURN_IF_ERROR(n.status());
  read.Reply(req, ino, std::string_view(buf.data.get(), *n), &buf);
  return engine::Status::OK();
}

}  // namespace

void OnRead(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) {
  Guard(req, [&] {
    engine::Status s = ServeRead(req, ino, size, off);
    if (!s.ok() && Ns(req).ReadFailed(ino, s)) s = ServeRead(req, ino, size, off);
    if (!s.ok()) ReplyError(req, s);
  });
}

}  // namespace stitchfs::fs
