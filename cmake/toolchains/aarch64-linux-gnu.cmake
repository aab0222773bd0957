# Cross toolchain for the board agent: Debian's g++-aarch64-linux-gnu and the arm64 multiarch
# -dev packages (dpkg --add-architecture arm64; scripts/install-deps.sh installs both).
#
#   cmake -S . -B build-aarch64 -G Ninja -DEDGE_AGENT_ONLY=ON \
#         -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
#
# Executables are linked statically (-static): one file that runs on any aarch64 Linux, including
# JetPack's older glibc, and under qemu-user without a sysroot. docs/cross.md has the details.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(EDGE_CROSS_TRIPLET aarch64-linux-gnu)

set(CMAKE_C_COMPILER ${EDGE_CROSS_TRIPLET}-gcc)
set(CMAKE_CXX_COMPILER ${EDGE_CROSS_TRIPLET}-g++)
# Multiarch layout: arm64 libraries in /usr/lib/aarch64-linux-gnu, their CMake packages in
# /usr/lib/aarch64-linux-gnu/cmake, arch-independent headers in /usr/include.
set(CMAKE_LIBRARY_ARCHITECTURE ${EDGE_CROSS_TRIPLET})
set(CMAKE_IGNORE_PATH /usr/lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu/cmake /lib/x86_64-linux-gnu)
# pkg-config must see the arm64 .pc files only.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/${EDGE_CROSS_TRIPLET}/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
# try_run and gtest discovery (if ever used) run aarch64 programs under qemu-user.
find_program(EDGE_QEMU_AARCH64 qemu-aarch64)
if(EDGE_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${EDGE_QEMU_AARCH64} -L /usr/${EDGE_CROSS_TRIPLET})
endif()
