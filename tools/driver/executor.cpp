// boo-driver: executor child processes.
#include "executor.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace boo::driver {

Executor::Executor(std::vector<std::string> child_args, double timeout_s)
    : child_args_(std::move(child_args)), timeout_s_(timeout_s) {}

Executor::~Executor() {
  if (pid_ > 0) stop(true);
}

bool Executor::start(std::string& error) {
  int down[2], up[2];  // parent -> child, child -> parent
  if (pipe(down) != 0 || pipe(up) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    error = std::string("fork: ") + std::strerror(errno);
    return false;
  }
  if (pid == 0) {
    dup2(down[0], STDIN_FILENO);
    dup2(up[1], STDOUT_FILENO);
    close(down[0]);
    close(down[1]);
    close(up[0]);
    close(up[1]);
    std::vector<char*> argv;
    std::string self = "/proc/self/exe";
    argv.push_back(self.data());
    for (std::string& a : child_args_) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(self.c_str(), argv.data());
    _exit(127);
  }
  close(down[0]);
  close(up[1]);
  signal(SIGPIPE, SIG_IGN);  // a dead child must not kill the parent on write
  pid_ = pid;
  to_child_ = down[1];
  from_child_ = up[0];
  pending_.clear();
  return true;
}

std::string Executor::stop(bool kill_child) {
  if (to_child_ >= 0) close(to_child_);
  if (from_child_ >= 0) close(from_child_);
  to_child_ = from_child_ = -1;
  std::string how = "exited";
  if (pid_ > 0) {
    if (kill_child) kill(pid_, SIGKILL);
    int status = 0;
    if (waitpid(pid_, &status, 0) == pid_) {
      if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        how = "signal " + std::to_string(sig) + " (" + (sigabbrev_np(sig) ? std::string("SIG") + sigabbrev_np(sig) : "?") + ")";
      } else if (WIFEXITED(status)) {
        how = "exit " + std::to_string(WEXITSTATUS(status));
      }
    }
  }
  pid_ = -1;
  return how;
}

std::string Executor::finish() {
  if (pid_ <= 0) return "";
  close(to_child_);
  to_child_ = -1;
  std::string out = pending_;
  pending_.clear();
  char buf[4096];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd pfd{from_child_, POLLIN, 0};
    if (poll(&pfd, 1, 1000) <= 0) continue;
    const ssize_t n = read(from_child_, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  stop(false);
  return out;
}

ExecutorResult Executor::run(int index, const std::vector<std::string>& words) {
  ExecutorResult result;
  if (pid_ <= 0) {
    std::string error;
    if (!start(error)) {
      result.failure = "cannot start an executor process: " + error;
      return result;
    }
  }
  const std::string request = bench::encode_run(index, words);
  if (write(to_child_, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    // The child left after its previous command (a sticky GPU fault): start a fresh one.
    stop(true);
    std::string error;
    if (!start(error) ||
        write(to_child_, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
      result.failure = "cannot start an executor process: " + (error.empty() ? stop(true) : error);
      return result;
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s_);
  char buf[65536];
  while (true) {
    // Complete lines first: output, or the DONE record that ends the command.
    size_t newline;
    while ((newline = pending_.find('\n')) != std::string::npos) {
      std::string line = pending_.substr(0, newline + 1);
      pending_.erase(0, newline + 1);
      if (std::optional<bench::DoneRecord> done = bench::decode_done(line); done && done->index == index) {
        // A child that leaves (its GPU context is unusable) is reaped now, so
        // the next command goes to a fresh one instead of into a closing pipe.
        if (done->executor_exits) stop(false);
        result.done = std::move(done);
        return result;
      }
      result.output += line;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      stop(true);
      result.output += pending_;
      pending_.clear();
      result.failure = "timed out after " + std::to_string(static_cast<int>(timeout_s_)) +
                       " s (--command-timeout); the executor was killed and is restarted";
      return result;
    }
    pollfd pfd{from_child_, POLLIN, 0};
    const int ready = poll(&pfd, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) {
      result.failure = std::string("poll: ") + std::strerror(errno);
      stop(true);
      return result;
    }
    if (ready <= 0) continue;
    const ssize_t n = read(from_child_, buf, sizeof buf);
    if (n > 0) {
      pending_.append(buf, static_cast<size_t>(n));
      continue;
    }
    // EOF: the child died while running the command.
    result.output += pending_;
    pending_.clear();
    result.failure = "the executor process died (" + stop(false) +
                     ") while running this command; a fresh one runs the next command";
    return result;
  }
}

}  // namespace boo::driver
