"""gguflow.dask.embed_corpus on a LocalCluster of 2 worker processes over 2,000 lines: the shards
equal a single-process embed bit for bit, and a worker SIGKILLed mid-job leaves no line missing
or duplicated and no partial shard."""
import glob
import os
import pathlib
import signal
import tempfile
import threading
import time
import unittest

import numpy

import gguflow
from support import data_dir, model_path

try:
    from distributed import Client, LocalCluster
except ImportError:
    Client = None

N_LINES = 2000


def corpus():
    # Every sentence of the shared stories, numbered so that each of the 2,000 lines is its own.
    sentences = []
    for name in ("calib.txt", "eval.txt"):
        with open(os.path.join(data_dir(), "text", name), encoding="utf-8") as f:
            for story in f:
                sentences += [s.strip() for s in story.split(". ") if s.strip()]
    return [f"{i}. {sentences[i % len(sentences)]}" for i in range(N_LINES)]


class FileLinesTest(unittest.TestCase):
    """Counting (_partitions) and reading (_read_lines) agree with `gguflow embed` on what a line
    is: only \n ends one (a lone \r or U+2028 is text, a \r before \n is dropped)."""

    def test_only_newline_ends_a_line(self):
        from gguflow.dask import _partitions, _read_lines
        with tempfile.TemporaryDirectory() as tmp:
            path = pathlib.Path(tmp, "lines.txt")
            path.write_bytes("one\rstill one\ntwo\r\nthree\nlast\u2028x\n".encode())
            parts = list(_partitions([path], 2))
            self.assertEqual([first for first, _ in parts], [0, 2])
            lines = [line for _, source in parts for line in _read_lines(*source)]
            self.assertEqual(lines, ["one\rstill one", "two", "three", "last\u2028x"])


@unittest.skipIf(Client is None, "python3-distributed not installed (tools/install-deps.sh)")
class DaskEmbedTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from gguflow.dask import embed_corpus, load_shards
        cls.embed_corpus, cls.load_shards = staticmethod(embed_corpus), staticmethod(load_shards)
        cls.lines = corpus()
        cls.expected = gguflow.Model(model_path(), threads=1).embed(cls.lines)
        cls.cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                   dashboard_address=None)
        cls.client = Client(cls.cluster)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.cluster.close()

    def check_shards(self, out, shards):
        self.assertEqual(sorted(glob.glob(os.path.join(out, "part-*.npz"))), sorted(shards))
        self.assertEqual(glob.glob(os.path.join(out, ".*")), [])  # no temporary file left
        index, vectors = self.load_shards(shards)
        numpy.testing.assert_array_equal(index, numpy.arange(N_LINES))  # none missing, none twice
        self.assertEqual(vectors.tobytes(), self.expected.tobytes())

    def test_lines_equal_single_process(self):
        with tempfile.TemporaryDirectory() as out:
            shards = self.embed_corpus(self.client, self.lines, model_path(), out,
                                       partition_size=300, threads=1)
            self.assertEqual(len(shards), 7)
            self.check_shards(out, shards)

    def test_files_equal_single_process(self):
        with tempfile.TemporaryDirectory() as tmp:
            files = [pathlib.Path(tmp, "a.txt"), pathlib.Path(tmp, "b.txt")]
            files[0].write_text("\n".join(self.lines[:1234]) + "\n", encoding="utf-8")
            files[1].write_text("\n".join(self.lines[1234:]) + "\n", encoding="utf-8")
            out = os.path.join(tmp, "out")
            shards = self.embed_corpus(self.client, files, model_path(), out,
                                       partition_size=500, threads=1)
            self.assertEqual(len(shards), 3 + 2)  # 1234 lines: 3 partitions; 766: 2
            self.check_shards(out, shards)

    def test_worker_killed_mid_job(self):
        pids = set(self.client.run(os.getpid).values())
        with tempfile.TemporaryDirectory() as out:
            result = {}

            def job():
                try:
                    result["shards"] = self.embed_corpus(self.client, self.lines, model_path(),
                                                         out, partition_size=20, threads=1)
                except Exception as e:  # reported below, in the test's thread
                    result["error"] = e

            runner = threading.Thread(target=job)
            runner.start()
            deadline = time.monotonic() + 60
            while not glob.glob(os.path.join(out, "part-*.npz")):
                self.assertLess(time.monotonic(), deadline, "no shard was written")
                time.sleep(0.005)
            victim = next(iter(pids))
            os.kill(victim, signal.SIGKILL)
            written_at_kill = len(glob.glob(os.path.join(out, "part-*.npz")))
            runner.join(300)
            self.assertFalse(runner.is_alive(), "the job hung after the worker was killed")
            self.assertNotIn("error", result)
            self.assertLess(written_at_kill, N_LINES // 20, "the job had ended before the kill")
            self.check_shards(out, result["shards"])
        # The nanny replaced the killed worker: the job ran on a new process too.
        deadline = time.monotonic() + 60
        while len(self.client.scheduler_info()["workers"]) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertNotIn(victim, set(self.client.run(os.getpid).values()))


if __name__ == "__main__":
    unittest.main()
