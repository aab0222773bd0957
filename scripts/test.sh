#!/usr/bin/env bash
# The test command (README): installs what is missing, builds everything, and runs every test
# under a private X display (the studio's screenshot tests need one). Servers the tests need
# (sshd for the remote tests) are started and stopped by the tests themselves.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh"
build="${EDGE_BUILD_DIR:-$root/build}"
cd "$build"
export QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-xcb}"
# ctest prints its summary line and exits non-zero when a test fails.
exec xvfb-run -a -s "-screen 0 1920x1200x24" \
  ctest --output-on-failure --timeout 600 -j "${EDGE_TEST_JOBS:-2}" "$@"
