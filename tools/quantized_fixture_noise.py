#!/usr/bin/env python3
"""How far the quantized family fixtures' reference logits are from what any implementation can
compute (docs/ADDING_A_FAMILY.md, "Quantized fixtures: how close anyone can get").

For each synth-{gemma2,gemma3,qwen3,phi3}-tiny-{Q8_0,Q4_K_M} model and sequence s1, s2 of
../shared/data/reference/logits, prints one Markdown row of NRMSE (over all positions):
  ours vs reference           gguflow's logits (V cache f16, as the reference's)
  exact product vs reference  the model dequantized by `gguflow quantize M OUT F32` and run with
                              f32 activations: the quantized weights' own answer
  reference vs its f32 model  the reference's total quantization error
  ours vs reference's f32     ours, for comparison

Usage: tools/quantized_fixture_noise.py [BUILD_DIR] (default build); GGUFLOW_TEST_DATA overrides
the data folder. Needs numpy (python3-numpy).
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "build")
gguflow = os.path.join(build, "bin", "gguflow")
data = os.environ.get("GGUFLOW_TEST_DATA", os.path.join(here, "..", "..", "shared", "data"))


def logits(model, tokens, work):
    out = os.path.join(work, "logits.f32")
    subprocess.run([gguflow, "run", "-m", model, "--tokens", ",".join(map(str, tokens)),
                    "--dump-logits", out, "--greedy", "0", "-ctv", "f16"], check=True, capture_output=True)
    return np.fromfile(out, dtype=np.float32).astype(np.float64)


def nrmse(got, ref):
    return float(np.sqrt(((got - ref) ** 2).sum() / (ref ** 2).sum()))


def reference(stem):
    return np.fromfile(os.path.join(data, "reference", "logits", stem + ".bin"), dtype=np.float32).astype(np.float64)


print("| fixture | seq | ours vs reference | exact product vs reference | reference vs its f32 model | ours vs reference's f32 model |")
print("|---|---|---:|---:|---:|---:|")
with tempfile.TemporaryDirectory() as work:
    for family in ["gemma2", "gemma3", "qwen3", "phi3"]:
        for qtype in ["Q8_0", "Q4_K_M"]:
            model = os.path.join(data, "models", f"synth-{family}-tiny-{qtype}.gguf")
            exact_model = os.path.join(work, "dequantized.gguf")
            subprocess.run([gguflow, "quantize", model, exact_model, "F32"], check=True, capture_output=True)
            for seq in ["s1", "s2"]:
                stem = f"synth-{family}-tiny-{qtype}.{seq}"
                tokens = json.load(open(os.path.join(data, "reference", "logits", stem + ".json")))["tokens"]
                ref, ref_f32 = reference(stem), reference(f"synth-{family}-tiny-f32.{seq}")
                ours, exact = logits(model, tokens, work), logits(exact_model, tokens, work)
                print(f"| {family} {qtype} | {seq} | {nrmse(ours, ref):.4f} | {nrmse(exact, ref):.4f} | "
                      f"{nrmse(ref, ref_f32):.4f} | {nrmse(ours, ref_f32):.4f} |", flush=True)
