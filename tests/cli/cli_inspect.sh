#!/usr/bin/env bash
# onda inspect: a model's inputs, outputs, opsets, op histogram with unsupported ops marked, and its
# audio description, as text and as JSON, without a GPU or the weights; on the tiny test models and,
# where ../shared/models holds them, on the weight-stripped reference models (every op supported).
# Usage: cli_inspect.sh BUILD_DIR [SOURCE_DIR].
. "$(dirname "$0")/cli_common.sh"

# has TEXT PATTERN WHAT
has() {
  checks=$((checks + 1))
  grep -qE -- "$2" <<< "$1" || fail "$3: no '$2' in: $1"
}

run_onda inspect "$models/gain.onnx"
has "$out" "^  mix +FLOAT +\[1, 1, 1600\]" "gain inputs"
has "$out" "^  stems +FLOAT +\[1, 1, 1, 1600\]" "gain outputs"
has "$out" "IR 8, opsets ai.onnx 17" "gain format"
has "$out" "producer:  onda_cli_fixtures" "gain producer"
has "$out" "^  Mul +1$" "gain ops"
has "$out" "audio:     16000 Hz, 1 channel\(s\).*stems: clean" "gain description"
checks=$((checks + 1))
[ "$rc" -eq 0 ] && ! grep -q UNSUPPORTED <<< "$out" || fail "gain: rc $rc or an op marked unsupported"

run_onda inspect "$models/unsupported.onnx"
has "$out" "com.example::Sharpen +1  UNSUPPORTED" "unsupported op marked"
has "$out" "1 NOT supported by onda" "unsupported count"
has "$out" "onda cannot run this model yet: unsupported com.example::Sharpen" "unsupported summary"

checks=$((checks + 1))
"$onda" inspect "$models/unsupported.onnx" --json | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["inputs"] == [{"name": "mix", "dtype": "FLOAT", "shape": ["1", "1", "1600"]}], j["inputs"]
assert j["opsets"] == {"ai.onnx": 17, "com.example": 1}, j["opsets"]
assert j["unsupported_ops"] == ["com.example::Sharpen"], j["unsupported_ops"]
assert j["description"]["stems"] == ["clean"] and j["description"]["sample_rate"] == 16000
assert j["ir_version"] == 8 and j["nodes"] == 2
' || fail "inspect --json"

cp "$models/gain.onnx" bare.onnx
run_onda inspect bare.onnx
has "$out" "audio:     no description: .*tools/descriptions/" "a model without a description"
expect_error "cannot read model 'missing.onnx': no such file" inspect missing.onnx
printf 'not a model' > junk.onnx
expect_error "'junk.onnx' is not an ONNX model" inspect junk.onnx

# The reference models (weight-stripped, external data absent): every op supported, inputs shown.
reference="$source_dir/../shared/models"
for name in htdemucs6 mpsenet scnetlargestarrytong; do
  [ -f "$reference/$name.onnx" ] || continue
  run_onda inspect "$reference/$name.onnx" --description "$source_dir/tools/descriptions/$name.onda.json"
  checks=$((checks + 1))
  [ "$rc" -eq 0 ] && ! grep -q "UNSUPPORTED" <<< "$out" && grep -q "^inputs:" <<< "$out" &&
    grep -q "^audio:     [0-9]* Hz" <<< "$out" || fail "inspect $name: rc $rc, $out $err"
done

finish
