// The command line as docs/CLI.md promises it, through the built binary: every command driven
// with llama.cpp-style flags, and one test per output rule (stdout/stderr split, fresh lines
// under `2>&1 | cat`, --json as one valid-UTF-8 document, progress off a terminal, exit codes),
// plus the findings of issue 21 (prompt files' final newline, `tokenize -`, --seed -1,
// synth --vocab, --kv-proj on a graph without kv_project, --threads 1000, context shift).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/edited_model.h"
#include "tests/support/json_value.h"
#include "tests/support/test_data.h"

namespace gguflow::test {
namespace {

constexpr const char* kStories = "models/stories260K.gguf";
constexpr const char* kQwen = "models/synth-qwen2-tiny-Q8_0.gguf";

struct Result {
  int status = -1;
  std::string out, err;
};

std::string quote(const std::string& word) {
  std::string q = "'";
  for (char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string gguflow() { return quote((binary_dir() / "gguflow").string()); }

// Runs `gguflow ARGS` through the shell (ARGS as written, so tests can use pipes and
// redirections), without $GGUFLOW_MODEL/$GGUFLOW_THREADS from the caller's environment.
Result sh(const std::string& args, const std::string& env = "") {
  Result r;
  r.status = run_command("env -u GGUFLOW_MODEL -u GGUFLOW_THREADS " + env + " " + gguflow() + " " + args,
                         &r.out, &r.err);
  return r;
}

std::string stories() { return quote(data_path(kStories).string()); }

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// An independent UTF-8 check (RFC 3629 table 3-7), not the runtime's own decoder.
bool valid_utf8(const std::string& text) {
  for (size_t i = 0; i < text.size();) {
    const auto b = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char c = b(i);
    size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c <= 0x7F) n = 1;
    else if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c == 0xE0) n = 3, lo = 0xA0;
    else if (c >= 0xE1 && c <= 0xEC) n = 3;
    else if (c == 0xED) n = 3, hi = 0x9F;
    else if (c >= 0xEE && c <= 0xEF) n = 3;
    else if (c == 0xF0) n = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) n = 4;
    else if (c == 0xF4) n = 4, hi = 0x8F;
    else return false;
    if (i + n > text.size()) return false;
    if (n > 1 && (b(i + 1) < lo || b(i + 1) > hi)) return false;
    for (size_t k = 2; k < n; ++k)
      if (b(i + k) < 0x80 || b(i + k) > 0xBF) return false;
    i += n;
  }
  return true;
}

// ---- every command with llama.cpp-style flags ---------------------------------------------

TEST(CliFlags, RunTakesLlamaCppNames) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const Result longhand = sh("run --model " + stories() +
                             " --prompt 'Once upon a time' --n-predict 16 --ctx-size 128 --threads 1 --seed 7 --temp 0");
  const Result shorthand = sh("run -m " + stories() + " -p 'Once upon a time' -n 16 -c 128 -t 1 -s 7 --temp 0");
  ASSERT_EQ(longhand.status, 0) << longhand.err;
  ASSERT_EQ(shorthand.status, 0) << shorthand.err;
  EXPECT_EQ(shorthand.out, longhand.out);
  EXPECT_EQ(shorthand.out.rfind("Once upon a time", 0), 0u) << shorthand.out;
  EXPECT_NE(shorthand.err.find("seed 7"), std::string::npos) << shorthand.err;
}

// -ctk/-ctv as llama.cpp spells them (single-dash words), the long names, and `=` forms: the
// same cache; --verbose reports its bytes and types; an unknown type is a usage error listing
// the allowed ones; bench and kv eval take the same option.
TEST(CliFlags, CacheTypesTakeLlamaCppNames) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const std::string run = "run -m " + stories() + " -p 'Once upon a time' -n 8 -c 64 -t 1 --temp 0 --verbose ";
  const Result shorthand = sh(run + "-ctk q8_0 -ctv=q4_0");
  const Result longhand = sh(run + "--cache-type-k=q8_0 --cache-type-v q4_0");
  const Result f32 = sh(run);
  ASSERT_EQ(shorthand.status, 0) << shorthand.err;
  ASSERT_EQ(longhand.status, 0) << longhand.err;
  EXPECT_EQ(shorthand.out, longhand.out);
  // stories260K: 5 layers x 64 rows x (34 + 18) bytes.
  EXPECT_NE(shorthand.err.find("KV cache 16640 bytes = "), std::string::npos) << shorthand.err;
  EXPECT_NE(shorthand.err.find("K q8_0, V q4_0"), std::string::npos) << shorthand.err;
  EXPECT_NE(f32.err.find("KV cache 81920 bytes = "), std::string::npos) << f32.err;
  const Result bad = sh(run + "-ctk q5_0");
  EXPECT_EQ(bad.status, 2) << bad.err;
  EXPECT_NE(bad.err.find("--cache-type-k: expected one of f32, f16, q8_0, q4_0, found 'q5_0'"), std::string::npos)
      << bad.err;
  const Result help = sh("bench --help");
  EXPECT_NE(help.out.find("(-ctk) KV cache element type"), std::string::npos) << help.out;
  const Result eval_help = sh("kv eval --help");
  EXPECT_NE(eval_help.out.find("--cache-type-v"), std::string::npos) << eval_help.out;
}

