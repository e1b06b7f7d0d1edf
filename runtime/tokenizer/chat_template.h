// Chat prompt formats: ChatML (Qwen2 family), llama-2 ([INST] <<SYS>>) and llama-3
// (<|start_header_id|>), rendered as llama.cpp's llm_chat_apply_template does. The format is
// chosen from the model's `tokenizer.chat_template` (recognized by distinctive substrings; the
// Jinja itself is not run), else from its architecture and vocabulary.
//
// The rendered text holds special-token text (<|im_start|>, </s>): tokenize it with
// EncodeOptions::parse_special = true. BOS is not written; encode() adds it if the model wants.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "runtime/tokenizer/vocabulary.h"

namespace gguflow {

class GgufFile;

enum class ChatFormat { kChatML, kLlama2, kLlama3 };

struct ChatMessage {
  std::string role;     // "system", "user" or "assistant"
  std::string content;
};

class ChatTemplate {
 public:
  explicit ChatTemplate(ChatFormat format) : format_(format) {}

  // The format a Jinja chat template text stands for, or nullopt when not recognized.
  static std::optional<ChatFormat> recognize(std::string_view jinja);
  // The model's format: its `tokenizer.chat_template` when present and recognized; otherwise
  // ChatML for the qwen2 architecture or a vocabulary with <|im_start|>, llama-3 for a
  // vocabulary with <|start_header_id|>. nullopt when none applies.
  static std::optional<ChatTemplate> detect(const GgufFile& file, const Vocabulary& vocab);
  // As detect(), but throws gguflow::Error saying why no known template applies (naming the
  // file, the template's presence and the architecture).
  static ChatTemplate require(const GgufFile& file, const Vocabulary& vocab);

  ChatFormat format() const { return format_; }
  const char* name() const;  // "chatml", "llama2", "llama3"

  // Renders the conversation. With `add_generation_prompt`, ends where the assistant's reply
  // begins. Throws gguflow::Error for a role other than system/user/assistant.
  std::string apply(std::span<const ChatMessage> messages, bool add_generation_prompt = true) const;

 private:
  ChatFormat format_;
};

}  // namespace gguflow
