// NumPy .npy files: public (include/onda/npy.h, https://numpy.org/doc/stable/reference/generated/
// numpy.lib.format.html); this header keeps the graph layer's include.
#pragma once
#include "onda/npy.h"
