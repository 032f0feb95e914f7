#!/usr/bin/env bash
# `onda separate` end to end on a long file: synthesises MINUTES (default 10) of stereo 44.1 kHz
# audio, separates it with the HTDemucs reference model and prints the real-time factor (seconds
# of audio per wall second) and the share of the time spent outside the model's GPU runs.
#   bench/separate.sh path/to/htdemucs6.onnx [MINUTES] [onda separate options...]
# The model must be materialized (htdemucs6.weights.bin next to it: scripts/materialize-model.sh
# htdemucs6); its description comes from tools/descriptions/htdemucs6.onda.json unless a sidecar
# sits next to it. Run through scripts/gpu/run.sh on the GPU machine (ONDA_RUN= to run directly).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
model=${1:?usage: bench/separate.sh MODEL.onnx [MINUTES] [onda separate options...]}
shift
minutes=10
if [ $# -gt 0 ] && [[ $1 =~ ^[0-9.]+$ ]]; then minutes=$1; shift; fi
runner=${ONDA_RUN-bash $root/scripts/gpu/run.sh}
# The audio (about 100 MB per 10 minutes, 7x that with the stems) stays in a temporary folder; only
# the timings go to $OUT (or out/).
out=${OUT:-$root/out}
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/onda-separate.XXXXXX")
trap 'rm -rf "$work"' EXIT

description=()
sidecar="${model%.onnx}.onda.json"
[ -f "$sidecar" ] || [ -f "$model.onda.json" ] || description=(--description "$root/tools/descriptions/htdemucs6.onda.json")

seconds=$(python3 -c "print(float($minutes) * 60)")
mix="$work/mix_${minutes}min.wav"
python3 "$root/bench/make_test_audio.py" "$mix" --seconds "$seconds" --rate 44100 --channels 2

start=$(date +%s.%N)
$runner "$root/build/onda" separate "$mix" -m "$model" "${description[@]}" -o "$work/stems" --timings -q "$@" \
  | tee "$out/separate_timings.txt"
end=$(date +%s.%N)

python3 - "$out/separate_timings.txt" "$seconds" "$start" "$end" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
audio = float(sys.argv[2])
command = float(sys.argv[4]) - float(sys.argv[3])
m = re.search(r"in ([0-9.]+) s = ([0-9.]+)x real time", text)
outside = re.search(r"outside the model: ([0-9.]+) s \(([0-9.]+)%\)", text)
model = re.search(r"model \(GPU\)\s+([0-9.]+) s", text)
if not m:
    sys.exit("separate.sh: no timings in the output")
print(f"separate: {audio:.0f} s of audio, {float(m.group(1)):.2f} s from decode to encode = {float(m.group(2)):.1f}x real time "
      f"(target > 100x); whole command incl. model load {command:.2f} s = {audio / command:.1f}x")
print(f"  model runs (Session::run: upload, GPU, download) {float(model.group(1)):.2f} s; outside them "
      f"{float(outside.group(1)):.2f} s = {outside.group(2)}% (decode, resample, normalise, cutting segments, overlap-add, encode)")
PY
