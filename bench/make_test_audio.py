#!/usr/bin/env python3
"""Writes a synthetic music-like test file for bench/separate.sh: a 16-bit PCM WAV of given length,
rate and channels: a bass line, a chord, a hi-hat-like noise burst every beat and a vibrato
"voice", different per channel. numpy when available, the standard library otherwise (slower)."""
import argparse
import math
import random
import struct
import wave


def synthesize_numpy(np, frames, rate, channels, seed):
    rng = np.random.default_rng(seed)
    t = np.arange(frames, dtype=np.float64) / rate
    beat = (t * 2.0) % 1.0  # 120 bpm
    out = []
    for c in range(channels):
        bass = 0.25 * np.sin(2 * np.pi * (55.0 + 27.5 * ((t // 2) % 2)) * t)
        chord = sum(0.08 * np.sin(2 * np.pi * f * t + c) for f in (261.6, 329.6, 392.0))
        hat = 0.1 * rng.standard_normal(frames) * np.exp(-beat * 40.0)
        voice = 0.12 * np.sin(2 * np.pi * (440.0 * t + 3.0 * np.sin(2 * np.pi * 5.0 * t)))
        out.append(bass + chord + hat + voice * (0.8 if c else 1.0))
    x = np.clip(np.stack(out, axis=1), -1.0, 1.0)
    return (x * 32767.0).astype("<i2").tobytes()


def synthesize_stdlib(frames, rate, channels, seed):
    rng = random.Random(seed)
    data = bytearray()
    two_pi = 2.0 * math.pi
    for i in range(frames):
        t = i / rate
        beat = (t * 2.0) % 1.0
        for c in range(channels):
            v = 0.25 * math.sin(two_pi * (55.0 + 27.5 * ((t // 2) % 2)) * t)
            v += sum(0.08 * math.sin(two_pi * f * t + c) for f in (261.6, 329.6, 392.0))
            v += 0.1 * rng.gauss(0.0, 1.0) * math.exp(-beat * 40.0)
            v += 0.12 * math.sin(two_pi * (440.0 * t + 3.0 * math.sin(two_pi * 5.0 * t))) * (0.8 if c else 1.0)
            data += struct.pack("<h", int(max(-1.0, min(1.0, v)) * 32767.0))
    return bytes(data)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("output")
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--rate", type=int, default=44100)
    parser.add_argument("--channels", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    a = parser.parse_args()
    frames = int(round(a.seconds * a.rate))
    try:
        import numpy as np

        pcm = synthesize_numpy(np, frames, a.rate, a.channels, a.seed)
    except ImportError:
        pcm = synthesize_stdlib(frames, a.rate, a.channels, a.seed)
    with wave.open(a.output, "wb") as w:
        w.setnchannels(a.channels)
        w.setsampwidth(2)
        w.setframerate(a.rate)
        w.writeframes(pcm)
    print(f"wrote {a.output}: {a.seconds:.1f} s, {a.rate} Hz, {a.channels} channels")


if __name__ == "__main__":
    main()
