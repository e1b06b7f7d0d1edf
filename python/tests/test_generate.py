"""Model.generate, tokenize, detokenize and logits against the CLI on stories260K."""
import os
import tempfile
import threading
import unittest

import numpy

import gguflow
from support import cli, model_path


class GenerateTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = gguflow.Model(model_path(), threads=2)

    def run_cli(self, *args):
        rc, out, err = cli("run", "-m", model_path(), "--no-echo", "--threads", "2", *args)
        self.assertEqual(rc, 0, err)
        return out.decode()

    def test_greedy_equals_run(self):
        for prompt, n in [("Once upon a time", 32), ("Lily and Ben went to", 100), ("", 200)]:
            with self.subTest(prompt=prompt):
                expected = self.run_cli("-p", prompt, "-n", str(n), "--temp", "0")
                self.assertEqual(self.model.generate(prompt, n_predict=n, temperature=0), expected)

    def test_seeded_sampling_equals_run(self):
        expected = self.run_cli("-p", "Once upon a time", "-n", "48", "--temp", "0.8", "-s", "7",
                                "--top-k", "40")
        got = self.model.generate("Once upon a time", n_predict=48, temperature=0.8, seed=7, top_k=40)
        self.assertEqual(got, expected)

    def test_on_text_streams_the_same_text(self):
        pieces = []
        text = self.model.generate("Once upon a time", n_predict=40, temperature=0,
                                   on_text=pieces.append)
        self.assertGreater(len(pieces), 1)
        self.assertEqual("".join(pieces), text)

    def test_generate_stream(self):
        expected = self.model.generate("Once upon a time", n_predict=40, temperature=0)
        pieces = list(self.model.generate_stream("Once upon a time", n_predict=40, temperature=0))
        self.assertGreater(len(pieces), 1)
        self.assertEqual("".join(pieces), expected)
        # Leaving early stops generation; the model is ready for the next call.
        for i, _ in enumerate(self.model.generate_stream("Lily", n_predict=-1, temperature=0)):
            if i == 3:
                break
        self.assertEqual(self.model.generate("Once upon a time", n_predict=40, temperature=0),
                         expected)
        with self.assertRaisesRegex(gguflow.Error, "temperature"):
            list(self.model.generate_stream("x", temperature=-1))

    def test_generate_stream_takes_generates_arguments(self):
        expected = self.model.generate("Once upon a time", 12, 0)  # positional, as generate()
        self.assertEqual("".join(self.model.generate_stream("Once upon a time", 12, 0)), expected)
        with self.assertRaises(TypeError):  # refused at the call, before any iteration
            self.model.generate_stream("x", on_text=print)

    def test_a_callback_calling_the_same_model_raises(self):
        # It would otherwise wait forever on the lock its own call holds.
        with self.assertRaisesRegex(gguflow.Error, "called back into the Model"):
            self.model.generate("Once", n_predict=4, on_text=lambda text: self.model.logits([1]))
        self.assertTrue(self.model.generate("Once", n_predict=4, temperature=0))  # usable again

    def test_seed_range(self):
        top = 2**64 - 1  # any 64-bit pattern seeds
        self.assertEqual(self.model.generate("Once", n_predict=8, seed=top),
                         self.model.generate("Once", n_predict=8, seed=top))
        self.assertEqual(self.model.generate("Once", n_predict=8, seed=numpy.int64(5)),
                         self.model.generate("Once", n_predict=8, seed=5))  # __index__ objects
        for seed in (-1, 2**64):
            with self.assertRaisesRegex(gguflow.Error, "seed"):
                self.model.generate("Once", n_predict=1, seed=seed)
        for seed in (1.5, True, "7"):
            with self.assertRaises(TypeError):
                self.model.generate("Once", n_predict=1, seed=seed)

    def test_bytes_that_are_not_utf8_arrive_as_replacement_characters(self):
        self.assertEqual(self.model.detokenize([198]), "\ufffd")  # <0xC3>, a byte-fallback token
        # A random-weight byte-level BPE model generates invalid UTF-8 at a high temperature: the
        # reply (and every streamed piece) must arrive, with U+FFFD where the bytes were.
        qwen = gguflow.Model(model_path("synth-qwen2-tiny-Q8_0.gguf"), threads=2)
        replaced = 0
        for seed in range(16):
            text = qwen.generate("Hi", n_predict=8, temperature=1.5, seed=seed)
            pieces = list(qwen.generate_stream("Hi", n_predict=8, temperature=1.5, seed=seed))
            self.assertEqual("".join(pieces), text)
            replaced += "\ufffd" in text
        self.assertGreater(replaced, 0, "no seed produced invalid UTF-8: the check tests nothing")

    def test_calls_from_threads_are_serialized(self):
        # One Session per model: concurrent calls must queue on its lock, not interleave.
        expected = self.model.generate("Once upon a time", n_predict=24, temperature=0)
        results = [None] * 4

        def work(i):
            results[i] = self.model.generate("Once upon a time", n_predict=24, temperature=0)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        self.assertEqual(results, [expected] * 4)

    def test_tokenize_and_detokenize(self):
        ids = self.model.tokenize("Once upon a time")
        self.assertEqual(ids[0], 1)  # BOS, as the SentencePiece vocabulary says
        self.assertEqual(self.model.tokenize("Once upon a time", add_special=False), ids[1:])
        self.assertEqual(self.model.detokenize(ids), "Once upon a time")
        rc, out, err = cli("tokenize", "-m", model_path(), "-p", "Once upon a time", "--ids")
        self.assertEqual(rc, 0, err)
        self.assertEqual([int(t) for t in out.decode().split()], ids)

    def test_logits_equal_run_tokens(self):
        ids = [1, 403, 407, 261, 378]
        with tempfile.TemporaryDirectory() as tmp:
            dump = os.path.join(tmp, "logits.f32")
            rc, _, err = cli("run", "-m", model_path(), "--threads", "2",
                             "--tokens", ",".join(map(str, ids)), "--dump-logits", dump)
            self.assertEqual(rc, 0, err)
            expected = numpy.fromfile(dump, dtype=numpy.float32).reshape(len(ids), -1)
        got = self.model.logits(ids)
        self.assertEqual(got.shape, (len(ids), self.model.vocab_size))
        self.assertEqual(got.tobytes(), expected.tobytes())

    def test_errors_carry_the_cli_message(self):
        rc, _, err = cli("run", "-m", "/nonexistent/m.gguf", "-p", "x")
        self.assertEqual(rc, 1)
        with self.assertRaises(gguflow.Error) as caught:
            gguflow.Model("/nonexistent/m.gguf")
        self.assertIn(str(caught.exception), err)
        self.assertIsInstance(caught.exception, ValueError)
        rc, _, err = cli("run", "-m", model_path(), "-p", "x", "/nonexistent/g.yaml")
        self.assertEqual(rc, 1)
        with self.assertRaises(gguflow.Error) as caught:
            gguflow.Model(model_path(), graph="/nonexistent/g.yaml")
        self.assertIn(str(caught.exception), err)
        with self.assertRaisesRegex(gguflow.Error, "token id|vocabulary|512"):
            self.model.logits([1, 100000])
        with self.assertRaisesRegex(gguflow.Error, "temperature"):
            self.model.generate("x", temperature=-1)

    def test_kernels(self):
        plugins = gguflow.kernels()
        self.assertEqual(sum(p["selected"] for p in plugins), 1)
        self.assertIn("scalar", [p["name"] for p in plugins])
        self.assertTrue(gguflow.Model(model_path(), kernels="scalar").kernels.startswith("scalar"))
        with self.assertRaises(gguflow.Error):
            gguflow.kernels("no-such-plugin")


if __name__ == "__main__":
    unittest.main()
