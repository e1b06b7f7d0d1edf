// `gguflow run [GRAPH.yaml] [--model M] --prompt TEXT [-n N] [sampling flags] [--chat] [--json]`:
// prompt in, streamed text out (runtime/runner/text_runner.h). With --tokens IDS it instead
// evaluates token ids as one prompt and can dump every position's logits or continue greedily
// (runtime/exec/run_tokens.h). This file only parses options.
#include <unistd.h>

#include <cstdio>
#include <optional>

#include "runtime/cli/args.h"
#include "runtime/cli/commands.h"
#include "runtime/cli/shared_options.h"
#include "ops/error.h"
#include "runtime/lowrank/kv_projection.h"
#include "runtime/exec/run_tokens.h"
#include "runtime/exec/token_io.h"
#include "runtime/graph/graph_choice.h"
#include "runtime/tokenizer/chat_template.h"
#include "runtime/graph/load.h"
#include "runtime/plugins/kernel_plugins.h"
#include "runtime/runner/sampler_settings.h"
#include "runtime/runner/text_runner.h"
#include "runtime/sampling/sampler.h"

namespace gguflow::cli {

// --kv-proj FILE: checked against --model (name, layers, heads) before the graph binds it.
static std::vector<std::string> kv_projection_files(const Args& args) {
  if (!args.has("--kv-proj")) return {};
  const std::string path = args.get("--kv-proj");
  if (args.has("--model"))
    lowrank::check_projection_matches_model(lowrank::read_kv_projection(path), path,
                                            *GgufFile::open(args.get("--model")));
  return {path};
}
namespace {

std::optional<float> float_option(const Args& args, const char* name) {
  if (!args.has(name)) return std::nullopt;
  return static_cast<float>(args.get_double(name));
}

std::optional<int> int_option(const Args& args, const char* name) {
  if (!args.has(name)) return std::nullopt;
  const int64_t value = args.get_int(name);
  if (value < -(int64_t{1} << 30) || value > (int64_t{1} << 30))
    throw usage_error(name, ": expected an integer of at most 2^30, found ", value);
  return static_cast<int>(value);
}

// --tokens mode: ids in, logits and greedy ids out.
int run_token_ids(const Args& args, const std::string& graph_path) {
  exec::RunTokensRequest request;
  if (!args.has("--model")) throw usage_error("--tokens: --model FILE is required");
  request.model_path = args.get("--model");
  request.graph_path = graph_path.empty()
                           ? graph::default_graph_path(*GgufFile::open(request.model_path), graph::Job::kGenerate)
                           : graph_path;
  request.set = set_values(args);
  request.weight_files = kv_projection_files(args);
  request.tokens = as_usage([&] { return exec::parse_token_ids(args.get("--tokens")); });
  request.dump_logits = args.get("--dump-logits");
  request.greedy_steps = args.get_int_in("--greedy", 0, exec::kMaxContext);
  request.session.n_threads = threads_value(args);
  request.session.n_ctx = args.get_int_in("--ctx", 0, exec::kMaxContext);
  cache_type_values(args, &request.session);
  request.json = args.has("--json");
  request.verbose = args.has("--verbose");

  plugins::SelectOptions kernel_options;
  kernel_options.forced = args.get("--kernels");
  const plugins::SelectedKernels& kernels = plugins::select_kernels(kernel_options);
  if (request.verbose) std::fprintf(stderr, "kernels: %s\n", kernels.describe().c_str());
  exec::run_tokens(request, *kernels.table, stdout, stderr);
  return 0;
}

}  // namespace

int run_run(int argc, char** argv) {
  Args args("run [GRAPH.yaml] [-m MODEL.gguf] -p TEXT [options]",
            "Generates text: tokenizes the prompt, runs it through the graph and streams the "
            "continuation to stdout (timings go to stderr). Without -m: $GGUFLOW_MODEL, "
            "else ../shared/data/models/stories260K.gguf, else a synthesized random-weight model. "
            "With --tokens IDS: evaluates ids, dumps logits, decodes greedily.");
  args.positional("GRAPH.yaml", "the graph to run (default: the shipped graph for the model's architecture)")
      .positional_count(0, 1);
  // No environment default here: the default model search reads $GGUFLOW_MODEL itself and
  // reports it as the model's source (runtime/runner/default_model.h).
  args.option("-m,--model", "FILE", "GGUF model (default: see above)")
      .option("-p,--prompt", "TEXT", "prompt text; '-' reads it from stdin (default: empty: BOS)")
      .option("-f,--file,--prompt-file", "FILE",
              "read the prompt from a file, '-': stdin (one trailing newline dropped, as llama.cpp does)")
      .option("-n,--n-predict", "N", "tokens to generate at most (-1: until EOS or full context)",
              "-1")
      .option("--temp", "T", "sampling temperature, 0 = greedy (default: the graph's sampler:)")
      .option("--top-k", "K", "keep the K most likely tokens (0: off)")
      .option("--top-p", "P", "keep the smallest set with probability mass P (1: off)")
      .option("--min-p", "P", "drop tokens below P times the best one's probability (0: off)")
      .option("--repeat-penalty", "R", "penalize recently seen tokens (1: off)")
      .option("--repeat-last-n", "N", "how many recent tokens the penalty looks at")
      .option("-s,--seed", "S", "random seed; -1: a fresh one (the default), printed with the timings")
      .flag("--special", "parse special-token text (<s>, <|im_start|>) in the prompt (and --chat messages) as tokens")
      .flag("--no-echo", "print only the generated text, not the prompt before it")
      .flag("--chat", "format the prompt with the model's chat template (from its tokenizer.chat_template or architecture)")
      .option("--chat-template", "NAME", "--chat with this format instead: chatml, llama2, llama3, gemma or phi3")
      .option("--system", "TEXT", "system message for --chat")
      .flag("-i,--interactive", "chat turn by turn, one line of stdin each (default on a terminal)")
      .flag("--json", "print one JSON document (text, token ids, timings, kernels) instead of text");
  threads_option(args);
  ctx_option(args, "context length: KV cache slots (default: min(model, 4096))")
      .flag("--context-shift", "when the context is full, drop the oldest half (after --keep) and go on")
      .option("--keep", "N", "--context-shift: prompt tokens always kept (BOS is kept on top)", "0");
  cache_type_options(args);
  kernels_option(args);
  set_option(args)
      .option("--kv-proj", "FILE", "low-rank KV bases for graphs/decode-lowrank-kv.yaml ('gguflow kv calibrate')")
      .flag("--verbose", "print the model, graph, plugin and sampler to stderr")
      .option("--tokens", "IDS", "token-id mode: comma-separated ids, e.g. 1,403,407")
      .option("--dump-logits", "FILE", "--tokens: write f32 [n_tokens][n_vocab] here")
      .option("--greedy", "N", "--tokens: then decode N tokens greedily and print their ids (default 1: the next token)", "1");
  if (!args.parse(argc, argv)) return 0;
  const std::string graph_path = args.positionals().empty() ? "" : args.positionals()[0];
  // Options of the other mode are refused rather than ignored.
  if (args.has("--tokens")) {
    for (const char* text_option : {"--prompt", "--prompt-file", "--n-predict", "--temp", "--top-k", "--top-p",
                                    "--min-p", "--repeat-penalty", "--repeat-last-n", "--seed", "--special",
                                    "--no-echo", "--chat", "--chat-template", "--system", "--interactive",
                                    "--context-shift", "--keep"})
      if (args.has(text_option))
        throw usage_error(text_option, ": not with --tokens (token-id mode evaluates the given ids; --greedy N "
                          "decodes N more)");
    return run_token_ids(args, graph_path);
  }
  for (const char* token_option : {"--dump-logits", "--greedy"})
    if (args.has(token_option)) throw usage_error(token_option, ": expected --tokens with it");
  if (args.has("--system") && !args.has("--chat")) throw usage_error("--system: expected --chat with it");
  if (args.has("--keep") && !args.has("--context-shift")) throw usage_error("--keep: expected --context-shift with it");
  if (args.has("--prompt") && args.has("--prompt-file"))
    throw usage_error("expected one of --prompt and --prompt-file, found both");
  if (args.has("--prompt-file") && args.get("--prompt-file").empty())
    throw usage_error("--prompt-file: expected a file name ('-': stdin), found an empty one");

  runner::TextRunRequest request;
  request.graph_path = graph_path;
  request.model_path = args.get("--model");
  request.set = set_values(args);
  request.weight_files = kv_projection_files(args);
  request.session.n_threads = threads_value(args);
  request.session.n_ctx = args.get_int_in("--ctx", 0, exec::kMaxContext);
  cache_type_values(args, &request.session);
  request.context_shift = args.has("--context-shift");
  request.keep = args.get_int_in("--keep", 0, exec::kMaxContext);
  request.kernels = args.get("--kernels");
  request.sampling.temperature = float_option(args, "--temp");
  request.sampling.top_k = int_option(args, "--top-k");
  request.sampling.top_p = float_option(args, "--top-p");
  request.sampling.min_p = float_option(args, "--min-p");
  request.sampling.repeat_penalty = float_option(args, "--repeat-penalty");
  request.sampling.repeat_last_n = int_option(args, "--repeat-last-n");
  if (args.has("--seed")) {  // -1 (llama.cpp's "random"): a fresh one, over a graph's sampler: seed too
    const int64_t seed = args.get_int_in("--seed", -1, INT64_MAX);
    request.sampling.seed = seed >= 0 ? static_cast<uint64_t>(seed) : sampling::draw_seed();
  }
  // The values given, checked now (exit 2) rather than after the model has loaded (exit 1).
  as_usage([&] { runner::apply_overrides(sampling::SamplerConfig{}, request.sampling).validate(); });
  const std::optional<std::string> prompt_option =
      args.has("--prompt") ? std::optional<std::string>(args.get("--prompt")) : std::nullopt;
  request.prompt = runner::read_prompt(prompt_option, args.get("--prompt-file"), stdin);
  request.n_predict = args.get_int_in("--n-predict", -1, INT64_MAX);  // -1: unlimited
  request.parse_special = args.has("--special");
  request.echo = !args.has("--no-echo");
  request.json = args.has("--json");
  request.chat = args.has("--chat");
  request.system = args.get("--system");
  request.chat_template = args.get("--chat-template");
  if (!request.chat_template.empty()) {
    if (!request.chat) throw usage_error("--chat-template: expected --chat with it");
    as_usage([&] { ChatTemplate::named(request.chat_template); });  // refused before loading
  }
  request.verbose = args.has("--verbose");
  // Interactive chat: asked for, or a terminal on stdin that no prompt was read from.
  const bool stdin_used = (prompt_option && *prompt_option == "-") || args.get("--prompt-file") == "-";
  request.interactive =
      request.chat && (args.has("--interactive") ||
                       (!request.json && !stdin_used && isatty(STDIN_FILENO)));
  if (args.has("--interactive") && !request.chat)
    throw usage_error("--interactive: expected --chat with it (turns need a chat template)");
  if (args.has("--interactive") && request.json)
    throw usage_error("expected one of --interactive and --json, found both");
  if (args.has("--interactive") && stdin_used)
    throw usage_error("--interactive reads turns from stdin: expected no --prompt - with it");
  return runner::run_text(request, stdin, stdout, stderr);
}

}  // namespace gguflow::cli
