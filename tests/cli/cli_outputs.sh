#!/usr/bin/env bash
# What onda separate / enhance write: the format named by the extension (read back: container,
# channels, rate, length, and the model's gain on the level), files and folders as inputs
# (recursively), --filename templates, no overwrite without --overwrite, a batch that goes on past a
# bad file (summary, exit 1, no folder left for it), warnings for truncated and empty audio and for
# a --batch the model cannot use, MP3 input, the progress line on a terminal. Usage: cli_outputs.sh BUILD_DIR [SOURCE_DIR].
. "$(dirname "$0")/cli_common.sh"

m="$models/gain.onnx"   # mono 16 kHz, one stem: 0.5 x
s="$models/split.onnx"  # stereo 8 kHz, stems low = 0.25 x, high = 0.75 x; static batch of 1
"$fixtures" tone mono.wav 1 16000 1 || exit 1  # peak 0.5

# expect_probe FILE "FORMAT CHANNELS RATE FRAMES" PEAK TOLERANCE
expect_probe() {
  checks=$((checks + 1))
  local got
  got=$(probe "$1" 2>&1)
  if [[ "$got" != "$2 "* ]] || ! awk -v p="${got##* }" -v want="$3" -v tol="$4" \
    'BEGIN { d = p - want; exit !(d <= tol && -d <= tol) }'; then
    fail "$1: '$got', wanted '$2' with peak $3 +- $4"
  fi
}

# Format by extension.
for ext in wav flac ogg mp3; do
  run_onda enhance mono.wav -m "$m" -o "clean.$ext" -q
  [ "$rc" -eq 0 ] || fail "enhance -o clean.$ext: rc $rc: $err"
done
expect_probe clean.wav "WAV 1 16000 16000" 0.25 0.001
expect_probe clean.flac "FLAC 1 16000 16000" 0.25 0.001
expect_probe clean.ogg "OGG 1 16000 16000" 0.25 0.03
checks=$((checks + 1))
[[ "$(probe clean.mp3)" == "MPEG-1/2 1 16000 "* ]] || fail "clean.mp3: $(probe clean.mp3)"
run_onda enhance mono.wav -m "$m" -o wide.wav --float32 -q
expect_probe wide.wav "WAV 1 16000 16000" 0.25 0.0001

# Separation into a folder: the default names, --flac, a template naming OGG, --two-stems.
"$fixtures" tone stereo.wav 2 8000 2 || exit 1
run_onda separate stereo.wav -m "$s" -o stems
checks=$((checks + 1))
[ "$rc" -eq 0 ] && grep -q "wrote stems/stereo/low.wav" <<< "$out" || fail "separate: rc $rc: $out $err"
expect_probe stems/stereo/low.wav "WAV 2 8000 16000" 0.125 0.001
expect_probe stems/stereo/high.wav "WAV 2 8000 16000" 0.375 0.001
run_onda separate stereo.wav -m "$s" -o stems --flac -q
expect_probe stems/stereo/high.flac "FLAC 2 8000 16000" 0.375 0.001
run_onda separate stereo.wav -m "$s" -o stems --filename '{stem}-{track}.ogg' -q
expect_probe stems/low-stereo.ogg "OGG 2 8000 16000" 0.125 0.03
run_onda separate stereo.wav -m "$s" -o two --two-stems high -q
expect_probe two/stereo/no_high.wav "WAV 2 8000 16000" 0.125 0.001

# No overwrite without --overwrite, and the refused file is untouched.
before=$(cksum < stems/stereo/low.wav)
run_onda separate stereo.wav -m "$s" -o stems --overlap 0.5 -q
checks=$((checks + 1))
[ "$rc" -eq 1 ] && grep -q "exists: give --overwrite" <<< "$err" && [ "$(cksum < stems/stereo/low.wav)" = "$before" ] ||
  fail "an existing output was not refused: rc $rc, $err"
run_onda separate stereo.wav -m "$s" -o stems --overwrite -q
checks=$((checks + 1))
[ "$rc" -eq 0 ] || fail "--overwrite: rc $rc, $err"

