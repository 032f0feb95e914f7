#!/usr/bin/env bash
# `onda run MODEL --test-data DIR` on ONNX's own node tests (Debian's libonnx-testdata) of the ops audio
# models lean on: every LSTM / GRU / RNN, DFT, STFT and ConvTranspose case, and the run-time control flow
# ones (If with a condition input, Loop, Scan, Range expanded into a Loop), must pass ONNX's tolerance
# through the command line, and a check with a tolerance nothing can meet must fail with a non-zero exit.
# Usage: run_test_data.sh BUILD_DIR.
# Exit 77 (skipped) without the test data.
set -uo pipefail
onda="$1/onda"
node=/usr/share/libonnx-testdata/data/node
[ -d "$node" ] || { echo "libonnx-testdata not installed"; exit 77; }
failed=0
count=0
for dir in "$node"/test_lstm_* "$node"/test_gru_* "$node"/test_rnn_* "$node"/test_simple_rnn_* "$node"/test_dft* \
    "$node"/test_stft* "$node"/test_convtranspose* "$node"/test_if "$node"/test_loop11 "$node"/test_scan_sum \
    "$node"/test_scan9_sum "$node"/test_range_*_expanded; do
  for set in "$dir"/test_data_set_*; do
    count=$((count + 1))
    if ! out=$("$onda" run "$dir/model.onnx" --test-data "$set" 2>&1); then
      echo "FAILED: $(basename "$dir")/$(basename "$set")"
      echo "$out" | tail -5
      failed=$((failed + 1))
    else
      echo "$(basename "$dir")/$(basename "$set"): $(echo "$out" | grep -c '^check .*: ok') outputs ok"
    fi
  done
done
# A check must be able to fail: no float32 result meets atol 1e-30 with rtol 0.
if "$onda" run "$node/test_lstm_defaults/model.onnx" --test-data "$node/test_lstm_defaults/test_data_set_0" \
    --rtol 0 --atol 1e-30 > /dev/null 2>&1; then
  echo "FAILED: a check with atol 1e-30, rtol 0 passed"
  failed=$((failed + 1))
fi
echo "$count test data sets, $failed failures"
[ "$count" -gt 0 ] && [ "$failed" -eq 0 ]
