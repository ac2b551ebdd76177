// Restarts the process once with glibc's malloc on transparent huge pages (see huge_pages.hpp).
#include "commsim/core/huge_pages.hpp"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#include <unistd.h>
#endif

namespace commsim {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

}  // namespace

const char* huge_pages_tunables() {
  return "glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=4194304";
}

std::string huge_pages_skip_reason() {
#if !defined(__GLIBC__)
  return "not glibc";
#else
  if (kSanitized) return "built with a sanitizer (its own allocator)";
  if (const char* v = std::getenv("COMMSIM_HUGE_PAGES"))
    return std::strcmp(v, "0") == 0 ? "COMMSIM_HUGE_PAGES=0"
                                    : "already restarted (COMMSIM_HUGE_PAGES is set)";
  if (std::getenv("GLIBC_TUNABLES")) return "GLIBC_TUNABLES is set by the caller";
  if (std::getenv("LD_PRELOAD")) return "LD_PRELOAD is set (another allocator or a tool)";
  int major = 0, minor = 0;
  char dot = 0;
  std::istringstream version(gnu_get_libc_version());
  version >> major >> dot >> minor;
  if (major < 2 || (major == 2 && minor < 35)) return "glibc older than 2.35 (no malloc hugetlb tunable)";
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  if (!thp || !std::getline(thp, modes)) return "no transparent huge pages";
  if (modes.find("[never]") != std::string::npos) return "transparent huge pages are disabled";
  return {};
#endif
}

void reexec_with_huge_pages(char** argv) {
#if defined(__GLIBC__)
  if (argv == nullptr || argv[0] == nullptr || !huge_pages_skip_reason().empty()) return;
  if (setenv("GLIBC_TUNABLES", huge_pages_tunables(), 1) != 0) return;
  if (setenv("COMMSIM_HUGE_PAGES", "1", 1) != 0) return;
  execv("/proc/self/exe", argv);
  // The exec failed: run on as before, without the tunables (they only act at start-up).
  unsetenv("GLIBC_TUNABLES");
#else
  (void)argv;
#endif
}

}  // namespace commsim
