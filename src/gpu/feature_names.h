// The optional WebGPU features onda uses, independent of how a Dawn build numbers them.
//
// The pinned npm pair (library from bun-webgpu-linux-x64@0.1.7, header from react-native-wgpu@0.3.2)
// disagrees on WGPUFeatureName: requesting a feature with the header's value silently enables a
// different one. All translation between onda's names and the library's numbers happens here.
#pragma once
#include <optional>
#include <string_view>
#include <vector>

#include "gpu/dawn.h"

namespace onda::gpu {

enum class Feature {
  ShaderF16,
  TimestampQuery,
  Subgroups,
  SubgroupMatrix,  // chromium-experimental-subgroup-matrix (cooperative matrices)
  TimestampQueryInsidePasses,
  // Every device call may come from any thread (Dawn takes a device lock; command encoding excepted):
  // lets pipeline_prefetch.h create shader modules and pipelines on worker threads.
  ImplicitDeviceSynchronization,
};

inline constexpr Feature kAllFeatures[] = {Feature::ShaderF16,
                                           Feature::TimestampQuery,
                                           Feature::Subgroups,
                                           Feature::SubgroupMatrix,
                                           Feature::TimestampQueryInsidePasses,
                                           Feature::ImplicitDeviceSynchronization};

std::string_view feature_name(Feature feature);

// The value the linked Dawn library understands for `feature`.
wgpu::FeatureName library_feature_value(Feature feature);

// Which onda features are in a list of library feature values (unknown values are skipped).
std::vector<Feature> features_from_library(const wgpu::SupportedFeatures& supported);

}  // namespace onda::gpu
