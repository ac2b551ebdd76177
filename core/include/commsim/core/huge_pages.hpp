// Large simulations on transparent huge pages: the process restarts itself once with glibc's malloc tunables
// set.
#pragma once

#include <string>

namespace commsim {

/// Why the process will or will not move its heap to transparent huge pages (for `--version`-style reporting
/// and tests): empty when it will, else the reason it keeps the default allocator.
std::string huge_pages_skip_reason();

/// The GLIBC_TUNABLES value the restart sets: malloc advises the kernel to back its memory with 2 MiB pages
/// (glibc.malloc.hugetlb=1) and gives blocks from 4 MiB up mappings of their own (mmap_threshold), returned
/// when freed. Simulating 10^6-10^7 flows touches hundreds of MB; with 4 KiB pages each first touch is a page
/// fault, which costs up to half of such a run on a virtual machine. (Until session 17 large blocks came from
/// a heap grown 64 MiB at a time; freed ones stayed resident: 15 MiB more peak memory at no gain in time.)
const char* huge_pages_tunables();

/// Restarts the running program (/proc/self/exe, same argv) with huge_pages_tunables() in its environment,
/// once: it sets COMMSIM_HUGE_PAGES=1, and does nothing when that variable is already set
/// (COMMSIM_HUGE_PAGES=0 opts out), when GLIBC_TUNABLES or LD_PRELOAD is set (the user's allocator or a tool
/// such as valgrind), under a sanitizer, with glibc older than 2.35 or transparent huge pages disabled.
/// Returns only if it did not restart (the exec failed or was skipped); the program then runs as before.
void reexec_with_huge_pages(char** argv);

}  // namespace commsim
