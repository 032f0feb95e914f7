/* onda's C API: run ONNX models on the GPU from C or any language with a C FFI, with a stable ABI.
 *
 *   onda_session* session = NULL;
 *   if (onda_session_open("model.onnx", NULL, &session) != ONDA_OK) {
 *     fprintf(stderr, "%s\n", onda_last_error());
 *   }
 *
 * Errors: every function that can fail returns an onda_status; ONDA_OK is 0. On failure,
 * onda_last_error() gives a one-line message (naming the file, node or input) for the calling thread,
 * valid until that thread's next call into onda. No exception crosses this API, and no call aborts
 * on bad input: a bad model, an unknown input, a wrong shape or dtype returns a status.
 *
 * Ownership: every handle an onda function writes through an out-pointer (onda_device**,
 * onda_session**, onda_tensor**) belongs to the caller, who releases it once with the matching
 * onda_*_release (releasing NULL does nothing). Handles may be released in any order: a session and
 * a device tensor keep their device alive. Strings and arrays returned by onda (names, shapes,
 * data pointers) belong to the object they describe and are valid until it is released. Input
 * tensors are not taken over: the caller still releases them after a run.
 *
 * Threads: as the C++ API (onda/session.h, onda/device.h). Every call on a device, its sessions and
 * its device tensors may come from any thread; they are serialised per device. A host tensor is not
 * synchronised: do not release it on one thread while another uses it.
 */
#ifndef ONDA_ONDA_H
#define ONDA_ONDA_H

#include <stddef.h>
#include <stdint.h>

#include "onda/version.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum onda_status {
  ONDA_OK = 0,
  ONDA_ERROR_INVALID_ARGUMENT =
      1,                /* a NULL or out-of-range argument, a host tensor where a device one is needed */
  ONDA_ERROR_MODEL = 2, /* the model: unreadable, corrupt, unsupported ops or dtypes, missing data */
  ONDA_ERROR_INPUT = 3, /* a run's inputs: unknown or missing name, wrong dtype or shape */
  ONDA_ERROR_GPU = 4,   /* the GPU reported an error (validation, internal) */
  ONDA_ERROR_DEVICE_LOST = 5, /* the device is gone: its sessions cannot run any more */
  ONDA_ERROR_OUT_OF_MEMORY = 6,
  ONDA_ERROR_DEVICE_LIMIT = 7, /* the work exceeds a limit of the device */
  ONDA_ERROR_INTERNAL = 8      /* anything else */
} onda_status;

typedef enum onda_dtype {
  ONDA_DTYPE_FLOAT32 = 0,
  ONDA_DTYPE_FLOAT16 = 1,
  ONDA_DTYPE_INT32 = 2,
  ONDA_DTYPE_INT64 = 3,
  ONDA_DTYPE_UINT8 = 4,
  ONDA_DTYPE_BOOL = 5
} onda_dtype;

typedef struct onda_device onda_device;   /* a GPU adapter and its context, shared by sessions */
typedef struct onda_session onda_session; /* a loaded model */
typedef struct onda_tensor onda_tensor;   /* a tensor in host memory or in a device's GPU memory */
typedef struct onda_stream onda_stream;   /* a session run frame by frame, its states kept on the GPU */

/* The message of the calling thread's last failed call ("" when none). */
const char* onda_last_error(void);
/* The library's version at run time; ONDA_VERSION_* in onda/version.h are the headers'. */
void onda_version(int* major, int* minor, int* patch);

/* ---- devices ---- */

/* adapter: NULL or "" for ONDA_ADAPTER / the default high-performance adapter, else an index or a
 * case-insensitive part of the adapter's name. */
onda_status onda_device_open(const char* adapter, onda_device** device);
void onda_device_release(onda_device* device);
/* The adapter's name, e.g. "NVIDIA H200". */
const char* onda_device_adapter_name(const onda_device* device);

/* ---- sessions ---- */

/* device: NULL makes the session its own. */
onda_status onda_session_open(const char* path, onda_device* device, onda_session** session);
/* The bytes of an external-data file at `location` (as written in the model): set *data and *size and
 * return 0; the bytes must stay valid until the call returns (onda copies them). Non-zero: missing. */
typedef int (*onda_external_data_fn)(void* user_data, const char* location, const void** data, size_t* size);
/* A serialised model in memory (copied as needed: the caller may free it once this returns).
 * resolver: NULL when the model has no external data. */
onda_status onda_session_open_bytes(const void* model, size_t size, onda_device* device,
                                    onda_external_data_fn resolver, void* user_data, onda_session** session);
void onda_session_release(onda_session* session);

size_t onda_session_input_count(const onda_session* session);
size_t onda_session_output_count(const onda_session* session);
/* The index-th input or output: its name, dtype and shape (a dimension < 0 is bound at run time).
 * Any out-pointer may be NULL. */
onda_status onda_session_input(const onda_session* session, size_t index, const char** name,
                               onda_dtype* dtype, const int64_t** shape, size_t* rank);