TEST(CliFlags, EnvironmentDefaultsForModelAndThreads) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const Result r = sh("tokenize -p 'Once' --ids", "GGUFLOW_MODEL=" + stories());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "1 403\n");
  const Result bad_threads = sh("run -m " + stories() + " -p x -n 1", "GGUFLOW_THREADS=abc");
  EXPECT_EQ(bad_threads.status, 2) << bad_threads.err;
  EXPECT_NE(bad_threads.err.find("--threads"), std::string::npos) << bad_threads.err;
}

TEST(CliFlags, SeedMinusOneDrawsAndPrintsOne) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const Result r = sh("run -m " + stories() + " -p Once -n 4 -t 1 -s -1");
  ASSERT_EQ(r.status, 0) << r.err;
  const size_t at = r.err.find("| seed ");
  ASSERT_NE(at, std::string::npos) << r.err;
  EXPECT_NE(r.err.substr(at + 7, 2), "-1") << r.err;
  // Over a graph whose sampler: section sets a seed too (-1 read as "not given" kept seed 5).
  const std::filesystem::path graph = temp_dir() / "seeded.yaml";
  std::ofstream(graph) << "graph: seeded\nextends: " << (source_dir() / "graphs" / "decode.yaml").string()
                       << "\nsampler: {input: logits, temperature: 1.0, seed: 5}\n";
  const Result seeded = sh("run " + quote(graph.string()) + " -m " + stories() + " -p Once -n 4 -t 1 -s -1");
  ASSERT_EQ(seeded.status, 0) << seeded.err;
  EXPECT_EQ(seeded.err.find("| seed 5\n"), std::string::npos) << seeded.err;
  const Result graphs_seed = sh("run " + quote(graph.string()) + " -m " + stories() + " -p Once -n 4 -t 1");
  EXPECT_NE(graphs_seed.err.find("| seed 5\n"), std::string::npos) << graphs_seed.err;
}

TEST(CliFlags, PromptFileAndStdinLoseOneTrailingNewline) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const std::filesystem::path file = temp_dir() / "prompt.txt";
  std::ofstream(file, std::ios::binary) << "Once upon a time\n";
  const std::string run = "run -m " + stories() + " -n 12 -t 1 --temp 0 ";
  const Result plain = sh(run + "-p 'Once upon a time'");
  const Result from_file = sh(run + "-f " + quote(file.string()));
  const Result from_stdin = sh(run + "-p - < " + quote(file.string()));
  const Result file_dash = sh(run + "-f - < " + quote(file.string()));  // '-' is stdin for -f too
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(from_file.out, plain.out) << from_file.err;
  EXPECT_EQ(from_stdin.out, plain.out) << from_stdin.err;
  EXPECT_EQ(file_dash.out, plain.out) << file_dash.err;
  const Result tokenize_dash = sh("tokenize -m " + stories() + " --ids -f - < " + quote(file.string()));
  EXPECT_EQ(tokenize_dash.out, sh("tokenize -m " + stories() + " --ids 'Once upon a time'").out) << tokenize_dash.err;
  EXPECT_EQ(sh(run + "-f ''").status, 2);  // an empty file name is no prompt file
}

// A failed write to stdout stops the generation at once (it ran to the last token first).
TEST(CliFlags, AFullStdoutStopsTheRun) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const Result r = sh("run -m " + stories() + " -p Once -n 100000 --ctx 512 --context-shift -t 1 --temp 0 > /dev/full");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("<stdout>: write failed"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("generated"), std::string::npos) << r.err;  // no timings line: it stopped
}

TEST(CliFlags, TokenizeReadsStdinForDash) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const std::filesystem::path file = temp_dir() / "text.txt";
  std::ofstream(file, std::ios::binary) << "Once upon\n";
  const Result dash = sh("tokenize -m " + stories() + " --ids - < " + quote(file.string()));
  const Result text = sh("tokenize -m " + stories() + " --ids 'Once upon'");
  ASSERT_EQ(dash.status, 0) << dash.err;
  EXPECT_EQ(dash.out, text.out);
  const Result literal = sh("tokenize -m " + stories() + " --ids -p -");  // -p takes text as is
  ASSERT_EQ(literal.status, 0) << literal.err;
  EXPECT_NE(dash.out, literal.out);  // not the literal "-"
  const Result both = sh("tokenize -m " + stories() + " -p a b");
  EXPECT_EQ(both.status, 2) << both.err;
}

