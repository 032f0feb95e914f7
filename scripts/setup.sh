#!/usr/bin/env bash
# One-command set-up on Debian 12 (run as root, idempotent):
#   1. Debian packages the build and tests need;
#   2. Mesa's lavapipe (Vulkan on the CPU) from bookworm-backports: Debian 12's own
#      Mesa 22.3 lacks a Vulkan feature Dawn requires, so Dawn would only offer its Null backend;
#   3. Dawn (WebGPU) from npm, pinned by sha256, into the git-ignored .deps/dawn;
#   4. configure and build into build/;
#   5. the Python package `onda` (docs/python.md) into the virtual environment build/venv (made with
#      --system-site-packages, so that Debian's numpy, pytest and onnx serve it): Debian's python3
#      refuses pip installs into the system (PEP 668), and a venv needs no --break-system-packages.
# Options: --no-build (steps 1-3 only), --no-apt (skip 1-2, e.g. on the GPU machine), --no-python (skip 5).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

do_apt=1 do_build=1 do_python=1
for arg in "$@"; do
  case "$arg" in
    --no-build) do_build=0 ;;
    --no-apt) do_apt=0 ;;
    --no-python) do_python=0 ;;
    *) echo "setup.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo

packages=(
  cmake ninja-build g++ pkg-config git ca-certificates xz-utils
  libgtest-dev libgmock-dev libbenchmark-dev
  protobuf-compiler libprotobuf-dev libonnx-dev libonnx-testdata
  libcli11-dev libfmt-dev nlohmann-json3-dev libsndfile1-dev libsoxr-dev
  libvulkan1 python3 python3-numpy clang libclang-rt-14-dev
  python3-dev python3-venv python3-pip python3-build pybind11-dev python3-pybind11 python3-pytest python3-onnx
)
# From bookworm-backports (Debian 12 has no scikit-build-core): the Python package's build backend.
backports_packages=(python3-scikit-build-core)

if [ "$do_apt" = 1 ]; then
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  backports=/etc/apt/sources.list.d/bookworm-backports.list
  if [ ! -f "$backports" ]; then
    echo "deb http://deb.debian.org/debian bookworm-backports main" | $SUDO tee "$backports" >/dev/null
    need_update=1
  fi
  mesa_ok=0
  mesa_version=$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || true)
  case "$mesa_version" in 2[4-9].*|[3-9][0-9].*) mesa_ok=1 ;; esac
  # npm fetches Dawn; a machine with Node.js from elsewhere already has it (Debian's npm would conflict).
  command -v npm >/dev/null || missing+=(npm)
  missing_backports=()
  for p in "${backports_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing_backports+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ] || [ "$mesa_ok" = 0 ] || [ "${#missing_backports[@]}" -gt 0 ]; then
    [ "$mesa_ok" = 1 ] || missing_mesa="mesa-vulkan-drivers (bookworm-backports)"
    echo "== apt: installing ${missing[*]} ${missing_mesa:-} ${missing_backports[*]}"
    $SUDO apt-get update -qq
    if [ "${#missing[@]}" -gt 0 ]; then
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
    fi
    if [ "$mesa_ok" = 0 ]; then
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
        -t bookworm-backports mesa-vulkan-drivers
    fi
    if [ "${#missing_backports[@]}" -gt 0 ]; then
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
        -t bookworm-backports "${missing_backports[@]}"
    fi
  fi
fi

"$root/scripts/fetch-dawn.sh"

if [ "$do_build" = 1 ]; then
  cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$root/build"
  if [ "$do_python" = 1 ]; then
    "$root/scripts/install-python.sh"
  fi
fi
