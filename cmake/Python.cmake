# Python for the Python tests (tests/deploy).
# Debian's pybind11-dev, python3-numpy and python3-distributed belong to /usr/bin/python3; a
# pyenv or venv python first on PATH lacks them, so that interpreter is preferred unless
# Python3_EXECUTABLE is given.
if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python3_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "Python interpreter")
endif()
find_package(Python3 COMPONENTS Interpreter)