// CLI11 read a positional word in brackets as a list: "[CLS] hello [SEP]" lost its outer
// brackets, "[1,2]" became two arguments, even after "--".
TEST(CliFlags, BracketedWordsAreTakenAsTheyAre) {
  GGUFLOW_REQUIRE_DATA(kStories);
  // Against stdin, which the argument parser never sees.
  const std::filesystem::path file = temp_dir() / "word.txt";
  for (const std::string text : {"[CLS] hello [SEP]", "[1,2]", "[]", "[x]", "\x1f[x]"}) {
    std::ofstream(file, std::ios::binary) << text;
    const Result from_stdin = sh("tokenize -m " + stories() + " --ids - < " + quote(file.string()));
    const Result positional = sh("tokenize -m " + stories() + " --ids -- " + quote(text));
    const Result option = sh("tokenize -m " + stories() + " --ids -p " + quote(text));
    ASSERT_EQ(positional.status, 0) << text << ": " << positional.err;
    EXPECT_EQ(positional.out, from_stdin.out) << text;
    EXPECT_EQ(option.out, from_stdin.out) << text;
  }
  const Result bracketed = sh("tokenize -m " + stories() + " --json '[x]'");
  ASSERT_EQ(bracketed.status, 0) << bracketed.err;
  EXPECT_NE(bracketed.out.find("\"pieces\":[\"<s>\",\" \",\"[\",\"x\",\"]\"]"), std::string::npos) << bracketed.out;
}

TEST(CliFlags, EveryOtherCommandTakesShortNames) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const std::filesystem::path dir = temp_dir();
  const std::string m = " -m " + stories();
  const std::string texts = quote((dir / "texts.txt").string());
  std::ofstream(dir / "texts.txt") << "a cat\na dog\n";

  const Result inspect = sh("inspect" + m);
  EXPECT_EQ(inspect.status, 0) << inspect.err;
  EXPECT_NE(inspect.out.find("architecture:  llama"), std::string::npos) << inspect.out;

  const Result tensor = sh("tensor" + m + " token_embd.weight --rows 0:2 -o " + quote((dir / "t.f32").string()));
  EXPECT_EQ(tensor.status, 0) << tensor.err;
  EXPECT_EQ(std::filesystem::file_size(dir / "t.f32"), 2u * 64u * sizeof(float));

  const Result lower = sh("lower" + m + " -o " + quote((dir / "lowered.yaml").string()));
  EXPECT_EQ(lower.status, 0) << lower.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "lowered.yaml"));

  const Result graph = sh("graph " + quote((source_dir() / "graphs/decode.yaml").string()) + m);
  EXPECT_EQ(graph.status, 0) << graph.err;

  const Result detok = sh("detokenize" + m + " 1 403");
  EXPECT_EQ(detok.status, 0) << detok.err;
  EXPECT_EQ(detok.out.rfind("Once", 0), 0u) << detok.out;

  const Result embed = sh("embed" + m + " -f " + texts + " -t 1 -c 64 --format tsv");
  EXPECT_EQ(embed.status, 0) << embed.err;
  EXPECT_EQ(std::count(embed.out.begin(), embed.out.end(), '\n'), 2) << embed.out;

  const Result bench = sh("bench" + m + " -p 4 -n 2 -r 1 -t 1 -o json --bandwidth-mib 4");
  ASSERT_EQ(bench.status, 0) << bench.err;
  EXPECT_EQ(parse_json(bench.out).array.size(), 2u);

  const Result kv = sh("kv spectrum" + m + " --text " + quote(data_path("text/calib.txt").string()) +
                       " --ctx 64 -t 1 --json");
  EXPECT_EQ(kv.status, 0) << kv.err;
  EXPECT_NO_THROW(parse_json(kv.out)) << kv.out;

  const Result synth = sh("synth --arch llama --n-embd 64 --n-layer 1 --n-head 2 --n-ff 128 --n-vocab 300 "
                          "--type F32 -s 3 -o " + quote((dir / "s.gguf").string()));
  EXPECT_EQ(synth.status, 0) << synth.err;

  const Result kernels = sh("kernels --json");
  EXPECT_EQ(kernels.status, 0) << kernels.err;
  EXPECT_NO_THROW(parse_json(kernels.out)) << kernels.out;
}

