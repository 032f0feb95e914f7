// The STFT and inverse STFT around a spectrogram model, as two small ONNX graphs that onda's
// Session runs on the GPU (Pad + STFT; DFT inverse + ConvTranspose overlap-add), the same
// decomposition the exported reference models use (shared/models/README.md "Spectral ops").
//
//   analysis:  wave [B, L] -> Pad reflect n_fft/2 (center) -> STFT(hop, window, onesided)
//              -> magnitude^compression [B, n_fft/2+1, L/hop+1], phase [B, n_fft/2+1, L/hop+1]
//              (MP-SENet's mag_pha_stft: magnitude sqrt(re^2 + im^2 + 1e-9), phase
//              atan2(im + 1e-10, re + 1e-5))
//   synthesis: magnitude^compression, phase -> complex -> inverse real DFT (1/n_fft) -> overlap-add
//              of windowed frames (ConvTranspose with a windowed identity) -> centre cut -> divided
//              by the summed squared windows: torch.istft(center=True), length L
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "onda/audio_description.h"

namespace onda::audio {

// The analysis window: periodic Hann (torch.hann_window) or rectangular.
std::vector<double> spectral_window(const std::string& name, int64_t n_fft);

// The serialized ONNX models (opset 17) for `segment` samples per row and a dynamic batch dim.
std::string stft_model_bytes(const SpectrogramProcessing& p, int64_t segment);
std::string istft_model_bytes(const SpectrogramProcessing& p, int64_t segment);

}  // namespace onda::audio
