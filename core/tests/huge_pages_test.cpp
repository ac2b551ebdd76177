// Tests of the huge-page restart's gating: who chose the allocator, and the tunables it sets.
#include "commsim/core/huge_pages.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace {

/// Sets or clears an environment variable for one scope, restoring what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("huge_pages: the restart is skipped, with the reason, where the caller chose the allocator") {
  ScopedEnv clear_marker("COMMSIM_HUGE_PAGES", nullptr);
  ScopedEnv clear_tunables("GLIBC_TUNABLES", nullptr);
  ScopedEnv clear_preload("LD_PRELOAD", nullptr);
  const std::string clean = commsim::huge_pages_skip_reason();
  if (clean.find("sanitizer") != std::string::npos || clean == "not glibc") {
    // A sanitizer's allocator (or no glibc) wins over every variable below.
    ScopedEnv opt_out("COMMSIM_HUGE_PAGES", "0");
    CHECK(commsim::huge_pages_skip_reason() == clean);
    return;
  }
  {
    ScopedEnv opt_out("COMMSIM_HUGE_PAGES", "0");
    CHECK(commsim::huge_pages_skip_reason() == "COMMSIM_HUGE_PAGES=0");
  }
  {
    ScopedEnv restarted("COMMSIM_HUGE_PAGES", "1");
    CHECK(commsim::huge_pages_skip_reason().find("already restarted") != std::string::npos);
  }
  {
    ScopedEnv user("GLIBC_TUNABLES", "glibc.malloc.arena_max=1");
    CHECK(commsim::huge_pages_skip_reason().find("GLIBC_TUNABLES") != std::string::npos);
  }
  {
    ScopedEnv tool("LD_PRELOAD", "/usr/lib/x86_64-linux-gnu/valgrind/vgpreload_memcheck-amd64-linux.so");
    CHECK(commsim::huge_pages_skip_reason().find("LD_PRELOAD") != std::string::npos);
  }
}

TEST_CASE("huge_pages: the tunables name glibc's malloc settings, colon-separated") {
  const std::string t = commsim::huge_pages_tunables();
  CHECK(t.find("glibc.malloc.hugetlb=1") != std::string::npos);
  // Blocks from 4 MiB get mappings of their own, returned when freed; no top pad (the heap grown 64 MiB at a
  // time kept freed blocks resident: 15 MiB more peak memory on the 1,024-GPU all-to-all).
  CHECK(t.find("glibc.malloc.mmap_threshold=4194304") != std::string::npos);
  CHECK(t.find("glibc.malloc.top_pad=") == std::string::npos);
  CHECK(t.find(' ') == std::string::npos);
}

TEST_CASE("huge_pages: without argv nothing restarts") {
  ScopedEnv clear_marker("COMMSIM_HUGE_PAGES", nullptr);
  commsim::reexec_with_huge_pages(nullptr);  // returns: no program to restart
  CHECK(std::getenv("COMMSIM_HUGE_PAGES") == nullptr);
}