TEST(CliFlags, VersionNamesCommitAndPlugins) {
  const Result r = sh("--version");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("gguflow ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("(commit "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("plugin scalar"), std::string::npos) << r.out;
}

// ---- output rules --------------------------------------------------------------------------

// Rule 1 and 2: text alone on stdout, exactly; with 2>&1 the timing line starts a fresh line.
TEST(CliOutput, NoticesStartOnAFreshLineWhenStreamsShareAPipe) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const std::string run = "run -m " + stories() + " -p 'Once upon a time' -n 5 -t 1 --temp 0";
  const Result split = sh(run);
  ASSERT_EQ(split.status, 0) << split.err;
  ASSERT_FALSE(split.out.empty());
  ASSERT_NE(split.out.back(), '\n') << "the test needs text that does not end its line";
  EXPECT_EQ(split.err.rfind("gguflow: load", 0), 0u) << split.err;  // nothing else on stderr

  const Result merged = sh(run + " 2>&1 | cat");
  ASSERT_EQ(merged.status, 0) << merged.err;
  EXPECT_EQ(merged.out.rfind(split.out + "\ngguflow: load", 0), 0u) << merged.out;
}

// The 8-seed case of issue 21: random weights pick byte tokens that split characters.
TEST(CliOutput, JsonIsValidUtf8ForEverySeed) {
  GGUFLOW_REQUIRE_DATA(kQwen);
  for (int seed = 1; seed <= 8; ++seed) {
    const Result r = sh("run -m " + quote(data_path(kQwen).string()) + " -p 'Hello' -n 48 -t 1 --temp 1.5 -s " +
                        std::to_string(seed) + " --json");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(valid_utf8(r.out)) << "seed " << seed;
    const JsonValue doc = parse_json(r.out);
    EXPECT_TRUE(valid_utf8(doc["text"].string)) << "seed " << seed;
    EXPECT_EQ(doc["ids"].ints().size(), 48u) << "seed " << seed;
  }
}

TEST(CliOutput, JsonIsOneDocumentForEveryCommandThatHasIt) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const std::string m = " -m " + stories();
  for (const std::string& args :
       {"run" + m + " -p Once -n 3 -t 1 --json", "run" + m + " --tokens 1,403 -t 1 --json",
        "tokenize" + m + " -p Once --json", "inspect" + m + " --json", std::string("kernels --json"),
        "bench" + m + " -p 4 -n 0 -r 1 -t 1 --bandwidth-mib 4 --json"}) {
    const Result r = sh(args);
    ASSERT_EQ(r.status, 0) << args << ": " << r.err;
    EXPECT_NO_THROW(parse_json(r.out)) << args << ": " << r.out;
  }
  const Result tokens = sh("run" + m + " --tokens 1,403 -t 1 --greedy 3 --json");
  ASSERT_EQ(tokens.status, 0) << tokens.err;
  const JsonValue doc = parse_json(tokens.out);
  EXPECT_EQ(doc["tokens"].ints(), (std::vector<int>{1, 403}));
  EXPECT_EQ(doc["greedy"].ints().size(), 3u);
  // Plain --tokens prints the next token's id (it printed nothing before).
  const Result plain = sh("run" + m + " --tokens 1,403 -t 1");
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(plain.out, std::to_string(doc["greedy"].ints()[0]) + "\n");
}

TEST(CliOutput, ProgressOffATerminalIsPlainLines) {
  const std::filesystem::path out = temp_dir() / "p.gguf";
  const Result r = sh("synth --arch llama --n-embd 64 --n-layer 1 --n-head 2 --n-ff 128 --n-vocab 300 "
                      "--type Q8_0 -o " + quote(out.string()));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("synth: 100% of"), std::string::npos) << r.err;
}

TEST(CliOutput, ExitStatusIsTwoForUsageErrorsOneForBadInput) {
  for (const std::string command :
       {"run", "embed", "bench", "tokenize", "detokenize", "inspect", "tensor", "lower", "graph",
        "synth", "quantize", "kernels", "ops"}) {
    const Result r = sh(command + " --no-such-option");
    EXPECT_EQ(r.status, 2) << command << ": " << r.err;
    EXPECT_EQ(r.err.rfind("gguflow " + command + ": error: unknown option '--no-such-option'", 0), 0u) << r.err;
  }
  EXPECT_EQ(sh("no-such-command").status, 2);
  EXPECT_EQ(sh("run -n abc").status, 2);
  const Result missing = sh("inspect /nonexistent/model.gguf");
  EXPECT_EQ(missing.status, 1) << missing.err;
  const Result suggestion = sh("run --top_p 0.5");
  EXPECT_NE(suggestion.err.find("did you mean '--top-p'?"), std::string::npos) << suggestion.err;
}

// Options that do nothing in the mode given, values out of range and options that exclude each
// other are usage errors before any work: `run --tokens 1,403 -n 5` printed one id and exit 0,
// `--tokens ... --ctx -5` and a bench test longer than --ctx exited 1 (the latter after the
// bandwidth measurement), `tokenize --json --ids-only` printed JSON.
TEST(CliOutput, UsageErrorsOfTheSecondAudit) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const std::string m = " -m " + stories();
  for (const std::string& option : {"-n 5", "--temp 0.5", "--top-k 3", "-s 7", "--special", "--no-echo",
                                    "--chat-template chatml", "-i", "--context-shift", "--keep 2", "--repeat-penalty 1.1"}) {
    const Result r = sh("run" + m + " --tokens 1,403 " + option);
    EXPECT_EQ(r.status, 2) << option << ": " << r.err;
    EXPECT_NE(r.err.find(": not with --tokens"), std::string::npos) << option << ": " << r.err;
    EXPECT_EQ(r.out, "") << option;
  }
  for (const std::string& command : {"run" + m + " --tokens 1,2 --ctx -5", "run" + m + " --tokens 1,2 --ctx 99999999999",
                                     "bench" + m + " -p 8 -n 0 --ctx 4", "bench" + m + " -p 8 -n 0 --ctx 16777217",
                                     "embed" + m + " -f /dev/null --ctx -3", "tokenize" + m + " --json --ids-only hi"}) {
    const Result r = sh(command);
    EXPECT_EQ(r.status, 2) << command << ": " << r.err;
    EXPECT_EQ(r.err.find("streaming read bandwidth"), std::string::npos) << command << ": " << r.err;
  }
  for (const std::string& command : {"run" + m + " --tokens 1,403,", "run" + m + " -p hi --keep 2"}) {
    const Result r = sh(command);
    EXPECT_EQ(r.status, 2) << command << ": " << r.err;
  }
  const Result top_p = sh("run" + m + " -p hi --top-p 1.0000001");
  EXPECT_EQ(top_p.status, 2);
  EXPECT_NE(top_p.err.find("found 1.0000001"), std::string::npos) << top_p.err;  // not "found 1"
  // The model where the graph goes: named as such, not as a YAML escape error.
  const Result model_as_graph = sh("run " + stories() + " -p hi");
  EXPECT_EQ(model_as_graph.status, 1);
  EXPECT_NE(model_as_graph.err.find("this is a GGUF model, not a graph file (YAML): expected the model after "
                                    "-m/--model"),
            std::string::npos) << model_as_graph.err;
  const Result no_name = sh("tensor " + stories(), "GGUFLOW_MODEL=");  // the NAME forgotten, not the model
  EXPECT_EQ(no_name.status, 2);
  EXPECT_NE(no_name.err.find("expected the model file and 1 argument(s) after it, found only 1"), std::string::npos)
      << no_name.err;
  const Result plugin_file = sh("kernels", "GGUFLOW_PLUGIN_PATH=" + stories());
  EXPECT_NE(plugin_file.err.find("is a file, not a folder"), std::string::npos) << plugin_file.err;
  // A directory on stdin is a read error, not an empty text.
  const Result directory = sh("tokenize" + m + " - < " + quote(temp_dir().string()));
  EXPECT_EQ(directory.status, 1) << directory.err;
  EXPECT_NE(directory.err.find("<stdin>: cannot read: Is a directory"), std::string::npos) << directory.err;
}

