# GGUFLOW_FUZZ: the libFuzzer targets in fuzz/ (docs/RELIABILITY.md, "Fuzzing"; tools/fuzz.sh).
# libFuzzer is part of clang, so this needs clang (Debian 12: clang, libfuzzer-14-dev). Every
# gguflow library is compiled with coverage instrumentation for the fuzzer
# (-fsanitize=fuzzer-no-link) and with AddressSanitizer and UndefinedBehaviorSanitizer, every
# UB check fatal as with GGUFLOW_SANITIZE; only the fuzz targets link libFuzzer itself
# (-fsanitize=fuzzer, in fuzz/CMakeLists.txt). A fuzz build folder is for the fuzz targets
# (`ninja gguflow_fuzz`): the kernel plugins, which the targets never load, are not meant to be
# built there (clang links the sanitizer runtimes statically into executables only, so their
# -Wl,-z,defs link fails).
option(GGUFLOW_FUZZ "Build the libFuzzer targets in fuzz/ (clang only)" OFF)

if(GGUFLOW_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR NOT CMAKE_C_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR
      "GGUFLOW_FUZZ=ON needs clang (libFuzzer is part of it), but this build folder uses "
      "${CMAKE_C_COMPILER_ID} ${CMAKE_C_COMPILER} / ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER}. "
      "Configure a new build folder with clang, e.g.\n"
      "  CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DGGUFLOW_FUZZ=ON\n"
      "or run tools/fuzz.sh. On Debian 12: sudo apt-get install clang libfuzzer-14-dev")
  endif()
  if(GGUFLOW_SANITIZE)
    message(FATAL_ERROR "GGUFLOW_FUZZ=ON already builds with address and undefined sanitizers: "
                        "leave GGUFLOW_SANITIZE empty (found '${GGUFLOW_SANITIZE}')")
  endif()
  include(CheckCXXSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer,address,undefined")
  check_cxx_source_compiles(
    "#include <cstddef>
     #include <cstdint>
     extern \"C\" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }"
    GGUFLOW_HAVE_LIBFUZZER)
  unset(CMAKE_REQUIRED_FLAGS)
  if(NOT GGUFLOW_HAVE_LIBFUZZER)
    message(FATAL_ERROR "GGUFLOW_FUZZ=ON: ${CMAKE_CXX_COMPILER} cannot link -fsanitize=fuzzer. "
                        "On Debian 12: sudo apt-get install libfuzzer-14-dev libclang-rt-14-dev")
  endif()
  # -fno-sanitize=vptr: as for GGUFLOW_SANITIZE (oneTBB's flow-graph headers).
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined -fno-sanitize=vptr)
  add_link_options(-fsanitize=address,undefined)
endif()
