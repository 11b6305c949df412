#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "cli/commands.h"
#include "engine/base/error_table.h"
#include "engine/read/open_resolved.h"

namespace stitchfs::cli {

int Fail(const engine::Status& s) {
  std::fprintf(stderr, "stitch: %s\n", s.ToString().c_str());
  return engine::ExitCodeFor(s);
}

std::shared_ptr<const engine::ResolvedBackup> OpenChainFromArgs(
    int argc, char** argv, const ArgSpec& spec, Args* args, int* exit_code,
    const engine::ResolveOptions& resolve) {
  auto parsed = ParseArgs(argc, argv, 1, WithChainOptions(spec));
  if (!parsed.ok()) {
    *exit_code = Fail(parsed.status());
    return nullptr;
  }
  *args = std::move(*parsed);
  auto options = ChainOptionsFrom(*args);
  if (!options.ok()) {
    *exit_code = Fail(options.status());
    return nullptr;
  }
  auto chain = engine::OpenResolved(args->positional[0], *options, resolve);
  if (!chain.ok()) {
    *exit_code = Fail(chain.status());
    return nullptr;
  }
  return *chain;
}

bool WriteStdout(const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(STDOUT_FILENO, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

}  // namespace stitchfs::cli
