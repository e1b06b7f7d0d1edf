# Finds the Debian 12 packages gguflow is built on. A missing one stops the configure step with
# the name of the package that provides it.

macro(gguflow_require_package found debian_package what)
  if(NOT ${found})
    message(FATAL_ERROR
      "gguflow needs ${what}. On Debian 12 install it with:\n"
      "  sudo apt-get install ${debian_package}")
  endif()
endmacro()

find_package(Threads REQUIRED)

find_package(TBB CONFIG QUIET)
gguflow_require_package(TBB_FOUND libtbb-dev "oneTBB (2021.8)")

find_package(yaml-cpp CONFIG QUIET)
gguflow_require_package(yaml-cpp_FOUND libyaml-cpp-dev "yaml-cpp (0.7)")

find_package(hwy CONFIG QUIET)
gguflow_require_package(hwy_FOUND libhwy-dev "Google Highway (1.0.3)")

find_package(Boost 1.74 QUIET COMPONENTS filesystem)
gguflow_require_package(Boost_FOUND "libboost-dev libboost-filesystem-dev" "Boost.DLL and Boost.Filesystem (1.74)")
if(NOT EXISTS "${Boost_INCLUDE_DIRS}/boost/dll.hpp")
  message(FATAL_ERROR "gguflow needs Boost.DLL. On Debian 12: sudo apt-get install libboost-dev")
endif()

find_package(CLI11 CONFIG QUIET)
gguflow_require_package(CLI11_FOUND libcli11-dev "CLI11 (2.1), the command-line parser")

find_package(nlohmann_json 3.11 CONFIG QUIET)
gguflow_require_package(nlohmann_json_FOUND nlohmann-json3-dev "nlohmann-json (3.11), the JSON library")

# cpp-httplib ships a pkg-config file only; its flags (-DCPPHTTPLIB_OPENSSL_SUPPORT, ...) must
# match how Debian built libcpp-httplib.so, so they come from there too.
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(CPP_HTTPLIB QUIET IMPORTED_TARGET cpp-httplib>=0.11)
endif()
gguflow_require_package(CPP_HTTPLIB_FOUND "pkg-config libcpp-httplib-dev" "cpp-httplib (0.11), the HTTP server of `gguflow serve`")

if(GGUFLOW_BUILD_TESTS)
  find_package(GTest QUIET)
  gguflow_require_package(GTest_FOUND libgtest-dev "GoogleTest")
  include(GoogleTest)
endif()

if(GGUFLOW_BUILD_BENCH)
  find_package(benchmark QUIET)
  gguflow_require_package(benchmark_FOUND libbenchmark-dev "Google Benchmark")
endif()
