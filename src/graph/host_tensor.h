// HostTensor is public (include/onda/host_tensor.h); this header keeps the graph layer's include.
#pragma once
#include "onda/host_tensor.h"
