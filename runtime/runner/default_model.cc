#include "runtime/runner/default_model.h"

#include <cstdlib>
#include <system_error>

#include "ops/error.h"
#include "runtime/tools/synth.h"

namespace gguflow::runner {
namespace {

namespace fs = std::filesystem;

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

fs::path cache_folder() {
  if (const std::string dir = env("GGUFLOW_CACHE"); !dir.empty()) return dir;
  if (const std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty()) return fs::path(xdg) / "gguflow";
  if (const std::string home = env("HOME"); !home.empty())
    return fs::path(home) / ".cache" / "gguflow";
  std::error_code ec;
  return fs::temp_directory_path(ec) / "gguflow-cache";
}

// A llama-shaped model small enough to write in well under a second and run at thousands of
// tokens per second, with the placeholder SentencePiece tokenizer (bytes + filler pieces).
SynthOptions fallback_model(const fs::path& output) {
  SynthOptions options;
  SynthShape& s = options.shape;
  s.arch = "llama";
  s.n_embd = 256;
  s.n_layer = 4;
  s.n_head = 8;
  s.n_head_kv = 4;
  s.n_ff = 768;
  s.n_vocab = 512;  // the placeholder tokenizer needs >= 259 (specials and 256 byte tokens)
  s.n_ctx = 2048;
  options.name = "synthetic runner fallback (random weights)";
  options.file_type = "Q8_0";
  options.seed = 0;
  options.output = output.string();
  return options;
}

}  // namespace

ModelSearch default_model_search(const std::string& explicit_path) {
  ModelSearch search;
  search.explicit_path = explicit_path;
  search.env_path = env("GGUFLOW_MODEL");
  const fs::path relative = fs::path("..") / "shared" / "data" / "models" / "stories260K.gguf";
#ifdef GGUFLOW_SOURCE_DIR
  search.defaults.push_back((fs::path(GGUFLOW_SOURCE_DIR) / relative).lexically_normal());
#endif
  search.defaults.push_back(relative);
  search.cache_dir = cache_folder();
  return search;
}

ModelChoice choose_model(const ModelSearch& search) {
  if (!search.explicit_path.empty()) return {search.explicit_path, "--model", false};
  if (!search.env_path.empty()) return {search.env_path, "$GGUFLOW_MODEL", false};
  std::error_code ec;
  for (const fs::path& candidate : search.defaults)
    if (fs::is_regular_file(candidate, ec)) return {candidate.string(), "default", false};

  const fs::path cached = search.cache_dir / kSynthModelFile;
  if (!fs::is_regular_file(cached, ec)) {
    fs::create_directories(search.cache_dir, ec);
    if (ec)
      throw error(search.cache_dir.string(), ": cannot create the model cache folder (",
                  ec.message(), "); give a model with --model FILE or $GGUFLOW_MODEL");
    synth_model(fallback_model(cached));  // the writer renames a finished temp file into place
  }
  return {cached.string(), "synthesized", true};
}

}  // namespace gguflow::runner
