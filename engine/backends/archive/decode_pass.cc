#include "engine/backends/archive/decode_pass.h"

namespace stitchfs::engine {

StatusOr<size_t> ReadInput(const DecodePass& pass, uint64_t offset, size_t n, std::string* buffer) {
  buffer->resize(n);
  ASSIGN_OR_RETURN(size_t got, pass.file->ReadAt(offset, *buffer));
  buffer->resize(got);
  if (pass.budget != nullptr) RETURN_IF_ERROR(pass.budget->Work(got, pass.display));
  return got;
}

StatusOr<bool> Deliver(const DecodePass& pass, std::span<const char> data, DecodeCount* count) {
  count->total += data.size();
  if (pass.budget != nullptr) RETURN_IF_ERROR(pass.budget->Work(data.size(), pass.display));
  if (count->total > pass.max_output) {
    return Status::BackupDamaged("archive " + pass.display + " decodes to more than the " +
                                 std::to_string(pass.max_output) + " bytes it should");
  }
  if (pass.sink_done != nullptr && *pass.sink_done) {
    count->after_done += data.size();
    return count->after_done < DecodePass::kTrailing;
  }
  RETURN_IF_ERROR(pass.sink(data));
  return true;
}

}  // namespace stitchfs::engine