TEST(CliOutput, ErrorsNameTheCommandOnce) {
  const Result r = sh("bench -p 4");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "gguflow bench: error: -m/--model FILE is required\n");
  const Result synth = sh("synth --arch llama -o /tmp/never.gguf --n-embd 0 --n-layer 1 --n-head 1 --n-ff 32 --n-vocab 300");
  EXPECT_EQ(synth.err.find("synth: synth:"), std::string::npos) << synth.err;
  EXPECT_EQ(synth.err.find("error: synth:"), std::string::npos) << synth.err;
}

TEST(CliOutput, HelpStatesEachDefaultOnce) {
  for (const std::string command : {"run", "embed", "bench", "synth", "kv spectrum", "lower"}) {
    const Result r = sh(command + " --help");
    ASSERT_EQ(r.status, 0) << command;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      const size_t first = line.find("default");
      EXPECT_TRUE(first == std::string::npos || line.find("default", first + 1) == std::string::npos)
          << command << ": " << line;
    }
  }
}

// A description's own line breaks survive the wrapping to 96 columns: lists stay lists (one
// preset per line, embed's output formats in aligned columns) and no line is over-long.
TEST(CliOutput, HelpKeepsTheDescriptionsLinesAndWidth) {
  const Result synth = sh("synth --help");
  ASSERT_EQ(synth.status, 0);
  EXPECT_NE(synth.out.find("\n  qwen2.5-0.5b: "), std::string::npos) << synth.out;
  EXPECT_NE(synth.out.find("\n  bge-small: "), std::string::npos) << synth.out;
  const Result embed = sh("embed --help");
  ASSERT_EQ(embed.status, 0);
  EXPECT_NE(embed.out.find("\n  tsv    i<TAB>v0"), std::string::npos) << embed.out;
  const std::string description = embed.out.substr(0, embed.out.find("\nOptions:"));
  std::istringstream lines(description);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 96u) << line;
}

// ---- kv eval --sweep: every method in one table ---------------------------------------------

