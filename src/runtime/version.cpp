// The library's version at run time (include/onda/version.h, generated from the project version).
#include "onda/version.h"

namespace onda {

Version version() {
  return {ONDA_VERSION_MAJOR, ONDA_VERSION_MINOR, ONDA_VERSION_PATCH};
}
const char* version_string() {
  return ONDA_VERSION_STRING;
}

}  // namespace onda
