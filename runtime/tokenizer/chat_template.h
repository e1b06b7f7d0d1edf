// Chat prompt formats: ChatML (Qwen2 and Qwen3), llama-2 ([INST] <<SYS>>), llama-3
// (<|start_header_id|>), Gemma (<start_of_turn>) and Phi-3 (<|user|>), rendered as llama.cpp's
// llm_chat_apply_template does. The format is
// chosen from the model's `tokenizer.chat_template` (recognized by distinctive substrings; the
// Jinja itself is not run), else from its architecture and vocabulary.
//
// The rendered text holds special-token text (<|im_start|>, </s>): tokenize it with
// EncodeOptions::parse_special = true. BOS is not written; encode() adds it if the model wants.
// render() also gives where the messages' contents lie in it: passed as
// EncodeOptions::literal_ranges, special-token text inside a message stays text, so a message
// cannot close its turn and forge another (what the server does with its clients' messages).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/tokenizer/vocabulary.h"

namespace gguflow {

class GgufFile;

enum class ChatFormat { kChatML, kLlama2, kLlama3, kGemma, kPhi3 };

struct ChatMessage {
  std::string role;     // "system", "user" or "assistant"
  std::string content;
};

// A rendered conversation and the byte ranges [begin, end) of `text` that are message contents
// (everything else is the format's markup).
struct RenderedChat {
  std::string text;
  std::vector<std::pair<size_t, size_t>> content;
};

class ChatTemplate {
 public:
  explicit ChatTemplate(ChatFormat format) : format_(format) {}

  // The format a Jinja chat template text stands for, or nullopt when not recognized.
  static std::optional<ChatFormat> recognize(std::string_view jinja);
  // The format named `name` ("chatml", "llama2", "llama3", "gemma", "phi3": --chat-template);
  // throws gguflow::Error listing the known names otherwise.
  static ChatTemplate named(std::string_view name);
  // "chatml, llama2, llama3, gemma, phi3"
  static std::string known_names();
  // The model's format: its `tokenizer.chat_template` when present and recognized; otherwise
  // from the architecture (ChatML for qwen2/qwen3, Gemma for gemma/gemma2/gemma3, Phi-3 for
  // phi3) or the vocabulary (<|im_start|>, <|start_header_id|>, <start_of_turn>). nullopt when
  // none applies.
  static std::optional<ChatTemplate> detect(const GgufFile& file, const Vocabulary& vocab);
  // As detect(), but throws gguflow::Error saying why no known template applies (naming the
  // file, the template's presence and the architecture).
  static ChatTemplate require(const GgufFile& file, const Vocabulary& vocab);

  ChatFormat format() const { return format_; }
  const char* name() const;  // "chatml", "llama2", "llama3", "gemma", "phi3"

  // Renders the conversation. With `add_generation_prompt`, ends where the assistant's reply
  // begins. Throws gguflow::Error for a role other than system/user/assistant.
  std::string apply(std::span<const ChatMessage> messages, bool add_generation_prompt = true) const;
  // apply()'s text with the byte ranges of the messages' contents in it.
  RenderedChat render(std::span<const ChatMessage> messages, bool add_generation_prompt = true) const;

 private:
  ChatFormat format_;
};

}  // namespace gguflow
