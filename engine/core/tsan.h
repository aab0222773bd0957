// ThreadSanitizer annotations for hand-offs through code that TSan cannot see: a library built
// without -fsanitize=thread (Debian's Qt: its QMutex is futex-based and uninstrumented), whose
// documented ordering guarantee TSan would otherwise not know. tsan::release(p) just before the
// hand-off, tsan::acquire(p) first thing where the work arrives, on the same address (an object
// both sides keep alive): together they are the one happens-before edge the library documents,
// and nothing more. Empty unless the build is a ThreadSanitizer one (scripts/sanitize.sh).
#pragma once

#if defined(__SANITIZE_THREAD__)
#define EDGE_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define EDGE_TSAN 1
#endif
#endif

#ifdef EDGE_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace edge::tsan {

#ifdef EDGE_TSAN
inline void release(const void* addr) { __tsan_release(const_cast<void*>(addr)); }
inline void acquire(const void* addr) { __tsan_acquire(const_cast<void*>(addr)); }
#else
inline void release(const void*) {}
inline void acquire(const void*) {}
#endif

}  // namespace edge::tsan