// The shape of the one table (JSON and Markdown): f32 first, the element types, each key
// position's thresholds in order, the control last; the SVG has a line per method family.
TEST(CliKvSweep, OneTableOfEveryMethodAndOnePlot) {
  GGUFLOW_REQUIRE_DATA(kStories);
  GGUFLOW_REQUIRE_DATA("text/calib.txt");
  GGUFLOW_REQUIRE_DATA("text/eval.txt");
  const std::filesystem::path dir = temp_dir() / "kv-sweep-cli";
  const std::string texts = " --calib-text " + quote(data_path("text/calib.txt").string()) + " --text " +
                            quote(data_path("text/eval.txt").string()) + " --work-dir " + quote(dir.string());
  const Result json = sh("kv eval -m " + stories() + texts + " --sweep 0.9,1 --cache-types q8_0 -t 2 --json --svg " +
                         quote((dir / "sweep.svg").string()));
  ASSERT_EQ(json.status, 0) << json.err;
  const JsonValue doc = parse_json(json.out);
  const auto& rows = doc["rows"].array;
  const std::vector<std::pair<std::string, double>> expected = {
      {"f32", 0},   {"q8_0", 0}, {"low rank post-rope", 0.9}, {"low rank post-rope", 1}, {"low rank pre-rope", 0.9},
      {"low rank pre-rope", 1}, {"zero (control)", 0}};
  ASSERT_EQ(rows.size(), expected.size()) << json.out;
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i]["method"].string, expected[i].first) << i;
    EXPECT_EQ(rows[i]["threshold"].number, expected[i].second) << i;
  }
  // Full rank keeps every byte and every answer, with keys on either side of the rotation;
  // q8_0 is 34 bytes per 32 values of 128.
  for (size_t i : {3u, 5u}) {
    EXPECT_EQ(rows[i]["ratio"].number, 1.0) << i;
    EXPECT_EQ(rows[i]["top1_agreement"].number, 1.0) << i;
    EXPECT_LT(rows[i]["logit_rel_l2"].number, 1e-4) << i;
  }
  EXPECT_NEAR(rows[1]["ratio"].number, 34.0 / 128, 0.005);
  EXPECT_EQ(rows[6]["kv_bytes"].number, 0.0);
  const std::string svg = read_file(dir / "sweep.svg");
  for (const char* line : {"element types", "low rank post-rope", "low rank pre-rope", "zero (control)"})
    EXPECT_NE(svg.find(line), std::string::npos) << line;
  EXPECT_TRUE(std::filesystem::exists(dir / "pre-rope-energy-0.9.kvproj.gguf"));

  // The Markdown table: a header, a rule and one line per row, 11 columns each.
  const Result text = sh("kv eval -m " + stories() + texts + " --sweep 1 --keys pre-rope --cache-types f16 -t 2");
  ASSERT_EQ(text.status, 0) << text.err;
  std::vector<std::string> table;
  std::istringstream lines(text.out);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("|", 0) == 0) table.push_back(line);
  ASSERT_EQ(table.size(), 2u + 4u) << text.out;  // f32, f16, pre-rope 1, zero
  for (const std::string& line : table) EXPECT_EQ(std::count(line.begin(), line.end(), '|'), 12) << line;
  EXPECT_EQ(table[4].rfind("| low rank pre-rope | energy 1 |", 0), 0u) << table[4];
}

// A study runs the model many times: each run is a progress line on stderr (off with --quiet),
// and the JSON stays one valid document whatever the model file is called.
TEST(CliKvSweep, ProgressOnStderrAndJsonForAnyFileName) {
  GGUFLOW_REQUIRE_DATA(kStories);
  GGUFLOW_REQUIRE_DATA("text/eval.txt");
  const std::filesystem::path odd = temp_dir() / "stories \"260K\" \\ copy.gguf";
  std::filesystem::copy_file(data_path(kStories), odd);
  const std::string text = " --text " + quote(data_path("text/eval.txt").string());
  const Result eval = sh("kv eval -m " + quote(odd.string()) + text + " --cache-types q8_0 -t 2 --json");
  ASSERT_EQ(eval.status, 0) << eval.err;
  EXPECT_NO_THROW(parse_json(eval.out)) << eval.out;
  for (const char* line : {"gguflow kv: K f32, V f32 cache: ", "gguflow kv: K q8_0, V q8_0 cache: ",
                           "gguflow kv: zeroed-cache control: "})
    EXPECT_NE(eval.err.find(line), std::string::npos) << line << "\n" << eval.err;
  const Result quiet = sh("kv eval -m " + quote(odd.string()) + text + " --cache-types q8_0 -t 2 --json --quiet");
  ASSERT_EQ(quiet.status, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
  const Result spectrum = sh("kv spectrum -m " + quote(odd.string()) + text + " -t 2 --json -q");
  ASSERT_EQ(spectrum.status, 0) << spectrum.err;
  const JsonValue doc = parse_json(spectrum.out);
  EXPECT_EQ(doc["model"].string, odd.filename().string());
  EXPECT_EQ(spectrum.err, "");
}

// Bad values are refused by name before the model runs.
TEST(CliKvSweep, BadValuesAreClearErrors) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const std::string base = "kv eval -m " + stories() + " --text " + quote(data_path("text/eval.txt").string()) +
                           " --calib-text " + quote(data_path("text/calib.txt").string()) + " -t 1";
  const std::pair<std::string, std::string> cases[] = {
      {" --sweep 0.9,1.5", "--sweep: expected comma-separated thresholds in (0, 1], found '1.5' in '0.9,1.5'"},
      {" --sweep 0.9,", "--sweep: expected comma-separated thresholds in (0, 1], found '' in '0.9,'"},
      {" --sweep 0.9 --keys pre-rope,sideways", "--keys: expected 'post-rope' or 'pre-rope', found 'sideways'"},
      {" --sweep 0.9 --cache-types f16,q5_0",
       "--cache-types: expected a comma-separated list of f32, f16, q8_0, q4_0, found 'q5_0' in 'f16,q5_0'"},
      {" --sweep 0.9 --granularity block", "--granularity: expected 'layer' or 'head', found 'block'"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = sh(base + args);
    EXPECT_EQ(r.status, 1) << args << ": " << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << args << ": " << r.out;
  }
  const Result mixed = sh(base + " --sweep 0.9 -ctk q8_0");
  EXPECT_EQ(mixed.status, 2) << mixed.err;
  EXPECT_NE(mixed.err.find("expected no --kv-proj, -ctk or -ctv"), std::string::npos) << mixed.err;
  const Result no_calib = sh("kv eval -m " + stories() + " --text " + quote(data_path("text/eval.txt").string()) +
                             " --sweep 0.9 -t 1");
  EXPECT_NE(no_calib.status, 0);
  EXPECT_NE(no_calib.err.find("--calib-text is required"), std::string::npos) << no_calib.err;
  const Result help = sh("kv eval --help");
  for (const char* option : {"--sweep", "--keys", "--calib-text", "--svg", "--cache-types"})
    EXPECT_NE(help.out.find(option), std::string::npos) << option;
}

// ---- the other findings ----------------------------------------------------------------------

TEST(CliFindings, SynthVocabSetsNVocab) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const std::filesystem::path out = temp_dir() / "v.gguf";
  const Result r = sh("synth --arch llama --n-embd 64 --n-layer 1 --n-head 2 --n-ff 128 --type F32 --vocab " +
                      stories() + " -o " + quote(out.string()));
  ASSERT_EQ(r.status, 0) << r.err;
  const Result check = sh("tokenize -m " + quote(out.string()) + " -p Once --ids");
  EXPECT_EQ(check.out, "1 403\n") << check.err;
}

