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

if not os.path.exists(os.path.join(data_dir(), "models", "stories260K.gguf")):
    print(f"SKIPPED: {data_dir()}/models/stories260K.gguf not found (GGUFLOW_TEST_DATA)")
    sys.exit(77)
suite = unittest.defaultTestLoader.discover(os.path.dirname(os.path.abspath(__file__)), "test_*.py")
result = unittest.TextTestRunner(verbosity=2).run(suite)
sys.exit(0 if result.wasSuccessful() else 1)
