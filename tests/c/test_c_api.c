/* The C API (include/onda/onda.h) from C: a model built in memory (a hand-encoded ONNX protobuf:
 * y = x + h, h_next = tanh(y)), run with host tensors, with its state kept on the GPU between runs,
 * and every error path returning a status and a message. Compiled as C (not C++). Exit status 0 when
 * every check passes; prints each failed check. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onda/onda.h"

static int failures = 0;
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

/* ---- a minimal protobuf writer for the model ---- */
typedef struct {
  unsigned char* p;
  size_t n, cap;
} buf;

static void put(buf* b, const void* data, size_t n) {
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2 + 64;
    b->p = (unsigned char*)realloc(b->p, b->cap);
  }
  memcpy(b->p + b->n, data, n);
  b->n += n;
}
static void varint(buf* b, uint64_t v) {
  unsigned char byte;
  do {
    byte = (unsigned char)(v & 0x7f);
    v >>= 7;
    if (v) byte |= 0x80;
    put(b, &byte, 1);
  } while (v);
}
static void field_varint(buf* b, int field, uint64_t v) {
  varint(b, (uint64_t)(field << 3));
  varint(b, v);
}
static void field_bytes(buf* b, int field, const void* data, size_t n) {
  varint(b, (uint64_t)(field << 3 | 2));
  varint(b, n);
  put(b, data, n);
}
static void field_string(buf* b, int field, const char* s) {
  field_bytes(b, field, s, strlen(s));
}
static void field_message(buf* b, int field, buf* m) {
  field_bytes(b, field, m->p, m->n);
  free(m->p);
  memset(m, 0, sizeof *m);
}

enum { kFloat = 1, kWidth = 96 };

/* ValueInfoProto {name=1, type=2 {tensor_type=1 {elem_type=1, shape=2 {dim=1 {dim_value=1}}}}} */
static void value_info(buf* graph, int field, const char* name, int64_t width) {
  buf dim = {0}, shape = {0}, tensor = {0}, type = {0}, info = {0};
  field_varint(&dim, 1, 1);
  field_message(&shape, 1, &dim);
  field_varint(&dim, 1, (uint64_t)width);
  field_message(&shape, 1, &dim);
  field_varint(&tensor, 1, kFloat);
  field_message(&tensor, 2, &shape);
  field_message(&type, 1, &tensor);
  field_string(&info, 1, name);
  field_message(&info, 2, &type);
  field_message(graph, field, &info);
}

/* NodeProto {input=1, output=2, op_type=4} */
static void node(buf* graph, const char* op, const char* a, const char* b, const char* out) {
  buf n = {0};
  field_string(&n, 1, a);
  if (b) field_string(&n, 1, b);
  field_string(&n, 2, out);
  field_string(&n, 4, op);
  field_message(graph, 1, &n);
}

/* ModelProto {ir_version=1, graph=7, opset_import=8 {version=2}}; second_op replaces Tanh. */
static buf make_model(const char* second_op) {
  buf model = {0}, graph = {0}, opset = {0};
  node(&graph, "Add", "x", "h", "y");
  node(&graph, second_op, "y", NULL, "h_next");
  field_string(&graph, 2, "g");
  value_info(&graph, 11, "x", kWidth);
  value_info(&graph, 11, "h", kWidth);
  value_info(&graph, 12, "y", kWidth);
  value_info(&graph, 12, "h_next", kWidth);
  field_varint(&model, 1, 8);
  field_message(&model, 7, &graph);
  field_varint(&opset, 2, 17);
  field_message(&model, 8, &opset);
  return model;
}

