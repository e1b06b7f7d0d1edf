#include "runtime/tokenizer/chat_template.h"

#include "ops/error.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/gguf_names.h"

namespace gguflow {
namespace {

std::string_view trim(std::string_view s) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

void check_role(const ChatMessage& m) {
  if (m.role != "system" && m.role != "user" && m.role != "assistant")
    throw error("chat message: role: expected system, user or assistant, found '", m.role, "'");
}

// The rendered conversation being built: the format's markup, and the messages' contents with
// their byte ranges recorded (RenderedChat::content).
class Rendering {
 public:
  Rendering& markup(std::string_view text) {
    out_.text += text;
    return *this;
  }
  Rendering& content(std::string_view text) {
    out_.content.emplace_back(out_.text.size(), out_.text.size() + text.size());
    out_.text += text;
    return *this;
  }
  RenderedChat done() { return std::move(out_); }

 private:
  RenderedChat out_;
};

RenderedChat render_chatml(std::span<const ChatMessage> messages, bool add_generation_prompt) {
  Rendering out;
  for (const ChatMessage& m : messages)
    out.markup("<|im_start|>").markup(m.role).markup("\n").content(m.content).markup("<|im_end|>\n");
  if (add_generation_prompt) out.markup("<|im_start|>assistant\n");
  return out.done();
}

// Meta's Llama-2 chat format, llama.cpp's "llama2-sys-bos" variant: every turn after the first
// opens with <s>[INST] (the first BOS comes from the tokenizer).
RenderedChat render_llama2(std::span<const ChatMessage> messages) {
  Rendering out;
  out.markup("[INST] ");
  bool inside_turn = true;
  for (const ChatMessage& m : messages) {
    if (!inside_turn) {
      inside_turn = true;
      out.markup("<s>[INST] ");
    }
    if (m.role == "system") {
      out.markup("<<SYS>>\n").content(m.content).markup("\n<</SYS>>\n\n");
    } else if (m.role == "user") {
      out.content(m.content).markup(" [/INST]");
    } else {
      out.content(m.content).markup("</s>");
      inside_turn = false;
    }
  }
  return out.done();  // the reply follows [/INST] directly: no separate generation prompt
}

RenderedChat render_llama3(std::span<const ChatMessage> messages, bool add_generation_prompt) {
  Rendering out;
  for (const ChatMessage& m : messages)
    out.markup("<|start_header_id|>").markup(m.role).markup("<|end_header_id|>\n\n").content(trim(m.content)).markup("<|eot_id|>");
  if (add_generation_prompt) out.markup("<|start_header_id|>assistant<|end_header_id|>\n\n");
  return out.done();
}

// Gemma has no system role: llama.cpp prepends the system text to the first user turn. The
// assistant's role is called "model".
RenderedChat render_gemma(std::span<const ChatMessage> messages, bool add_generation_prompt) {
  Rendering out;
  std::string system;
  for (const ChatMessage& m : messages) {
    if (m.role == "system") {
      system += trim(m.content);
      continue;
    }
    const std::string role = m.role == "assistant" ? "model" : m.role;
    out.markup("<start_of_turn>").markup(role).markup("\n");
    if (!system.empty() && role != "model") {
      out.content(system).markup("\n\n");
      system.clear();
    }
    out.content(trim(m.content)).markup("<end_of_turn>\n");
  }
  // Gemma has no system role: a system message goes into the next user turn. With none after
  // it, it would vanish from the prompt without a word.
  if (!system.empty())
    throw error("the gemma chat format has no system role: a system message is put into the next "
                "user message, and none follows it");
  if (add_generation_prompt) out.markup("<start_of_turn>model\n");
  return out.done();
}

RenderedChat render_phi3(std::span<const ChatMessage> messages, bool add_generation_prompt) {
  Rendering out;
  for (const ChatMessage& m : messages) out.markup("<|").markup(m.role).markup("|>\n").content(m.content).markup("<|end|>\n");
  if (add_generation_prompt) out.markup("<|assistant|>\n");
  return out.done();
}

constexpr ChatFormat kFormats[] = {ChatFormat::kChatML, ChatFormat::kLlama2, ChatFormat::kLlama3,
                                   ChatFormat::kGemma, ChatFormat::kPhi3};

}  // namespace

ChatTemplate ChatTemplate::named(std::string_view name) {
  for (ChatFormat f : kFormats)
    if (name == ChatTemplate(f).name()) return ChatTemplate(f);
  throw error("chat template '", name, "' is not one of ", known_names());
}

std::string ChatTemplate::known_names() {
  std::string out;
  for (ChatFormat f : kFormats) out += (out.empty() ? "" : ", ") + std::string(ChatTemplate(f).name());
  return out;
}

std::optional<ChatFormat> ChatTemplate::recognize(std::string_view jinja) {
  const auto has = [&](std::string_view s) { return jinja.find(s) != std::string_view::npos; };
  if (has("<|im_start|>")) return ChatFormat::kChatML;
  if (has("<|start_header_id|>") && has("<|end_header_id|>")) return ChatFormat::kLlama3;
  if (has("[INST]")) return ChatFormat::kLlama2;
  if (has("<start_of_turn>")) return ChatFormat::kGemma;
  if (has("<|assistant|>") && has("<|end|>")) return ChatFormat::kPhi3;
  return std::nullopt;
}

std::optional<ChatTemplate> ChatTemplate::detect(const GgufFile& file, const Vocabulary& vocab) {
  if (const GgufValue* text = file.find(names::kChatTemplate)) {
    if (auto format = recognize(text->as_string(names::kChatTemplate))) return ChatTemplate(*format);
    return std::nullopt;  // a template we do not know: do not guess another format
  }
  const std::string arch = file.architecture();
  if (arch == "qwen2" || arch == "qwen3" || vocab.find("<|im_start|>") != kNoToken)
    return ChatTemplate(ChatFormat::kChatML);
  if (arch == "gemma" || arch == "gemma2" || arch == "gemma3" ||
      vocab.find("<start_of_turn>") != kNoToken)
    return ChatTemplate(ChatFormat::kGemma);
  if (arch == "phi3") return ChatTemplate(ChatFormat::kPhi3);
  if (vocab.find("<|start_header_id|>") != kNoToken) return ChatTemplate(ChatFormat::kLlama3);
  return std::nullopt;
}

ChatTemplate ChatTemplate::require(const GgufFile& file, const Vocabulary& vocab) {
  if (auto found = detect(file, vocab)) return *found;
  if (file.find(names::kChatTemplate) != nullptr)
    throw error(file.path(), ": metadata ", names::kChatTemplate,
                ": expected a template of a known format (", known_names(),
                "), found one that is none of them (choose one with --chat-template NAME)");
  throw error(file.path(), ": no chat template: the file has no ", names::kChatTemplate,
              " and architecture '", file.architecture(),
              "' with this vocabulary has no known chat format (known: ", known_names(),
              "); this is probably not a chat model (or choose one with --chat-template NAME)");
}

const char* ChatTemplate::name() const {
  switch (format_) {
    case ChatFormat::kChatML: return "chatml";
    case ChatFormat::kLlama2: return "llama2";
    case ChatFormat::kLlama3: return "llama3";
    case ChatFormat::kGemma: return "gemma";
    case ChatFormat::kPhi3: return "phi3";
  }
  return "?";
}

RenderedChat ChatTemplate::render(std::span<const ChatMessage> messages, bool add_generation_prompt) const {
  for (const ChatMessage& m : messages) check_role(m);
  switch (format_) {
    case ChatFormat::kChatML: return render_chatml(messages, add_generation_prompt);
    case ChatFormat::kLlama2: return render_llama2(messages);
    case ChatFormat::kLlama3: return render_llama3(messages, add_generation_prompt);
    case ChatFormat::kGemma: return render_gemma(messages, add_generation_prompt);
    case ChatFormat::kPhi3: return render_phi3(messages, add_generation_prompt);
  }
  return {};
}

std::string ChatTemplate::apply(std::span<const ChatMessage> messages,
                                bool add_generation_prompt) const {
  return render(messages, add_generation_prompt).text;
}

}  // namespace gguflow
