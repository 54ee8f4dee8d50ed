# Copyright 2026 The roialign Authors
# SPDX-License-Identifier: Apache-2.0
# Warnings for roialign's own code (never for consumers). -Wconversion: no silent narrowing of sizes, indices or
# floats (in C it includes sign conversions too).
function(roialign_set_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                             $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor>
                                             $<$<COMPILE_LANGUAGE:C>:-Wstrict-prototypes>)
    if(ROIALIGN_WERROR)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
  endif()
endfunction()
