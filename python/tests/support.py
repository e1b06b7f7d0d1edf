"""Paths and the CLI for the Python module's tests."""
import os
import subprocess


def data_dir():
    return os.environ.get("GGUFLOW_TEST_DATA") or os.environ.get("GGUFLOW_TEST_DATA_DEFAULT",
                                                                  "../shared/data")


def model_path(name="stories260K.gguf"):
    return os.path.join(data_dir(), "models", name)


def cli(*args, stdin=None):
    """Runs the built `gguflow` with ARGS; returns (exit status, stdout bytes, stderr text)."""
    r = subprocess.run([os.environ["GGUFLOW_CLI"], *args], input=stdin, capture_output=True,
                       timeout=300)
    return r.returncode, r.stdout, r.stderr.decode(errors="replace")
