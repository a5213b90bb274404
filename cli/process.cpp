#include "cli/process.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <sstream>

extern char** environ;

namespace capguard::cli {
namespace {

pid_t g_child = 0;

void forward_signal(int signal_number) {
  if (g_child > 0) kill(g_child, signal_number);
}

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
  struct sigaction ignore {
  }, forward{}, old_int{}, old_quit{}, old_term{}, old_hup{};
  ignore.sa_handler = SIG_IGN;
  forward.sa_handler = forward_signal;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);

  int report_pipe[2];
  ChildResult result;
  if (pipe2(report_pipe, O_CLOEXEC) != 0) {
    result.exec_error = std::strerror(errno);
    return result;
  }
  const pid_t child = fork();
  if (child == 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
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
  g_child = child;
  sigaction(SIGTERM, &forward, &old_term);
  sigaction(SIGHUP, &forward, &old_hup);

  int exec_errno = 0;
  ssize_t n;
  do n = read(report_pipe[0], &exec_errno, sizeof exec_errno);
  while (n < 0 && errno == EINTR);
  close(report_pipe[0]);

  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  g_child = 0;
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGHUP, &old_hup, nullptr);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);

  if (n == static_cast<ssize_t>(sizeof exec_errno))
    result.exec_error = std::strerror(exec_errno);
  else if (WIFEXITED(status))
    result.status = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    result.status = 128 + WTERMSIG(status);
  return result;
}

}  // namespace capguard::cli