# Folders (recursive, by extension, hidden files skipped) and files mixed; MP3 input; a bad
# file: the others still run, a summary, exit 1, and no folder for the bad one.
mkdir -p music/album/.hidden music/other
cp stereo.wav music/one.wav
"$fixtures" tone music/album/two.flac 1 44100 2 || exit 1
"$fixtures" tone music/other/three.mp3 1 8000 1 || exit 1
cp stereo.wav music/album/.hidden/skipped.wav
printf 'not audio' > music/album/broken.wav
printf 'notes' > music/readme.txt
run_onda separate music mono.wav -m "$s" -o batch --filename '{folder}/{track}/{stem}.{ext}'
checks=$((checks + 1))
[ "$rc" -eq 1 ] && grep -q "4 of 5 files done" <<< "$out" && grep -q "1 failed" <<< "$out" &&
  grep -q "failed: music/album/broken.wav" <<< "$err" || fail "batch with a bad file: rc $rc, out '$out', err '$err'"
expect_probe batch/album/two/low.wav "WAV 2 8000 8000" 0.125 0.01
expect_probe batch/other/three/high.wav "WAV 2 8000 8000" 0.375 0.05
expect_probe batch/one/low.wav "WAV 2 8000 16000" 0.125 0.001
expect_probe batch/mono/high.wav "WAV 2 8000 8000" 0.375 0.01
checks=$((checks + 1))
[ ! -e batch/album/broken ] && [ ! -e batch/.hidden ] && [ -z "$(find batch -name '.*')" ] ||
  fail "a failed or hidden input left something: $(find batch)"

# enhance over a folder: -o is a folder, {track}.{ext} by default.
mkdir -p voices && cp mono.wav voices/a.wav && cp mono.wav voices/b.wav
run_onda enhance voices -m "$m" -o cleaned -q
expect_probe cleaned/b.wav "WAV 1 16000 16000" 0.25 0.001

# Warnings: a truncated file, an empty one, a --batch the model cannot use.
"$fixtures" tone long.wav 2 16000 1 || exit 1
head -c 30000 long.wav > truncated.wav
run_onda enhance truncated.wav -m "$m" -o truncated_out.wav -q
checks=$((checks + 1))
[ "$rc" -eq 0 ] && grep -q "^onda: warning: 'truncated.wav' looks truncated" <<< "$err" ||
  fail "truncated input: rc $rc, '$err'"
head -c 44 long.wav > empty.wav
printf 'RIFF\x24\x00\x00\x00' | dd of=empty.wav conv=notrunc 2> /dev/null
printf '\x00\x00\x00\x00' | dd of=empty.wav bs=1 seek=40 conv=notrunc 2> /dev/null
run_onda enhance empty.wav -m "$m" -o empty_out.wav -q
checks=$((checks + 1))
[ "$rc" -eq 0 ] && grep -q "^onda: warning: 'empty.wav' holds no audio" <<< "$err" || fail "empty input: rc $rc, '$err'"
run_onda separate stereo.wav -m "$s" -o batched --batch 4 -q
checks=$((checks + 1))
[ "$rc" -eq 0 ] && grep -q "^onda: warning: --batch 4 ignored: the model's batch dimension is fixed at 1" <<< "$err" ||
  fail "--batch 4 on a batch-1 model: rc $rc, '$err'"

# --profile-csv: a header and one line of nine fields per profiled node, the node named.
run_onda run "$m" --random-inputs --profile-csv profile.csv
checks=$((checks + 1))
[ "$rc" -eq 0 ] && [ "$(head -1 profile.csv)" = "op_type,node,input_shapes,gpu_ms,dispatches,floor_ms,gflop,mb,bound" ] &&
  [ "$(wc -l < profile.csv)" -ge 2 ] && tail -n +2 profile.csv | python3 -c "
import csv, sys
rows = list(csv.reader(sys.stdin))
sys.exit(not rows or any(len(r) != 9 or not r[1] or float(r[3]) < 0 for r in rows))" &&
  [ ! -e profile.csv.partial ] || fail "--profile-csv: rc $rc, '$err', $(head -3 profile.csv 2>&1)"

# The progress line on a terminal (util-linux `script` provides one): drawn at once with 0
# segments, then per segment with the rate and the time left, with three significant digits.
if command -v script > /dev/null; then
  progress=$(script -qec "'$onda' enhance mono.wav -m '$m' -o progress.wav" /dev/null | tr '\r' '\n')
  checks=$((checks + 1))
  grep -qE "^mono.wav \[ +\] 0/[0-9]+ segments *$" <<< "$progress" &&
    grep -qE "^mono.wav \[#+ *\] [1-9][0-9]*/[0-9]+ segments, [0-9.]+ s audio/s, [0-9]+ s left" <<< "$progress" &&
    ! grep -qE ", 0\.0 s audio/s" <<< "$progress" || fail "progress line: $progress"
fi

finish
