#include "bench/bench_model.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "runtime/tools/synth.h"

namespace gguflow::bench {
namespace {

namespace fs = std::filesystem;

struct BenchModel {
  std::string path;
  fs::path temp_folder;  // empty when the model came from the environment
  ~BenchModel() {
    std::error_code ignored;
    if (!temp_folder.empty()) fs::remove_all(temp_folder, ignored);
  }
};

}  // namespace

const std::string& bench_model_path() {
  static BenchModel model = [] {
    BenchModel m;
    if (const char* env = std::getenv("GGUFLOW_BENCH_MODEL"); env && *env) {
      m.path = env;
      return m;
    }
    m.temp_folder = fs::temp_directory_path() / ("gguflow-bench-" + std::to_string(getpid()));
    fs::create_directories(m.temp_folder);
    m.path = (m.temp_folder / "qwen2.5-0.5b-Q4_K_M.gguf").string();
    SynthOptions options;
    options.shape = find_synth_preset("qwen2.5-0.5b")->shape;
    options.name = "qwen2.5-0.5b-synth";
    options.file_type = "Q4_K_M";
    options.output = m.path;
    std::fprintf(stderr, "synthesizing %s ...\n", m.path.c_str());
    synth_model(options);
    return m;
  }();
  return model.path;
}

}  // namespace gguflow::bench
