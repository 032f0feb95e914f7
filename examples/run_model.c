/* A C consumer of onda (compiled as C): opens a model, lists its inputs and outputs, runs it twice
 * on inputs filled with a ramp (the second time from device tensors, outputs kept on the GPU and
 * read back at the end) and prints the first values of each output.
 *   onda_example_c <model.onnx>       exit status 0 when both runs agree */
#include <onda/onda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t element_size(onda_dtype dtype) {
  switch (dtype) {
    case ONDA_DTYPE_FLOAT32:
    case ONDA_DTYPE_INT32:
      return 4;
    case ONDA_DTYPE_FLOAT16:
      return 2;
    case ONDA_DTYPE_INT64:
      return 8;
    default:
      return 1;
  }
}

static int fail(const char* what) {
  fprintf(stderr, "%s: %s\n", what, onda_last_error());
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s <model.onnx>\n", argv[0]);
    return 2;
  }
  int major, minor, patch;
  onda_version(&major, &minor, &patch);
  onda_device* device = NULL;
  if (onda_device_open(NULL, &device) != ONDA_OK) return fail("device");
  printf("onda %d.%d.%d on %s\n", major, minor, patch, onda_device_adapter_name(device));
  onda_session* session = NULL;
  if (onda_session_open(argv[1], device, &session) != ONDA_OK) return fail(argv[1]);

  const size_t n_in = onda_session_input_count(session), n_out = onda_session_output_count(session);
  const char** names = calloc(n_in, sizeof *names);
  onda_tensor** host = calloc(n_in, sizeof *host);
  onda_tensor** on_device = calloc(n_in, sizeof *on_device);
  onda_tensor** first = calloc(n_out, sizeof *first);
  onda_tensor** second = calloc(n_out, sizeof *second);
  int status = 0;
  for (size_t i = 0; i < n_in && status == 0; ++i) {
    onda_dtype dtype;
    const int64_t* shape;
    size_t rank, count = 1;
    onda_session_input(session, i, &names[i], &dtype, &shape, &rank);
    int64_t dims[8];
    for (size_t d = 0; d < rank && d < 8; ++d) {
      dims[d] = shape[d] < 0 ? 1 : shape[d]; /* a dynamic dimension: 1 */
      count *= (size_t)dims[d];
    }
    printf("input  %s: dtype %d, rank %zu, %zu elements\n", names[i], (int)dtype, rank, count);
    unsigned char* data = calloc(count, element_size(dtype));
    if (dtype == ONDA_DTYPE_FLOAT32) {
      for (size_t k = 0; k < count; ++k) ((float*)data)[k] = (float)k / (float)count - 0.5f;
    }
    if (onda_tensor_create(dtype, dims, rank, data, count * element_size(dtype), &host[i]) != ONDA_OK ||
        onda_tensor_to_device(host[i], device, &on_device[i]) != ONDA_OK) {
      status = fail(names[i]);
    }
    free(data);
  }
  if (status == 0 &&
      onda_session_run(session, n_in, names, (const onda_tensor* const*)host, 0, first) != ONDA_OK) {
    status = fail("run");
  }
  if (status == 0 &&
      onda_session_run(session, n_in, names, (const onda_tensor* const*)on_device, 1, second) != ONDA_OK) {
    status = fail("run on device");
  }
  for (size_t o = 0; o < n_out && status == 0; ++o) {
    const char* name;
    onda_session_output(session, o, &name, NULL, NULL, NULL);
    onda_tensor* back = NULL;
    if (onda_tensor_to_host(second[o], &back) != ONDA_OK) {
      status = fail(name);
      break;
    }
    const size_t bytes = onda_tensor_byte_size(first[o]);
    const int same = bytes == onda_tensor_byte_size(back) &&
                     memcmp(onda_tensor_data(first[o]), onda_tensor_data(back), bytes) == 0;
    printf("output %s: %zu bytes, host and device runs %s", name, bytes, same ? "agree" : "DIFFER");
    if (onda_tensor_dtype(first[o]) == ONDA_DTYPE_FLOAT32 && bytes >= 4) {
      printf(", first value %g", (double)((const float*)onda_tensor_data(first[o]))[0]);
    }
    printf("\n");
    if (!same) status = 1;
    onda_tensor_release(back);
  }
  for (size_t i = 0; i < n_in; ++i) {
    onda_tensor_release(host[i]);
    onda_tensor_release(on_device[i]);
  }
  for (size_t o = 0; o < n_out; ++o) {
    onda_tensor_release(first[o]);
    onda_tensor_release(second[o]);
  }
  free(names), free(host), free(on_device), free(first), free(second);
  onda_session_release(session);
  onda_device_release(device);
  return status;
}
