# Sourced by tests/cli/cli_*.sh (usage: cli_NAME.sh BUILD_DIR SOURCE_DIR): the onda binary, the
# fixture writer, a scratch folder removed at exit, tiny models in it, and checks that count
# failures instead of stopping at the first.
set -uo pipefail
build=$(cd "$1" && pwd)
source_dir=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
onda="$build/onda"
fixtures="$build/onda_cli_fixtures"
[ -x "$onda" ] && [ -x "$fixtures" ] || { echo "build onda and onda_cli_fixtures first"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
"$fixtures" models "$work/models" || exit 1
models="$work/models"
failed=0
checks=0

fail() {
  echo "FAILED: $*"
  failed=$((failed + 1))
}

# check DESCRIPTION COMMAND...: the command must succeed.
check() {
  local what=$1
  shift
  checks=$((checks + 1))
  "$@" > /dev/null 2>&1 || fail "$what"
}

# run_onda ARGS...: runs onda; its status in $rc, stdout in $out, stderr in $err.
run_onda() {
  out=$("$onda" "$@" 2> "$work/stderr")
  rc=$?
  err=$(cat "$work/stderr")
}

# expect_error PATTERN ARGS...: exit status 1, exactly one stderr line "onda: error: ..." that
# contains PATTERN (grep -E), nothing on stdout (unless allow_stdout=1: onda run reports the load first).
expect_error() {
  local pattern=$1
  shift
  checks=$((checks + 1))
  run_onda "$@"
  local lines
  lines=$(printf '%s' "$err" | grep -c '')
  if [ "$rc" -ne 1 ] || [ "$lines" -ne 1 ] || [[ "$err" != "onda: error: "* ]] || ! grep -qE -- "$pattern" <<< "$err" ||
    { [ -n "$out" ] && [ -z "${allow_stdout:-}" ]; }; then
    fail "onda $* -> rc $rc, stderr '$err', stdout '$out' (wanted rc 1 and one 'onda: error:' line matching '$pattern')"
  fi
}

# The format, channels, rate, frames and peak |sample| of an audio file, as libsndfile reads it.
probe() {
  "$fixtures" probe "$1"
}

finish() {
  echo "$checks checks, $failed failed"
  [ "$failed" -eq 0 ]
}
