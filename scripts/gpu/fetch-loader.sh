#!/usr/bin/env bash
# Downloads (does not install) the Vulkan loader and GL dispatch packages into the git-ignored .gl/,
# for GPU machines that lack them (scripts/gpu/run.sh unpacks them there).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$root/.gl" /tmp/onda-apt-amd64/partial
o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/onda-apt-amd64'
apt-get $o update -qq
cd "$root/.gl" && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2
