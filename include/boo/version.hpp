// boo: the library's version and the git commit it was built from.
#pragma once

namespace boo {

const char* library_version();  ///< the CMake project's version, e.g. "0.1.0"
const char* git_commit();       ///< "1a2b3c4d5e6f", "...-dirty" or "unknown"

}  // namespace boo
