// ModelError and NpyError are public (include/onda/error.h); this header keeps the graph layer's
// include of them.
#pragma once
#include "onda/error.h"
