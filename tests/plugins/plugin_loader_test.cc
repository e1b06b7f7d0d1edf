// The plugin loader: each built plugin really has the target its name says (read from the file
// without loading, and reported by the loaded table), the best supported plugin is chosen, and
// every failure (forced plugin the CPU lacks, missing folder, no plugins, corrupt file, ABI
// mismatch, not a plugin) is a one-line gguflow::Error, and a one-line CLI error with exit 1,
// never a crash.
#include <hwy/targets.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "ops/error.h"
#include "runtime/plugins/cpu_features.h"
#include "runtime/plugins/kernel_plugins.h"
#include "runtime/plugins/plugin_file.h"
#include "tests/support/error_of.h"
#include "tests/support/test_data.h"

namespace gguflow::test {
namespace {

namespace fs = std::filesystem;
using plugins::SelectOptions;

SelectOptions in_bin_dir() {
  SelectOptions o;
  o.search_dirs = {binary_dir()};
  return o;
}

// A folder holding one file named libgguflow-kernels-<name>.so with the given bytes.
fs::path folder_with_plugin(const std::string& name, const fs::path& source) {
  const fs::path dir = temp_dir();
  fs::copy_file(source, dir / ("libgguflow-kernels-" + name + ".so"));
  return dir;
}

fs::path fake(const std::string& kind) {
  return fs::path(GGUFLOW_FAKE_PLUGIN_DIR) / ("libfake_plugin_" + kind + ".so");
}

TEST(PluginFiles, EveryBuiltPluginHasTheTargetItsNameSays) {
  const auto candidates = plugins::scan_plugins(in_bin_dir());
#if defined(__x86_64__)
  for (const char* expected : {"scalar", "sse4", "avx2", "avx3", "avx3_vnni", "avx3_dl"}) {
    bool found = false;
    for (const auto& c : candidates) found |= c.name == expected;
    EXPECT_TRUE(found) << "plugin " << expected << " not built in " << binary_dir();
  }
#endif
  for (const auto& c : candidates) {
    SCOPED_TRACE(c.path.string());
    const auto info = plugins::read_plugin_file(c.path);
    ASSERT_EQ(info.problem, "");
    EXPECT_TRUE(plugins::target_matches_name(c.name, info.target))
        << c.name << " was built for " << info.target;
    EXPECT_EQ(info.required_features, plugins::features_for_name(c.name)) << c.name;
    if (!c.usable) continue;
    // Loaded, the table reports hwy::TargetName(HWY_TARGET) of its build: the same target.
    const auto& loaded = plugins::load_plugin(c);
    EXPECT_STREQ(loaded.table->target_name, info.target.c_str());
    EXPECT_EQ(loaded.table->hwy_target, info.target_bit);
    EXPECT_EQ(loaded.abi_version, GGUFLOW_KERNEL_ABI_VERSION);
  }
}

// The parity, KV-cache, packed-weight and end-to-end logits suites run every plugin this CPU can
// run and leave out the others (and the logits suites allow an empty list: the scalar case here
// fails if not even the scalar plugin loads). This says which were left out, one SKIPPED line per built
// plugin that cannot run here (its checks need a CPU that has its instructions), so a green
// run on one machine is not read as "every plugin checked".
class BuiltPlugin : public testing::TestWithParam<const char*> {};

TEST_P(BuiltPlugin, RunsHereSoEverySuiteChecksIt) {
  const auto candidates = plugins::scan_plugins(in_bin_dir());
  const auto it = std::find_if(candidates.begin(), candidates.end(),
                               [&](const plugins::PluginCandidate& c) { return c.name == GetParam(); });
  ASSERT_NE(it, candidates.end()) << "plugin " << GetParam() << " not built in " << binary_dir();
  if (!it->usable)
    GTEST_SKIP() << "plugin " << GetParam() << " cannot run on this CPU (" << it->reason
                 << "): no parity, cache, packed-weight or logits test checked it in this run";
}

#if defined(__x86_64__)
INSTANTIATE_TEST_SUITE_P(X86, BuiltPlugin,
                         testing::Values("scalar", "sse4", "avx2", "avx3", "avx3_vnni", "avx3_dl"),
                         [](const auto& info) { return std::string(info.param); });
#else
INSTANTIATE_TEST_SUITE_P(Portable, BuiltPlugin, testing::Values("scalar"),
                         [](const auto& info) { return std::string(info.param); });
#endif

TEST(PluginFiles, NamesAndTargets) {
  EXPECT_EQ(plugins::plugin_name_from_file("/x/libgguflow-kernels-avx2.so"), "avx2");
  EXPECT_FALSE(plugins::plugin_name_from_file("/x/libgguflow-kernels-.so"));
  EXPECT_FALSE(plugins::plugin_name_from_file("/x/libhwy.so"));
  EXPECT_TRUE(plugins::target_matches_name("avx2", "AVX2"));
  EXPECT_FALSE(plugins::target_matches_name("avx2", "SSSE3"));  // the Highway 1.0.3 -maes trap
  EXPECT_TRUE(plugins::target_matches_name("scalar", "EMU128"));
  EXPECT_TRUE(plugins::target_matches_name("avx3_vnni", "AVX3"));
  EXPECT_FALSE(plugins::target_matches_name("avx3_vnni", "AVX3_DL"));
  EXPECT_EQ(plugins::features_for_name("avx3_vnni"), std::vector<std::string>{"AVX512VNNI"});
  EXPECT_TRUE(plugins::features_for_name("avx3").empty());
  EXPECT_EQ(plugins::target_bit_from_name("AVX2"), HWY_AVX2);
}

TEST(Selection, PicksTheBestTargetTheCpuSupports) {
  SelectOptions o = in_bin_dir();
  const auto& chosen = plugins::select_kernels(o);
  const int64_t supported = plugins::runnable_targets();
  for (const auto& c : plugins::scan_plugins(o)) {
    if (c.usable) {
      EXPECT_FALSE(plugins::better_build(c, chosen.plugin)) << c.name << " is better";
    }
    bool has_features = true;
    for (const auto& f : c.required_features) has_features &= plugins::cpu_has_feature(f).value_or(false);
    EXPECT_EQ(c.usable, (c.target_bit & supported) != 0 && has_features) << c.name;
  }
  EXPECT_NE(chosen.describe().find(chosen.plugin.path.string()), std::string::npos);
}

// Plays a CPU that runs `supported` (whatever this machine has) and has no AVX-512 VNNI: the
// best plugin is `chosen`, and forcing `refused` fails with one line naming its target `target`.
void expect_choice_and_refusal(int64_t supported, const char* chosen, const char* refused,
                               const char* target) {
  SelectOptions o = in_bin_dir();
  o.supported_targets = supported;
  o.missing_features = {"AVX512VNNI"};
  EXPECT_EQ(plugins::select_kernels(o).plugin.name, chosen);
  o.forced = refused;
  const std::string message = error_of([&] { plugins::select_kernels(o); });
  EXPECT_NE(message.find(std::string("this CPU does not support ") + target), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

TEST(Selection, WithoutAvx512TheAvx2PluginIsChosenAndAvx3IsRefused) {
  expect_choice_and_refusal(HWY_AVX2 | HWY_SSE4 | HWY_SSSE3 | HWY_EMU128 | HWY_SCALAR, "avx2",
                            "avx3", "AVX3");
}

// An AVX-512 CPU without the AVX3_DL extensions and without VNNI (Skylake-SP).
TEST(Selection, WithoutAvx3DlTheAvx3PluginIsChosenAndAvx3DlIsRefused) {
  expect_choice_and_refusal(HWY_AVX3 | HWY_AVX2 | HWY_SSE4 | HWY_SSSE3 | HWY_EMU128 | HWY_SCALAR,
                            "avx3", "avx3_dl", "AVX3_DL");
}

// Cascade Lake, Ice Lake, Zen 4: AVX-512 with VNNI but without AVX-VNNI, so no AVX3_DL build:
// the avx3_vnni plugin (AVX3 + AVX512VNNI) is chosen over avx3.
TEST(Selection, WithAvx512VnniButNotAvx3DlTheAvx3VnniPluginIsChosen) {
  if (!plugins::cpu_has_feature("AVX512VNNI").value_or(false) || !(plugins::runnable_targets() & HWY_AVX3))
    GTEST_SKIP() << "this CPU has no AVX-512 VNNI";
  SelectOptions o = in_bin_dir();
  o.supported_targets = HWY_AVX3 | HWY_AVX2 | HWY_SSE4 | HWY_SSSE3 | HWY_EMU128 | HWY_SCALAR;
  EXPECT_EQ(plugins::select_kernels(o).plugin.name, "avx3_vnni");
}

// The same CPU without VNNI (Skylake-SP): avx3 is chosen, and forcing avx3_vnni fails with one
// line naming the missing feature.
TEST(Selection, WithoutAvx512VnniTheAvx3PluginIsChosenAndAvx3VnniIsRefused) {
  SelectOptions o = in_bin_dir();
  o.supported_targets = HWY_AVX3 | HWY_AVX2 | HWY_SSE4 | HWY_SSSE3 | HWY_EMU128 | HWY_SCALAR;
  o.missing_features = {"AVX512VNNI"};
  if (!(plugins::runnable_targets() & HWY_AVX3)) o.supported_targets &= ~int64_t{HWY_AVX3};
  EXPECT_EQ(plugins::select_kernels(o).plugin.name, (o.supported_targets & HWY_AVX3) ? "avx3" : "avx2");
  o.forced = "avx3_vnni";
  const std::string message = error_of([&] { plugins::select_kernels(o); });
  const std::string expected = (o.supported_targets & HWY_AVX3) ? "this CPU does not support AVX512VNNI"
                                                                 : "this CPU does not support AVX3";
  EXPECT_NE(message.find(expected), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

TEST(Selection, APluginNeedingAFeatureThisHostDoesNotKnowIsNeverLoaded) {
  const fs::path dir = folder_with_plugin("future", fake("needs_unknown_feature"));
  const auto info = plugins::read_plugin_file(dir / "libgguflow-kernels-future.so");
  EXPECT_EQ(info.problem, "");
  EXPECT_EQ(info.required_features, std::vector<std::string>{"AVX9000"});
  SelectOptions o;
  o.search_dirs = {dir};
  const auto candidates = plugins::scan_plugins(o);
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_FALSE(candidates[0].usable);
  EXPECT_EQ(candidates[0].reason, "needs CPU feature 'AVX9000', which this host does not know");
  EXPECT_EQ(candidates[0].build(), "SCALAR+AVX9000");
  o.forced = "future";
  EXPECT_NE(error_of([&] { plugins::select_kernels(o); }).find("AVX9000"), std::string::npos);
}

// A plugin named avx3_vnni whose file lacks the VNNI record is a broken build, not an avx3.
TEST(Selection, APluginNamedForVnniButBuiltWithoutItIsRefused) {
  const fs::path dir = folder_with_plugin("avx3_vnni", binary_dir() / "libgguflow-kernels-avx3.so");
  SelectOptions o;
  o.search_dirs = {dir};
  const auto candidates = plugins::scan_plugins(o);
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_FALSE(candidates[0].usable);
  EXPECT_EQ(candidates[0].reason, "named 'avx3_vnni' but built for AVX3, not with AVX512VNNI (broken build)");
}

TEST(Selection, RunnableTargetsAreHighwaysLessAvx3DlWithoutAvxVnni) {
  const int64_t highway = hwy::SupportedTargets(), runnable = plugins::runnable_targets();
  EXPECT_EQ(runnable & ~int64_t{HWY_AVX3_DL}, highway & ~int64_t{HWY_AVX3_DL});
  EXPECT_EQ(runnable & ~highway, 0);  // never more than Highway's
}

TEST(Selection, ForcedNameThatDoesNotExist) {
  SelectOptions o = in_bin_dir();
  o.forced = "avx9000";
  const std::string message = error_of([&] { plugins::select_kernels(o); });
  EXPECT_NE(message.find("'avx9000' not found"), std::string::npos) << message;
}

TEST(Selection, MissingFolderAndEmptyFolder) {
  SelectOptions o;
  o.search_dirs = {temp_dir() / "no-such-folder"};
  EXPECT_NE(error_of([&] { plugins::select_kernels(o); }).find("does not exist"), std::string::npos);
  o.search_dirs = {temp_dir()};
  EXPECT_NE(error_of([&] { plugins::select_kernels(o); }).find("no kernel plugins"), std::string::npos);
}

TEST(Selection, GarbageFileIsRefusedWithoutLoading) {
  const fs::path dir = temp_dir();
  std::ofstream(dir / "libgguflow-kernels-scalar.so") << "this is not a shared library, just text\n";
  SelectOptions o;
  o.search_dirs = {dir};
  o.forced = "scalar";
  const std::string message = error_of([&] { plugins::select_kernels(o); });
  EXPECT_NE(message.find("not an ELF shared library"), std::string::npos) << message;
}

TEST(Selection, TruncatedPluginIsRefusedWithoutLoading) {
  const fs::path real = binary_dir() / "libgguflow-kernels-scalar.so";
  const fs::path dir = temp_dir();
  {
    std::ifstream in(real, std::ios::binary);
    std::string head(8192, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    std::ofstream(dir / "libgguflow-kernels-scalar.so", std::ios::binary) << head;
  }
  SelectOptions o;
  o.search_dirs = {dir};
  o.forced = "scalar";
  const std::string message = error_of([&] { plugins::select_kernels(o); });
  EXPECT_NE(message.find("truncated"), std::string::npos) << message;
}

TEST(Selection, AbiMismatchIsRefused) {
  SelectOptions o;
  o.search_dirs = {folder_with_plugin("scalar", fake("abi_mismatch"))};
  const std::string message = error_of([&] { plugins::select_kernels(o); });
  const std::string expected = "ABI version mismatch: expected " +
                               std::to_string(GGUFLOW_KERNEL_ABI_VERSION) + ", found 999";
  EXPECT_NE(message.find(expected), std::string::npos) << message;
}

// Every function entry null: a session called the first and crashed.
TEST(Selection, ATableWithoutItsFunctionsIsRefused) {
  SelectOptions o;
  o.search_dirs = {folder_with_plugin("scalar", fake("null_entries"))};
  const std::string message = error_of([&] { plugins::select_kernels(o); });
  EXPECT_NE(message.find("the kernel table has no quantize_act (a broken build of the plugin)"), std::string::npos)
      << message;
}

// Packed weights are optional (kernel_abi.h): a table without them, pack_rows all 0, loads.
TEST(Selection, ATableWithoutPackingLoads) {
  SelectOptions o;
  o.search_dirs = {folder_with_plugin("scalar", fake("no_packing"))};
  o.forced = "scalar";
  EXPECT_EQ(error_of([&] { plugins::select_kernels(o); }), "");
}

// The dynamic loader's reason reaches the user (Boost.DLL's code said "Bad file descriptor").
TEST(Selection, TheLoadersReasonIsGiven) {
  SelectOptions o;
  o.search_dirs = {folder_with_plugin("scalar", fake("undefined_symbol"))};
  const std::string message = error_of([&] { plugins::select_kernels(o); });
  EXPECT_NE(message.find("cannot be loaded: undefined symbol: gguflow_fake_function_no_library_defines"),
            std::string::npos) << message;
}

TEST(Selection, LibraryWithoutEntryPointIsNotAPlugin) {
  SelectOptions o;
  o.search_dirs = {folder_with_plugin("scalar", fake("no_entry"))};
  const std::string message = error_of([&] { plugins::select_kernels(o); });
  EXPECT_NE(message.find("no 'gguflow_kernels_get' entry point"), std::string::npos) << message;
}

TEST(Selection, LibraryWithoutTargetRecordIsNotAPlugin) {
  SelectOptions o;
  o.search_dirs = {folder_with_plugin("scalar", fake("no_section"))};
  const std::string message = error_of([&] { plugins::select_kernels(o); });
  EXPECT_NE(message.find("not a gguflow kernel plugin"), std::string::npos) << message;
}

// ---- the CLI ----------------------------------------------------------------------------------

std::string gguflow_exe() { return (binary_dir() / "gguflow").string(); }

// Runs the CLI; expects exit 1 with exactly one line on stderr containing `expected`.
void expect_cli_error(const std::string& command, const std::string& expected) {
  std::string out, err;
  const int status = run_command(command, &out, &err);
  EXPECT_EQ(status, 1) << command << "\n" << err;
  EXPECT_NE(err.find(expected), std::string::npos) << command << "\n" << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

TEST(KernelsCommand, ListsEveryPluginAndTheSelectedOne) {
  std::string out, err;
  ASSERT_EQ(run_command(gguflow_exe() + " kernels", &out, &err), 0) << err;
  for (const auto& c : plugins::scan_plugins(in_bin_dir())) {
    EXPECT_NE(out.find(c.path.string()), std::string::npos) << out;
  }
  EXPECT_NE(out.find("selected: "), std::string::npos);
  ASSERT_EQ(run_command(gguflow_exe() + " kernels --kernels scalar --json", &out, &err), 0) << err;
  EXPECT_NE(out.find("\"selected\": \"scalar\""), std::string::npos) << out;
}

TEST(KernelsCommand, ErrorsAreOneLineWithExitStatus1) {
  expect_cli_error(gguflow_exe() + " kernels --kernels avx9000", "'avx9000' not found");
  expect_cli_error("GGUFLOW_KERNELS=avx9000 " + gguflow_exe() + " kernels", "'avx9000' not found");
  expect_cli_error("GGUFLOW_PLUGIN_PATH=/no/such/folder " + gguflow_exe() + " kernels",
                   "plugin folder '/no/such/folder' does not exist");
  const fs::path garbage_dir = temp_dir();
  std::ofstream(garbage_dir / "libgguflow-kernels-garbage.so") << "garbage";
  expect_cli_error("GGUFLOW_PLUGIN_PATH=" + garbage_dir.string() + " " + gguflow_exe() +
                       " kernels --kernels garbage",
                   "not an ELF shared library");
  const fs::path abi_dir = folder_with_plugin("oldabi", fake("abi_mismatch"));
  expect_cli_error("GGUFLOW_PLUGIN_PATH=" + abi_dir.string() + " " + gguflow_exe() +
                       " kernels --kernels oldabi",
                   "ABI version mismatch");
}

// When no plugin can be selected, `kernels` still lists what it found and why each is unusable
// (it only printed the error), then fails.
TEST(KernelsCommand, ListsThePluginsWhenNoneIsUsable) {
  const fs::path abi_dir = folder_with_plugin("oldabi", fake("abi_mismatch"));
  std::string out, err;
  const std::string command = "GGUFLOW_PLUGIN_PATH=" + abi_dir.string() + " " + gguflow_exe() + " kernels --kernels oldabi";
  EXPECT_EQ(run_command(command, &out, &err), 1) << err;
  EXPECT_NE(out.find("oldabi"), std::string::npos) << out;
  EXPECT_NE(out.find("selected: none"), std::string::npos) << out;
  EXPECT_NE(err.find("ABI version mismatch"), std::string::npos) << err;
  std::string json;
  EXPECT_EQ(run_command(command + " --json", &json, &err), 1) << err;
  EXPECT_NE(json.find("\"selected\": null"), std::string::npos) << json;
}

// ---- hardening (issue 23) ---------------------------------------------------------------------

// An ELF whose section-name table has no terminating NUL: Boost.DLL's reader ran off its buffer
// (a segfault while scanning, so every `run` died when it sat in the plugin path).
TEST(Hardening, UnterminatedSectionNameTableIsListedUnusableAndAGoodPluginStillLoads) {
  GGUFLOW_REQUIRE_DATA("malformed/plugin_dir/libgguflow-kernels-tiny.so");
  const fs::path bad = data_path("malformed/plugin_dir/libgguflow-kernels-tiny.so");
  const auto info = plugins::read_plugin_file(bad);
  EXPECT_NE(info.problem.find("section-name table is not NUL-terminated"), std::string::npos)
      << info.problem;
  const fs::path dir = folder_with_plugin("tiny", bad);
  fs::copy_file(binary_dir() / "libgguflow-kernels-scalar.so", dir / "libgguflow-kernels-scalar.so");
  SelectOptions o;
  o.search_dirs = {dir};
  const auto candidates = plugins::scan_plugins(o);
  ASSERT_EQ(candidates.size(), 2u);
  EXPECT_EQ(candidates[1].name, "tiny");
  EXPECT_FALSE(candidates[1].usable);
  EXPECT_NE(candidates[1].reason.find("not NUL-terminated"), std::string::npos) << candidates[1].reason;
  EXPECT_EQ(plugins::select_kernels(o).plugin.name, "scalar");
}

TEST(Hardening, ShippedBadPluginInThePluginPathDoesNotBreakTheCli) {
  GGUFLOW_REQUIRE_DATA("malformed/plugin_dir/libgguflow-kernels-tiny.so");
  std::string out, err;
  const std::string cmd = "GGUFLOW_PLUGIN_PATH=" + data_path("malformed/plugin_dir").string() + " " +
                          gguflow_exe() + " kernels";
  EXPECT_EQ(run_command(cmd, &out, &err), 0) << err;
  EXPECT_NE(out.find("not NUL-terminated"), std::string::npos) << out;
  EXPECT_NE(out.find("selected: "), std::string::npos) << out;
}

TEST(Hardening, SectionNameOffsetPastTheTableIsRefused) {
  // A valid-looking 2-section ELF whose section 0 names offset 100 of a 16-byte table.
  std::string elf(64 + 128 + 16, '\0');
  auto put = [&](size_t at, uint64_t v, size_t n) { std::memcpy(elf.data() + at, &v, n); };
  std::memcpy(elf.data(), "\x7f" "ELF", 4);
  elf[4] = 2, elf[5] = 1, elf[6] = 1;
  put(0x10, 3, 2), put(0x12, 62, 2), put(0x28, 64, 8), put(0x3A, 64, 2), put(0x3C, 2, 2), put(0x3E, 1, 2);
  put(64, 100, 4);                                            // section 0: sh_name 100
  put(128 + 4, 3, 4), put(128 + 0x18, 192, 8), put(128 + 0x20, 16, 8);  // section 1: strtab
  const fs::path dir = temp_dir();
  std::ofstream(dir / "libgguflow-kernels-x.so", std::ios::binary) << elf;
  const auto info = plugins::read_plugin_file(dir / "libgguflow-kernels-x.so");
#if defined(__x86_64__)
  EXPECT_NE(info.problem.find("name offset 100 past the 16-byte section-name table"), std::string::npos)
      << info.problem;
#endif
}

TEST(Hardening, APluginThatClaimsABetterTargetButCannotLoadFallsBackWithAWarning) {
  const fs::path dir = folder_with_plugin("fakesse4", fake("claims_sse4"));
  fs::copy_file(binary_dir() / "libgguflow-kernels-scalar.so", dir / "libgguflow-kernels-scalar.so");
  SelectOptions o;
  o.search_dirs = {dir};
  o.supported_targets = plugins::runnable_targets() | HWY_SSE4;
  testing::internal::CaptureStderr();
  const std::string name = plugins::select_kernels(o).plugin.name;
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(name, "scalar");
  EXPECT_NE(err.find("warning: kernel plugin"), std::string::npos) << err;
  EXPECT_NE(err.find("file records target SSE4"), std::string::npos) << err;
  // Forced, the same plugin is an error (the user asked for it).
  o.forced = "fakesse4";
  EXPECT_NE(error_of([&] { plugins::select_kernels(o); }).find("file records target SSE4"),
            std::string::npos);
}

}  // namespace
}  // namespace gguflow::test
