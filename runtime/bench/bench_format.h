// Writes a BenchReport as a Markdown table (for people and docs), a JSON list of rows or CSV
// (for scripts). JSON and CSV carry the same fields per row; each row repeats the model, context
// and bandwidth facts so that rows stand alone.
#pragma once

#include <string>
#include <string_view>

#include "runtime/bench/bench_runner.h"

namespace gguflow::bench {

enum class BenchFormat { kMarkdown, kJson, kCsv };

// "md" | "json" | "csv"; throws gguflow::Error naming the value otherwise.
BenchFormat parse_bench_format(std::string_view name);

std::string format_bench_report(const BenchReport& report, BenchFormat format);

}  // namespace gguflow::bench
