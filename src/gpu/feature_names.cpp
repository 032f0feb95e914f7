#include "gpu/feature_names.h"

namespace onda::gpu {
namespace {

struct FeatureNumbers {
  Feature feature;
  std::string_view name;
  uint32_t library_value;
};

#if ONDA_DAWN_NPM_PAIR
// Numbers from the library's own ABI table (bun-webgpu@0.1.7, package/index.js, WGPUFeatureNameDef),
// not from the newer header.
constexpr FeatureNumbers kNumbers[] = {
    {Feature::ShaderF16, "shader-f16", 0xA},
    {Feature::TimestampQuery, "timestamp-query", 0x3},
    {Feature::Subgroups, "subgroups", 0x11},
    {Feature::SubgroupMatrix, "chromium-experimental-subgroup-matrix", 0x50038},
    {Feature::TimestampQueryInsidePasses, "chromium-experimental-timestamp-query-inside-passes", 0x50003},
    {Feature::ImplicitDeviceSynchronization, "implicit-device-synchronization", 0x50004},
};
#else
// A matched Dawn build: the header's numbers are the library's.
constexpr FeatureNumbers kNumbers[] = {
    {Feature::ShaderF16, "shader-f16", WGPUFeatureName_ShaderF16},
    {Feature::TimestampQuery, "timestamp-query", WGPUFeatureName_TimestampQuery},
    {Feature::Subgroups, "subgroups", WGPUFeatureName_Subgroups},
    {Feature::SubgroupMatrix, "chromium-experimental-subgroup-matrix",
     WGPUFeatureName_ChromiumExperimentalSubgroupMatrix},
    {Feature::TimestampQueryInsidePasses, "chromium-experimental-timestamp-query-inside-passes",
     WGPUFeatureName_ChromiumExperimentalTimestampQueryInsidePasses},
    {Feature::ImplicitDeviceSynchronization, "implicit-device-synchronization",
     WGPUFeatureName_ImplicitDeviceSynchronization},
};
#endif

const FeatureNumbers& numbers(Feature feature) {
  for (const auto& entry : kNumbers) {
    if (entry.feature == feature) return entry;
  }
  return kNumbers[0];  // unreachable: every Feature has an entry
}

}  // namespace

std::string_view feature_name(Feature feature) {
  return numbers(feature).name;
}

wgpu::FeatureName library_feature_value(Feature feature) {
  return static_cast<wgpu::FeatureName>(numbers(feature).library_value);
}

std::vector<Feature> features_from_library(const wgpu::SupportedFeatures& supported) {
  std::vector<Feature> result;
  for (size_t i = 0; i < supported.featureCount; ++i) {
    auto value = static_cast<uint32_t>(supported.features[i]);
    for (const auto& entry : kNumbers) {
      if (entry.library_value == value) result.push_back(entry.feature);
    }
  }
  return result;
}

}  // namespace onda::gpu
