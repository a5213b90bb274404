#include "cli/process.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "trace/process_clock.h"

extern char** environ;

namespace capguard::cli {
namespace {

// Read by the signal handler: an atomic that is lock-free, so async-signal-safe.
std::atomic<pid_t> g_child{0};
static_assert(std::atomic<pid_t>::is_always_lock_free);

void forward_signal(int signal_number) {
  const pid_t child = g_child.load(std::memory_order_relaxed);
  if (child > 0) kill(child, signal_number);
}

// Sets a signal's handler for as long as it lives and puts the previous one back on every
// path out, early returns included.
class ScopedSignal {
 public:
  ScopedSignal(int signal_number, void (*handler)(int)) : signal_(signal_number) {
    struct sigaction action {};
    action.sa_handler = handler;
    sigaction(signal_, &action, &old_);
  }
  ~ScopedSignal() { sigaction(signal_, &old_, nullptr); }
  ScopedSignal(const ScopedSignal&) = delete;
  ScopedSignal& operator=(const ScopedSignal&) = delete;

  const struct sigaction* old() const { return &old_; }

 private:
  int signal_;
  struct sigaction old_ {};
};

std::optional<std::string> check_executable(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) return "program not found: " + path;
  if (S_ISDIR(info.st_mode)) return "cannot execute " + path + ": it is a directory";
  if (access(path.c_str(), X_OK) != 0)
    return "cannot execute " + path + ": " + std::strerror(errno);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> resolve_program(const std::string& name, std::string& path) {
  if (name.empty()) return "program not found: (empty name)";
  if (name.find('/') != std::string::npos) {
    path = name;
    return check_executable(path);
  }
  const char* env_path = std::getenv("PATH");
  std::istringstream dirs(env_path != nullptr ? env_path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (!check_executable(candidate)) {
      path = candidate;
      return std::nullopt;
    }
  }
  return "program not found: " + name + " (not in PATH)";
}

void ChildEnvironment::set(const std::string& name, const std::string& value) {
  changes_.emplace_back(name, value);
}

void ChildEnvironment::prepend_path_list(const std::string& name, const std::string& value) {
  const char* old = std::getenv(name.c_str());
  set(name, old != nullptr && *old ? value + ":" + old : value);
}

std::vector<std::string> ChildEnvironment::entries() const {
  std::vector<std::string> out;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    bool changed = false;
    for (const auto& [name, value] : changes_) changed = changed || text.starts_with(name + "=");
    if (!changed) out.push_back(text);
  }
  for (const auto& [name, value] : changes_) out.push_back(name + "=" + value);
  return out;
}

ChildResult run_child(const std::string& path, const std::vector<std::string>& args,
                      const ChildEnvironment& environment) {
  std::vector<std::string> env_strings = environment.entries();
  std::vector<char*> argv, envp;
  for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  for (auto& entry : env_strings) envp.push_back(entry.data());
  envp.push_back(nullptr);

  // Ctrl-C goes to the whole foreground process group: the program gets it itself, and
  // capguard stays alive to report. The program starts with the dispositions capguard had.
  const ScopedSignal ignore_int(SIGINT, SIG_IGN);
  const ScopedSignal ignore_quit(SIGQUIT, SIG_IGN);

  int report_pipe[2];
  ChildResult result;
  if (pipe2(report_pipe, O_CLOEXEC) != 0) {
    result.exec_error = std::strerror(errno);
    return result;
  }
  result.fork_ns = trace::clock_ns(CLOCK_MONOTONIC);
  const pid_t child = fork();
  if (child == 0) {
    sigaction(SIGINT, ignore_int.old(), nullptr);
    sigaction(SIGQUIT, ignore_quit.old(), nullptr);
    close(report_pipe[0]);
    execve(path.c_str(), argv.data(), envp.data());
    const int error = errno;  // exec failed: tell the parent why, through the pipe
    ssize_t ignored = write(report_pipe[1], &error, sizeof error);
    (void)ignored;
    _exit(127);
  }
  close(report_pipe[1]);
  if (child < 0) {
    result.exec_error = std::strerror(errno);
    close(report_pipe[0]);
    return result;
  }
  int exec_errno = 0;
  ssize_t n;
  int status = 0;
  {
    g_child.store(child);
    const ScopedSignal forward_term(SIGTERM, forward_signal);
    const ScopedSignal forward_hup(SIGHUP, forward_signal);
    do n = read(report_pipe[0], &exec_errno, sizeof exec_errno);
    while (n < 0 && errno == EINTR);
    close(report_pipe[0]);
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    result.exited_ns = trace::clock_ns(CLOCK_MONOTONIC);
    result.pid = child;
    g_child.store(0);
  }  // SIGTERM and SIGHUP restored here; SIGINT and SIGQUIT on return

  if (n == static_cast<ssize_t>(sizeof exec_errno))
    result.exec_error = std::strerror(exec_errno);
  else if (WIFEXITED(status))
    result.status = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    result.status = 128 + WTERMSIG(status);
  return result;
}

}  // namespace capguard::cli
