#include "runtime/embed/embed_run.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "ops/error.h"
#include "runtime/embed/progress.h"
#include "runtime/embed/similarity.h"

namespace gguflow::embed {
namespace {

std::string input_name(const std::string& path) { return path == "-" ? "<stdin>" : path; }

}  // namespace

EmbedSummary run_embed(const EmbedRequest& request, const GguflowKernels& kernels, FILE* out,
                       FILE* log) {
  if (request.batch_size < 1) throw error("--batch-size: expected at least 1, found ", request.batch_size);
  if (request.model_path.empty()) throw error("embed: --model FILE is required");

  // Every text is read and checked first: a bad line fails before the model is even opened.
  const InputReport input = read_embed_inputs(request.input_path, request.input);
  const std::vector<EmbedInput>& texts = input.texts;
  const int64_t n = static_cast<int64_t>(texts.size());

  Embedder embedder(GgufFile::open(request.model_path), request.embedder, kernels);
  if (embedder.per_token() && request.similarity)
    throw error("--similarity: expected one vector per text, found --pooling none (one per token)");
  if (request.verbose)
    std::fprintf(log,
                 "graph %s: %zu nodes; pooling %s; normalize %s; dim %lld; context %lld tokens; "
                 "threads %d; arena %.1f MiB; kv cache %.1f MiB; kernels %s\n",
                 embedder.graph().name.c_str(), embedder.graph().nodes.size(),
                 embedder.pooling().empty() ? "(graph)" : embedder.pooling().c_str(),
                 embedder.normalize().empty() ? "(graph)" : embedder.normalize().c_str(),
                 static_cast<long long>(embedder.dim()), static_cast<long long>(embedder.max_tokens()),
                 embedder.session().n_threads(), embedder.session().arena_bytes() / 1048576.0,
                 embedder.session().kv_cache_bytes() / 1048576.0, kernels.target_name);

  // Embeddings go to -o, else to stdout unless stdout carries the similarity table.
  const bool write_vectors = !request.output_path.empty() || !request.similarity;
  std::optional<OutputFile> output;
  std::unique_ptr<EmbeddingWriter> writer;
  FILE* stream = out;  // where the records go: `out`, or the -o temporary file
  if (write_vectors) {
    output.emplace(request.output_path.empty() ? "-" : request.output_path);
    if (!request.output_path.empty()) stream = output->stream();
    writer = make_embedding_writer(request.format, stream, output->name(), n, embedder.dim(),
                                   embedder.per_token());
  }

  const bool live = request.progress == ProgressMode::kBar ||
                    (request.progress == ProgressMode::kAuto && is_terminal(log));
  Progress progress(log, n, live);
  EmbedSummary summary;
  summary.skipped_empty = input.skipped_empty;
  std::vector<float> pooled;  // [n][dim] for --similarity
  if (request.similarity) pooled.reserve(static_cast<size_t>(n * embedder.dim()));

  if (n > 1) embedder.pack_weights();
  for (int64_t begin = 0; begin < n; begin += request.batch_size) {
    const int64_t end = std::min(n, begin + request.batch_size);
    // Tokenize and check the batch's texts, then evaluate them together (--batch-tokens).
    std::vector<std::vector<int32_t>> batch;
    for (int64_t t = begin; t < end; ++t) {
      const EmbedInput& in = texts[t];
      std::vector<int32_t> tokens;
      try {
        tokens = embedder.tokenize(in.text);
      } catch (const Error& e) {
        throw error(input_name(request.input_path), ":", in.line, ": ", e.what());
      }
      if (tokens.empty())
        throw error(input_name(request.input_path), ":", in.line,
                    ": expected the text to make at least one token, found none");
      if (!request.truncate && static_cast<int64_t>(tokens.size()) > embedder.max_tokens())
        throw error(input_name(request.input_path), ":", in.line, ": ", tokens.size(),
                    " tokens, more than the context of ", embedder.max_tokens(),
                    " (--no-truncate; raise --ctx or leave out --no-truncate to cut it)");
      batch.push_back(std::move(tokens));
    }
    const std::vector<Embedding> embeddings = embedder.embed_batch(std::move(batch));
    for (int64_t t = begin; t < end; ++t) {
      const EmbedInput& in = texts[t];
      const Embedding& e = embeddings[static_cast<size_t>(t - begin)];
      if (e.truncated()) {
        ++summary.truncated;
        progress.message("warning: " + input_name(request.input_path) + ":" + std::to_string(in.line) +
                         ": " + std::to_string(e.n_tokens_input) + " tokens, truncated to the first " +
                         std::to_string(e.n_tokens) + " (the context; raise it with --ctx)");
      }
      if (writer) writer->write(in.index, e.values.data(), e.n_rows);
      if (request.similarity) pooled.insert(pooled.end(), e.values.begin(), e.values.end());
      summary.texts += 1;
      summary.tokens += e.n_tokens;
    }
    progress.update(summary.texts, summary.tokens);
    // Records are written whole; flushing per batch bounds what a crash can lose to one batch.
    if (writer && std::fflush(stream) != 0) throw error(output->name(), ": write failed");
  }
  if (writer) {
    writer->finish();
    output->commit();
  }
  summary.seconds = progress.finish();
  if (summary.truncated > 0)
    std::fprintf(log, "%lld text%s truncated to the context of %lld tokens\n",
                 static_cast<long long>(summary.truncated), summary.truncated == 1 ? "" : "s",
                 static_cast<long long>(embedder.max_tokens()));
  if (summary.skipped_empty > 0)
    std::fprintf(log, "%lld empty text%s skipped (--skip-empty)\n",
                 static_cast<long long>(summary.skipped_empty), summary.skipped_empty == 1 ? "" : "s");

  if (request.similarity) {
    std::vector<SimilarityLabel> labels;
    for (const EmbedInput& in : texts) labels.push_back({in.index, in.line, in.text});
    const std::string table = similarity_table(cosine_matrix(pooled, n, embedder.dim()), labels);
    std::fwrite(table.data(), 1, table.size(), out);
    std::fflush(out);
  }
  return summary;
}

}  // namespace gguflow::embed
