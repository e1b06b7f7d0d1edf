// libFuzzer target: the server's request parsing (runtime/server/openai_request.cc) on arbitrary
// bodies. Byte 0 chooses the endpoint (chat, completions, embeddings: byte % 3); the rest is the
// body. Every body must end in a parsed request or an ApiError (what becomes a 400); any other
// exception (a nlohmann type_error from reading a field as the wrong type, say) escapes and is
// a finding. Seeds: fuzz/seeds/server_request.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/server/api_error.h"
#include "runtime/server/openai_request.h"
#include "runtime/server/openai_response.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gguflow::server;
  if (size < 1) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    const gguflow::Json json = parse_body(body);
    switch (data[0] % 3) {
      case 0:
      case 1: {
        const GenerationRequest r =
            data[0] % 3 == 0 ? parse_chat_request(json) : parse_completion_request(json);
        // What the handler echoes back from a request must serialize (strings become JSON).
        const ResponseHeader header{"id", 0, r.model};
        (void)sse_event(chunk_json(r.kind, header, r.prompt, true, nullptr));
        for (const auto& m : r.messages) (void)gguflow::json_text(gguflow::Json(m.content));
        break;
      }
      case 2:
        (void)parse_embedding_request(json);
        break;
    }
  } catch (const ApiError&) {
  }
  return 0;
}
