// Tokenizer metadata for synthetic models: copied from a real tokenizer GGUF, or a small valid
// SentencePiece-style placeholder (llama.cpp's "llama" tokenizer model).
#pragma once

#include <cstdint>
#include <string>

namespace gguflow {

class GgufWriter;

// Writes every `tokenizer.*` key of `vocab_path` in file order. Returns its token count.
int64_t copy_tokenizer_metadata(const std::string& vocab_path, GgufWriter& writer);

// The token count of the tokenizer in `vocab_path` (what --vocab makes n_vocab).
int64_t vocab_token_count(const std::string& vocab_path);

// Writes a placeholder SPM vocabulary of exactly `n_vocab` tokens: <unk>, <s>, </s>, the 256
// byte tokens <0x00>..<0xFF>, then "▁"-prefixed pieces; scores -index; bos 1, eos 2, unk 0,
// add_bos true. For `arch` phi3 it also holds Phi-3's added control tokens where Phi-3 has
// them (<|endoftext|> at 32000, the eos, through <|user|> at 32010; or as the last ids of a
// smaller vocabulary): other runtimes refuse a phi3 model without <|endoftext|>, and the chat
// format needs <|user|>, <|assistant|>, <|end|>. Throws gguflow::Error when n_vocab is too
// small for these.
void write_placeholder_tokenizer(int64_t n_vocab, const std::string& arch, GgufWriter& writer);

}  // namespace gguflow
