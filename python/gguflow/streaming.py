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


def generate_stream(model, prompt, n_predict=-1, temperature=None, seed=None, top_k=None,
                    top_p=None, min_p=None, repeat_penalty=None, special=False):
    """Yields the continuation of `prompt` piece by piece (whole UTF-8 characters); the pieces
    join to what model.generate() returns for the same arguments, which are generate()'s but
    on_text. A wrong argument name raises TypeError here; a wrong value (gguflow.Error) is
    raised by the iteration, when generation starts."""
    return _pieces(model, prompt, dict(n_predict=n_predict, temperature=temperature, seed=seed,
                                       top_k=top_k, top_p=top_p, min_p=min_p,
                                       repeat_penalty=repeat_penalty, special=special))


def _pieces(model, prompt, kwargs):
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
