#include "engine/base/shared_library.h"

#include <string>

namespace stitchfs::engine {

StatusOr<void*> OpenSharedLibrary(const char* soname, const char* package, const char* feature) {
  void* h = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (h != nullptr) return h;
  const char* e = ::dlerror();
  return Status::NotSupported(std::string(feature) + " needs " + soname + " (Debian package " +
                              package + "), which cannot be loaded: " + (e ? e : "dlopen failed"));
}

}  // namespace stitchfs::engine
