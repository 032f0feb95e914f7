#!/usr/bin/env bash
# Ctrl-C and SIGTERM during a run: onda stops at the next segment boundary, removes its partial
# files (and the output folders it created for them) and exits 130 / 143. The signal is sent once
# the run is writing (its hidden .partial file exists), so it lands mid-run. A partial file that a
# killed run left is removed by the next run writing that name.
# Usage: cli_signals.sh BUILD_DIR [SOURCE_DIR].
. "$(dirname "$0")/cli_common.sh"

# 10 minutes of 16 kHz mono: 8000 segments of the 0.1 s gain model, several seconds on lavapipe.
"$fixtures" tone long.wav 600 16000 1 || exit 1

# interrupt SIGNAL STATUS FOLDER ONDA_ARGS...: starts onda, waits for a .partial file under FOLDER,
# sends SIGNAL, and checks the status and that FOLDER has no file left.
interrupt() {
  local signal=$1 status=$2 folder=$3
  shift 3
  checks=$((checks + 1))
  "$onda" "$@" -q 2> "$work/stderr" &
  local pid=$! started=0
  for _ in $(seq 400); do
    if [ -n "$(find "$folder" -name '.*.partial' 2> /dev/null)" ]; then
      started=1
      break
    fi
    kill -0 "$pid" 2> /dev/null || break
    sleep 0.025
  done
  kill -s "$signal" "$pid" 2> /dev/null
  wait "$pid"
  local rc=$?
  if [ "$started" -ne 1 ]; then
    fail "onda $*: no partial file appeared before it ended (rc $rc): the run is too short to interrupt"
  elif [ "$rc" -ne "$status" ]; then
    fail "onda $* after SIG$signal: rc $rc, wanted $status; $(cat "$work/stderr")"
  elif [ -n "$(find "$folder" -mindepth 1 2> /dev/null)" ]; then
    fail "onda $* after SIG$signal left: $(find "$folder" -mindepth 1)"
  elif ! grep -q "^onda: interrupted by SIG$signal" "$work/stderr"; then
    fail "onda $* after SIG$signal: stderr '$(cat "$work/stderr")'"
  fi
}

mkdir -p enhanced
interrupt INT 130 enhanced enhance long.wav -m "$models/gain.onnx" -o enhanced/long.wav
interrupt TERM 143 enhanced enhance long.wav -m "$models/gain.onnx" -o enhanced/long.flac
# separate creates stems/long/ for the run: it goes again with the partial files.
interrupt INT 130 stems separate long.wav -m "$models/gain.onnx" -o stems
checks=$((checks + 1))
[ ! -e stems ] || fail "the interrupted separate left its output folder: $(find stems)"

# A run killed outright (SIGKILL) cannot clean up: the next run writing the same name removes the
# partial files of processes that no longer exist, and keeps those of live ones.
"$fixtures" tone short.wav 0.5 16000 1 || exit 1
true &
dead=$!
wait "$dead"
mkdir -p killed
touch "killed/.short.wav.$dead.partial" "killed/.short.wav.$$.partial"
run_onda enhance short.wav -m "$models/gain.onnx" -o killed/short.wav -q
checks=$((checks + 1))
[ "$rc" -eq 0 ] && [ ! -e "killed/.short.wav.$dead.partial" ] && [ -e "killed/.short.wav.$$.partial" ] ||
  fail "stale partial files: rc $rc, left $(ls -A killed)"

finish
