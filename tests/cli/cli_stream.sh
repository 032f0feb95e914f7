#!/bin/bash
# onda enhance --stream: a streaming comb filter (tests/cli/cli_fixtures.cpp stream.onnx: 10 ms frames,
# a cache output fed back as its input) over a tone whose length is no multiple of the frame; the
# written file must be what a host loop over the frames gives, (x[t] + x[t - 160]) / 2, and the
# options that make no sense frame by frame are refused with one line.
source "$(dirname "$0")/cli_common.sh"

"$fixtures" tone "$work/tone.wav" 0.3103 16000 1 || exit 1
checks=$((checks + 1))
run_onda enhance "$work/tone.wav" -m "$models/stream.onnx" --stream --float32 -o "$work/clean.wav" -q --timings
if [ "$rc" -ne 0 ]; then
  fail "enhance --stream -> rc $rc: $err"
else
  grep -q "in 32 model calls" <<< "$out" || fail "enhance --stream: wanted 32 frames (4964 samples / 160), got: $out"
  worst=$("$fixtures" comb "$work/tone.wav" "$work/clean.wav" 160)
  echo "enhance --stream: largest difference to the host-loop comb filter $worst"
  awk -v w="$worst" 'BEGIN { exit !(w < 1e-6) }' || fail "enhance --stream differs from the comb filter by $worst"
fi
# 16-bit output and an output folder work as for enhance.
check "enhance --stream into a folder" "$onda" enhance "$work/tone.wav" -m "$models/stream.onnx" --stream -o "$work/out" -q
[ -f "$work/out/tone.wav" ] || fail "enhance --stream -o FOLDER wrote no out/tone.wav"

expect_error "--stream feeds the model one frame at a time" \
  enhance "$work/tone.wav" -m "$models/stream.onnx" --stream --shifts 2 -o "$work/x.wav"
expect_error "no state pair" enhance "$work/tone.wav" -m "$models/gain.onnx" --stream -o "$work/y.wav"
[ ! -e "$work/y.wav" ] || fail "a refused --stream run left $work/y.wav"
finish
