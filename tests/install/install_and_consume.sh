#!/bin/bash
# What a user of an installed onda does, end to end (ctest install_and_consume):
#   1. cmake --install the build folder into a temporary prefix;
#   2. compile each installed public header alone (C++20; onda.h also as C11) with only the
#      prefix's include folder on the path;
#   3. build examples/ against the prefix with find_package(onda CONFIG) and install them into it,
#      and the C example once more with pkg-config and a plain C compiler;
#   4. move the prefix to another folder and run the examples and `onda info` from there.
# Usage: install_and_consume.sh <build folder> <examples folder>. Exit 77 (skip) without ONNX's
# node test data (the C++ example's test case).
set -euo pipefail
build=$(realpath "$1")
examples=$(realpath "$2")
case_dir=/usr/share/libonnx-testdata/data/node/test_gru_defaults
[ -f "$case_dir/model.onnx" ] || { echo "no ONNX node test data ($case_dir): skipped"; exit 77; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
echo "installed: $(cd "$prefix" && find . -type f | sort | tr '\n' ' ')"

# 2. Every header alone.
for header in "$prefix"/include/onda/*.h; do
  name=$(basename "$header")
  printf '#include <onda/%s>\n' "$name" > "$work/alone.cpp"
  c++ -std=c++20 -fsyntax-only -Wall -Wextra -I"$prefix/include" "$work/alone.cpp" ||
    { echo "FAIL: onda/$name does not compile alone"; exit 1; }
done
printf '#include <onda/onda.h>\n' > "$work/alone.c"
cc -std=c11 -fsyntax-only -Wall -Wextra -Wpedantic -I"$prefix/include" "$work/alone.c" ||
  { echo "FAIL: onda/onda.h does not compile as C"; exit 1; }
echo "headers: each of $(ls "$prefix"/include/onda/*.h | wc -l) compiles alone (onda.h also as C)"

# 3. The examples, as a user builds them.
cmake -S "$examples" -B "$work/examples-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_INSTALL_PREFIX="$prefix" > "$work/examples-configure.log"
cmake --build "$work/examples-build" > "$work/examples-build.log" || { cat "$work/examples-build.log"; exit 1; }
cmake --install "$work/examples-build" > /dev/null
PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --modversion onda
cc -std=c11 "$examples/run_model.c" $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs onda) \
  -Wl,-rpath,'$ORIGIN/../lib' -o "$prefix/bin/onda_example_c_pkgconfig"

# 4. Somewhere else.
moved="$work/elsewhere/onda"
mkdir -p "$work/elsewhere"
mv "$prefix" "$moved"
for binary in onda onda_example_cpp onda_example_c onda_example_c_pkgconfig; do
  if readelf -d "$moved/bin/$binary" | grep -q "$build\|$work/prefix"; then
    echo "FAIL: $binary records a build or install path:"; readelf -d "$moved/bin/$binary" | grep -E "NEEDED|RUNPATH"; exit 1
  fi
done
readelf -d "$moved/lib/libonda.so" | grep -E "SONAME|NEEDED.*webgpu|RUNPATH"
"$moved/bin/onda" info --list
"$moved/bin/onda_example_cpp" "$case_dir"
"$moved/bin/onda_example_c" "$case_dir/model.onnx"
"$moved/bin/onda_example_c_pkgconfig" "$case_dir/model.onnx"
echo "install_and_consume: all passed"
