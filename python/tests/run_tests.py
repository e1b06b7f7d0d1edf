"""ctest's entries for the Python module: SKIPPED (exit 77) without the shared data, else the
unittest files in this folder (exit 0 only when every test ran and passed).

  run_tests.py [--only NAME | --except NAME]    NAME: a test file without .py (e.g. test_dask)

A test that skips itself (test_dask without python3-distributed) makes the whole run exit 77, so
ctest reports SKIPPED with the reason rather than Passed; python/CMakeLists.txt therefore runs
test_dask as its own entry (PythonDask), so that a missing Dask does not hide the other files'
results.

Environment (set by python/CMakeLists.txt): PYTHONPATH=build/python, GGUFLOW_CLI (the built
`gguflow`, for comparisons), GGUFLOW_TEST_DATA or GGUFLOW_TEST_DATA_DEFAULT (../shared/data).
"""
import argparse
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from support import data_dir  # noqa: E402


def test_files(only, excluded):
    names = sorted(f[:-3] for f in os.listdir(HERE) if f.startswith("test_") and f.endswith(".py"))
    if only is not None:
        if only not in names:
            sys.exit(f"run_tests.py: no test file {only}.py in {HERE}")
        return [only]
    return [n for n in names if n != excluded]


def main():
    parser = argparse.ArgumentParser()
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--only", help="run only this test file (name without .py)")
    group.add_argument("--except", dest="excluded", help="run every test file but this one")
    args = parser.parse_args()
    if not os.path.exists(os.path.join(data_dir(), "models", "stories260K.gguf")):
        print(f"SKIPPED: {data_dir()}/models/stories260K.gguf not found (GGUFLOW_TEST_DATA)")
        return 77
    suite = unittest.defaultTestLoader.loadTestsFromNames(test_files(args.only, args.excluded))
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    if not result.wasSuccessful():
        return 1
    if result.skipped:
        reasons = sorted({reason for _, reason in result.skipped})
        print(f"SKIPPED: {len(result.skipped)} of {result.testsRun} tests: {'; '.join(reasons)}")
        return 77
    return 0


# Guarded: Dask's LocalCluster starts workers with multiprocessing's spawn, which imports this
# file again in each of them; unguarded, every worker would run the suite (and its clusters).
if __name__ == "__main__":
    sys.exit(main())
