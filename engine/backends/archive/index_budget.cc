#include "engine/backends/archive/index_budget.h"

namespace stitchfs::engine {

namespace {

uint64_t Saturating(uint64_t floor, uint64_t per_byte, uint64_t size) {
  if (size > (UINT64_MAX - floor) / per_byte) return UINT64_MAX;
  return floor + per_byte * size;
}

uint64_t Add(uint64_t a, uint64_t b) { return b > UINT64_MAX - a ? UINT64_MAX : a + b; }

}  // namespace

IndexLimits IndexLimits::For(uint64_t archive_size) {
  return {Saturating(kWorkFloor, kWorkPerByte, archive_size),
          Saturating(kIndexFloor, kIndexPerByte, archive_size)};
}

Status IndexBudget::Over(const std::string& where, const char* what, uint64_t limit) const {
  return Status::BackupDamaged("archive " + where + " is refused: indexing it takes more than " +
                               std::to_string(limit) + " " + what + ", the most an archive of " +
                               std::to_string(archive_size_) +
                               " bytes may take (a hostile or damaged archive)");
}

Status IndexBudget::Work(uint64_t n, const std::string& where) {
  work_ = Add(work_, n);
  if (work_ > limits_.work) return Over(where, "bytes of work (read and decoded)", limits_.work);
  return Status::OK();
}

Status IndexBudget::Index(uint64_t n, const std::string& where) {
  index_ = Add(index_, n);
  if (index_ > limits_.index) return Over(where, "bytes of index", limits_.index);
  return Status::OK();
}

Status IndexBudget::Expect(uint64_t n, const std::string& where) const {
  if (Add(work_, n) > limits_.work) {
    return Over(where, "bytes of work (it declares more than that)", limits_.work);
  }
  return Status::OK();
}

}  // namespace stitchfs::engine
