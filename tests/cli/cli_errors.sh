#!/usr/bin/env bash
# Every argument error of the onda command line: exit status 1 and one `onda: error:` line that
# names the problem (a table of bad invocations); checks that fail before the model is opened do
# so without touching the GPU (shown with --adapter naming no adapter: that error never comes);
# help on bare `onda`, `onda --version`. Usage: cli_errors.sh BUILD_DIR [SOURCE_DIR].
. "$(dirname "$0")/cli_common.sh"

"$fixtures" tone mono.wav 1 16000 1 || exit 1
m="$models/gain.onnx"
s="$models/split.onnx"

# Discovery.
checks=$((checks + 1))
run_onda
[ "$rc" -eq 0 ] && grep -q "Subcommands:" <<< "$out" && grep -q "inspect" <<< "$out" || fail "bare onda: rc $rc, no help"
checks=$((checks + 1))
run_onda --version
grep -qE "^onda [0-9]+\.[0-9]+\.[0-9]+ \(commit [0-9a-z-]+\)" <<< "$out" && grep -q "^Dawn: " <<< "$out" &&
  grep -q "^adapter: " <<< "$out" && [ "$rc" -eq 0 ] || fail "onda --version: rc $rc, '$out'"

# The command line itself (CLI11's errors).
expect_error "unknown command 'bogus'" bogus
expect_error "inputs is required" separate
expect_error "model is required" separate mono.wav
expect_error "--nope" separate mono.wav -m "$m" --nope
expect_error "--batch" separate mono.wav -m "$m" --batch four
expect_error "'a' is not a dimension" run "$m" --shape mix=a,b
expect_error "'-3' is not a dimension" run "$m" --shape mix=1,-3

# Option ranges and contradicting flags: nothing is created.
expect_error "--overlap 2" separate mono.wav -m "$m" -o out --overlap 2
expect_error "--overlap -0.5" separate mono.wav -m "$m" -o out --overlap -0.5
expect_error "--segment -1" separate mono.wav -m "$m" -o out --segment -1
expect_error "--batch 0" separate mono.wav -m "$m" -o out --batch 0
expect_error "--shifts -1" separate mono.wav -m "$m" -o out --shifts -1
expect_error "leave --segment out" enhance mono.wav -m "$m" -o seg.wav --segment 0.2
expect_error "--float32 and --int24" separate mono.wav -m "$m" -o out --float32 --int24
expect_error "--flac contradicts -o 'x.wav'" enhance mono.wav -m "$m" -o x.wav --flac
expect_error "--flac contradicts --filename" separate mono.wav -m "$s" -o out --flac --filename '{track}/{stem}.wav'
expect_error "--float32 writes WAV only" enhance mono.wav -m "$m" -o x.flac --float32
expect_error "--int24 .*lossy" enhance mono.wav -m "$m" -o x.ogg --int24
expect_error "unknown extension '.aiff'" enhance mono.wav -m "$m" -o x.aiff
expect_error "no extension names the format" separate mono.wav -m "$s" -o out --filename '{track}/{stem}'
expect_error "unknown placeholder '\{song\}'" separate mono.wav -m "$s" -o out --filename '{song}/{stem}.wav'
expect_error "may not leave -o" separate mono.wav -m "$s" -o out --filename '../{stem}.wav'
expect_error "--filename needs -o FOLDER" enhance mono.wav -m "$m" -o x.wav --filename '{track}.wav'
cp mono.wav mono.flac
expect_error "gives 'out/low/mono.flac', not a .wav file" separate mono.flac -m "$s" -o out --filename '{stem}/{track}.{input_ext}'
checks=$((checks + 1))
[ ! -e out ] && [ ! -e x.wav ] && [ ! -e x.flac ] || fail "a refused command created output"

# Inputs, models and descriptions.
expect_error "no such file or folder 'missing.wav'" separate missing.wav -m "$m"
mkdir -p empty_folder
expect_error "folder 'empty_folder' holds no audio files" separate empty_folder -m "$m"
expect_error "no model file" separate mono.wav -m missing.onnx
cp "$m" bare.onnx
expect_error "has no description.*tools/descriptions" separate mono.wav -m bare.onnx
expect_error "--two-stems drums: the model's stems are low, high" separate mono.wav -m "$s" --two-stems drums
expect_error "enhance needs a model with one output stem" enhance mono.wav -m "$s" -o y.wav
expect_error "Sharpen" enhance mono.wav -m "$models/unsupported.onnx" -o y.wav
expect_error "--input mix=nothing.npy: no file 'nothing.npy'" run "$m" --input mix=nothing.npy --adapter no-such-gpu
expect_error "--output-dir mono.wav: a file is in the way" run "$m" --random-inputs --output-dir mono.wav --adapter no-such-gpu
expect_error "--profile-csv nowhere/p.csv: no folder" run "$m" --random-inputs --profile-csv nowhere/p.csv --adapter no-such-gpu
touch x.npy
allow_stdout=1 expect_error "no input 'noise' \(its inputs: 'mix'\)" run "$m" --input noise=x.npy
printf 'not audio' > bad.wav
expect_error "cannot read audio 'bad.wav'" enhance bad.wav -m "$m" -o y.wav

# Outputs checked before the model opens: with an adapter that does not exist, the output's
# error still comes first (the GPU is never asked).
touch exists.wav
expect_error "output 'exists.wav' exists: give --overwrite" enhance mono.wav -m "$m" -o exists.wav --adapter no-such-gpu
mkdir -p stems/mono/low.wav
expect_error "output 'stems/mono/low.wav' is a folder" separate mono.wav -m "$s" -o stems --adapter no-such-gpu
touch plain_file
expect_error "'plain_file' is a file, not a folder" separate mono.wav -m "$s" -o plain_file/sub --adapter no-such-gpu
cp mono.wav again.wav && mkdir -p a b && cp mono.wav a/song.wav && cp mono.wav b/song.wav
expect_error "'a/song.wav' and 'b/song.wav' would both write 'o2/song/low.wav'" separate a/song.wav b/song.wav \
  -m "$s" -o o2 --adapter no-such-gpu
expect_error "two outputs of 'mono.wav' would both go to 'o3/mono.wav': put \{stem\}" separate mono.wav -m "$s" \
  -o o3 --filename '{track}.wav' --adapter no-such-gpu
checks=$((checks + 1))
[ ! -e o2 ] && [ ! -e o3 ] && [ ! -e y.wav ] && [ ! -e stems/mono/high.wav ] || fail "a refused command created output"
# The adapter error itself, once the outputs are fine.
expect_error "no-such-gpu" enhance mono.wav -m "$m" -o fine.wav --adapter no-such-gpu

finish
