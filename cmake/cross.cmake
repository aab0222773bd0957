# The board agent for aarch64 (docs/cross.md).
#
# EDGE_AGENT_ONLY=ON (the cross build and the on-board build): only what edge-agent links, plus
# the tests/cross kernel tests; no Qt, LibTorch, libssh, OpenSSL, CLI11, fuzzers or demo model.
#
# In the default (host) build, when Debian's aarch64 cross compiler is installed, the target
# edge_agent_aarch64 (part of ALL) configures and builds ${PROJECT_BINARY_DIR}/aarch64 as a
# separate agent-only CMake project with cmake/toolchains/aarch64-linux-gnu.cmake; tests/cross
# runs its binaries under qemu-user.
if(EDGE_AGENT_ONLY)
  set(EDGE_BUILD_GUI OFF)
  set(EDGE_WITH_TORCH OFF)
  set(EDGE_BUILD_FUZZERS OFF)
  # A static link (the cross toolchain's -static) must find the .a of every dependency.
  if(CMAKE_EXE_LINKER_FLAGS MATCHES "(^| )-static( |$)")
    set(CMAKE_FIND_LIBRARY_SUFFIXES .a)
  endif()
endif()

option(EDGE_CROSS_AARCH64 "Also cross-build the aarch64 edge-agent (and its tests) when aarch64-linux-gnu-g++ is found" ON)
set(EDGE_CROSS_JOBS 2 CACHE STRING "Parallel jobs of the aarch64 sub-build")
set(EDGE_HAVE_AARCH64 OFF)

# Called once from the top-level CMakeLists after the layers; defines edge_agent_aarch64 and sets
# EDGE_AARCH64_DIR / EDGE_AARCH64_AGENT / EDGE_AARCH64_KERNEL_TESTS / EDGE_QEMU_AARCH64.
macro(edge_cross_aarch64_project)
  if(EDGE_CROSS_AARCH64 AND NOT EDGE_AGENT_ONLY AND NOT CMAKE_CROSSCOMPILING)
    find_program(EDGE_AARCH64_CXX aarch64-linux-gnu-g++)
    find_program(EDGE_QEMU_AARCH64 qemu-aarch64)
    if(NOT EDGE_AARCH64_CXX)
      message(STATUS "aarch64-linux-gnu-g++ not found: the aarch64 agent is not built (scripts/install-deps.sh)")
    else()
      include(ExternalProject)
      set(EDGE_HAVE_AARCH64 ON)
      set(EDGE_AARCH64_DIR ${PROJECT_BINARY_DIR}/aarch64)
      set(EDGE_AARCH64_AGENT ${EDGE_AARCH64_DIR}/remote/edge-agent)
      set(EDGE_AARCH64_KERNEL_TESTS ${EDGE_AARCH64_DIR}/tests/cross/edge_cross_kernel_tests)
      set(_edge_cross_targets edge-agent)
      if(EDGE_BUILD_TESTS)
        list(APPEND _edge_cross_targets edge_cross_kernel_tests)
      endif()
      set(_edge_cross_launcher "")
      if(CCACHE_PROGRAM)
        set(_edge_cross_launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${CCACHE_PROGRAM} -DCMAKE_C_COMPILER_LAUNCHER=${CCACHE_PROGRAM})
      endif()
      ExternalProject_Add(edge_agent_aarch64
        SOURCE_DIR ${PROJECT_SOURCE_DIR}
        BINARY_DIR ${EDGE_AARCH64_DIR}
        CMAKE_GENERATOR Ninja
        CMAKE_ARGS
          -DCMAKE_TOOLCHAIN_FILE=${PROJECT_SOURCE_DIR}/cmake/toolchains/aarch64-linux-gnu.cmake
          -DCMAKE_BUILD_TYPE=Release
          # -O2 as in the host build (GCC 12's -O3 raises a false -Wrestrict in libstdc++)
          "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG"
          -DEDGE_AGENT_ONLY=ON
          -DEDGE_WITH_CUDA=OFF
          -DEDGE_BUILD_TESTS=${EDGE_BUILD_TESTS}
          -DEDGE_SHARED_DIR=${EDGE_SHARED_DIR}
          ${_edge_cross_launcher}
        BUILD_COMMAND ${CMAKE_COMMAND} --build <BINARY_DIR> --parallel ${EDGE_CROSS_JOBS} --target ${_edge_cross_targets}
        BUILD_ALWAYS ON
        INSTALL_COMMAND ""
        BUILD_BYPRODUCTS ${EDGE_AARCH64_AGENT} ${EDGE_AARCH64_KERNEL_TESTS})
    endif()
  endif()
  add_feature_info(aarch64-agent EDGE_HAVE_AARCH64 "edge-agent cross-built for aarch64, tested under qemu-user")
endmacro()
