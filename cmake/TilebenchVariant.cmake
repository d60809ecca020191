# TilebenchVariant.cmake - tb_add_variant(): the one way a variant library is built.
#
#   tb_add_variant(<target> SOURCES <files...>
#                  [ARCHS <cuda archs, default ${TB_CUDA_ARCHS}>]
#                  [DEFINES <defs...>] [LIBS <libs...>]
#                  [OUTPUT_DIR <dir, default ${TB_VARIANT_DIR}>]
#                  [INSTALL_DIR <dir, default lib/tilebench/variants>])
#
# Builds a MODULE library named <target>.so with hidden visibility (the entry symbol,
# marked TB_EXPORT, is the only export), includes only the public ABI header, and defines
# TB_SASS to the SASS targets built ("sm_80,sm_90" for ARCHS "80;90"), which the variant
# reports in its tb_variant.sass field.
function(tb_add_variant target)
  cmake_parse_arguments(V "" "OUTPUT_DIR;INSTALL_DIR" "SOURCES;ARCHS;DEFINES;LIBS" ${ARGN})
  if(NOT V_ARCHS)
    set(V_ARCHS ${TB_CUDA_ARCHS})
  endif()
  if(NOT V_OUTPUT_DIR)
    set(V_OUTPUT_DIR ${TB_VARIANT_DIR})
  endif()
  set(sass "")
  foreach(a IN LISTS V_ARCHS)
    string(REGEX REPLACE "-real|-virtual" "" a "${a}")
    if(sass STREQUAL "")
      set(sass "sm_${a}")
    else()
      set(sass "${sass},sm_${a}")
    endif()
  endforeach()
  add_library(${target} MODULE ${V_SOURCES})
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    CUDA_ARCHITECTURES "${V_ARCHS}"
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden
    LIBRARY_OUTPUT_DIRECTORY ${V_OUTPUT_DIR}
    CUDA_RUNTIME_LIBRARY Shared)
  target_include_directories(${target} PRIVATE ${TB_PUBLIC_INCLUDE_DIR})
  target_compile_definitions(${target} PRIVATE TB_SASS="${sass}" ${V_DEFINES})
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-Xptxas=-v --expt-relaxed-constexpr -Xcompiler=-Wall,-Wextra>
    $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra>
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>)
  target_link_libraries(${target} PRIVATE CUDA::cudart ${V_LIBS})
  if(NOT V_INSTALL_DIR)
    if(TB_VARIANT_INSTALL_DIR)
      set(V_INSTALL_DIR ${TB_VARIANT_INSTALL_DIR})
    else()
      set(V_INSTALL_DIR lib/tilebench/variants)
    endif()
  endif()
  install(TARGETS ${target} LIBRARY DESTINATION ${V_INSTALL_DIR})
endfunction()
