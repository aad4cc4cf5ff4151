#include "bench/spawn.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>

namespace sy::bench {

Result<ProcessResult> run_process(const std::vector<std::string>& argv) {
  if (argv.empty()) return error::invalid_argument("no program to run");
  int fds[2];
  if (pipe(fds) != 0) return error::io_error(std::string("cannot create a pipe: ") + std::strerror(errno));
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return error::io_error(std::string("cannot start a process: ") + std::strerror(errno));
  }
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    execv(args[0], args.data());
    // Only async-signal-safe calls between fork and exec/_exit.
    const char msg[] = "bench: cannot execute the program\n";
    (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
    _exit(127);
  }
  close(fds[1]);
  ProcessResult r;
  char buf[4096];
  for (;;) {
    const ssize_t k = read(fds[0], buf, sizeof buf);
    if (k > 0) r.out.append(buf, static_cast<size_t>(k));
    else if (k == 0 || errno != EINTR) break;
  }
  close(fds[0]);
  int status = 0;
  struct rusage ru {};
  while (wait4(pid, &status, 0, &ru) < 0)
    if (errno != EINTR) return error::io_error(std::string("waiting for a process failed: ") + std::strerror(errno));
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.peak_rss = static_cast<uint64_t>(ru.ru_maxrss) * 1024;  // Linux reports KiB
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

std::vector<std::string> self_cmdline() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all{std::istreambuf_iterator<char>(in), {}};
  std::vector<std::string> out;
  size_t b = 0;
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i] == '\0') {
      out.push_back(all.substr(b, i - b));
      b = i + 1;
    }
  return out;
}

}  // namespace sy::bench
