// Restores errno on scope exit: code running inside the program under test (the trace writer,
// the interposer's callbacks) must never let the program see an errno it did not cause.
#pragma once

#include <cerrno>

namespace capguard::trace {

class ErrnoGuard {
 public:
  ErrnoGuard() : saved_(errno) {}
  ~ErrnoGuard() { errno = saved_; }
  ErrnoGuard(const ErrnoGuard&) = delete;
  ErrnoGuard& operator=(const ErrnoGuard&) = delete;

 private:
  int saved_;
};

}  // namespace capguard::trace
