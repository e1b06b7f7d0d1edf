// OutputFile (runtime/core/output_file.h) when the process is killed: the temporary of every
// open output is removed by the signal handler, and the process still dies of the signal.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "runtime/core/output_file.h"
#include "tests/support/test_data.h"

namespace gguflow {
namespace {

// Forks a child that opens an OutputFile over `dest`, writes, then is killed by `sig` before
// commit (as `quantize` killed by SIGTERM mid-write).
void expect_signal_removes_temporary(int sig) {
  const auto dest = test::temp_dir() / "out.gguf";
  { std::ofstream(dest) << "previous"; }
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    OutputFile out(dest.string());
    std::fputs("partial", out.stream());
    std::fflush(out.stream());
    if (!test::has_temporary_of(dest)) _exit(3);  // the temporary must exist before the kill
    ::kill(getpid(), sig);
    _exit(2);  // not reached: the handler re-raises with the default action
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  EXPECT_EQ(WTERMSIG(status), sig);
  EXPECT_FALSE(test::has_temporary_of(dest));
  std::ifstream in(dest);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, "previous");
}

TEST(OutputFileSignals, SigtermRemovesTheTemporary) { expect_signal_removes_temporary(SIGTERM); }
TEST(OutputFileSignals, SigintRemovesTheTemporary) { expect_signal_removes_temporary(SIGINT); }

}  // namespace
}  // namespace gguflow