onda_status onda_session_output(const onda_session* session, size_t index, const char** name,
                                onda_dtype* dtype, const int64_t** shape, size_t* rank);

/* Runs the model. input_names[i] names inputs[i]; every model input must be given, each as a host or
 * a device tensor (of the session's device). outputs: an array of onda_session_output_count entries,
 * filled in output order with new tensors the caller releases: host tensors, or, with
 * outputs_on_device != 0, device tensors that never leave the GPU (feed them to the next run). On
 * failure no output is written. */
onda_status onda_session_run(onda_session* session, size_t input_count, const char* const* input_names,
                             const onda_tensor* const* inputs, int outputs_on_device, onda_tensor** outputs);

typedef struct onda_run_stats {
  double wall_ms;
  uint64_t dispatches;
  uint64_t host_upload_bytes;   /* input bytes copied from host memory */
  uint64_t host_download_bytes; /* output bytes copied back to host memory */
  uint64_t peak_gpu_bytes;
} onda_run_stats;
/* Of the session's last run. */
onda_status onda_session_last_run(const onda_session* session, onda_run_stats* stats);

/* ---- streams (onda/stream.h): frame-by-frame models whose state outputs feed their state inputs ---- */

/* A stream over `session` (which it keeps alive). The state pairs: state_outputs[i] feeds
 * state_inputs[i]; pair_count 0 pairs them by name (state_out -> state_in, hn -> h0, cache_out ->
 * cache, ...: onda::default_state_pairs). States start at zeros of the input's shape, or at
 * initial_values[i] for the input initial_names[i] (copied to the GPU; initial_count may be 0).
 * No state pair, an unknown name or a state of dynamic shape without an initial value: ONDA_ERROR_INPUT. */
onda_status onda_stream_open(onda_session* session, size_t pair_count, const char* const* state_outputs,
                             const char* const* state_inputs, size_t initial_count,
                             const char* const* initial_names, const onda_tensor* const* initial_values,
                             onda_stream** stream);
void onda_stream_release(onda_stream* stream);

/* The state pairs (output -> input) and the outputs a step returns, in the model's order. */
size_t onda_stream_state_count(const onda_stream* stream);
onda_status onda_stream_state(const onda_stream* stream, size_t index, const char** output,
                              const char** input);
size_t onda_stream_frame_output_count(const onda_stream* stream);
onda_status onda_stream_frame_output(const onda_stream* stream, size_t index, const char** name);

/* One frame: every input that is not a state (host or device tensors). outputs: an array of
 * onda_stream_frame_output_count entries, filled in order with new host tensors the caller releases.
 * The states stay on the GPU; only the frame inputs and outputs cross (onda_stream_last_run). */
onda_status onda_stream_step(onda_stream* stream, size_t input_count, const char* const* input_names,
                             const onda_tensor* const* inputs, onda_tensor** outputs);
/* States back to their initial values. */
onda_status onda_stream_reset(onda_stream* stream);
/* The current value of the state input `input` as a new device tensor the caller releases. */
onda_status onda_stream_state_tensor(const onda_stream* stream, const char* input,
                                     onda_tensor** device_tensor);
/* Of the stream's last step. */
onda_status onda_stream_last_run(const onda_stream* stream, onda_run_stats* stats);

/* ---- tensors ---- */

/* A host tensor owning a copy of `data` (byte_size bytes: the product of the shape times the element
 * size, numpy's C order), or zero-filled when data is NULL. */
onda_status onda_tensor_create(onda_dtype dtype, const int64_t* shape, size_t rank, const void* data,
                               size_t byte_size, onda_tensor** tensor);
/* A host tensor over the caller's memory, without a copy: `data` must stay valid and unchanged until
 * the tensor is released and the runs it is given to have returned. */
onda_status onda_tensor_view(onda_dtype dtype, const int64_t* shape, size_t rank, const void* data,
                             size_t byte_size, onda_tensor** tensor);
/* A device tensor with the values of a host tensor. */
onda_status onda_tensor_to_device(const onda_tensor* host, onda_device* device, onda_tensor** device_tensor);
/* A host tensor with the values of a device tensor (waits for the device's submitted work). */
onda_status onda_tensor_to_host(const onda_tensor* device_tensor, onda_tensor** host);
void onda_tensor_release(onda_tensor* tensor);

int onda_tensor_on_device(const onda_tensor* tensor); /* 1: a device tensor, 0: a host tensor */
onda_dtype onda_tensor_dtype(const onda_tensor* tensor);
size_t onda_tensor_rank(const onda_tensor* tensor);
const int64_t* onda_tensor_shape(const onda_tensor* tensor);
size_t onda_tensor_byte_size(const onda_tensor* tensor); /* in host layout */
/* A host tensor's bytes (NULL for a device tensor). */
const void* onda_tensor_data(const onda_tensor* tensor);

#ifdef __cplusplus
}
#endif

#endif /* ONDA_ONDA_H */
