// pread_bench FILE THREADS READS [BLOCK [poll]]: READS random BLOCK-byte (4096) preads per
// thread, spread over the whole file, with readahead disabled (POSIX_FADV_RANDOM); prints
// reads/s. With "poll", each read polls for its pages (preadv2 RWF_NOWAIT until they arrive)
// instead of sleeping through the disk read: the difference is what waking a thread costs.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string_view>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: pread_bench FILE THREADS READS [BLOCK]\n");
    return 2;
  }
  const int threads = std::atoi(argv[2]);
  const long reads = std::atol(argv[3]);
  const size_t block = argc > 4 ? std::strtoul(argv[4], nullptr, 10) : 4096;
  const bool poll = argc > 5 && std::string_view(argv[5]) == "poll";
  struct stat st;
  if (::stat(argv[1], &st) != 0 || static_cast<size_t>(st.st_size) < block) return 2;
  const uint64_t blocks = static_cast<uint64_t>(st.st_size) / block;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      int fd = ::open(argv[1], O_RDONLY);
      ::posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
      std::mt19937_64 rng(t + 7);
      std::vector<char> buf(block);
      for (long i = 0; i < reads; ++i) {
        const off_t at = static_cast<off_t>((rng() % blocks) * block);
        size_t done = 0;
        while (poll && done < block) {  // (A block of several pages may come in parts.)
          iovec v{buf.data() + done, block - done};
          const ssize_t n = ::preadv2(fd, &v, 1, at + static_cast<off_t>(done), RWF_NOWAIT);
          if (n <= 0 && !(n < 0 && errno == EAGAIN)) std::abort();
          if (n > 0) done += static_cast<size_t>(n);
        }
        if (!poll && ::pread(fd, buf.data(), block, at) != static_cast<ssize_t>(block)) {
          std::abort();
        }
      }
      ::close(fd);
    });
  }
  for (auto& t : pool) t.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%.0f\n", static_cast<double>(reads * threads) / s);
  return 0;
}
