// trim(): gives the C heap's free pages back to the system (glibc's malloc_trim(0)), for
// daemon/runtime/heap-trim.ts. Once a buffer above glibc's mmap threshold has been freed,
// glibc raises the threshold to that size, and later buffers of that size come from the
// heap, whose free pages it keeps: after a burst of streams the daemon held ~20 MiB more
// than before it, for good. malloc_trim walks every arena and releases the free pages in
// the middle of the heaps too. Elsewhere than glibc it does nothing and returns false.
#include <node_api.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

static napi_value trim(napi_env env, napi_callback_info info) {
  (void)info;
  int released = 0;
#if defined(__GLIBC__)
  released = malloc_trim(0);
#endif
  napi_value out;
  napi_get_boolean(env, released != 0, &out);
  return out;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "trim", NAPI_AUTO_LENGTH, trim, NULL, &fn);
  napi_set_named_property(env, exports, "trim", fn);
  return exports;
}
