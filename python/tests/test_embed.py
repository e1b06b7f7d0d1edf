"""Model.embed against `gguflow embed --format npy`, bit for bit."""
import os
import tempfile
import unittest

import numpy

import gguflow
from support import cli, data_dir, model_path


def texts():
    # Real texts of different lengths from the shared data: each story's sentences, then the
    # whole stories (longer ones), so a batch spans several graph steps of the CLI's budget.
    with open(os.path.join(data_dir(), "text", "eval.txt"), encoding="utf-8") as f:
        stories = [l.strip() for l in f if l.strip()]
    sentences = [s.strip() + "." for story in stories for s in story.split(". ") if s.strip()]
    return sentences + stories


class EmbedTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = gguflow.Model(model_path(), threads=2)
        cls.texts = texts()

    def cli_embed(self, *args):
        with tempfile.TemporaryDirectory() as tmp:
            inp, out = os.path.join(tmp, "in.txt"), os.path.join(tmp, "out.npy")
            with open(inp, "w", encoding="utf-8") as f:
                f.write("\n".join(self.texts) + "\n")
            rc, _, err = cli("embed", "-m", model_path(), "--threads", "2", "--input", inp,
                             "--format", "npy", "-o", out, "--progress", "summary", *args)
            self.assertEqual(rc, 0, err)
            return numpy.load(out)

    def test_equals_cli_bit_for_bit(self):
        expected = self.cli_embed()
        got = self.model.embed(self.texts)
        self.assertEqual(got.dtype, numpy.float32)
        self.assertEqual(got.shape, expected.shape)
        self.assertEqual(got.tobytes(), expected.astype(numpy.float32).tobytes())

    def test_pooling_and_normalize_equal_cli(self):
        expected = self.cli_embed("--pooling", "last", "--normalize", "none")
        got = self.model.embed(self.texts, pooling="last", normalize=False)
        self.assertEqual(got.tobytes(), expected.astype(numpy.float32).tobytes())
        self.assertFalse(numpy.allclose(numpy.linalg.norm(got, axis=1), 1.0))

    def test_batch_equals_one_by_one(self):
        batch = self.model.embed(self.texts[:20])
        alone = numpy.concatenate([self.model.embed([t]) for t in self.texts[:20]])
        self.assertEqual(batch.tobytes(), alone.tobytes())

    def test_errors(self):
        with self.assertRaisesRegex(gguflow.Error, "pooling"):
            self.model.embed(["x"], pooling="none")
        rc, _, err = cli("embed", "-m", model_path(), "--pooling", "bogus", stdin=b"x\n")
        self.assertEqual(rc, 2)  # a malformed option value: a usage error (docs/CLI.md)
        with self.assertRaises(gguflow.Error) as caught:
            self.model.embed(["x"], pooling="bogus")
        self.assertIn(str(caught.exception), err)
        self.assertEqual(self.model.embed([]).shape, (0, 64))


if __name__ == "__main__":
    unittest.main()
