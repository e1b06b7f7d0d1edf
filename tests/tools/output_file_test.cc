// OutputFile (runtime/core/output_file.h) when the process is killed: the temporary of every
// open output is removed by the signal handler, and the process still dies of the signal. And
// what it replaces: as the shell's `>` would (a link's target, a FIFO in place, permissions
// kept), never one of the command's inputs.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "ops/error.h"
#include "runtime/core/input_registry.h"
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

std::string contents(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

void write_and_commit(const std::filesystem::path& path, const char* text) {
  OutputFile out(path.string());
  std::fputs(text, out.stream());
  out.commit();
}

TEST(OutputFileReplaces, ASymbolicLinksTargetAndKeepsTheLink) {
  const auto dir = test::temp_dir();
  const auto target = dir / "target.txt", link = dir / "link.txt";
  { std::ofstream(target) << "old"; }
  std::filesystem::create_symlink("target.txt", link);  // relative, as `ln -s` makes them
  write_and_commit(link, "new");
  EXPECT_TRUE(std::filesystem::is_symlink(std::filesystem::symlink_status(link)));
  EXPECT_EQ(contents(target), "new");
}

TEST(OutputFileReplaces, AFileKeepingItsPermissions) {
  const auto path = test::temp_dir() / "private.txt";
  { std::ofstream(path) << "old"; }
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  write_and_commit(path, "new");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(contents(path), "new");
}

TEST(OutputFileReplaces, NothingOfAFifoButWritesIntoIt) {
  const auto fifo = test::temp_dir() / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = contents(fifo); });
  write_and_commit(fifo, "through the pipe");
  reader.join();
  EXPECT_EQ(received, "through the pipe");
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced by a file";
}

// `-o /dev/stdout >> log`: the output goes to the process's stdout as it is (appended), where
// following /dev/stdout to the file behind it replaced the log with the output.
TEST(OutputFileReplaces, NothingWhenNamedDevStdout) {
  const auto log = test::temp_dir() / "log.txt";
  { std::ofstream(log) << "OLD\n"; }
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_APPEND);
    if (fd < 0 || ::dup2(fd, 1) < 0) _exit(3);
    try {
      OutputFile out("/dev/stdout");
      std::fputs("new\n", out.stream());
      out.commit();
    } catch (const Error&) {
      _exit(1);
    }
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(contents(log), "OLD\nnew\n");
}

TEST(OutputFileRefuses, AnInputOfTheCommandWhateverPathNamesIt) {
  const auto dir = test::temp_dir();
  const auto input = dir / "model.gguf";
  { std::ofstream(input) << "the input"; }
  std::filesystem::create_symlink(input, dir / "alias.gguf");
  struct stat st {};
  ASSERT_EQ(::stat(input.c_str(), &st), 0);
  remember_input_file(st.st_dev, st.st_ino);
  for (const auto& path : {input, dir / "alias.gguf", dir / "." / "model.gguf"})
    EXPECT_THROW(OutputFile{path.string()}, Error) << path;
  EXPECT_EQ(contents(input), "the input");
  EXPECT_FALSE(test::has_temporary_of(input));
}

TEST(OutputFileRefuses, AFileTheUserMayNotWrite) {
  // In a folder of its own that anyone may search (the tests' temporary root is private).
  char folder[] = "/tmp/gguflow-read-only-XXXXXX";
  ASSERT_NE(::mkdtemp(folder), nullptr);
  ASSERT_EQ(::chmod(folder, 0755), 0);
  const auto path = std::filesystem::path(folder) / "read-only.txt";
  { std::ofstream(path) << "kept"; }
  ASSERT_EQ(::chmod(path.c_str(), 0444), 0);
  // Root may write any file: the check runs in a child that drops to `nobody` first.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) _exit(3);
    try {
      OutputFile out(path.string());
    } catch (const Error& e) {  // refused for the file itself (not for its folder)
      _exit(std::string(e.what()).find("cannot write the output: Permission denied") != std::string::npos ? 0 : 4);
    }
    _exit(1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: the read-only file was opened; 3: could not drop root; 4: another error";
  EXPECT_EQ(contents(path), "kept");
  std::filesystem::remove_all(folder);
}

}  // namespace
}  // namespace gguflow
