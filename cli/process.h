// Running the program under test as a shell would: same stdin/stdout/stderr, same process
// group, Ctrl-C reaches it directly, SIGTERM/SIGHUP sent to capguard are passed on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace capguard::cli {

// Finds PROGRAM as execvp would (PATH search when it has no '/'). A message on failure,
// e.g. "program not found: ./nope".
std::optional<std::string> resolve_program(const std::string& name, std::string& path);

// The program's environment: capguard's own, with changes.
class ChildEnvironment {
 public:
  void set(const std::string& name, const std::string& value);
  // Puts `value` first in a ':'-separated list variable (LD_PRELOAD), keeping what was there.
  void prepend_path_list(const std::string& name, const std::string& value);
  std::vector<std::string> entries() const;  // NAME=VALUE, capguard's environment changed

 private:
  std::vector<std::pair<std::string, std::string>> changes_;
};

struct ChildResult {
  int status = 0;          // exit status, or 128 + signal number when killed by a signal
  std::string exec_error;  // non-empty when the program could not be started
  int pid = 0;             // the child's, once forked
  // CLOCK_MONOTONIC ns just before fork() and when waitpid() returned (start-up timings).
  uint64_t fork_ns = 0, exited_ns = 0;
};

ChildResult run_child(const std::string& path, const std::vector<std::string>& argv,
                      const ChildEnvironment& environment);

}  // namespace capguard::cli
