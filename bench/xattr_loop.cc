// xattr_loop FILE CALLS: CALLS lgetxattr(FILE, "security.selinux") calls, as `ls -l` makes for
// every file; prints microseconds per call (best of three runs). On a FUSE mount every call
// is a round trip to the daemon; on a local disk it is answered in the kernel.
#include <sys/xattr.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: xattr_loop FILE CALLS\n");
    return 2;
  }
  const long calls = std::atol(argv[2]);
  if (calls <= 0) return 2;
  char value[256];
  double best = 0;
  for (int run = 0; run < 3; ++run) {
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < calls; ++i) ::lgetxattr(argv[1], "security.selinux", value, sizeof(value));
    const std::chrono::duration<double, std::micro> d = std::chrono::steady_clock::now() - t0;
    const double per_call = d.count() / static_cast<double>(calls);
    if (run == 0 || per_call < best) best = per_call;
  }
  std::printf("%.2f\n", best);
  return 0;
}