TEST(CliFindings, KvProjectionOnAGraphThatIgnoresItIsAnError) {
  GGUFLOW_REQUIRE_DATA(kStories);
  GGUFLOW_REQUIRE_DATA("text/calib.txt");
  const std::filesystem::path proj = temp_dir() / "p.kvproj.gguf";
  const Result calibrate = sh("kv calibrate -m " + stories() + " --text " + quote(data_path("text/calib.txt").string()) +
                              " --ctx 64 --rank 4 -t 1 -o " + quote(proj.string()));
  ASSERT_EQ(calibrate.status, 0) << calibrate.err;
  const Result r = sh("run -m " + stories() + " -p Once -n 2 -t 1 --kv-proj " + quote(proj.string()));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("reads none of this file's tensors"), std::string::npos) << r.err;
  const Result lowrank = sh("run " + quote((source_dir() / "graphs/decode-lowrank-kv.yaml").string()) + " -m " +
                            stories() + " -p Once -n 2 -t 1 --kv-proj " + quote(proj.string()));
  EXPECT_EQ(lowrank.status, 0) << lowrank.err;
}

TEST(CliFindings, TooManyThreadsIsOurWarningNotOneTbbs) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const Result r = sh("run -m " + stories() + " -p Once -n 2 -t 1000");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("TBB Warning"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gguflow: warning: --threads 1000"), std::string::npos) << r.err;
}

// Issue 21's acceptance command: 3,000 tokens through a 256-token context.
TEST(CliFindings, ContextShiftKeepsGenerating) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const Result r = sh("run -m " + stories() + " -p 'Once upon a time' -n 3000 -c 256 --context-shift --temp 0 -t 1");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("generated 3000 tokens"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("context shifts "), std::string::npos) << r.err;
  // Without it, the same run stops at the context with a notice.
  const Result stopped = sh("run -m " + stories() + " -p 'Once upon a time' -n 3000 -c 256 --temp 0 -t 1");
  ASSERT_EQ(stopped.status, 0) << stopped.err;
  EXPECT_NE(stopped.err.find("context full"), std::string::npos) << stopped.err;
  // Up to the first shift both runs are the same text.
  EXPECT_EQ(r.out.substr(0, stopped.out.size()), stopped.out);
}

// ---- the audit of 2026-12-06 ------------------------------------------------------------------

TEST(CliAudit, OutputThatCannotBeWrittenIsAnError) {
  GGUFLOW_REQUIRE_DATA(kStories);
  for (const std::string& command : std::vector<std::string>{"run -m " + stories() + " -p Once -n 4 -t 1", "inspect " + stories(),
                                    "detokenize -m " + stories() + " 300,301", "ops", "kernels --json"}) {
    const Result r = sh(command + " > /dev/full");
    EXPECT_EQ(r.status, 1) << command << ": " << r.err;
    EXPECT_NE(r.err.find("<stdout>: write failed"), std::string::npos) << command << ": " << r.err;
  }
}

TEST(CliAudit, AnOutputNamingAnInputIsRefused) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const auto dir = temp_dir();
  const auto model = dir / "m.gguf";
  std::filesystem::copy_file(data_path(kStories), model);
  std::filesystem::create_symlink(model, dir / "link.gguf");
  const std::string m = quote(model.string());
  const auto graph = dir / "g.yaml";
  std::filesystem::copy_file(source_dir() / "graphs" / "decode.yaml", graph);
  const std::string g = quote(graph.string());
  for (const std::string& command : std::vector<std::string>{"quantize " + m + " " + m + " Q8_0",
                                    "bench -m " + m + " --bandwidth-mib 4 -r 1 -p 8 -n 0 --graph " + g + " --json-file " + g,
                                    "quantize " + m + " " + quote((dir / "link.gguf").string()) + " Q8_0",
                                    "tensor " + m + " output_norm.weight -o " + m, "lower " + m + " -o " + m}) {
    const Result r = sh(command);
    EXPECT_EQ(r.status, 1) << command;
    EXPECT_NE(r.err.find("this is an input of the command"), std::string::npos) << command << ": " << r.err;
  }
  EXPECT_EQ(read_file(model), read_file(data_path(kStories)));
  EXPECT_EQ(read_file(graph), read_file(source_dir() / "graphs" / "decode.yaml"));
}

