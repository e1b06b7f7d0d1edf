#include "runtime/runner/text_runner.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>

#include "ops/error.h"
#include "runtime/core/console.h"
#include "runtime/core/input_file.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/graph/load.h"
#include "runtime/plugins/kernel_plugins.h"
#include "runtime/runner/chat_conversation.h"
#include "runtime/runner/default_model.h"
#include "runtime/runner/generation_graph.h"
#include "runtime/runner/generator.h"
#include "runtime/runner/run_report.h"
#include "runtime/sampling/sampler.h"
#include "runtime/tokenizer/chat_template.h"

namespace gguflow::runner {
namespace {

using Clock = std::chrono::steady_clock;

// One line from `in` without its line break; nullopt at end of input.
std::optional<std::string> read_line(FILE* in) {
  std::string line;
  int c;
  while ((c = std::fgetc(in)) != EOF && c != '\n') line.push_back(static_cast<char>(c));
  if (c == EOF && line.empty()) return std::nullopt;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

// Everything a run needs, loaded once (the load time covers all of it).
struct Loaded {
  ModelChoice model;
  std::shared_ptr<const GgufFile> file;
  std::string graph_path;
  std::shared_ptr<const graph::Graph> graph;
  std::unique_ptr<Tokenizer> tokenizer;
  const plugins::SelectedKernels* kernels = nullptr;
  std::unique_ptr<exec::Session> session;
  sampling::SamplerConfig sampler;
};

Loaded load(const TextRunRequest& request, FILE* log) {
  Loaded l;
  l.model = choose_model(default_model_search(request.model_path));
  if (l.model.random_weights)
    std::fprintf(log,
                 "gguflow: no model given ($GGUFLOW_MODEL unset, no "
                 "../shared/data/models/stories260K.gguf): using %s, a synthesized model with "
                 "RANDOM weights; its text is meaningless\n",
                 l.model.path.c_str());
  l.file = GgufFile::open(l.model.path);
  graph::LoadOptions load_options;
  load_options.set = request.set;
  for (const std::string& f : request.weight_files) load_options.weight_files.push_back(GgufFile::open(f));
  GenerationGraph generation = load_generation_graph(l.file, request.graph_path, load_options);
  l.graph_path = generation.path;
  l.graph = generation.graph;
  l.sampler = apply_overrides(generation.sampler, request.sampling);
  if (!request.sampling.seed && !generation.sets_seed) l.sampler.seed = sampling::draw_seed();

  l.tokenizer = std::make_unique<Tokenizer>(Tokenizer::from_gguf(*l.file));
  plugins::SelectOptions kernel_options;
  kernel_options.forced = request.kernels;
  l.kernels = &plugins::select_kernels(kernel_options);
  l.session = std::make_unique<exec::Session>(l.graph, *l.kernels->table, request.session);
  check_logits_output(generation, *l.session, l.tokenizer->vocab_size());
  return l;
}

// Prints generated text as it comes and remembers whether the last byte was a line break.
struct TextSink {
  FILE* out;
  bool enabled = true;
  bool wrote = false, ends_with_newline = false;
  void operator()(std::string_view text) {
    if (!enabled || text.empty()) return;
    // A failed write (a full disk, /dev/full) stops the generation now, not after the last token.
    if (std::fwrite(text.data(), 1, text.size(), out) != text.size() || std::fflush(out) != 0)
      throw error(out == stdout ? "<stdout>" : "the output", ": write failed: ", std::strerror(errno));
    if (out == stdout) console::wrote_to_stdout(text);
    wrote = true;
    ends_with_newline = text.back() == '\n';
  }
};

void context_notice(const GenerationResult& r, const exec::Session& session, bool context_shift, FILE* log) {
  if (r.stop != StopReason::kContextFull) return;
  console::start_stderr_line();
  // With --context-shift it stops only when the context is too small to shift (2 tokens or less).
  std::fprintf(log, "gguflow: context full (%lld of %lld tokens; --ctx sets the size%s): generation stopped\n",
               static_cast<long long>(session.n_past()), static_cast<long long>(session.n_ctx()),
               context_shift ? ", and a context of 2 tokens or less cannot shift" : ", --context-shift goes on");
}

}  // namespace

std::optional<std::string> read_prompt(const std::optional<std::string>& prompt_option,
                                       const std::string& prompt_file, FILE* in) {
  if (prompt_option && !prompt_file.empty())
    throw error("run: expected one of --prompt and --prompt-file, found both");
  if (prompt_file == "-") return std::string(console::without_final_newline(read_stream(in)));  // as -p -
  if (!prompt_file.empty())
    return std::string(console::without_final_newline(read_input_file(prompt_file, "prompt file")));
  if (prompt_option && *prompt_option == "-")
    return std::string(console::without_final_newline(read_stream(in)));
  return prompt_option;
}

int run_text(const TextRunRequest& request, FILE* in, FILE* out, FILE* log) {
  const auto load_start = Clock::now();
  Loaded l = load(request, log);
  exec::Session& session = *l.session;
  const Tokenizer& tokenizer = *l.tokenizer;
  sampling::Sampler sampler(l.sampler);
  Generator generator(session, tokenizer, sampler);

  RunReport report;
  report.model_path = l.model.path;
  report.model_source = l.model.source;
  report.random_weights = l.model.random_weights;
  report.graph_path = l.graph_path;
  report.kernels_name = l.kernels->plugin.name;
  report.kernels_target = l.kernels->plugin.target;
  report.kernels_path = l.kernels->plugin.path.string();
  report.threads = session.n_threads();
  report.n_ctx = session.n_ctx();
  report.sampler = l.sampler;
  if (request.verbose)
    std::fprintf(log,
                 "gguflow: model %s (%s); graph %s; kernels %s; threads %d; ctx %lld; KV cache %s; "
                 "%s\n",
                 l.model.path.c_str(), l.model.source.c_str(), l.graph_path.c_str(),
                 l.kernels->describe().c_str(), session.n_threads(),
                 static_cast<long long>(session.n_ctx()), session.kv_cache_summary().c_str(),
                 l.sampler.describe().c_str());

  TextSink sink{out};
  sink.enabled = !request.json;
  GenerateOptions options;
  options.n_predict = request.n_predict;
  options.context_shift = request.context_shift;
  options.keep = request.keep;

  std::optional<ChatTemplate> chat_template;
  if (request.chat)
    chat_template = request.chat_template.empty() ? ChatTemplate::require(*l.file, tokenizer.vocab())
                                                  : ChatTemplate::named(request.chat_template);
  // Generation packs the weights at load (part of the load time): the prompt then runs on the
  // packed layout as well, and the first decode step does not stall to pack them. The results
  // are the same bits either way on x86 (row-major products run on packed panels); only the
  // time moves.
  if (request.n_predict != 0) session.pack_weights();
  report.load_seconds = std::chrono::duration<double>(Clock::now() - load_start).count();

  if (!request.chat) {
    report.mode = "completion";
    report.prompt = request.prompt.value_or("");
    EncodeOptions encode;
    encode.parse_special = request.parse_special;
    std::vector<TokenId> ids = tokenizer.encode(report.prompt, encode);
    if (ids.empty()) {  // an empty prompt starts from BOS alone
      if (tokenizer.vocab().bos() == kNoToken)
        throw error("prompt: expected text or a model with a BOS token to start from, found an "
                    "empty prompt and no BOS in ", l.model.path);
      ids.push_back(tokenizer.vocab().bos());
    }
    options.echo_prompt = request.echo;
    report.turns.push_back(generator.generate(ids, options, std::ref(sink)));
    context_notice(report.turns.back(), session, request.context_shift, log);
  } else {
    report.mode = std::string("chat (") + chat_template->name() + ")";
    ChatConversation conversation(*chat_template, request.system);
    // One turn: render, prefill what is new, stream the reply. False when the context is full.
    const auto turn = [&](const std::string& message) {
      const ChatTurn rendered = conversation.user_turn(message);
      if (rendered.restart) {
        session.reset();
        generator.reset();
      }
      EncodeOptions encode;
      encode.add_special = session.n_past() == 0;
      encode.parse_special = true;  // the template's markup
      if (!request.parse_special) encode.literal_ranges = rendered.content;  // the messages' own text
      report.prompt = message;
      report.turns.push_back(generator.generate(tokenizer.encode(rendered.text, encode), options,
                                                std::ref(sink)));
      conversation.assistant_reply(report.turns.back().text);
      sink("\n");
      context_notice(report.turns.back(), session, request.context_shift, log);
      return report.turns.back().stop != StopReason::kContextFull;
    };
    if (!request.interactive) {
      if (!request.prompt)
        throw error("run --chat: expected a message: --prompt TEXT, --prompt - (stdin) or "
                    "--prompt-file FILE (or an interactive terminal)");
      turn(*request.prompt);
    } else {
      bool more = !request.prompt || turn(*request.prompt);
      while (more) {
        std::fputs("> ", log);
        std::fflush(log);
        const std::optional<std::string> line = read_line(in);
        if (!line || *line == "/exit" || *line == "/quit") break;
        if (line->empty()) continue;
        more = turn(*line);  // an error (a turn that does not fit, bad UTF-8) ends the chat: exit 1
      }
      std::fputs("\n", log);
    }
  }

  report.context_shifts = generator.context_shifts();
  if (request.json) {
    const std::string document = report_json(report);
    std::fwrite(document.data(), 1, document.size(), out);
    std::fflush(out);
  } else if (sink.wrote && !sink.ends_with_newline && isatty(fileno(out))) {
    std::fputs("\n", out);  // a terminal gets its line ended; a pipe gets the exact text
  }
  console::start_stderr_line();
  std::fprintf(log, "gguflow: %s\n", timings_line(report).c_str());
  return 0;
}

}  // namespace gguflow::runner
