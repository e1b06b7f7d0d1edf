"""gguflow: GGUF language models on CPUs as dataflow graphs.

    import gguflow
    m = gguflow.Model("stories260K.gguf")
    m.generate("Once upon a time", n_predict=32, temperature=0)   # the continuation, as `gguflow run`
    m.embed(["a text", "another"])                                # numpy float32 [2, dim], as `gguflow embed`

The work is done by the C++ runtime (the extension `gguflow._native`); errors raise
gguflow.Error (a ValueError) with the same message the CLI prints.
"""
from ._native import Error, Model, kernels

__all__ = ["Error", "Model", "kernels"]
