// `gguflow quantize`: re-encodes an F32/F16/BF16 GGUF model to a quantized file type with
// llama-quantize's per-tensor mix (quant_mix.h) and GGML's reference quantizers, so that the
// output matches llama-quantize's tensor for tensor (types and bytes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gguflow {

struct QuantizedTensor {
  std::string name;
  uint32_t from_type = 0;
  uint32_t to_type = 0;
  uint64_t bytes = 0;  // bytes in the output
};

struct QuantizeReport {
  std::vector<QuantizedTensor> tensors;  // in output order
  uint64_t input_bytes = 0;              // tensor data of the input
  uint64_t output_bytes = 0;             // tensor data of the output
};

// Reads `input`, writes `output` (under a temporary name, renamed when complete). Throws
// gguflow::Error for an unknown `file_type` (listing the valid names), an input tensor that
// is already quantized, or an unwritable output.
QuantizeReport quantize_model(const std::string& input, const std::string& output,
                              const std::string& file_type);

// "Q5_0 x11, Q8_0 x2, F32 x11" style summary of the output types, most frequent first.
std::string type_mix_summary(const QuantizeReport& report);

}  // namespace gguflow