TEST(CliAudit, ModelArgumentCommandsReadGguflowModel) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const std::string env = "GGUFLOW_MODEL=" + stories();
  const Result inspect = sh("inspect", env);
  EXPECT_EQ(inspect.status, 0) << inspect.err;
  EXPECT_NE(inspect.out.find("architecture:  llama"), std::string::npos) << inspect.out;
  const Result tensor = sh("tensor output_norm.weight", env);  // the one argument is the tensor
  EXPECT_EQ(tensor.status, 0) << tensor.err;
  EXPECT_EQ(tensor.out.rfind("output_norm.weight [64] F32", 0), 0u) << tensor.out;
  const Result given = sh("inspect " + quote(data_path("models/stories260K-Q8_0.gguf").string()), env);
  EXPECT_NE(given.out.find("stories260K-Q8_0.gguf"), std::string::npos) << "an argument wins over the variable";
}

TEST(CliAudit, DetokenizeListsAreStrict) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const Result ok = sh("detokenize -m " + stories() + " '[300, 301]' 302");
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(ok.out, sh("detokenize -m " + stories() + " 300 301 302").out);
  for (const std::string ids : {"1,,2", "'1,2,'", "' '", "2x"}) {
    const Result r = sh("detokenize -m " + stories() + " " + ids);
    EXPECT_EQ(r.status, 2) << ids << ": " << r.err;
    EXPECT_EQ(r.err.find("detokenize: error: gguflow detokenize"), std::string::npos) << r.err;
  }
}

TEST(CliAudit, NoticesOfFileWritingCommandsGoToStderr) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const auto dir = temp_dir();
  const Result tensor = sh("tensor " + stories() + " output_norm.weight -o " + quote((dir / "t.f32").string()));
  EXPECT_EQ(tensor.status, 0) << tensor.err;
  EXPECT_EQ(tensor.out, "");
  EXPECT_NE(tensor.err.find("wrote "), std::string::npos) << tensor.err;
}

// Malformed or conflicting values exit 2 whichever part of the program notices them, and an
// option or argument that would be ignored is refused.
TEST(CliAudit, UsageErrorsExitTwoAndNothingGivenIsIgnored) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const std::string run = "run -m " + stories() + " -n 1 -t 1 ";
  for (const std::string& args : std::vector<std::string>{
           run + "-p x -f /dev/null", run + "-p x --temp -1", run + "-p x --top-p 2", run + "-p x --ctx -5",
           run + "-p x --chat --chat-template foo", run + "-p x --set n_layer", run + "--tokens 1,,2",
           run + "-p x --dump-logits /tmp/never.f32", run + "-p x --greedy 3", run + "--tokens 1,2 -p x",
           run + "-p x --system X", "embed -m " + stories() + " extra words", "kv",
           "kv calibrate -m " + stories() + " --rank 2 --energy 0.5 -o /tmp/never.gguf --text /dev/null",
           "kv calibrate -m " + stories() + " --rank 0 -o /tmp/never.gguf --text /dev/null",
           "bench -m " + stories() + " -t -1", "bench -m " + stories() + " -p -8", "bench -m " + stories() + " -o bogus",
           "embed -m " + stories() + " --format bogus", "embed -m " + stories() + " --pooling bogus",
           "embed -m " + stories() + " --normalize bogus", "embed -m " + stories() + " --batch-size 0",
           "lower " + stories() + " --set n_layer", "tensor " + stories() + " output_norm.weight --rows abc",
           "synth --arch foo --n-embd 64 --n-layer 1 --n-head 2 --n-ff 64 --n-vocab 300 --type F32 -o /tmp/never.gguf",
           "synth --arch llama --n-embd -32 --n-layer 1 --n-head 2 --n-ff 64 --n-vocab 300 --type F32 -o /tmp/never.gguf"}) {
    const Result r = sh(args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists("/tmp/never.f32"));
  EXPECT_FALSE(std::filesystem::exists("/tmp/never.gguf"));
}

TEST(CliAudit, BenchTakesZeroThreadsAsEveryCore) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const Result r = sh("bench -m " + stories() + " -p 8 -n 2 -r 1 --json", "GGUFLOW_THREADS=0");
  EXPECT_EQ(r.status, 0) << r.err;
}

// A special-token id past the vocabulary (not the -1 that means "none") is said, not dropped
// silently.
TEST(CliAudit, SpecialTokenIdsOutsideTheVocabularyAreWarnedAbout) {
  GGUFLOW_REQUIRE_DATA(kStories);
  auto source = GgufFile::open(data_path(kStories).string());
  const auto path = temp_dir() / "bos999.gguf";
  write_edited_model(*source, path, {"tokenizer.ggml.bos_token_id"},
                     [](GgufWriter& w) { w.set_u32("tokenizer.ggml.bos_token_id", 999); });
  const Result r = sh("tokenize -m " + quote(path.string()) + " -p Once --ids");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("metadata 'tokenizer.ggml.bos_token_id' is 999, outside the vocabulary of 512 tokens"),
            std::string::npos) << r.err;
}

}  // namespace
}  // namespace gguflow::test
