// boo-driver: executor child processes.
//
// Commands run in a child process (`boo-driver --executor-child ...`) fed
// through a pipe (bench/executor_protocol.hpp). A kernel that faults (illegal
// address, abort) or hangs (watchdog) costs its own command only: the parent
// reports it, starts a fresh child and goes on; each child releases its GPU
// memory when it exits.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "bench/executor_protocol.hpp"

namespace boo::driver {

/// What one command produced.
struct ExecutorResult {
  std::string output;                   ///< everything the child printed for the command
  std::optional<bench::DoneRecord> done;  ///< set when the command completed
  std::string failure;                  ///< set when the child died or timed out
};

/// One child process at a time. Not thread-safe; one per worker thread.
class Executor {
 public:
  /// `child_args`: the child's arguments (after the program path).
  Executor(std::vector<std::string> child_args, double timeout_s);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  /// Runs one command; starts a child first when none is running.
  ExecutorResult run(int index, const std::vector<std::string>& words);
  /// Closes the child's input and returns what it prints before exiting (its kernel summary).
  std::string finish();

 private:
  bool start(std::string& error);
  /// Kills (if asked) and reaps the child; returns how it ended ("signal 11 (SIGSEGV)", "exit 2").
  std::string stop(bool kill);

  std::vector<std::string> child_args_;
  double timeout_s_;
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  std::string pending_;  // bytes read past the last complete line
};

}  // namespace boo::driver
