// graphs/embed.yaml on stories260K, in-process: the lowered graph has no lm-head; the per-token
// states it pools are the model's real final hidden states (times output.weight they give
// llama.cpp's logits); pooling and normalisation identities; reset between texts; truncation;
// the default pooling from {arch}.pooling_type.
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "ops/error.h"
#include "runtime/embed/embedder.h"
#include "runtime/gguf/gguf_writer.h"
#include "runtime/graph/load.h"
#include "runtime/graph/writers.h"
#include "tests/support/edited_model.h"
#include "tests/support/error_of.h"
#include "runtime/plugins/kernel_plugins.h"
#include "tests/support/test_data.h"

namespace gguflow::embed {
namespace {

constexpr const char* kModel = "models/stories260K.gguf";
constexpr int64_t kDim = 64;  // stories260K n_embd

const GguflowKernels& kernels() {
  plugins::SelectOptions options;
  options.search_dirs = {test::binary_dir()};
  return *plugins::select_kernels(options).table;
}

std::string embed_graph_path() { return (test::source_dir() / "graphs" / "embed.yaml").string(); }

std::shared_ptr<const GgufFile> model() { return GgufFile::open(test::data_path(kModel).string()); }

Embedder make(const std::string& pooling, const std::string& normalize, int64_t n_ctx = 0,
              std::shared_ptr<const GgufFile> file = nullptr) {
  EmbedderOptions o;
  o.graph_path = embed_graph_path();
  o.pooling = pooling;
  o.normalize = normalize;
  o.session.n_threads = 2;
  o.session.n_ctx = n_ctx;
  return Embedder(file ? file : model(), o, kernels());
}

const std::vector<std::string> kTexts = {
    "Once upon a time, there was a little girl named Lily.",
    "She liked to play outside in the sun.",
    "One day, she saw a big dog.",
    "The dog was sad because it lost its ball.",
};

double norm(const float* v, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += double(v[i]) * v[i];
  return std::sqrt(s);
}

// Column means of a [rows][kDim] block.
std::vector<double> mean_rows(const std::vector<float>& rows) {
  const int64_t n = static_cast<int64_t>(rows.size()) / kDim;
  std::vector<double> m(kDim, 0.0);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t i = 0; i < kDim; ++i) m[i] += rows[r * kDim + i];
  for (double& x : m) x /= static_cast<double>(n);
  return m;
}

TEST(EmbedGraph, LoweredGraphHasNoLmHead) {
  GGUFLOW_REQUIRE_DATA(kModel);
  const auto file = model();
  const graph::Graph embed = graph::load_graph(embed_graph_path(), file);
  const graph::Graph decode =
      graph::load_graph((test::source_dir() / "graphs" / "decode.yaml").string(), file);

  EXPECT_EQ(embed.find_node("lm_head"), -1);
  EXPECT_EQ(embed.find_tensor("logits"), -1);
  // No node but the token embedding lookup reads the lm-head's weights (stories260K has its own
  // output.weight; tied models read token_embd.weight).
  for (const graph::Node& node : embed.nodes)
    for (const auto& w : node.weights) {
      if (!w) continue;
      EXPECT_NE(w->tensor, "output.weight") << node.name;
      if (w->tensor == "token_embd.weight") {
        EXPECT_STREQ(node.schema->name, "embed") << node.name;
      }
    }
  // Exactly decode's nodes, in order, without lm_head, then pool and normalize.
  std::vector<std::string> expected;
  for (const graph::Node& node : decode.nodes)
    if (node.name != "lm_head") expected.push_back(node.name);
  ASSERT_EQ(expected.size() + 1, decode.nodes.size()) << "decode.yaml has no lm_head node";
  expected.push_back("pool");
  expected.push_back("normalize");
  std::vector<std::string> got;
  for (const graph::Node& node : embed.nodes) got.push_back(node.name);
  EXPECT_EQ(got, expected);
  // Pool reads the output of output_norm; the graph's one output is the normalised vector.
  const graph::Node& pool = embed.nodes[embed.find_node("pool")];
  EXPECT_EQ(embed.tensors[pool.inputs[0]].producer, embed.find_node("output_norm"));
  ASSERT_EQ(embed.outputs.size(), 1u);
  EXPECT_EQ(embed.tensors[embed.outputs[0]].producer, embed.find_node("normalize"));
  EXPECT_EQ(embed.tensors[embed.outputs[0]].shape.dims, (std::vector<int64_t>{kDim, 1}));

  const std::string lowered = graph::lowered_yaml(embed);
  EXPECT_EQ(lowered.find("lm_head"), std::string::npos);
  EXPECT_EQ(lowered.find("{tensor: output.weight"), std::string::npos);  // not attn_output
  EXPECT_NE(lowered.find("op: pool"), std::string::npos);
}

// The states `--pooling none --normalize none` returns, times output.weight, are the logits
// llama.cpp computed for the same tokens (reference/logits/stories260K.prompt1): the embedding
// graph pools the model's real final normed hidden states.
TEST(EmbedModel, TokenStatesGiveLlamaCppLogits) {
  GGUFLOW_REQUIRE_DATA(kModel);
  GGUFLOW_REQUIRE_DATA("reference/logits/stories260K.prompt1.json");
  std::ifstream json(test::data_path("reference/logits/stories260K.prompt1.json"));
  std::stringstream js;
  js << json.rdbuf();
  const std::string meta = js.str();
  const size_t at = meta.find('[', meta.find("\"tokens\""));
  ASSERT_NE(at, std::string::npos);
  std::vector<int32_t> tokens;
  std::istringstream ids(meta.substr(at + 1, meta.find(']', at) - at - 1));
  for (std::string id; std::getline(ids, id, ',');) tokens.push_back(std::stoi(id));
  ASSERT_EQ(tokens.size(), 13u);
  const int64_t n_vocab = 512;
  std::vector<float> ref(tokens.size() * n_vocab);
  std::ifstream bin(test::data_path("reference/logits/stories260K.prompt1.bin"), std::ios::binary);
  bin.read(reinterpret_cast<char*>(ref.data()), static_cast<std::streamsize>(ref.size() * sizeof(float)));
  ASSERT_TRUE(bin.good());

  const auto file = model();
  Embedder e = make("none", "none", 0, file);
  ASSERT_TRUE(e.per_token());
  const Embedding states = e.embed_tokens(tokens);
  ASSERT_EQ(states.n_rows, 13);
  const GgufTensorInfo& w = file->tensor("output.weight");  // F32 [64, 512]: a row per token id
  ASSERT_EQ(w.dims, (std::vector<uint64_t>{kDim, static_cast<uint64_t>(n_vocab)}));
  const float* wv = reinterpret_cast<const float*>(file->tensor_bytes(w).data());
  double err = 0, ref_norm = 0;
  for (int64_t t = 0; t < 13; ++t)
    for (int64_t v = 0; v < n_vocab; ++v) {
      double logit = 0;
      for (int64_t i = 0; i < kDim; ++i) logit += double(states.values[t * kDim + i]) * wv[v * kDim + i];
      const double r = ref[t * n_vocab + v];
      err += (logit - r) * (logit - r);
      ref_norm += r * r;
    }
  EXPECT_LT(std::sqrt(err / ref_norm), 1e-4);
}

TEST(EmbedModel, PoolingNoneThenMeanEqualsPoolingMean) {
  GGUFLOW_REQUIRE_DATA(kModel);
  Embedder none = make("none", "none");
  Embedder mean_raw = make("mean", "none");
  Embedder mean_l2 = make("mean", "l2");
  for (const std::string& text : kTexts) {
    const Embedding rows = none.embed(text);
    ASSERT_EQ(rows.n_rows, rows.n_tokens);
    ASSERT_GT(rows.n_rows, 1);
    const std::vector<double> m = mean_rows(rows.values);
    const Embedding raw = mean_raw.embed(text);
    const Embedding l2 = mean_l2.embed(text);
    ASSERT_EQ(raw.n_rows, 1);
    double m_norm = 0;
    for (double x : m) m_norm += x * x;
    m_norm = std::sqrt(m_norm);
    for (int64_t i = 0; i < kDim; ++i) {
      // A float mean against a double one: a few ulps of values up to ~10 (1 ulp of 8 is 1e-6).
      EXPECT_NEAR(raw.values[i], m[i], 1e-6 * std::max(1.0, std::abs(m[i]))) << text << " [" << i << "]";
      EXPECT_NEAR(l2.values[i], m[i] / m_norm, 1e-6) << text << " [" << i << "]";
    }
  }
}

TEST(EmbedModel, FirstLastAndClsPickRowsOfPoolingNone) {
  GGUFLOW_REQUIRE_DATA(kModel);
  Embedder none = make("none", "none");
  Embedder first = make("first", "none"), cls = make("cls", "none"), last = make("last", "none");
  const Embedding rows = none.embed(kTexts[0]);
  const float* row0 = rows.values.data();
  const float* row_last = rows.values.data() + (rows.n_rows - 1) * kDim;
  const Embedding f = first.embed(kTexts[0]), c = cls.embed(kTexts[0]), l = last.embed(kTexts[0]);
  for (int64_t i = 0; i < kDim; ++i) {
    EXPECT_EQ(f.values[i], row0[i]);
    EXPECT_EQ(c.values[i], row0[i]);
    EXPECT_EQ(l.values[i], row_last[i]);
  }
}

TEST(EmbedModel, NormalisedVectorsHaveUnitNorm) {
  GGUFLOW_REQUIRE_DATA(kModel);
  for (const char* pooling : {"mean", "sum", "first", "last", "none"}) {
    Embedder e = make(pooling, "l2");
    for (const std::string& text : kTexts) {
      const Embedding v = e.embed(text);
      for (int64_t r = 0; r < v.n_rows; ++r)
        EXPECT_NEAR(norm(v.values.data() + r * kDim, kDim), 1.0, 1e-6) << pooling << ": " << text;
    }
  }
}

TEST(EmbedModel, SumAndMeanNormaliseToTheSameVector) {
  GGUFLOW_REQUIRE_DATA(kModel);
  Embedder sum = make("sum", "l2"), mean = make("mean", "l2");
  Embedder sum_raw = make("sum", "none"), mean_raw = make("mean", "none");
  for (const std::string& text : kTexts) {
    const Embedding s = sum.embed(text), m = mean.embed(text);
    for (int64_t i = 0; i < kDim; ++i) EXPECT_NEAR(s.values[i], m.values[i], 1e-6) << text;
    // And the raw sum really is T times the raw mean (not already normalised).
    const Embedding sr = sum_raw.embed(text), mr = mean_raw.embed(text);
    for (int64_t i = 0; i < kDim; ++i)
      EXPECT_NEAR(sr.values[i], mr.values[i] * sr.n_tokens, 1e-4 * std::fabs(sr.values[i]) + 1e-5);
  }
}

// One Session serves every text: the reset between texts must leave no trace, so a shared
// embedder in any order gives exactly what a fresh embedder per text gives.
TEST(EmbedModel, SharedSessionOrderAndFreshSessionsAgree) {
  GGUFLOW_REQUIRE_DATA(kModel);
  std::vector<std::vector<float>> fresh;
  for (const std::string& text : kTexts) fresh.push_back(make("mean", "l2").embed(text).values);
  Embedder shared = make("mean", "l2");
  for (size_t k = 0; k < kTexts.size(); ++k)
    EXPECT_EQ(shared.embed(kTexts[k]).values, fresh[k]) << "forward " << k;
  for (size_t k = kTexts.size(); k-- > 0;)
    EXPECT_EQ(shared.embed(kTexts[k]).values, fresh[k]) << "reverse " << k;
}

TEST(EmbedModel, LongTextIsTruncatedToTheContext) {
  GGUFLOW_REQUIRE_DATA(kModel);
  Embedder small = make("mean", "l2", 8);
  EXPECT_EQ(small.max_tokens(), 8);
  const std::vector<int32_t> ids = small.tokenize(kTexts[0]);
  ASSERT_GT(ids.size(), 8u);
  const Embedding cut = small.embed(kTexts[0]);
  EXPECT_TRUE(cut.truncated());
  EXPECT_EQ(cut.n_tokens, 8);
  EXPECT_EQ(cut.n_tokens_input, static_cast<int64_t>(ids.size()));
  Embedder big = make("mean", "l2");
  const Embedding prefix = big.embed_tokens(std::vector<int32_t>(ids.begin(), ids.begin() + 8));
  EXPECT_FALSE(prefix.truncated());
  EXPECT_EQ(cut.values, prefix.values);
}

TEST(EmbedModel, BadPoolingOrNormalizeIsAnError) {
  GGUFLOW_REQUIRE_DATA(kModel);
  EXPECT_THROW(make("max", ""), Error);
  EXPECT_THROW(make("", "l1"), Error);
}

// A copy of stories260K with llama.pooling_type set: the graph's default pooling follows it.
std::string with_pooling_type(uint32_t type) {
  const auto src = model();
  const std::string path = (test::temp_dir() / ("pooling" + std::to_string(type) + ".gguf")).string();
  test::write_edited_model(*src, path, {}, [&](GgufWriter& w) { w.set_u32("llama.pooling_type", type); });
  return path;
}

TEST(EmbedModel, DefaultPoolingFollowsModelMetadata) {
  GGUFLOW_REQUIRE_DATA(kModel);
  EXPECT_EQ(make("", "").pooling(), "mean");  // stories260K has no pooling_type
  EXPECT_EQ(make("", "").normalize(), "l2");
  const auto last_model = GgufFile::open(with_pooling_type(3));
  Embedder by_metadata = make("", "none", 0, last_model);
  EXPECT_EQ(by_metadata.pooling(), "last");
  Embedder explicit_last = make("last", "none");
  EXPECT_EQ(by_metadata.embed(kTexts[1]).values, explicit_last.embed(kTexts[1]).values);
  // --pooling overrides the metadata.
  EXPECT_EQ(make("sum", "none", 0, last_model).pooling(), "sum");
  // Rank pooling (4) is not something a decoder graph can do: an error naming the value.
  const auto rank_model = GgufFile::open(with_pooling_type(4));
  try {
    make("", "", 0, rank_model);
    ADD_FAILURE() << "expected an error for pooling_type 4";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'4'"), std::string::npos) << e.what();
  }
}

// Batching on a decoder (causal attention, rope, SwiGLU, row-wise elementwise kernels): the
// texts as one ragged step give exactly the vectors each gives alone (issue 17), also for the
// per-token output (pooling none) and with the thread split of 1 and of 2 threads.
TEST(EmbedModel, BatchedDecoderEmbeddingsAreBitIdentical) {
  GGUFLOW_REQUIRE_DATA(kModel);
  for (const std::string pooling : {"mean", "last", "none"}) {
    for (int threads : {1, 2}) {
      EmbedderOptions o;
      o.graph_path = embed_graph_path();
      o.pooling = pooling;
      o.session.n_threads = threads;
      Embedder alone(model(), o, kernels());
      o.batch_tokens = 1024;
      Embedder batched(model(), o, kernels());
      std::vector<std::vector<int32_t>> texts;
      for (const std::string& t : kTexts) texts.push_back(alone.tokenize(t));
      const std::vector<Embedding> got = batched.embed_batch(texts);
      ASSERT_EQ(got.size(), texts.size());
      for (size_t i = 0; i < texts.size(); ++i)
        EXPECT_EQ(got[i].values, alone.embed_tokens(texts[i]).values)
            << "text " << i << ", pooling " << pooling << ", " << threads << " threads";
    }
  }
}

// The session's ragged step refuses what it cannot hold, naming the limit.
TEST(EmbedModel, RaggedStepLimitsAreClearErrors) {
  GGUFLOW_REQUIRE_DATA(kModel);
  auto g = std::make_shared<const graph::Graph>(graph::load_graph(embed_graph_path(), model(), {}));
  exec::SessionOptions o;
  o.n_ctx = 16;
  o.max_batch = 64;
  o.max_sequences = 64;
  exec::Session session(g, kernels(), o);
  EXPECT_EQ(session.max_batch(), 64);
  std::vector<float> out;
  const std::vector<int32_t> long_text(17, 1);
  const std::span<const int32_t> one[] = {long_text};
  EXPECT_EQ(test::error_of([&] { session.evaluate_sequences(one, out); }),
            "sequence 0 has 17 tokens: expected 1 to 16 (--ctx)");
  const std::vector<int32_t> text(16, 1);
  const std::span<const int32_t> five[] = {text, text, text, text, text};
  EXPECT_EQ(test::error_of([&] { session.evaluate_sequences(five, out); }),
            "80 tokens in one step: expected at most 64 (the batch budget)");
  const std::vector<int32_t> bad = {1, 100000};
  const std::span<const int32_t> bad_ids[] = {bad};
  EXPECT_NE(test::error_of([&] { session.evaluate_sequences(bad_ids, out); }).find("token id 100000"),
            std::string::npos);
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace gguflow::embed
