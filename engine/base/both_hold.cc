#include "engine/base/both_hold.h"

#include <exception>
#include <system_error>
#include <thread>

namespace stitchfs::engine {
namespace {

// Joins the thread when the scope ends, however it ends (a std::thread destroyed while
// joinable ends the process).
struct Joiner {
  std::thread& thread;
  ~Joiner() {
    if (thread.joinable()) thread.join();
  }
};

}  // namespace

bool BothHold(const std::function<bool()>& here, const std::function<bool()>& other) {
  bool other_holds = false;
  std::exception_ptr other_failed;  // What `other` threw (std::bad_alloc), thrown again here.
  std::thread thread;
  try {
    thread = std::thread([&] {
      try {
        other_holds = other();
      } catch (...) {
        other_failed = std::current_exception();
      }
    });
  } catch (const std::system_error&) {  // No thread to be had: one after the other.
    return here() && other();
  }
  bool here_holds = false;
  {
    Joiner joiner{thread};
    here_holds = here();
  }
  if (other_failed) std::rethrow_exception(other_failed);
  return here_holds && other_holds;
}

}  // namespace stitchfs::engine
