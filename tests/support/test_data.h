// Where tests find shared data, the gguflow binary and plugins, and temporary files.
#pragma once

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace gguflow::test {

// $GGUFLOW_TEST_DATA, else the configured default (../shared/data next to the source tree).
std::filesystem::path data_dir();
// data_dir() / relative.
std::filesystem::path data_path(const std::string& relative);
// The folder holding the built `gguflow` executable and the kernel plugins.
std::filesystem::path binary_dir();
std::filesystem::path source_dir();
// A fresh empty folder for this test, removed at process exit.
std::filesystem::path temp_dir();
// True when the folder of `output` holds a temporary file of it (runtime/core/output_file.h
// writes `<output>.tmp.<pid>` and renames it into place on success).
bool has_temporary_of(const std::filesystem::path& output);

// Runs a shell command, returns its exit status; stdout and stderr are captured into the
// given strings when non-null.
int run_command(const std::string& command, std::string* out = nullptr, std::string* err = nullptr);

}  // namespace gguflow::test

// Skips the current test (reported as SKIPPED with the reason) when a shared data file is
// missing, e.g. in a clone without ../shared. Use inside TEST bodies.
#define GGUFLOW_REQUIRE_DATA(relative)                                                  \
  do {                                                                                  \
    if (!std::filesystem::exists(::gguflow::test::data_path(relative)))                 \
      GTEST_SKIP() << "test data not found: " << ::gguflow::test::data_path(relative)   \
                   << " (set GGUFLOW_TEST_DATA to the shared/data folder)";             \
  } while (0)
