# Warnings and sanitizers applied to every gguflow target.
add_compile_options(-Wall -Wextra)

if(GGUFLOW_SANITIZE)
  string(REPLACE ";" "," _gguflow_sanitizers "${GGUFLOW_SANITIZE}")
  # -fno-sanitize=vptr: oneTBB 2021.8's flow-graph headers downcast graph nodes in a way the
  # vptr check reports (_flow_graph_impl.h); every other UBSan check stays fatal.
  add_compile_options(-fsanitize=${_gguflow_sanitizers} -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined -fno-sanitize=vptr)
  add_link_options(-fsanitize=${_gguflow_sanitizers})
endif()

# GCC 12 reports -Wrestrict inside libstdc++'s std::string concatenation at -O2 and above for
# code that has no overlap (GCC bug 105651, fixed in GCC 13). Silence only that false positive.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
endif()
