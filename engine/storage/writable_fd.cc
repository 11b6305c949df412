#include "engine/storage/writable_fd.h"

#include <unistd.h>

#include <cerrno>

#include "engine/base/interrupt.h"

namespace stitchfs::engine {
namespace {

// A file written through its fd.
class FdWritable final : public WritableFile {
 public:
  FdWritable(UniqueFd fd, std::string name) : fd_(std::move(fd)), name_(std::move(name)) {}
  Status Append(std::string_view data) override {
    RETURN_IF_ERROR(CheckStop());
    while (!data.empty()) {
      const ssize_t w = ::write(fd_.get(), data.data(), data.size());
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return Status::IOError("write data file " + name_, errno);
      data.remove_prefix(static_cast<size_t>(w));
    }
    return Status::OK();
  }
  Status Close() override { return fd_.Close(name_.c_str()); }
  int fd() const override { return fd_.get(); }

 private:
  UniqueFd fd_;
  std::string name_;
};

}  // namespace

std::unique_ptr<WritableFile> WritableFd(UniqueFd fd, std::string name) {
  return std::make_unique<FdWritable>(std::move(fd), std::move(name));
}

}  // namespace stitchfs::engine
