"""gguflow: GGUF language models on CPUs as dataflow graphs.

    import gguflow
    m = gguflow.Model("stories260K.gguf")
    m.generate("Once upon a time", n_predict=32, temperature=0)   # the continuation, as `gguflow run`
    m.embed(["a text", "another"])                                # numpy float32 [2, dim], as `gguflow embed`
    for piece in m.generate_stream("Once upon a time", n_predict=32): print(piece, end="")

The work is done by the C++ runtime (the extension `gguflow._native`); errors raise
gguflow.Error (a ValueError) with the same message the CLI prints.
"""
from ._native import Error, Model, kernels
from .streaming import generate_stream as _generate_stream

# A method in Python (streaming.py): a thread and a queue around the native generate().
Model.generate_stream = _generate_stream

__all__ = ["Error", "Model", "kernels"]
