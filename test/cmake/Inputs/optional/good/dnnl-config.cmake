# A package config that loads and defines its target.
add_library(DNNL::dnnl INTERFACE IMPORTED)
set(dnnl_FOUND TRUE)
