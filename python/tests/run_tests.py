"""ctest's entry for the Python module: SKIPPED (exit 77) without the shared data, else the
unittest suite in this folder (exit 0 only when every test passes).

Environment (set by python/CMakeLists.txt): PYTHONPATH=build/python, GGUFLOW_CLI (the built
`gguflow`, for comparisons), GGUFLOW_TEST_DATA or GGUFLOW_TEST_DATA_DEFAULT (../shared/data).
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from support import data_dir  # noqa: E402


def main():
    if not os.path.exists(os.path.join(data_dir(), "models", "stories260K.gguf")):
        print(f"SKIPPED: {data_dir()}/models/stories260K.gguf not found (GGUFLOW_TEST_DATA)")
        return 77
    suite = unittest.defaultTestLoader.discover(os.path.dirname(os.path.abspath(__file__)),
                                                "test_*.py")
    return 0 if unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful() else 1


# Guarded: Dask's LocalCluster starts workers with multiprocessing's spawn, which imports this
# file again in each of them; unguarded, every worker would run the suite (and its clusters).
if __name__ == "__main__":
    sys.exit(main())
