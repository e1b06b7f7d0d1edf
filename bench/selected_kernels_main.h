// The main() of a Google Benchmark program over one kernel table: the plugin the runtime would
// select for this CPU (or $GGUFLOW_KERNELS), named on stdout, then the cases the program
// registers.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdio>

#include "runtime/plugins/kernel_plugins.h"

namespace gguflow::bench {

// Selects the kernels, stores the table in *table, calls register_cases(), runs the benchmarks.
inline int run_with_selected_kernels(int argc, char** argv, const GguflowKernels** table, void (*register_cases)()) {
  const auto& selected = gguflow::plugins::select_kernels();
  *table = selected.table;
  std::printf("kernels: %s\n", selected.describe().c_str());
  register_cases();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace gguflow::bench
