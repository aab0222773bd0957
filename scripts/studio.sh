#!/usr/bin/env bash
# The main command (README): installs what is missing, builds, and opens the studio on the demo
# model that the build generates (build/resources/demo/demo.gguf).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh"
build="${EDGE_BUILD_DIR:-$root/build}"
demo="$build/resources/demo/demo.gguf"
if [ -x "$build/app/studio/edgestudio" ]; then
  exec "$build/app/studio/edgestudio" "$demo" "$@"
fi
echo "[studio] the GUI was not built; running the CLI on the demo model instead" >&2
"$build/app/cli/edgestudio-cli" info "$demo"
exec "$build/app/cli/edgestudio-cli" generate "$demo" --prompt "Once upon a time" --max-tokens 60