static double rel_l2(const float* out, const double* ref, int n) {
  double num = 0, den = 0;
  for (int i = 0; i < n; ++i) {
    num += (out[i] - ref[i]) * (out[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return sqrt(num / (den > 0 ? den : 1));
}

static float next_random(uint32_t* state) {
  *state = *state * 1664525u + 1013904223u;
  return (float)((*state >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static void check_metadata(onda_session* session) {
  const char* name = NULL;
  onda_dtype dtype = ONDA_DTYPE_INT64;
  const int64_t* shape = NULL;
  size_t rank = 0;
  CHECK(onda_session_input_count(session) == 2);
  CHECK(onda_session_output_count(session) == 2);
  CHECK(onda_session_input(session, 1, &name, &dtype, &shape, &rank) == ONDA_OK);
  CHECK(name && strcmp(name, "h") == 0);
  CHECK(dtype == ONDA_DTYPE_FLOAT32);
  CHECK(rank == 2 && shape[0] == 1 && shape[1] == kWidth);
  CHECK(onda_session_output(session, 1, &name, NULL, NULL, NULL) == ONDA_OK);
  CHECK(name && strcmp(name, "h_next") == 0);
  CHECK(onda_session_input(session, 2, &name, NULL, NULL, NULL) == ONDA_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(onda_last_error(), "index 2") != NULL);
}

/* Four steps with the state on the GPU against a float64 reference; only x crosses each run. */
static void check_state_on_device(onda_device* device, onda_session* session) {
  const int64_t shape[2] = {1, kWidth};
  float x[kWidth], h0[kWidth];
  double h_ref[kWidth];
  uint32_t seed = 12345;
  for (int i = 0; i < kWidth; ++i) h_ref[i] = h0[i] = next_random(&seed);
  onda_tensor *h_host = NULL, *h = NULL;
  CHECK(onda_tensor_create(ONDA_DTYPE_FLOAT32, shape, 2, h0, sizeof h0, &h_host) == ONDA_OK);
  CHECK(onda_tensor_to_device(h_host, device, &h) == ONDA_OK);
  CHECK(onda_tensor_on_device(h) == 1 && onda_tensor_data(h) == NULL);
  onda_tensor_release(h_host);
  for (int step = 0; step < 4; ++step) {
    for (int i = 0; i < kWidth; ++i) x[i] = next_random(&seed);
    onda_tensor* xt = NULL;
    CHECK(onda_tensor_view(ONDA_DTYPE_FLOAT32, shape, 2, x, sizeof x, &xt) == ONDA_OK);
    const char* names[2] = {"x", "h"};
    const onda_tensor* inputs[2] = {xt, h};
    onda_tensor* outputs[2] = {NULL, NULL};
    const onda_status status = onda_session_run(session, 2, names, inputs, 1, outputs);
    CHECK(status == ONDA_OK);
    if (status != ONDA_OK) {
      fprintf(stderr, "run: %s\n", onda_last_error());
      onda_tensor_release(xt);
      break;
    }
    onda_run_stats stats;
    CHECK(onda_session_last_run(session, &stats) == ONDA_OK);
    CHECK(stats.host_upload_bytes == sizeof x);
    CHECK(stats.host_download_bytes == 0);
    for (int i = 0; i < kWidth; ++i) h_ref[i] = tanh(x[i] + h_ref[i]);
    onda_tensor_release(xt);
    onda_tensor_release(outputs[0]);
    onda_tensor_release(h);
    h = outputs[1];
    CHECK(onda_tensor_on_device(h) == 1);
  }
  onda_tensor* back = NULL;
  CHECK(onda_tensor_to_host(h, &back) == ONDA_OK);
  CHECK(onda_tensor_byte_size(back) == kWidth * sizeof(float));
  const double error = rel_l2((const float*)onda_tensor_data(back), h_ref, kWidth);
  printf("state on device after 4 steps: rel L2 %.3g\n", error);
  CHECK(error < 1e-5);
  onda_tensor_release(back);
  onda_tensor_release(h);
}

/* A stream (onda_stream_*) over the same model: h_next feeds h by the names' rule, the state stays on
 * the GPU (only x goes up and y comes back), reset and initial values, and the stream's errors. */
static void check_stream(onda_session* session) {
  const int64_t shape[2] = {1, kWidth};
  onda_stream* stream = NULL;
  CHECK(onda_stream_open(session, 0, NULL, NULL, 0, NULL, NULL, &stream) == ONDA_OK);
  if (!stream) {
    fprintf(stderr, "stream: %s\n", onda_last_error());
    return;
  }
  const char *out_name = NULL, *in_name = NULL;
  CHECK(onda_stream_state_count(stream) == 1);
  CHECK(onda_stream_state(stream, 0, &out_name, &in_name) == ONDA_OK);
  CHECK(out_name && in_name && strcmp(out_name, "h_next") == 0 && strcmp(in_name, "h") == 0);
  CHECK(onda_stream_frame_output_count(stream) == 1);
  CHECK(onda_stream_frame_output(stream, 0, &out_name) == ONDA_OK && strcmp(out_name, "y") == 0);
  CHECK(onda_stream_frame_output(stream, 1, &out_name) == ONDA_ERROR_INVALID_ARGUMENT);

  float x[kWidth];
  double h_ref[kWidth], worst = 0;
  uint32_t seed = 777;
  for (int i = 0; i < kWidth; ++i) h_ref[i] = 0;
  for (int step = 0; step < 6; ++step) {
    for (int i = 0; i < kWidth; ++i) x[i] = next_random(&seed);
    onda_tensor* xt = NULL;
    CHECK(onda_tensor_view(ONDA_DTYPE_FLOAT32, shape, 2, x, sizeof x, &xt) == ONDA_OK);
    const char* names[1] = {"x"};
    const onda_tensor* inputs[1] = {xt};
    onda_tensor* y = NULL;
    const onda_status status = onda_stream_step(stream, 1, names, inputs, &y);
    CHECK(status == ONDA_OK);
    onda_tensor_release(xt);
    if (status != ONDA_OK) {
      fprintf(stderr, "step: %s\n", onda_last_error());
      break;
    }
    double y_ref[kWidth];
    for (int i = 0; i < kWidth; ++i) {
      y_ref[i] = x[i] + h_ref[i];
      h_ref[i] = tanh(y_ref[i]);
    }
    const double error = rel_l2((const float*)onda_tensor_data(y), y_ref, kWidth);
    worst = error > worst ? error : worst;
    onda_run_stats stats;
    CHECK(onda_stream_last_run(stream, &stats) == ONDA_OK);
    CHECK(stats.host_upload_bytes == sizeof x);                 /* the frame only */
    CHECK(stats.host_download_bytes == sizeof(float) * kWidth); /* y only: h_next stays */
    onda_tensor_release(y);
  }
  printf("stream: 6 frames, worst rel L2 %.3g\n", worst);
  CHECK(worst < 1e-5);
  onda_tensor *state = NULL, *state_host = NULL;
  CHECK(onda_stream_state_tensor(stream, "h", &state) == ONDA_OK);
  CHECK(onda_tensor_on_device(state) == 1);
  CHECK(onda_tensor_to_host(state, &state_host) == ONDA_OK);
  CHECK(rel_l2((const float*)onda_tensor_data(state_host), h_ref, kWidth) < 1e-5);
  onda_tensor_release(state);
  onda_tensor_release(state_host);
  CHECK(onda_stream_state_tensor(stream, "x", &state) == ONDA_ERROR_INPUT && state == NULL);

  /* reset: the zero state again; the state input is not a frame input. */
  CHECK(onda_stream_reset(stream) == ONDA_OK);
  CHECK(onda_stream_state_tensor(stream, "h", &state) == ONDA_OK);
  CHECK(onda_tensor_to_host(state, &state_host) == ONDA_OK);
  CHECK(state_host && ((const float*)onda_tensor_data(state_host))[0] == 0.0f);
  onda_tensor_release(state);
  onda_tensor_release(state_host);
  {
    onda_tensor* h = NULL;
    onda_tensor* y = NULL;
    CHECK(onda_tensor_create(ONDA_DTYPE_FLOAT32, shape, 2, NULL, 0, &h) == ONDA_OK);
    const char* names[2] = {"x", "h"};
    const onda_tensor* inputs[2] = {h, h};
    CHECK(onda_stream_step(stream, 2, names, inputs, &y) == ONDA_ERROR_INPUT && y == NULL);
    CHECK(strstr(onda_last_error(), "state input") != NULL);
    onda_tensor_release(h);
  }
  onda_stream_release(stream);

  /* Explicit pairs and an initial value: h starts at 0.5, so y = x + 0.5. */
  {
    float half[kWidth];
    for (int i = 0; i < kWidth; ++i) half[i] = 0.5f;
    onda_tensor *initial = NULL, *xt = NULL, *y = NULL;
    CHECK(onda_tensor_create(ONDA_DTYPE_FLOAT32, shape, 2, half, sizeof half, &initial) == ONDA_OK);
    const char* outs[1] = {"h_next"};
    const char* ins[1] = {"h"};
    const char* initial_names[1] = {"h"};
    const onda_tensor* initial_values[1] = {initial};
    CHECK(onda_stream_open(session, 1, outs, ins, 1, initial_names, initial_values, &stream) == ONDA_OK);
    for (int i = 0; i < kWidth; ++i) x[i] = next_random(&seed);
    CHECK(onda_tensor_create(ONDA_DTYPE_FLOAT32, shape, 2, x, sizeof x, &xt) == ONDA_OK);
    const char* names[1] = {"x"};
    const onda_tensor* inputs[1] = {xt};
    CHECK(stream && onda_stream_step(stream, 1, names, inputs, &y) == ONDA_OK);
    CHECK(y && fabsf(((const float*)onda_tensor_data(y))[3] - (x[3] + 0.5f)) < 1e-6f);
    onda_tensor_release(y);
    onda_tensor_release(xt);
    onda_tensor_release(initial);
    onda_stream_release(stream);
    stream = NULL;
    const char* wrong[1] = {"nothing"};
    CHECK(onda_stream_open(session, 1, wrong, ins, 0, NULL, NULL, &stream) == ONDA_ERROR_INPUT &&
          stream == NULL);
    CHECK(strstr(onda_last_error(), "nothing") != NULL);
    CHECK(onda_stream_open(NULL, 0, NULL, NULL, 0, NULL, NULL, &stream) == ONDA_ERROR_INVALID_ARGUMENT);
  }
}

/* Host tensors in and out, then each wrong input. */
static void check_host_run_and_input_errors(onda_session* session) {
  const int64_t shape[2] = {1, kWidth}, wrong_shape[2] = {1, 5};
  float x[kWidth], h[kWidth];
  int32_t ints[kWidth];
  for (int i = 0; i < kWidth; ++i) {
    x[i] = 0.01f * (float)i;
    h[i] = -0.02f * (float)i;
    ints[i] = i;
  }
  onda_tensor *xt = NULL, *ht = NULL, *small = NULL, *int_h = NULL;
  CHECK(onda_tensor_create(ONDA_DTYPE_FLOAT32, shape, 2, x, sizeof x, &xt) == ONDA_OK);
  CHECK(onda_tensor_create(ONDA_DTYPE_FLOAT32, shape, 2, h, sizeof h, &ht) == ONDA_OK);
  CHECK(onda_tensor_create(ONDA_DTYPE_FLOAT32, wrong_shape, 2, NULL, 0, &small) == ONDA_OK);
  CHECK(onda_tensor_create(ONDA_DTYPE_INT32, shape, 2, ints, sizeof ints, &int_h) == ONDA_OK);
  const char* names[2] = {"x", "h"};
  onda_tensor* outputs[2] = {NULL, NULL};

  const onda_tensor* good[2] = {xt, ht};
  CHECK(onda_session_run(session, 2, names, good, 0, outputs) == ONDA_OK);
  if (outputs[0]) {
    double ref[kWidth];
    for (int i = 0; i < kWidth; ++i) ref[i] = x[i] + h[i];
    CHECK(onda_tensor_on_device(outputs[0]) == 0);
    CHECK(rel_l2((const float*)onda_tensor_data(outputs[0]), ref, kWidth) < 1e-6);
  }
  onda_tensor_release(outputs[0]);
  onda_tensor_release(outputs[1]);

  outputs[0] = outputs[1] = NULL;
  const onda_tensor* shape_wrong[2] = {xt, small};
  CHECK(onda_session_run(session, 2, names, shape_wrong, 0, outputs) == ONDA_ERROR_INPUT);
  CHECK(strstr(onda_last_error(), "'h' must have shape") != NULL);
  const onda_tensor* dtype_wrong[2] = {xt, int_h};
  CHECK(onda_session_run(session, 2, names, dtype_wrong, 0, outputs) == ONDA_ERROR_INPUT);
  CHECK(strstr(onda_last_error(), "must be float32, got int32") != NULL);
  CHECK(onda_session_run(session, 1, names, good, 0, outputs) == ONDA_ERROR_INPUT);
  CHECK(strstr(onda_last_error(), "missing input 'h'") != NULL);
  const char* unknown[3] = {"x", "h", "nope"};
  const onda_tensor* three[3] = {xt, ht, xt};
  CHECK(onda_session_run(session, 3, unknown, three, 0, outputs) == ONDA_ERROR_INPUT);
  CHECK(strstr(onda_last_error(), "'nope' is not an input") != NULL);
  CHECK(outputs[0] == NULL && outputs[1] == NULL);
  CHECK(onda_session_run(session, 2, names, NULL, 0, outputs) == ONDA_ERROR_INVALID_ARGUMENT);
  CHECK(onda_session_run(NULL, 2, names, good, 0, outputs) == ONDA_ERROR_INVALID_ARGUMENT);
  onda_tensor* wrong_size = NULL;
  CHECK(onda_tensor_create(ONDA_DTYPE_FLOAT32, shape, 2, x, 7, &wrong_size) == ONDA_ERROR_INVALID_ARGUMENT);
  CHECK(wrong_size == NULL && strstr(onda_last_error(), "byte_size 7") != NULL);
  CHECK(onda_tensor_create((onda_dtype)42, shape, 2, x, sizeof x, &wrong_size) ==
        ONDA_ERROR_INVALID_ARGUMENT);
  onda_tensor_release(xt);
  onda_tensor_release(ht);
  onda_tensor_release(small);
  onda_tensor_release(int_h);
}

static void check_model_errors(onda_device* device) {
  onda_session* session = (onda_session*)1;
  const char garbage[] = "this is not an onnx model";
  CHECK(onda_session_open_bytes(garbage, sizeof garbage, device, NULL, NULL, &session) == ONDA_ERROR_MODEL);
  CHECK(session == NULL);
  CHECK(strstr(onda_last_error(), "not a valid ONNX model") != NULL);
  buf unsupported = make_model("NoSuchOp");
  CHECK(onda_session_open_bytes(unsupported.p, unsupported.n, device, NULL, NULL, &session) ==
        ONDA_ERROR_MODEL);
  CHECK(strstr(onda_last_error(), "NoSuchOp") != NULL);
  free(unsupported.p);
  CHECK(onda_session_open("/nonexistent/model.onnx", device, &session) == ONDA_ERROR_MODEL);
  CHECK(strstr(onda_last_error(), "/nonexistent/model.onnx") != NULL);
  CHECK(onda_session_open(NULL, device, &session) == ONDA_ERROR_INVALID_ARGUMENT);
  CHECK(onda_session_open_bytes(garbage, sizeof garbage, device, NULL, NULL, NULL) ==
        ONDA_ERROR_INVALID_ARGUMENT);
  onda_device* none = NULL;
  CHECK(onda_device_open("no adapter has this name", &none) == ONDA_ERROR_GPU);
  CHECK(none == NULL && strstr(onda_last_error(), "no adapter has this name") != NULL);
}

int main(void) {
  int major = -1, minor = -1, patch = -1;
  onda_version(&major, &minor, &patch);
  CHECK(major == ONDA_VERSION_MAJOR && minor == ONDA_VERSION_MINOR && patch == ONDA_VERSION_PATCH);

  onda_device* device = NULL;
  if (onda_device_open(NULL, &device) != ONDA_OK) {
    fprintf(stderr, "no device: %s\n", onda_last_error());
    return 1;
  }
  printf("adapter: %s\n", onda_device_adapter_name(device));
  buf model = make_model("Tanh");
  onda_session* session = NULL;
  CHECK(onda_session_open_bytes(model.p, model.n, device, NULL, NULL, &session) == ONDA_OK);
  free(model.p);
  if (!session) {
    fprintf(stderr, "open: %s\n", onda_last_error());
    return 1;
  }
  onda_device_release(device); /* the session keeps it */
  device = NULL;
  check_metadata(session);
  check_host_run_and_input_errors(session);
  /* A device tensor needs a device handle: open one that shares nothing with the session's and
   * expect a refusal, then run the state loop on a session that shares a device with its tensors. */
  onda_device* shared = NULL;
  CHECK(onda_device_open(NULL, &shared) == ONDA_OK);
  {
    const int64_t shape[2] = {1, kWidth};
    onda_tensor *host = NULL, *foreign = NULL, *x = NULL;
    onda_tensor* outputs[2] = {NULL, NULL};
    CHECK(onda_tensor_create(ONDA_DTYPE_FLOAT32, shape, 2, NULL, 0, &host) == ONDA_OK);
    CHECK(onda_tensor_create(ONDA_DTYPE_FLOAT32, shape, 2, NULL, 0, &x) == ONDA_OK);
    CHECK(onda_tensor_to_device(host, shared, &foreign) == ONDA_OK);
    const char* names[2] = {"x", "h"};
    const onda_tensor* inputs[2] = {x, foreign};
    CHECK(onda_session_run(session, 2, names, inputs, 0, outputs) == ONDA_ERROR_INPUT);
    CHECK(strstr(onda_last_error(), "another Device") != NULL);
    onda_tensor_release(host);
    onda_tensor_release(foreign);
    onda_tensor_release(x);
  }
  onda_session_release(session);
  buf again = make_model("Tanh");
  CHECK(onda_session_open_bytes(again.p, again.n, shared, NULL, NULL, &session) == ONDA_OK);
  free(again.p);
  if (session) check_state_on_device(shared, session);
  if (session) check_stream(session);
  check_model_errors(shared);
  onda_session_release(session);
  onda_device_release(shared);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("C API: all checks passed\n");
  return 0;
}
