// boo: dlopen with a search path that covers the toolkit and pip wheels.
#include "cuda/library_loader.hpp"

#include <dlfcn.h>
#include <glob.h>
#include <link.h>

#include <algorithm>
#include <cstdlib>

namespace boo::cuda {
namespace {

std::vector<std::string> candidate_dirs(const char* env_dir) {
  std::vector<std::string> dirs;
  if (env_dir) {
    if (const char* v = std::getenv(env_dir); v && *v) dirs.emplace_back(v);
  }
  dirs.emplace_back("");  // the dynamic loader's own search path
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* v = std::getenv(var); v && *v) dirs.push_back(std::string(v) + "/lib64");
  }
  dirs.emplace_back("/usr/local/cuda/lib64");
  dirs.emplace_back("/usr/local/cuda/lib");
  dirs.emplace_back("/usr/local/cuda/extras/CUPTI/lib64");
  // NVIDIA's PyPI wheels (nvidia-cudnn-cu13, nvidia-cuda-nvrtc, ...) in the
  // active virtual environment and the usual Python installations.
  std::vector<std::string> patterns;
  if (const char* venv = std::getenv("VIRTUAL_ENV"); venv && *venv)
    patterns.push_back(std::string(venv) + "/lib/python3*/site-packages/nvidia/*/lib");
  for (const char* p : {"/opt/*/.venv/lib/python3*/site-packages/nvidia/*/lib",
                        "/usr/local/lib/python3*/dist-packages/nvidia/*/lib",
                        "/usr/local/lib/python3*/site-packages/nvidia/*/lib",
                        "/usr/lib/python3/dist-packages/nvidia/*/lib"})
    patterns.emplace_back(p);
  if (const char* home = std::getenv("HOME"); home && *home)
    patterns.push_back(std::string(home) + "/.local/lib/python3*/site-packages/nvidia/*/lib");
  for (const std::string& pattern : patterns) {
    glob_t g{};
    if (glob(pattern.c_str(), 0, nullptr, &g) == 0)
      for (size_t i = 0; i < g.gl_pathc; ++i) dirs.emplace_back(g.gl_pathv[i]);
    globfree(&g);
  }
  // Keep the first occurrence of each folder (CUDA_HOME is often /usr/local/cuda).
  std::vector<std::string> unique;
  for (std::string& d : dirs)
    if (std::find(unique.begin(), unique.end(), d) == unique.end()) unique.push_back(std::move(d));
  return unique;
}

}  // namespace

Result<SharedLibrary> open_library(const std::vector<std::string>& sonames, const char* env_dir) {
  std::string tried;
  for (const std::string& dir : candidate_dirs(env_dir)) {
    for (const std::string& name : sonames) {
      const std::string path = dir.empty() ? name : dir + "/" + name;
      if (void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
        SharedLibrary lib{h, path};
        link_map* map = nullptr;
        if (dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name) lib.path = map->l_name;
        return lib;
      }
    }
    if (tried.size() < 400) tried += (tried.empty() ? "" : ", ") + (dir.empty() ? std::string("<loader path>") : dir);
  }
  std::string hint = env_dir ? std::string(" (set ") + env_dir + " to the directory that holds it)" : "";
  return unavailable(sonames.front() + " not found in " + tried + hint);
}

void* find_symbol(const SharedLibrary& lib, const char* name) { return dlsym(lib.handle, name); }

}  // namespace boo::cuda
