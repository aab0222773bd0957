#!/usr/bin/env bash
# Installs every Debian package EdgeStudio needs to build, run and test.
# Idempotent: packages already present are skipped quickly by apt.
set -euo pipefail
PKGS=(build-essential cmake ninja-build pkg-config ccache
  qt6-base-dev qt6-qpa-plugins qt6-tools-dev qt6-tools-dev-tools qt6-l10n-tools qt6-translations-l10n
  libqcustomplot-dev libqcustomplot2.1-qt6
  libtorch-dev libopenblas0-pthread liblz4-dev zlib1g-dev libssh-dev libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libpcre2-dev libssl-dev libxxhash-dev
  clang libclang-rt-14-dev clang-format-14 clang-tidy-14 llvm
  openssh-server xvfb xauth fonts-noto-cjk time
  libblas-dev liblapack-dev
  ansible-core prometheus libprotobuf-dev libprotoc-dev
  python3-torch python3-numpy python3-regex python3-jinja2)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  echo "[install-deps] installing: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "[install-deps] all packages present"
fi

# The OpenTelemetry protobuf definitions (opentelemetry/proto/**/*.proto) that the OTLP/JSON
# export test parses our JSON against. No Debian package ships them; this npm package does (its
# build/protos folder). Unpacked to a fixed place; the tarball only, no npm dependencies.
OTLP_PROTO_DIR=/usr/local/share/edgestudio/otlp-protos
if [ ! -f "$OTLP_PROTO_DIR/opentelemetry/proto/metrics/v1/metrics.proto" ]; then
  tmp=$(mktemp -d)
  if command -v npm >/dev/null && (cd "$tmp" && npm pack --silent @opentelemetry/otlp-grpc-exporter-base@0.34.0 >/dev/null &&
      tar xzf opentelemetry-otlp-grpc-exporter-base-0.34.0.tgz package/build/protos); then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO mkdir -p "$OTLP_PROTO_DIR" && $SUDO cp -r "$tmp/package/build/protos/opentelemetry" "$OTLP_PROTO_DIR/"
    echo "[install-deps] OpenTelemetry protos in $OTLP_PROTO_DIR"
  else
    echo "[install-deps] could not fetch the OpenTelemetry protos (npm); the OTLP/JSON test will fail naming $OTLP_PROTO_DIR"
  fi
  rm -rf "$tmp"
fi

# ---- aarch64 (the board agent, cross-built and run under qemu-user; docs/cross.md) -------------
# The cross compiler, qemu-user and the arm64 -dev packages of what edge-agent links (lz4, zlib,
# pcre2) plus GoogleTest for its kernel tests. nlohmann-json and xxhash are headers from /usr/include.
CROSS_PKGS=(g++-aarch64-linux-gnu qemu-user libc6-dev:arm64 liblz4-dev:arm64 zlib1g-dev:arm64
  libpcre2-dev:arm64 libgtest-dev:arm64)
if [ "${EDGE_SKIP_CROSS:-0}" != 1 ] && [ "$(dpkg --print-architecture)" = amd64 ]; then
  cross_missing=()
  for p in "${CROSS_PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || cross_missing+=("$p")
  done
  if [ ${#cross_missing[@]} -gt 0 ]; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    echo "[install-deps] installing (aarch64 agent): ${cross_missing[*]}"
    dpkg --print-foreign-architectures | grep -qx arm64 || $SUDO dpkg --add-architecture arm64
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${cross_missing[@]}"
  else
    echo "[install-deps] aarch64 packages present"
  fi
fi
