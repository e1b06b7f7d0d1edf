"""Model.generate_stream: generate() as an iterator of text pieces.

generate() runs the graph with the GIL released and calls on_text for each whole piece of text;
here it runs in a thread that puts the pieces in a queue the iterator reads. Leaving the loop
early (break, an exception, the iterator collected) stops generation at its next piece: on_text
raises inside the runtime's loop, which ends generate(); the model is ready for the next call.
"""
import queue
import threading

_DONE = object()


class _Stopped(Exception):
    """Raised by on_text in the generating thread when the consumer has gone."""


def generate_stream(model, prompt, **kwargs):
    """Yields the continuation of `prompt` piece by piece (whole UTF-8 characters); the pieces
    join to what model.generate(prompt, **kwargs) returns. Keyword arguments as generate()
    (n_predict, temperature, seed, ...); errors (gguflow.Error) are raised by the iteration."""
    if "on_text" in kwargs:
        raise TypeError("generate_stream: on_text is the stream itself; use generate() for a callback")
    pieces = queue.Queue()
    stop = threading.Event()

    def on_text(text):
        if stop.is_set():
            raise _Stopped()
        pieces.put(text)

    def run():
        try:
            model.generate(prompt, on_text=on_text, **kwargs)
            pieces.put(_DONE)
        except _Stopped:
            pieces.put(_DONE)
        except BaseException as e:  # handed to the consumer's thread, raised there
            pieces.put(e)

    worker = threading.Thread(target=run, name="gguflow-generate", daemon=True)
    worker.start()
    try:
        while (item := pieces.get()) is not _DONE:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        worker.join()
