# Resolves SWITCHYARD_CUDA / SWITCHYARD_VULKAN (AUTO|ON|OFF) into SY_HAVE_CUDA / SY_HAVE_VULKAN.
# AUTO builds a backend when its toolchain is found; ON makes a missing toolchain an error.

function(_sy_check_tristate var)
  string(TOUPPER "${${var}}" v)
  if(NOT v MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "${var} must be AUTO, ON or OFF (got '${${var}}')")
  endif()
  set(${var} "${v}" PARENT_SCOPE)
endfunction()

_sy_check_tristate(SWITCHYARD_CUDA)
_sy_check_tristate(SWITCHYARD_VULKAN)

set(SY_HAVE_CUDA OFF)
if(NOT SWITCHYARD_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS "/usr/local/cuda/bin/nvcc")
    set(CMAKE_CUDA_COMPILER "/usr/local/cuda/bin/nvcc")
  endif()
  # The GPUs the kernels are compiled for: Ampere (sm_80, sm_86), Ada (sm_89), Hopper (sm_90),
  # plus sm_90 PTX that later GPUs compile at load time. A build for one GPU can name just its
  # own (CI builds one, to keep nvcc's share of its time small).
  set(SWITCHYARD_CUDA_ARCHITECTURES "80-real;86-real;89-real;90-real;90-virtual" CACHE STRING
      "CUDA architectures the CUDA backend's kernels are compiled for")
  if(NOT CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES "${SWITCHYARD_CUDA_ARCHITECTURES}")
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    find_package(CUDAToolkit)
    if(CUDAToolkit_FOUND)
      set(SY_HAVE_CUDA ON)
    endif()
  endif()
  if(SWITCHYARD_CUDA STREQUAL "ON" AND NOT SY_HAVE_CUDA)
    message(FATAL_ERROR "SWITCHYARD_CUDA=ON but no CUDA toolkit (nvcc) was found; install it or use -DSWITCHYARD_CUDA=AUTO")
  endif()
endif()

set(SY_HAVE_VULKAN OFF)
if(NOT SWITCHYARD_VULKAN STREQUAL "OFF")
  find_package(Vulkan QUIET)
  if(Vulkan_FOUND)
    set(SY_HAVE_VULKAN ON)
  endif()
  if(SWITCHYARD_VULKAN STREQUAL "ON" AND NOT SY_HAVE_VULKAN)
    message(FATAL_ERROR "SWITCHYARD_VULKAN=ON but the Vulkan headers/loader were not found (Debian: libvulkan-dev)")
  endif()
endif()

message(STATUS "Switchyard backends: cpu=ON cuda=${SY_HAVE_CUDA} vulkan=${SY_HAVE_VULKAN}")
