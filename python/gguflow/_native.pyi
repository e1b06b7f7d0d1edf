"""Types of the extension module gguflow._native (python/src/module.cc)."""
from typing import Callable, Iterator, Optional, Sequence

import numpy
import numpy.typing

class Error(ValueError):
    """Bad input (file, graph, option, prompt): the message the CLI prints for it."""

class Model:
    """A GGUF model, memory-mapped, with its tokenizer and kernel plugin."""

    def __init__(
        self,
        path: str,
        graph: Optional[str] = None,
        threads: Optional[int] = None,
        kernels: Optional[str] = None,
        ctx: Optional[int] = None,
    ) -> None: ...
    @property
    def path(self) -> str: ...
    @property
    def vocab_size(self) -> int: ...
    @property
    def kernels(self) -> str: ...
    def tokenize(self, text: str, add_special: bool = True, special: bool = False) -> list[int]: ...
    def detokenize(self, ids: Sequence[int]) -> str: ...
    def generate(
        self,
        prompt: str,
        n_predict: int = -1,
        temperature: Optional[float] = None,
        seed: Optional[int] = None,
        top_k: Optional[int] = None,
        top_p: Optional[float] = None,
        min_p: Optional[float] = None,
        repeat_penalty: Optional[float] = None,
        special: bool = False,
        on_text: Optional[Callable[[str], None]] = None,
    ) -> str: ...
    def generate_stream(
        self,
        prompt: str,
        n_predict: int = -1,
        temperature: Optional[float] = None,
        seed: Optional[int] = None,
        top_k: Optional[int] = None,
        top_p: Optional[float] = None,
        min_p: Optional[float] = None,
        repeat_penalty: Optional[float] = None,
        special: bool = False,
    ) -> Iterator[str]: ...
    def embed(
        self, texts: Sequence[str], pooling: Optional[str] = None, normalize: bool = True
    ) -> numpy.typing.NDArray[numpy.float32]: ...
    def logits(self, ids: Sequence[int]) -> numpy.typing.NDArray[numpy.float32]: ...

def kernels(kernels: Optional[str] = None) -> list[dict[str, object]]: ...
