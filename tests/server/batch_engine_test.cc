// Continuous batching keeps every request's output its own: requests decoded together in one
// engine (several slots, 2 threads, prompts chunked beside decoding neighbours, more requests
// than slots so some wait and join later) produce exactly the text each produces alone (one
// slot, 1 thread), greedy and seeded alike. Models: llama (stories260K, a real tokenizer),
// qwen2 (Q8_0, biases) and gemma2 (a 16-token sliding window ring per slot).
// Also: cancellation frees the slot, stop strings end a reply, max_tokens and the context end it
// with "length".
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "runtime/server/api_error.h"
#include "runtime/server/batch_engine.h"
#include "runtime/server/served_model.h"
#include "tests/support/test_data.h"

namespace gguflow::server {
namespace {

using namespace std::chrono_literals;

struct Reply {
  std::string text;
  FinishReason reason = FinishReason::kError;
  int64_t completion_tokens = 0;
  bool operator==(const Reply&) const = default;
};

Reply wait_for(GenerationJob& job) {
  Reply r;
  for (;;) {
    const JobUpdate u = job.take(1000ms);
    r.text += u.text;
    if (u.finished) {
      r.reason = *u.finished;
      r.completion_tokens = u.completion_tokens;
      return r;
    }
  }
}

ModelOptions options_for(const std::string& model, int64_t slots, int threads,
                         std::optional<ops::KvCacheType> cache = std::nullopt) {
  ModelOptions o;
  o.cache_type_k = o.cache_type_v = cache;
  o.model_path = test::data_path("models/" + model).string();
  o.n_slots = slots;
  o.n_threads = threads;
  o.n_ctx = 128;
  return o;
}

// Prompts of different lengths (so chunks of one overlap the decoding of others) and settings.
std::vector<JobSpec> specs(const ServedModel& model) {
  std::vector<JobSpec> out;
  const std::vector<std::string> texts = {
      "Once upon a time",
      "The little dog ran to the park and saw a big red ball. He wanted to play with it, so he",
      "Lily",
      "One day, a girl named Sue went to the store with her mom. They bought apples, bread and "
      "milk. On the way home, Sue saw a cat",
      "The sun",
      "Tom and his friend built a tall tower of blocks. Then the tower fell and",
  };
  for (size_t i = 0; i < texts.size(); ++i) {
    JobSpec s;
    s.prompt = model.tokenizer().encode(texts[i]);
    s.sampler.temperature = i % 3 == 2 ? 0.8f : 0.0f;  // two seeded samplers among greedy ones
    s.sampler.seed = 1000 + i;
    s.max_tokens = 20 + static_cast<int64_t>(i) * 3;
    out.push_back(std::move(s));
  }
  return out;
}

struct InvarianceCase {
  std::string model;
  std::optional<ops::KvCacheType> cache;  // -ctk/-ctv; nullopt: f32
};

class BatchInvariance : public ::testing::TestWithParam<InvarianceCase> {};

TEST_P(BatchInvariance, RequestsTogetherMatchEachAlone) {
  const InvarianceCase& c = GetParam();
  GGUFLOW_REQUIRE_DATA("models/" + c.model);
  std::vector<Reply> alone;
  {
    ServedModel model(options_for(c.model, 1, 1, c.cache));
    Metrics metrics(1);
    BatchEngine engine(*model.session(), model.tokenizer(), metrics);
    for (JobSpec& s : specs(model)) {
      auto job = std::make_shared<GenerationJob>(std::move(s));
      engine.submit(job);
      alone.push_back(wait_for(*job));
    }
  }
  ServedModel model(options_for(c.model, 4, 2, c.cache));
  Metrics metrics(4);
  EngineOptions engine_options;
  engine_options.prefill_chunk = 7;  // prompts arrive in several chunks beside decoding rows
  BatchEngine engine(*model.session(), model.tokenizer(), metrics, engine_options);
  std::vector<std::shared_ptr<GenerationJob>> jobs;
  for (JobSpec& s : specs(model)) {
    jobs.push_back(std::make_shared<GenerationJob>(std::move(s)));
    engine.submit(jobs.back());  // 6 requests, 4 slots: two wait and join mid-way
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Reply together = wait_for(*jobs[i]);
    EXPECT_EQ(together, alone[i]) << "request " << i << ": alone \"" << alone[i].text
                                  << "\", together \"" << together.text << "\"";
    EXPECT_GT(together.completion_tokens, 0);
  }
  // The gauge follows at the end of the step that finished the last reply.
  for (int i = 0; i < 200 && metrics.slots_in_use() != 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(metrics.slots_in_use(), 0);
}

// gemma2-tiny's 48-value cache rows are not whole q8_0 blocks: f16 there.
INSTANTIATE_TEST_SUITE_P(Models, BatchInvariance,
                         ::testing::Values(InvarianceCase{"stories260K.gguf", std::nullopt},
                                           InvarianceCase{"synth-qwen2-tiny-Q8_0.gguf", std::nullopt},
                                           InvarianceCase{"synth-gemma2-tiny-Q4_K_M.gguf", std::nullopt},
                                           InvarianceCase{"stories260K.gguf", ops::KvCacheType::kQ8_0},
                                           InvarianceCase{"synth-qwen2-tiny-Q8_0.gguf", ops::KvCacheType::kQ8_0},
                                           InvarianceCase{"synth-gemma2-tiny-Q4_K_M.gguf", ops::KvCacheType::kF16}),
                         [](const auto& info) {
                           std::string name = info.param.model.substr(0, info.param.model.find('.'));
                           if (info.param.cache) name += std::string("_") + ops::kv_cache_type_name(*info.param.cache);
                           for (char& c : name)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

// An engine over stories260K (128-token slots, 1 thread) and the requests the tests send it.
struct StoriesEngine {
  explicit StoriesEngine(int64_t slots)
      : model(options_for("stories260K.gguf", slots, 1)),
        metrics(slots),
        engine(*model.session(), model.tokenizer(), metrics) {}

  // A greedy request continuing `text` until the context is full.
  JobSpec greedy(const std::string& text) const {
    JobSpec spec;
    spec.prompt = model.tokenizer().encode(text);
    spec.sampler.temperature = 0;
    spec.ignore_eos = true;
    return spec;
  }
  std::shared_ptr<GenerationJob> submit(const JobSpec& spec) {
    auto job = std::make_shared<GenerationJob>(spec);
    engine.submit(job);
    return job;
  }
  Reply run(const JobSpec& spec) { return wait_for(*submit(spec)); }

  ServedModel model;
  Metrics metrics;
  BatchEngine engine;
};

TEST(BatchEngine, CancelFreesTheSlotAndLimitsEndWithLength) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  StoriesEngine e(1);
  const JobSpec endless = e.greedy("Once upon a time");
  auto job = e.submit(endless);
  JobUpdate first;
  while ((first = job->take(1000ms)).text.empty() && !first.finished) {}
  job->cancel();
  EXPECT_EQ(wait_for(*job).reason, FinishReason::kCancelled);

  // The one slot is free again: the next request runs, to the context's end.
  const Reply r = e.run(endless);
  EXPECT_EQ(r.reason, FinishReason::kLength);
  EXPECT_EQ(r.completion_tokens + static_cast<int64_t>(endless.prompt.size()),
            e.model.session()->n_ctx() + 1)  // the last token is sampled but needs no row
      << r.text;

  JobSpec limited = endless;
  limited.max_tokens = 5;
  const Reply f = e.run(limited);
  EXPECT_EQ(f.reason, FinishReason::kLength);
  EXPECT_EQ(f.completion_tokens, 5);
}

TEST(BatchEngine, StopStringEndsTheReplyBeforeIt) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  StoriesEngine e(2);
  JobSpec spec = e.greedy("Once upon a time");
  spec.max_tokens = 40;
  const Reply full = e.run(spec);
  ASSERT_GT(full.text.size(), 12u);
  // Stop at a piece from the middle of the free-running reply.
  const std::string stop = full.text.substr(full.text.size() / 2, 4);
  spec.stop = {stop};
  const Reply s = e.run(spec);
  EXPECT_EQ(s.reason, FinishReason::kStop);
  EXPECT_EQ(s.text, full.text.substr(0, full.text.find(stop)));
}

TEST(BatchEngine, PromptLongerThanTheContextIsRefused) {
  GGUFLOW_REQUIRE_DATA("models/stories260K.gguf");
  StoriesEngine e(1);
  JobSpec spec;
  spec.prompt.assign(129, 5);
  try {
    e.submit(spec);
    FAIL() << "expected a 400";
  } catch (const ApiError& error) {
    EXPECT_EQ(error.status(), 400);
    EXPECT_NE(std::string(error.what()).find("129 tokens"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("context of 128 tokens"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace gguflow::server
