#include "engine/base/concat_file.h"

#include <algorithm>

#include "engine/base/polled_read.h"

namespace stitchfs::engine {

ConcatFile::ConcatFile(std::vector<Segment> segments) {
  uint64_t pos = 0;
  for (auto& s : segments) {
    if (s.length == 0) continue;
    starts_.push_back(pos);
    pos += s.length;
    segments_.push_back(std::move(s));
  }
  starts_.push_back(pos);
}

Status ConcatFile::ReadExact(uint64_t offset, std::span<char> dst) const {
  const size_t want = dst.size();
  const ReadRequestScope request(want);  // Pieces of a long read sleep as the read would.
  size_t i = SegmentOf(offset);
  size_t done = 0;
  while (done < want) {
    const Segment& seg = segments_[i];
    const uint64_t in_seg = offset + done - starts_[i];
    const size_t n = static_cast<size_t>(std::min<uint64_t>(want - done, seg.length - in_seg));
    ASSIGN_OR_RETURN(size_t got, seg.file->ReadAt(seg.file_offset + in_seg, dst.subspan(done, n)));
    if (got != n) return Status::BackupDamaged("segment ended early (data file shrank)");
    done += n;
    ++i;
  }
  HintNext(i, offset + want, want);
  return Status::OK();
}

void ConcatFile::HintNext(size_t next, uint64_t end, uint64_t n) const {
  // A streaming read (not a small random one) near the end of segment next - 1: the next one
  // is read soon.
  if (n >= kStreamingRead && next < segments_.size() && starts_[next] - end <= kPrefetchLead &&
      hinted_.exchange(next) != next) {
    segments_[next].file->Prefetch(segments_[next].file_offset, segments_[next].length);
  }
}

StatusOr<RandomAccessFile::Loan> ConcatFile::Lend(uint64_t offset, size_t n) const {
  if (offset >= size() || n == 0) return Loan{};
  const uint64_t end = std::min<uint64_t>(offset + n, size());
  const size_t i = SegmentOf(offset);
  if (end > starts_[i + 1]) return Loan{};  // Across segments: ReadAt copies.
  const Segment& seg = segments_[i];
  ASSIGN_OR_RETURN(Loan loan,
                   seg.file->Lend(seg.file_offset + (offset - starts_[i]), end - offset));
  if (!loan.bytes.empty()) HintNext(i + 1, end, end - offset);
  return loan;
}

size_t ConcatFile::SegmentOf(uint64_t offset) const {
  // The last segment whose start is <= offset.
  return static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end() - 1, offset) -
                             starts_.begin()) -
         1;
}

bool ConcatFile::DropCached() const {
  bool dropped = false;
  for (const Segment& s : segments_) dropped = s.file->DropCached() || dropped;
  return dropped;
}

void ConcatFile::Prefetch(uint64_t offset, uint64_t length) const {
  const uint64_t end = offset + std::min(length, size() - std::min(offset, size()));
  for (size_t i = offset < size() ? SegmentOf(offset) : segments_.size();
       i < segments_.size() && starts_[i] < end; ++i) {
    const uint64_t from = std::max(offset, starts_[i]);
    const uint64_t to = std::min(end, starts_[i + 1]);
    segments_[i].file->Prefetch(segments_[i].file_offset + (from - starts_[i]), to - from);
  }
}

std::shared_ptr<const RandomAccessFile> Concatenate(std::vector<Segment> segments) {
  if (segments.size() == 1 && segments[0].file_offset == 0 &&
      segments[0].length == segments[0].file->size()) {
    return segments[0].file;
  }
  return std::make_shared<ConcatFile>(std::move(segments));
}

}  // namespace stitchfs::engine
