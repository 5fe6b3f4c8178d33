// Read-only file mappings for daemon/index/mmap.ts: map(fd, size) maps a whole file
// PROT_READ/MAP_SHARED and hands it to JavaScript as a Buffer whose finaliser unmaps it;
// advise(view, offset, length, advice) passes madvise hints on part of a mapping (or of any
// page-aligned memory, such as the WebAssembly core's). Only C and N-API, so it builds with
// any Node's headers: the binding trawl used before needed a C++ standard that Node 24's
// headers no longer accept.
#include <errno.h>
#include <node_api.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define CHECK(env, call)                                   \
  do {                                                     \
    if ((call) != napi_ok) {                               \
      napi_throw_error((env), NULL, "mmap: " #call " failed"); \
      return NULL;                                         \
    }                                                      \
  } while (0)

static napi_value throw_errno(napi_env env, const char* what, int err) {
  char message[160];
  snprintf(message, sizeof message, "%s: %s", what, strerror(err));
  napi_throw_error(env, NULL, message);
  return NULL;
}

static void unmap(napi_env env, void* data, void* hint) {
  (void)env;
  munmap(data, (size_t)(uintptr_t)hint);
}

// map(fd: number, size: number): Buffer. The mapping is advised MADV_RANDOM: most reads of a
// shard are a few bytes of a table or a list, and read-ahead would fetch pages nobody reads.
static napi_value map(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int64_t fd = -1;
  int64_t size = -1;
  if (argc < 2 || napi_get_value_int64(env, argv[0], &fd) != napi_ok || napi_get_value_int64(env, argv[1], &size) != napi_ok || fd < 0 || size <= 0) {
    napi_throw_type_error(env, NULL, "mmap: map(fd, size) takes a descriptor and a positive size");
    return NULL;
  }
  void* data = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, (int)fd, 0);
  if (data == MAP_FAILED) return throw_errno(env, "mmap", errno);
  madvise(data, (size_t)size, MADV_RANDOM);
  napi_value out;
  if (napi_create_external_buffer(env, (size_t)size, data, unmap, (void*)(uintptr_t)size, &out) != napi_ok) {
    munmap(data, (size_t)size);
    napi_throw_error(env, NULL, "mmap: this Node does not allow external buffers");
    return NULL;
  }
  return out;
}

// advise(view: ArrayBufferView | ArrayBuffer, offset: number, length: number, advice: number).
// offset is from the view's first byte; the start must fall on a page (madvise's rule).
static napi_value advise(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 4) {
    napi_throw_type_error(env, NULL, "mmap: advise(view, offset, length, advice)");
    return NULL;
  }
  void* data = NULL;
  size_t byte_length = 0;
  bool is_typed = false;
  bool is_buffer = false;
  napi_is_typedarray(env, argv[0], &is_typed);
  napi_is_arraybuffer(env, argv[0], &is_buffer);
  if (is_typed) {
    napi_typedarray_type type;
    size_t length;
    napi_value ab;
    size_t byte_offset;
    CHECK(env, napi_get_typedarray_info(env, argv[0], &type, &length, &data, &ab, &byte_offset));
    size_t per = 1;
    if (type == napi_int16_array || type == napi_uint16_array) per = 2;
    else if (type == napi_int32_array || type == napi_uint32_array || type == napi_float32_array) per = 4;
    else if (type == napi_float64_array || type == napi_bigint64_array || type == napi_biguint64_array) per = 8;
    byte_length = length * per;
  } else if (is_buffer) {
    CHECK(env, napi_get_arraybuffer_info(env, argv[0], &data, &byte_length));
  } else {
    napi_throw_type_error(env, NULL, "mmap: advise takes a Buffer, a typed array or an ArrayBuffer");
    return NULL;
  }
  int64_t offset, length;
  int32_t advice;
  if (napi_get_value_int64(env, argv[1], &offset) != napi_ok || napi_get_value_int64(env, argv[2], &length) != napi_ok ||
      napi_get_value_int32(env, argv[3], &advice) != napi_ok || offset < 0 || length < 0 || (uint64_t)offset + (uint64_t)length > byte_length) {
    napi_throw_range_error(env, NULL, "mmap: advise's range is outside the view");
    return NULL;
  }
  if (length > 0 && madvise((char*)data + offset, (size_t)length, advice) != 0) return throw_errno(env, "madvise", errno);
  return NULL;
}

static void set_int(napi_env env, napi_value target, const char* name, int32_t value) {
  napi_value v;
  napi_create_int32(env, value, &v);
  napi_set_named_property(env, target, name, v);
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "map", NAPI_AUTO_LENGTH, map, NULL, &fn);
  napi_set_named_property(env, exports, "map", fn);
  napi_create_function(env, "advise", NAPI_AUTO_LENGTH, advise, NULL, &fn);
  napi_set_named_property(env, exports, "advise", fn);
  set_int(env, exports, "MADV_RANDOM", MADV_RANDOM);
  set_int(env, exports, "MADV_WILLNEED", MADV_WILLNEED);
  set_int(env, exports, "MADV_DONTNEED", MADV_DONTNEED);
  return exports;
}
