// `gguflow run` end to end through the built binary: text against llama2.c's golden story and
// llama.cpp's greedy generation, seeds, prompt sources, limits, bad input, --json, --chat.
#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/gguf/gguf_file.h"
#include "tests/support/json_value.h"
#include "tests/support/test_data.h"

namespace gguflow::test {
namespace {

constexpr const char* kStories = "models/stories260K.gguf";
constexpr const char* kQwenChat = "models/synth-qwen2-tiny-Q8_0.gguf";  // ChatML tokens

std::string quote(const std::string& word) {
  std::string q = "'";
  for (char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Result {
  int status = -1;
  std::string out, err;
};

// Runs `gguflow run ARGS...` (each word quoted) with one thread and no $GGUFLOW_MODEL;
// `stdin_command` (a shell command) feeds stdin through a pipe when given.
Result run(const std::vector<std::string>& words, const std::string& stdin_command = "",
           const std::string& env = "") {
  std::string command = "env -u GGUFLOW_MODEL " + env + " " +
                        quote((binary_dir() / "gguflow").string()) + " run --threads 1";
  for (const std::string& w : words) command += " " + quote(w);
  if (!stdin_command.empty()) command = stdin_command + " | " + command;
  Result r;
  r.status = run_command(command, &r.out, &r.err);
  return r;
}

std::string stories() { return data_path(kStories).string(); }

// llama.cpp's prompt-1 greedy text without the "<s> " its special rendering put first: the
// prompt "Once upon a time, there was a little girl" then 64 generated tokens.
std::string prompt1_text() {
  const std::string text = read_file(data_path("reference/generation/stories260K.prompt1.greedy64.txt"));
  EXPECT_EQ(text.rfind("<s> ", 0), 0u);
  return text.substr(4);
}
constexpr const char* kPrompt1 = "Once upon a time, there was a little girl";

TEST(RunCli, EmptyPromptGreedyIsLlama2cGoldenStory) {
  GGUFLOW_REQUIRE_DATA(kStories);
  GGUFLOW_REQUIRE_DATA("golden/stories260K.llama2c_greedy_expected.txt");
  const Result r = run({"--model", stories(), "--prompt", "", "-n", "200", "--temp", "0"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, read_file(data_path("golden/stories260K.llama2c_greedy_expected.txt")));
  // Timings go to stderr, not stdout.
  EXPECT_NE(r.err.find("prompt 1 tokens"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("generated 200 tokens"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("load "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tok/s"), std::string::npos) << r.err;
}

TEST(RunCli, PromptGreedyMatchesLlamaCppGeneration) {
  GGUFLOW_REQUIRE_DATA(kStories);
  GGUFLOW_REQUIRE_DATA("reference/generation/stories260K.prompt1.greedy64.json");
  const Result r = run({"--model", stories(), "--prompt", kPrompt1, "-n", "64", "--temp", "0"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, prompt1_text());  // the prompt echoed, then the continuation

  // The same run as JSON: ids and generated text equal llama.cpp's, field by field.
  const JsonValue expected = parse_json(
      read_file(data_path("reference/generation/stories260K.prompt1.greedy64.json")));
  const Result j = run({"--model", stories(), "--prompt", kPrompt1, "-n", "64", "--temp", "0",
                        "--json"});
  ASSERT_EQ(j.status, 0) << j.err;
  const JsonValue doc = parse_json(j.out);
  EXPECT_EQ(doc["prompt_ids"].ints(), expected["prompt_ids"].ints());
  EXPECT_EQ(doc["ids"].ints(), expected["generated_ids"].ints());
  EXPECT_EQ(doc["text"].string, expected["generated_text"].string);
  EXPECT_EQ(doc["stop"].string, "n_predict");
}

TEST(RunCli, ReadmeCommandTellsTheGoldenStory) {
  GGUFLOW_REQUIRE_DATA(kStories);
  GGUFLOW_REQUIRE_DATA("golden/stories260K.llama2c_greedy_expected.txt");
  // "Once upon a time" is how the BOS-only greedy story starts, so its continuation is that
  // story's next 64 tokens: a prefix of llama2.c's text, and of llama.cpp's prompt-1 text.
  const Result r = run({"--model", stories(), "--prompt", "Once upon a time", "-n", "64",
                        "--temp", "0"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string golden = read_file(data_path("golden/stories260K.llama2c_greedy_expected.txt"));
  EXPECT_NE(r.err.find("generated 64 tokens"), std::string::npos) << r.err;
  EXPECT_GT(r.out.size(), 150u);  // 68 tokens of about 3 bytes each
  EXPECT_EQ(golden.substr(0, r.out.size()), r.out);
  EXPECT_EQ(prompt1_text().substr(0, r.out.size()), r.out);
}

TEST(RunCli, SameSeedSameTextDifferentSeedsDiffer) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const auto sample = [](const char* seed) {
    const Result r = run({"--model", stories(), "--prompt", "Once upon a time", "-n", "48",
                          "--temp", "1.0", "--seed", seed, "--no-echo"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find(std::string("seed ") + seed), std::string::npos) << r.err;
    return r.out;
  };
  const std::string a = sample("7"), b = sample("7"), c = sample("8");
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(RunCli, EmptyPromptStartsFromBosAlone) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const Result r = run({"--model", stories(), "--prompt", "", "-n", "3", "--temp", "0", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const JsonValue doc = parse_json(r.out);
  EXPECT_EQ(doc["prompt_ids"].ints(), std::vector<int>{1});
  EXPECT_EQ(doc["ids"].ints(), (std::vector<int>{403, 407, 261}));  // golden ids 1..3
  EXPECT_EQ(doc["text"].string, "Once upon a");
}

TEST(RunCli, GenerationStopsAtEndOfGeneration) {
  GGUFLOW_REQUIRE_DATA(kQwenChat);
  // Random weights make every token about equally likely, so <|endoftext|> (2045) or
  // <|im_end|> (2047) comes up within a few hundred tokens (with seed 2: after 545).
  const Result r = run({"--model", data_path(kQwenChat).string(), "--prompt", "hello", "-n",
                        "1000", "--seed", "2", "--temp", "1", "--top-k", "0", "--top-p", "1",
                        "--min-p", "0", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const JsonValue doc = parse_json(r.out);
  EXPECT_EQ(doc["stop"].string, "eos");
  const std::vector<int> ids = doc["ids"].ints();
  EXPECT_LT(ids.size(), 1000u);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 2045), 0);  // the stop token is not emitted
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 2047), 0);
}

TEST(RunCli, PromptLongerThanContextIsOneLineError) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const Result r = run({"--model", stories(), "--prompt", kPrompt1, "--ctx", "8", "-n", "4"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("13 tokens do not fit in the context"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("8 free"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line expected: " << r.err;
}

TEST(RunCli, GenerationStopsAtTheContextLimitWithANotice) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const Result r = run({"--model", stories(), "--prompt", "Once upon a time", "--ctx", "32",
                        "-n", "100", "--temp", "0", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const JsonValue doc = parse_json(r.out);
  EXPECT_EQ(doc["stop"].string, "context");
  // 5 prompt tokens fill slots 0..4; each generated token but the last is fed back.
  EXPECT_EQ(doc["ids"].ints().size(), 32u - 5u + 1u);
  EXPECT_NE(r.err.find("context full (32 of 32 tokens"), std::string::npos) << r.err;
}

TEST(RunCli, InvalidUtf8PromptIsRejected) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const std::filesystem::path file = temp_dir() / "bad.txt";
  std::ofstream(file, std::ios::binary) << "Once \xC3\x28 upon";
  const Result r = run({"--model", stories(), "--prompt-file", file.string(), "-n", "4"});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("byte offset 5"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("UTF-8"), std::string::npos) << r.err;
}

TEST(RunCli, SpecialTokenTextIsPlainTextUnlessAsked) {
  GGUFLOW_REQUIRE_DATA(kStories);
  // <s> is stories260K's BOS; <|im_start|> is no token of it at all.
  const std::string prompt = "<s>Lily<|im_start|>";
  const Result plain = run({"--model", stories(), "--prompt", prompt, "-n", "2", "--temp", "0",
                            "--json"});
  ASSERT_EQ(plain.status, 0) << plain.err;
  const std::vector<int> plain_ids = parse_json(plain.out)["prompt_ids"].ints();
  ASSERT_FALSE(plain_ids.empty());
  EXPECT_EQ(plain_ids[0], 1);
  EXPECT_EQ(std::count(plain_ids.begin(), plain_ids.end(), 1), 1);  // "<s>" stayed text

  const Result special = run({"--model", stories(), "--prompt", prompt, "-n", "2", "--temp", "0",
                              "--json", "--special"});
  ASSERT_EQ(special.status, 0) << special.err;
  const std::vector<int> special_ids = parse_json(special.out)["prompt_ids"].ints();
  ASSERT_GE(special_ids.size(), 2u);
  EXPECT_EQ(special_ids[0], 1);
  EXPECT_EQ(special_ids[1], 1);  // "<s>" became BOS; the unknown text is still plain text
  EXPECT_EQ(std::count(special_ids.begin(), special_ids.end(), 1), 2);
  EXPECT_LT(special_ids.size(), plain_ids.size());
}

TEST(RunCli, ZeroTokensGeneratesNothing) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const Result echo = run({"--model", stories(), "--prompt", "Once upon a time", "-n", "0"});
  ASSERT_EQ(echo.status, 0) << echo.err;
  EXPECT_EQ(echo.out, "Once upon a time");
  EXPECT_NE(echo.err.find("generated 0 tokens"), std::string::npos) << echo.err;
  const Result quiet = run({"--model", stories(), "--prompt", "Once", "-n", "0", "--no-echo"});
  ASSERT_EQ(quiet.status, 0) << quiet.err;
  EXPECT_EQ(quiet.out, "");
}

TEST(RunCli, JsonIsOneValidDocument) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const Result r = run({"--model", stories(), "--prompt", "Once upon a time", "-n", "20",
                        "--temp", "0", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const JsonValue doc = parse_json(r.out);  // throws on anything but exactly one document
  EXPECT_EQ(doc["model"].string, stories());
  EXPECT_EQ(doc["mode"].string, "completion");
  EXPECT_FALSE(doc["kernels"]["name"].string.empty());
  EXPECT_FALSE(doc["kernels"]["target"].string.empty());
  EXPECT_EQ(doc["sampler"]["temperature"].number, 0.0);
  EXPECT_EQ(doc["prompt"].string, "Once upon a time");
  EXPECT_EQ(doc["ids"].ints().size(), 20u);
  EXPECT_EQ(doc["timings"]["prompt_tokens"].number, 5.0);
  EXPECT_EQ(doc["timings"]["generated_tokens"].number, 20.0);
  EXPECT_GT(doc["timings"]["load_ms"].number, 0.0);
  EXPECT_GT(doc["timings"]["generate_tokens_per_s"].number, 0.0);
  // The text is what the streaming run prints after the echoed prompt.
  const Result text = run({"--model", stories(), "--prompt", "Once upon a time", "-n", "20",
                           "--temp", "0"});
  EXPECT_EQ("Once upon a time" + doc["text"].string, text.out);
}

// A random-weight byte-level BPE model often ends its text inside a multi-byte character; the
// JSON document must still be valid UTF-8 (the broken bytes become U+FFFD). parse_json (nlohmann)
// refuses invalid UTF-8.
TEST(RunCli, JsonStaysValidUtf8WhenTheTextEndsMidCharacter) {
  const char* model = "models/synth-qwen2-tiny-Q8_0.gguf";
  GGUFLOW_REQUIRE_DATA(model);
  int replaced = 0;
  for (int seed = 1; seed <= 8; ++seed) {
    const Result r = run({"--model", data_path(model).string(), "--prompt", "Hello", "-n", "16",
                          "--seed", std::to_string(seed), "--json"});
    ASSERT_EQ(r.status, 0) << r.err;
    JsonValue doc;
    ASSERT_NO_THROW(doc = parse_json(r.out)) << "seed " << seed;
    if (doc["text"].string.find("\xEF\xBF\xBD") != std::string::npos) ++replaced;
  }
  EXPECT_GT(replaced, 0) << "no seed produced a broken character: the check above proved nothing";
}

TEST(RunCli, PromptFromStdinAndFile) {
  GGUFLOW_REQUIRE_DATA(kStories);
  GGUFLOW_REQUIRE_DATA("reference/generation/stories260K.prompt1.greedy64.txt");
  const Result piped = run({"--prompt", "-", "--model", stories(), "-n", "64", "--temp", "0"},
                           "printf '%s' " + quote(kPrompt1));
  ASSERT_EQ(piped.status, 0) << piped.err;
  EXPECT_EQ(piped.out, prompt1_text());

  const std::filesystem::path file = temp_dir() / "prompt.txt";
  std::ofstream(file, std::ios::binary) << kPrompt1;
  const Result from_file = run({"-f", file.string(), "--model", stories(), "-n", "64", "--temp", "0"});
  ASSERT_EQ(from_file.status, 0) << from_file.err;
  EXPECT_EQ(from_file.out, prompt1_text());
}

TEST(RunCli, ModelFromEnvironment) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const Result r = run({"--prompt", "", "-n", "1", "--json"}, "", "GGUFLOW_MODEL=" + quote(stories()));
  ASSERT_EQ(r.status, 0) << r.err;
  const JsonValue doc = parse_json(r.out);
  EXPECT_EQ(doc["model"].string, stories());
  EXPECT_EQ(doc["model_source"].string, "$GGUFLOW_MODEL");  // not "--model": the source is told
  EXPECT_FALSE(doc["random_weights"].boolean);
}

TEST(RunCli, GraphSamplerSectionSetsDefaultsAndFlagsOverride) {
  GGUFLOW_REQUIRE_DATA(kStories);
  // A graph that extends the shipped one and makes its sampler greedy.
  const std::filesystem::path graph = temp_dir() / "greedy.yaml";
  std::ofstream(graph) << "graph: greedy\nextends: "
                       << (source_dir() / "graphs" / "decode.yaml").string()
                       << "\nsampler:\n  temperature: 0\n  seed: 5\n";
  const Result greedy = run({graph.string(), "--model", stories(), "--prompt", kPrompt1, "-n", "64"});
  ASSERT_EQ(greedy.status, 0) << greedy.err;
  EXPECT_EQ(greedy.out, prompt1_text());
  EXPECT_NE(greedy.err.find("seed 5"), std::string::npos) << greedy.err;

  const Result hot = run({graph.string(), "--model", stories(), "--prompt", kPrompt1, "-n", "64",
                          "--temp", "1.5", "--top-k", "0", "--top-p", "1", "--min-p", "0", "--json"});
  ASSERT_EQ(hot.status, 0) << hot.err;
  const JsonValue doc = parse_json(hot.out);
  EXPECT_EQ(doc["sampler"]["temperature"].number, 1.5);
  EXPECT_EQ(doc["sampler"]["top_k"].number, 0.0);
  EXPECT_EQ(doc["sampler"]["seed"].number, 5.0);      // from the graph
  EXPECT_EQ(doc["sampler"]["min_p"].number, 0.0);
  EXPECT_NE(kPrompt1 + doc["text"].string, prompt1_text());

  const std::filesystem::path bad = temp_dir() / "bad_sampler.yaml";
  std::ofstream(bad) << "graph: bad\nextends: " << (source_dir() / "graphs" / "decode.yaml").string()
                     << "\nsampler:\n  temprature: 0\n";
  const Result error = run({bad.string(), "--model", stories(), "--prompt", "x", "-n", "1"});
  EXPECT_EQ(error.status, 1);
  EXPECT_NE(error.err.find("bad_sampler.yaml:4:15: sampler: unknown setting 'temprature'"),
            std::string::npos) << error.err;
}

TEST(RunCli, AGraphWithoutLogitsIsNotSampled) {
  GGUFLOW_REQUIRE_DATA(kStories);
  // embed.yaml says job: embed.
  const Result r = run({(source_dir() / "graphs" / "embed.yaml").string(), "--model", stories(),
                        "--prompt", "hi", "-n", "2"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("embed.yaml: graph 'embed' has job: embed: expected a graph with job: generate or none "
                       "(an embedding graph runs with gguflow embed)"),
            std::string::npos) << r.err;
  // A graph extending it without a job (jobs are not inherited) inherits decode.yaml's sampler
  // section, which reads a tensor the graph no longer outputs.
  const std::filesystem::path no_job = temp_dir() / "no_job.yaml";
  std::ofstream(no_job) << "graph: no_job\nextends: " << (source_dir() / "graphs" / "embed.yaml").string() << "\n";
  const Result inherited = run({no_job.string(), "--model", stories(), "--prompt", "hi", "-n", "2"});
  EXPECT_EQ(inherited.status, 1);
  EXPECT_NE(inherited.err.find("sampler: input: expected one of the graph's outputs"), std::string::npos)
      << inherited.err;
}

TEST(RunCli, TokensModeStillEvaluatesIds) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const std::filesystem::path logits = temp_dir() / "logits.f32";
  const Result r = run({"--model", stories(), "--tokens", "1,403", "--greedy", "4",
                        "--dump-logits", logits.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "407 261 378 432\n");  // golden ids 2..5
  EXPECT_EQ(std::filesystem::file_size(logits), 2u * 512u * 4u);
}

// --tokens takes argmaxes of the graph's output: an embedding was read as scores over token
// ids (a pooled vector's argmax printed as a token), and nan logits as token 0.
TEST(RunCli, TokensModeNeedsLogitsThatAreNumbers) {
  GGUFLOW_REQUIRE_DATA(kStories);
  // Without a job (jobs are not inherited), so that the output check is what refuses it.
  const std::filesystem::path no_job = temp_dir() / "no_job.yaml";
  std::ofstream(no_job) << "graph: no_job\nextends: " << (source_dir() / "graphs" / "embed.yaml").string() << "\n";
  const Result embedding = run({no_job.string(), "--model", stories(), "--tokens", "1,403,407", "--greedy", "3"});
  EXPECT_EQ(embedding.status, 1);
  EXPECT_EQ(embedding.out, "");
  EXPECT_NE(embedding.err.find("expected the graph's output 'embedding' to be logits [512, T] to choose tokens "
                               "from, found 64 values per sequence (a pooled output)"),
            std::string::npos) << embedding.err;

  // The final norm's weights all nan: every logit is nan.
  const auto model = GgufFile::open(stories());
  const GgufTensorInfo* norm = model->find_tensor("output_norm.weight");
  ASSERT_NE(norm, nullptr);
  ASSERT_EQ(norm->type, 0u);  // F32
  std::string bytes = read_file(stories());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (uint64_t i = 0; i < norm->n_elements(); ++i)
    std::memcpy(bytes.data() + model->data_offset() + norm->offset + 4 * i, &nan, 4);
  const std::filesystem::path nan_model = temp_dir() / "nan-norm.gguf";
  std::ofstream(nan_model, std::ios::binary) << bytes;
  const Result nan_logits = run({"--model", nan_model.string(), "--tokens", "1,403", "--greedy", "2"});
  EXPECT_EQ(nan_logits.status, 1);
  EXPECT_EQ(nan_logits.out, "");
  EXPECT_NE(nan_logits.err.find("the model's logits hold nan"), std::string::npos) << nan_logits.err;
}

TEST(RunCli, ChatFormatsWithTheModelsTemplate) {
  GGUFLOW_REQUIRE_DATA(kQwenChat);
  // synth-qwen2-tiny has a dummy ChatML vocabulary: <|endoftext|> 2045, <|im_start|> 2046,
  // <|im_end|> 2047 (DATA.md section 3); its weights are random, so only the format is checked.
  const Result r = run({"--model", data_path(kQwenChat).string(), "--chat", "--system", "be brief",
                        "--prompt", "hello", "-n", "3", "--seed", "1", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const JsonValue doc = parse_json(r.out);
  EXPECT_EQ(doc["mode"].string, "chat (chatml)");
  const std::vector<int> ids = doc["prompt_ids"].ints();
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids.front(), 2046);                                  // no BOS for this vocabulary
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 2046), 3);        // system, user, assistant
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 2047), 2);        // after system and user

  const Result no_template = run({"--model", stories(), "--chat", "--prompt", "hi"});
  EXPECT_EQ(no_template.status, 1);
  EXPECT_NE(no_template.err.find("no chat template"), std::string::npos) << no_template.err;
}

// Special-token text inside a message is the message's text unless --special: "<|im_end|>" in a
// user's message closed the turn (two 2047s where the template writes one).
TEST(RunCli, ChatMessagesKeepSpecialTokenTextLiteral) {
  GGUFLOW_REQUIRE_DATA(kQwenChat);
  const auto im_ends = [](const Result& r) {
    const std::vector<int> ids = parse_json(r.out)["prompt_ids"].ints();
    return std::count(ids.begin(), ids.end(), 2047);
  };
  const std::vector<std::string> words = {"--model", data_path(kQwenChat).string(), "--chat", "--prompt",
                                          "hi<|im_end|>", "-n", "1", "--temp", "0", "--json"};
  const Result literal = run(words);
  ASSERT_EQ(literal.status, 0) << literal.err;
  EXPECT_EQ(im_ends(literal), 1);
  std::vector<std::string> special = words;
  special.push_back("--special");
  const Result parsed = run(special);
  ASSERT_EQ(parsed.status, 0) << parsed.err;
  EXPECT_EQ(im_ends(parsed), 2);
}

// A line that cannot be a turn ends the chat with an error (exit 1), its offset in the line.
TEST(RunCli, InteractiveChatEndsWithAnErrorOnABadLine) {
  GGUFLOW_REQUIRE_DATA(kQwenChat);
  const Result r = run({"--model", data_path(kQwenChat).string(), "--chat", "--interactive", "-n", "2", "--temp", "0"},
                       "printf 'hi\\n\\377\\nmore\\n'");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("gguflow run: error: chat message: byte offset 0: expected valid UTF-8, found byte 0xFF"),
            std::string::npos) << r.err;
}

TEST(RunCli, InteractiveChatTakesTurnsFromStdin) {
  GGUFLOW_REQUIRE_DATA(kQwenChat);
  const Result r = run({"--model", data_path(kQwenChat).string(), "--chat", "--interactive",
                        "-n", "4", "--temp", "0", "--no-echo"},
                       "printf 'hello\\n\\nagain\\n/exit\\nignored\\n'");
  ASSERT_EQ(r.status, 0) << r.err;
  // Two replies, each ended by a line break; prompts "> " on stderr: before each of the
  // three turns read and the empty line.
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2) << r.out;
  size_t prompts = 0;
  for (size_t at = r.err.find("> "); at != std::string::npos; at = r.err.find("> ", at + 2)) ++prompts;
  EXPECT_EQ(prompts, 4u) << r.err;
  EXPECT_NE(r.err.find("generated"), std::string::npos) << r.err;
}

// ---- hardening (issue 23): bounds on numeric options and the KV cache ------------------------

// `status`: 1 for bad input, 2 for a usage error (docs/CLI.md).
void expect_one_line_error(const Result& r, const std::string& expected, int status = 1) {
  EXPECT_EQ(r.status, status) << r.err;
  EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(RunHardening, OutOfRangeNumbersAreRefusedNamingTheOption) {
  GGUFLOW_REQUIRE_DATA(kStories);
  // 2^62: the KV cache size wrapped and the caches were written out of bounds.
  expect_one_line_error(run({"--model", stories(), "--prompt", "x", "-n", "1", "--ctx", "4611686018427387904"}),
                        "option '--ctx': expected an integer from 0 to 16777216", 2);
  // 2^40: a bare std::bad_alloc before.
  expect_one_line_error(run({"--model", stories(), "--prompt", "x", "-n", "1", "--ctx", "1099511627776"}),
                        "option '--ctx': expected an integer from 0 to 16777216", 2);
  expect_one_line_error(run({"--model", stories(), "--prompt", "x", "-n", "-2"}),
                        "option '--n-predict': expected an integer from -1 to", 2);
  expect_one_line_error(run({"--model", stories(), "--prompt", "x", "-n", "1", "--threads", "4294967297"}),
                        "option '--threads': expected an integer from 0 to 4096, found 4294967297", 2);
  expect_one_line_error(run({"--model", stories(), "--tokens", "1,2", "--greedy", "-1"}),
                        "option '--greedy': expected an integer from 0 to", 2);
}

TEST(RunHardening, KvCacheTooLargeForMemoryIsAClearError) {
  GGUFLOW_REQUIRE_DATA(kStories);
#if defined(__SANITIZE_ADDRESS__)
  // The Release pass runs this check; a sanitized binary cannot start under the limit at all.
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of shadow address space, so a sanitized "
                  "gguflow cannot start under the address-space limit (ulimit -v) this test sets";
#endif
  // The largest --ctx allowed (2^24) needs 20 GiB of KV cache for this model; with 3 GB of
  // address space the allocation fails and must be reported, not leak std::bad_alloc.
  Result r;
  const std::string command = "ulimit -v 3000000; env -u GGUFLOW_MODEL " + quote((binary_dir() / "gguflow").string()) +
                              " run --threads 1 --model " + quote(stories()) + " --prompt x -n 1 --ctx 16777216";
  r.status = run_command("bash -c " + quote(command), &r.out, &r.err);
  expect_one_line_error(r, "KV cache of 20480 MiB could not be allocated (--ctx 16777216");
}

TEST(RunHardening, ModelWithABillionLayersFailsAtOnce) {
  GGUFLOW_REQUIRE_DATA("malformed/tiny_block_count_1e9.gguf");
  expect_one_line_error(run({"--model", data_path("malformed/tiny_block_count_1e9.gguf").string(), "--prompt", "x", "-n", "2"}),
                        "repeat: count 1000000000 is more than the limit of 65536 (set GGUFLOW_MAX_REPEAT");
}

TEST(RunHardening, ABrokenPluginInThePluginPathDoesNotStopARun) {
  GGUFLOW_REQUIRE_DATA(kStories);
  GGUFLOW_REQUIRE_DATA("malformed/plugin_dir/libgguflow-kernels-tiny.so");
  const Result r = run({"--model", stories(), "--prompt", "x", "-n", "2"}, "",
                       "GGUFLOW_PLUGIN_PATH=" + data_path("malformed/plugin_dir").string());
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST(RunHardening, ADirectoryAsAnInputFileIsNamedNotALeakedStreamError) {
  GGUFLOW_REQUIRE_DATA(kStories);
  const std::string dir = temp_dir().string();
  // Before: "unexpected error: basic_filebuf::underflow error reading the file: Is a directory".
  expect_one_line_error(run({"--model", stories(), "--prompt-file", dir, "-n", "1"}),
                        dir + ": cannot read the prompt file: expected a regular file, found a directory");
  expect_one_line_error(run({dir, "--model", stories(), "--prompt", "x", "-n", "1"}),
                        dir + ": cannot read the graph file: expected a regular file, found a directory");
}

}  // namespace
}  // namespace gguflow::test
