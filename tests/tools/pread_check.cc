// pread_check FILE REFERENCE THREADS READS: random preads of FILE (through a mount) from
// THREADS threads, each compared with the same range of REFERENCE; then an mmap of FILE
// compared whole. Prints "ok" or the first mismatch; exit 0 only if every byte matched.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

std::string Slurp(const char* path) {
  int fd = ::open(path, O_RDONLY);
  struct stat st;
  if (fd < 0 || ::fstat(fd, &st) != 0) std::exit(2);
  std::string s(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::pread(fd, s.data() + done, s.size() - done, static_cast<off_t>(done));
    if (n <= 0) std::exit(2);
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: pread_check FILE REFERENCE THREADS READS\n");
    return 2;
  }
  const std::string ref = Slurp(argv[2]);
  const int threads = std::atoi(argv[3]), reads = std::atoi(argv[4]);
  std::atomic<int> bad{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      int fd = ::open(argv[1], O_RDONLY);
      if (fd < 0) return (void)++bad;
      std::mt19937_64 rng(t + 1);
      std::vector<char> buf(1 << 20);
      for (int i = 0; i < reads; ++i) {
        const uint64_t off = rng() % (ref.size() + 1);
        const size_t len = 1 + rng() % buf.size();
        ssize_t n = ::pread(fd, buf.data(), len, static_cast<off_t>(off));
        const size_t want = std::min<size_t>(len, ref.size() - off);
        if (n != static_cast<ssize_t>(want) ||
            std::memcmp(buf.data(), ref.data() + off, want) != 0) {
          if (++bad == 1)
            std::fprintf(stderr, "mismatch at offset %llu (len %zu)\n", (unsigned long long)off,
                         len);
        }
      }
      ::close(fd);
    });
  }
  for (auto& t : pool) t.join();
  int fd = ::open(argv[1], O_RDONLY);
  void* map = ref.empty() ? nullptr : ::mmap(nullptr, ref.size(), PROT_READ, MAP_PRIVATE, fd, 0);
  if (!ref.empty() && (map == MAP_FAILED || std::memcmp(map, ref.data(), ref.size()) != 0)) {
    std::fprintf(stderr, "mmap mismatch\n");
    ++bad;
  }
  if (map && map != MAP_FAILED) ::munmap(map, ref.size());
  ::close(fd);
  std::printf("%s\n", bad ? "MISMATCH" : "ok");
  return bad ? 1 : 0;
}
