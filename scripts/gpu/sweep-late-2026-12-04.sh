#!/usr/bin/env bash
# H200 call of 2026-12-04 (late, third): the every-length FFT sweep 1..4096 (c2c both ways, r2c, c2r,
# float64 reference) on the unrolled path with the late defaults (swizzled exchanges, 8,8,16,8, vec2 real
# I/O). Carry .gl, .devpack, build/onda_tests.
set -uo pipefail
source "$(dirname "$0")/common.sh"
step sweep
ONDA_FFT_SWEEP=1:4096 timeout 560 bash scripts/gpu/run.sh build/onda_tests --gtest_filter='FftSweep.Every*' > $logs/sweep.txt 2>&1
grep -E "worst|PASSED|FAILED|Failure" $logs/sweep.txt | head -20
step done
pack_logs
