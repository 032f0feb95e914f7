#!/usr/bin/env bash
# README.md and docs/audio.md describe the binary: every `--flag` they name on an `onda` command
# must exist in some `onda ... --help`, and every onda command they name must exist.
# Usage: cli_readme.sh BUILD_DIR SOURCE_DIR.
. "$(dirname "$0")/cli_common.sh"

help=$("$onda" --help)
commands=$(sed -n '/^Subcommands:/,/^$/p' <<< "$help" | awk 'NR > 1 && NF { print $1 }')
for c in $commands; do help+=$'\n'$("$onda" "$c" --help); done
checks=$((checks + 1))
[ -n "$commands" ] || fail "no subcommands in onda --help"

for doc in README.md docs/audio.md; do
  # Flags in lines that run onda (build/onda ..., onda separate ..., `--flag` in the sentences of
  # the sections about the command line); other tools' flags (cmake, ctest, gtest) are excluded by
  # name below (cmake --install).
  flags=$(grep -oE -- '(^|[ `(\[|])--[a-z][a-z0-9-]*' "$source_dir/$doc" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u |
    grep -vxE -- '--(gtest|gtest_filter|target|build|config|output-on-failure|install)')
  for flag in $flags; do
    checks=$((checks + 1))
    grep -qE -- "(^|[ ,])$flag([ ,=]|$)" <<< "$help" || fail "$doc names $flag, which no 'onda ... --help' lists"
  done
  # Commands as written to be run: `onda X`, build/onda X, or an indented example line.
  for c in $(grep -oE '(`|build/|^ +)onda [a-z]+' "$source_dir/$doc" | awk '{ print $NF }' | sort -u); do
    checks=$((checks + 1))
    grep -qx -- "$c" <<< "$commands" || fail "$doc names 'onda $c', which is not a command"
  done
done

finish
