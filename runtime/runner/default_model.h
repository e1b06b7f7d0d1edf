// Which model `gguflow run` uses when none is named, so that the README's first command works
// with no model at hand:
//   1. --model FILE
//   2. $GGUFLOW_MODEL when set and non-empty
//   3. ../shared/data/models/stories260K.gguf next to the source tree this was built from, then
//      the same path relative to the current directory
//   4. a small model synthesized once (runtime/tools/synth.h) into a cache folder; its weights
//      are random, and the runner says so on stderr every time it is used.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace gguflow::runner {

struct ModelChoice {
  std::string path;
  std::string source;           // "--model", "$GGUFLOW_MODEL", "default", "synthesized"
  bool random_weights = false;  // true for the synthesized model
};

struct ModelSearch {
  std::string explicit_path;                     // --model ("" when not given)
  std::string env_path;                          // $GGUFLOW_MODEL ("" when unset)
  std::vector<std::filesystem::path> defaults;   // tried in order; the first existing wins
  std::filesystem::path cache_dir;               // where the synthesized model is kept
};

// The search the command line uses: --model, $GGUFLOW_MODEL, the stories260K places above, and
// the cache folder $GGUFLOW_CACHE, else $XDG_CACHE_HOME/gguflow, else $HOME/.cache/gguflow,
// else <temp>/gguflow-cache.
ModelSearch default_model_search(const std::string& explicit_path);

// Resolves the search; synthesizes the fallback model (a few MB, well under a second) when
// nothing else exists and it is not cached yet. An explicit or $GGUFLOW_MODEL path is returned
// as given (opening it reports a missing file). Throws gguflow::Error when the cache folder
// cannot be created or written.
ModelChoice choose_model(const ModelSearch& search);

// The file name of the synthesized model inside the cache folder.
inline constexpr const char* kSynthModelFile = "synth-llama-runner-Q8_0.gguf";

}  // namespace gguflow::runner
