// .npy files in and out (numpy's format 1.0-3.0, C order): the CLI's tensor files.
#pragma once
#include "graph/npy.h"  // onda::read_npy, onda::write_npy (host-only code)
