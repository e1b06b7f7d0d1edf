#include "runtime/cli/commands.h"

#include <array>

namespace gguflow::cli {

std::span<const Command> commands() {
  static constexpr std::array kCommands = {
      Command{"inspect", "print a GGUF file's header, hyperparameters and tensor type mix",
              run_inspect},
  };
  return kCommands;
}

}  // namespace gguflow::cli
