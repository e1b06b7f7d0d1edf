"""Batch embedding of a corpus on a Dask distributed cluster (Debian python3-distributed).

    from distributed import Client
    from gguflow.dask import embed_corpus
    shards = embed_corpus(Client("scheduler:8786"), lines, "/models/m.gguf", "/shared/out")

The corpus is cut into partitions of `partition_size` lines; each is one task. A worker loads the
model once (memory-mapped, so workers on one host share its pages) and keeps it for every later
partition. Each task writes one shard, `part-NNNNN.npz` with `index` (int64, the lines' positions
in the corpus) and `vectors` (float32 [lines, dim], bit for bit what `gguflow embed` gives), to a
temporary name first and renames it into place: a shard is whole or absent. A task that is run
again (its worker died, the task was retried or speculatively duplicated) writes the same name
with the same bytes, so no shard is ever partial or duplicated, and no line is missing once the
call returns.
"""
import os
import threading
import uuid

import numpy

SHARD_PATTERN = "part-{:05d}.npz"

# One Model per worker process and settings: loaded by the first task there, reused by the rest.
_models = {}
_models_lock = threading.Lock()


def _model(model_path, threads, kernels):
    import gguflow  # on the worker
    key = (model_path, threads, kernels)
    with _models_lock:
        if key not in _models:
            _models[key] = gguflow.Model(model_path, threads=threads, kernels=kernels)
        return _models[key]


def _read_lines(path, start, count):
    """Lines [start, start + count) of a UTF-8 text file, without their line breaks. Only \n
    ends a line, as for `gguflow embed` and _partitions' count (a lone \r is text)."""
    out = []
    with open(path, encoding="utf-8", newline="\n") as f:
        for i, line in enumerate(f):
            if i >= start + count:
                break
            if i >= start:
                out.append(line.rstrip("\r\n"))
    return out


def _embed_partition(job, number, first_index, source, out_dir, model_path, pooling, normalize,
                     threads, kernels):
    """One task: embeds a partition and publishes its shard atomically; returns its path."""
    lines = _read_lines(*source) if isinstance(source, tuple) else source
    vectors = _model(model_path, threads, kernels).embed(lines, pooling=pooling,
                                                         normalize=normalize)
    final = os.path.join(out_dir, SHARD_PATTERN.format(number))
    # A name no other attempt uses; hidden, so a reader globbing part-*.npz never sees it.
    temp = os.path.join(out_dir, _temp_name(job, SHARD_PATTERN.format(number)))
    with open(temp, "wb") as f:
        numpy.savez(f, index=numpy.arange(first_index, first_index + len(lines), dtype=numpy.int64),
                    vectors=vectors)
        f.flush()
        os.fsync(f.fileno())  # the bytes are on disk before the name says the shard is there
    os.replace(temp, final)
    return final


def _temp_name(job, shard):
    """A shard's temporary file: hidden, and named after its job so that clean-up after one
    embed_corpus touches no other job's files in the same folder."""
    return f".{shard}.{job}.{uuid.uuid4().hex}.tmp"


def _partitions(lines_or_files, partition_size):
    """(first line index, source) per partition: a list of lines, or (path, start, count) for a
    file's range, read on the worker. Files are only counted here."""
    if all(isinstance(x, os.PathLike) for x in lines_or_files) and lines_or_files:
        first = 0
        for path in lines_or_files:
            with open(path, "rb") as f:
                n = sum(1 for _ in f)
            for start in range(0, n, partition_size):
                yield first + start, (os.fspath(path), start, min(partition_size, n - start))
            first += n
        return
    if not all(isinstance(x, str) for x in lines_or_files):
        raise TypeError("lines_or_files: expected a list of str (lines) or of os.PathLike "
                        "(UTF-8 files, one text per line)")
    for start in range(0, len(lines_or_files), partition_size):
        yield start, list(lines_or_files[start:start + partition_size])


def embed_corpus(client, lines_or_files, model_path, out_dir, partition_size=1000, pooling=None,
                 normalize=True, threads=None, kernels=None):
    """Embeds every line on the cluster; returns the shard paths in corpus order.

    lines_or_files: a list of str (the texts), or a list of pathlib.Path (UTF-8 files, one text
    per line, in order; workers read their own line ranges, so the files must be at the same
    path on every worker). model_path: the .gguf, at the same path on every worker. out_dir:
    a folder every worker can write (shared storage on a real cluster). threads, kernels: for
    each worker's gguflow.Model (threads=None uses every core: with several worker processes
    on one host, give each cores / processes). pooling, normalize: as Model.embed.
    Raises the first task's exception (gguflow.Error for a bad model or text)."""
    if partition_size < 1:
        raise ValueError(f"partition_size: expected at least 1, found {partition_size}")
    os.makedirs(out_dir, exist_ok=True)
    model_path, out_dir = os.path.abspath(model_path), os.path.abspath(out_dir)
    job = uuid.uuid4().hex
    futures = [client.submit(_embed_partition, job, number, first, source, out_dir, model_path,
                             pooling, normalize, threads, kernels,
                             key=f"gguflow-embed-{job}-{number}", pure=False)
               for number, (first, source) in enumerate(_partitions(lines_or_files, partition_size))]
    shards = client.gather(futures)
    # Attempts of this job that died between writing and renaming left their temporary files.
    for name in os.listdir(out_dir):
        if name.startswith(".part-") and name.endswith(".tmp") and f".{job}." in name:
            os.remove(os.path.join(out_dir, name))
    return shards


def load_shards(shards):
    """(index int64 [n], vectors float32 [n, dim]) of shards, concatenated in the given order."""
    parts = [numpy.load(s) for s in shards]
    if not parts:
        return numpy.zeros(0, numpy.int64), numpy.zeros((0, 0), numpy.float32)
    return (numpy.concatenate([p["index"] for p in parts]),
            numpy.concatenate([p["vectors"] for p in parts]))
