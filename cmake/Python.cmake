# Python for the bindings (python/, GGUFLOW_PYTHON) and the Python tests (tests/deploy).
# Debian's pybind11-dev, python3-numpy and python3-distributed belong to /usr/bin/python3; a
# pyenv or venv python first on PATH lacks them, so that interpreter is preferred unless
# Python3_EXECUTABLE is given.
if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python3_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "Python interpreter")
endif()
find_package(Python3 COMPONENTS Interpreter Development.Module)
find_package(pybind11 CONFIG QUIET)
# Off by default in sanitizer and fuzz builds: an ASan-instrumented module cannot be loaded into
# the uninstrumented python3 (the ASan runtime must come first in the process).
set(GGUFLOW_PYTHON_DEFAULT OFF)
if(Python3_Development.Module_FOUND AND pybind11_FOUND AND NOT GGUFLOW_SANITIZE AND NOT GGUFLOW_FUZZ)
  set(GGUFLOW_PYTHON_DEFAULT ON)
endif()
option(GGUFLOW_PYTHON "Build the Python module gguflow (python/; needs pybind11 and Python headers)"
       ${GGUFLOW_PYTHON_DEFAULT})
if(GGUFLOW_PYTHON AND NOT (Python3_Development.Module_FOUND AND pybind11_FOUND))
  message(FATAL_ERROR "GGUFLOW_PYTHON=ON needs Python headers and pybind11 "
                      "(Debian: python3-dev pybind11-dev; tools/install-deps.sh)")
endif()
