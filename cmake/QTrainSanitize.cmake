# QTRAIN_SANITIZE: build with AddressSanitizer and UndefinedBehaviorSanitizer
# (docs/reliability.md). Included by the top-level project and by the
# standalone runtime build; the microkernels linked into bundles opt out.
option(QTRAIN_SANITIZE
       "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
if(QTRAIN_SANITIZE)
  set(QTRAIN_SANITIZER_FLAGS -fsanitize=address,undefined
      -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_compile_options(${QTRAIN_SANITIZER_FLAGS})
  add_link_options(${QTRAIN_SANITIZER_FLAGS})
endif()
