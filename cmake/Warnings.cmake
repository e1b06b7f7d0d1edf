# Warnings and sanitizers applied to every gguflow target.
add_compile_options(-Wall -Wextra)

if(GGUFLOW_SANITIZE)
  string(REPLACE ";" "," _gguflow_sanitizers "${GGUFLOW_SANITIZE}")
  add_compile_options(-fsanitize=${_gguflow_sanitizers} -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=${_gguflow_sanitizers})
endif()
