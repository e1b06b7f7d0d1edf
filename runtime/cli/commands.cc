#include "runtime/cli/commands.h"

#include <array>

namespace gguflow::cli {

std::span<const Command> commands() {
  static constexpr std::array kCommands = {
      Command{"inspect", "print a GGUF file's header, hyperparameters and tensor type mix",
              run_inspect},
      Command{"kernels", "list the kernel plugins found, what this CPU supports and which is selected",
              run_kernels},
  };
  return kCommands;
}

}  // namespace gguflow::cli
