// A multi-turn chat on one KV cache: each turn only the text that is new since the last one is
// tokenized and prefilled (the cache already holds everything before it), as llama.cpp's
// simple-chat example does.
//
// The conversation keeps the rendered text the cache stands for (`consumed`): the previous
// prompt, up to the assistant header, plus the reply as generated. The next turn renders the
// whole conversation again (ChatTemplate::apply) and, when that text starts with `consumed`,
// only the rest is new (for ChatML: "<|im_end|>\n<|im_start|>user\n...<|im_start|>assistant\n").
// When it does not (a template that rewrites earlier turns), the turn says so and the caller
// starts the cache over with the whole text.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "runtime/tokenizer/chat_template.h"

namespace gguflow::runner {

struct ChatTurn {
  std::string text;      // rendered text to tokenize (special-token text parsed) and prefill
  bool restart = false;  // true: `text` is the whole conversation; clear the cache first
  // Byte ranges of `text` that are messages' contents (ChatTemplate::render): tokenized as
  // literal text unless --special, so that a message cannot close its turn and forge another.
  std::vector<std::pair<size_t, size_t>> content;
};

class ChatConversation {
 public:
  // `system` is the --system text ("" for none). Throws gguflow::Error (naming --system and the
  // byte offset in it) when it is not valid UTF-8.
  ChatConversation(ChatTemplate chat_template, std::string system);

  // Adds the user's message and returns what to feed the model before generating the reply.
  // Throws gguflow::Error (the offset in the message) for invalid UTF-8, adding nothing.
  ChatTurn user_turn(const std::string& message);
  // Records the assistant's reply as generated (detokenized, without the end-of-turn token).
  void assistant_reply(const std::string& reply);

  const std::vector<ChatMessage>& messages() const { return messages_; }
  const ChatTemplate& chat_template() const { return template_; }

 private:
  ChatTemplate template_;
  std::vector<ChatMessage> messages_;
  std::string consumed_;  // rendered text already in the cache (see above)
};

}  // namespace gguflow::runner
