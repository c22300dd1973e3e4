# plugrt's TensorRT compatibility layer (include/plugrt/compat/, src/compat/,
# docs/porting-from-tensorrt.md).
#
#   plugrt_trt_core   the adapter (C++): V2 and V3 plugins and creators onto
#                     plugrt's C plugin ABI; needs only plugrt/plugin.h
#   plugrt_trt        core + registration into plugrt's global registry, for
#                     programs that link libplugrt and compile TensorRT-style
#                     plugins in (REGISTER_TENSORRT_PLUGIN)
#   plugrt_add_trt_plugin(NAME SOURCES src... [CUDA_SOURCES cu...])
#                     a plugrt plugin library libNAME.so from unchanged
#                     TensorRT plugin sources: the adapter is linked in, the
#                     library exports only prt_plugin_library_init, and it
#                     links nothing of plugrt
#
# The adapter is not part of libplugrt: it needs the C++ runtime, which
# libplugrt (C11) does not, and a plugin library must carry its own copy
# because it never links the runtime.
set(PLUGRT_TRT_COMPAT_ROOT ${CMAKE_CURRENT_LIST_DIR}/..)

add_library(plugrt_trt_core STATIC
  ${PLUGRT_TRT_COMPAT_ROOT}/src/compat/convert.cpp
  ${PLUGRT_TRT_COMPAT_ROOT}/src/compat/creator.cpp
  ${PLUGRT_TRT_COMPAT_ROOT}/src/compat/blob.cpp
  ${PLUGRT_TRT_COMPAT_ROOT}/src/compat/field.cpp)
target_include_directories(plugrt_trt_core
  PUBLIC ${PLUGRT_TRT_COMPAT_ROOT}/include ${PLUGRT_TRT_COMPAT_ROOT}/include/plugrt/compat
  PRIVATE ${PLUGRT_TRT_COMPAT_ROOT}/src)
set_target_properties(plugrt_trt_core PROPERTIES
  CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF
  CXX_VISIBILITY_PRESET hidden POSITION_INDEPENDENT_CODE ON)
target_compile_options(plugrt_trt_core PRIVATE -Wall -Wextra -Wshadow -Wno-unused-parameter)
if(PLUGRT_HAVE_CUDA)
  # So that the headers see cuda_runtime_api.h, as TensorRT's do.
  target_link_libraries(plugrt_trt_core PUBLIC CUDA::cudart)
endif()

add_library(plugrt_trt STATIC ${PLUGRT_TRT_COMPAT_ROOT}/src/compat/registry.cpp)
target_include_directories(plugrt_trt PRIVATE ${PLUGRT_TRT_COMPAT_ROOT}/src)
target_link_libraries(plugrt_trt PUBLIC plugrt_trt_core)
set_target_properties(plugrt_trt PROPERTIES
  CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF
  CXX_VISIBILITY_PRESET hidden POSITION_INDEPENDENT_CODE ON)
target_compile_options(plugrt_trt PRIVATE -Wall -Wextra -Wshadow -Wno-unused-parameter)

# plugrt_add_trt_plugin(NAME SOURCES a.cpp ... [CUDA_SOURCES k.cu ...])
function(plugrt_add_trt_plugin name)
  cmake_parse_arguments(T "" "" "SOURCES;CUDA_SOURCES" ${ARGN})
  if(NOT T_SOURCES)
    message(FATAL_ERROR "plugrt_add_trt_plugin(${name}): SOURCES is empty; name the plugin's .cpp files")
  endif()
  add_library(${name} MODULE ${T_SOURCES} ${PLUGRT_TRT_COMPAT_ROOT}/src/compat/registry.cpp)
  if(T_CUDA_SOURCES)
    if(NOT PLUGRT_HAVE_CUDA)
      message(FATAL_ERROR "plugrt_add_trt_plugin(${name}): CUDA_SOURCES given but this build has no CUDA "
                          "compiler (PLUGRT_CUDA=OFF or nvcc not found)")
    endif()
    target_sources(${name} PRIVATE ${T_CUDA_SOURCES})
  endif()
  target_include_directories(${name} PRIVATE ${PLUGRT_TRT_COMPAT_ROOT}/src)
  target_compile_definitions(${name} PRIVATE PRT_COMPAT_LIBRARY=1 PRT_COMPAT_LIBRARY_NAME="${name}")
  target_link_libraries(${name} PRIVATE plugrt_trt_core)
  target_link_options(${name} PRIVATE "LINKER:--version-script=${PLUGRT_TRT_COMPAT_ROOT}/cmake/plugrt_plugin_library.map")
  set_property(TARGET ${name} APPEND PROPERTY LINK_DEPENDS ${PLUGRT_TRT_COMPAT_ROOT}/cmake/plugrt_plugin_library.map)
  set_target_properties(${name} PROPERTIES PREFIX "lib" CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden)
endfunction()
