// The ONNX loader on models built for each rule: initializers in every encoding (raw, typed fields,
// external data), Constant nodes, value types, attributes and subgraphs; and the early, named
// errors: truncated or garbage files, unsupported dtypes, old IR versions, external data that is
// missing, out of range or outside the model's folder.
#include <cstring>

#include "graph/model_error.h"
#include "graph/simplify.h"
#include "harness.h"
#include "onnx/onnx_loader.h"
#include "tensor/half.h"
#include "test_onnx_support.h"

namespace onda {
namespace {

using test::TemporaryFolder;

void expect_model_error(const std::function<void()>& action, const std::vector<std::string>& expected_parts) {
  try {
    action();
    ADD_FAILURE() << "no ModelError; expected one mentioning '" << expected_parts.front() << "'";
  } catch (const ModelError& error) {
    for (const std::string& part : expected_parts)
      EXPECT_NE(std::string(error.what()).find(part), std::string::npos) << "message: " << error.what();
  }
}

Graph parse(const onnx::ModelProto& model, const std::filesystem::path& dir = ".",
            OnnxLoadOptions options = {}) {
  return parse_onnx_model(model.SerializeAsString(), dir, "test model", options);
}

// y = Add(x, w) with w inline as raw float bytes.
onnx::ModelProto add_model(const std::vector<float>& weights) {
  onnx::ModelProto model = test::empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  test::add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT,
                         {static_cast<int64_t>(weights.size())});
  test::add_tensor_value(graph->mutable_output(), "y", onnx::TensorProto::FLOAT,
                         {static_cast<int64_t>(weights.size())});
  onnx::TensorProto* w = graph->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(static_cast<int64_t>(weights.size()));
  w->set_raw_data(weights.data(), weights.size() * sizeof(float));
  test::add_node(graph, "Add", {"x", "w"}, {"y"}, "adder");
  return model;
}

TEST(OnnxLoader, InitializersInEveryEncoding) {
  std::mt19937_64 engine(test::test_seed());
  test::Random random(test::test_seed());
  const std::vector<float> weights = random.normal(7);
  onnx::ModelProto model = add_model(weights);
  onnx::GraphProto* graph = model.mutable_graph();

  // Typed repeated fields, as older exporters write them.
  onnx::TensorProto* floats = graph->add_initializer();
  floats->set_name("floats");
  floats->set_data_type(onnx::TensorProto::FLOAT);
  floats->add_dims(2);
  floats->add_dims(2);
  const std::vector<float> float_values = random.uniform(4, -3, 3);
  for (float v : float_values) floats->add_float_data(v);

  onnx::TensorProto* longs = graph->add_initializer();
  longs->set_name("longs");
  longs->set_data_type(onnx::TensorProto::INT64);
  longs->add_dims(3);
  const std::vector<int64_t> long_values = {static_cast<int64_t>(engine()), -1, int64_t{1} << 40};
  for (int64_t v : long_values) longs->add_int64_data(v);

  onnx::TensorProto* halves = graph->add_initializer();  // f16 bits in int32_data
  halves->set_name("halves");
  halves->set_data_type(onnx::TensorProto::FLOAT16);
  halves->add_dims(3);
  const std::vector<float> half_values = {0.5f, -2.0f, 1024.0f};
  for (float v : half_values) halves->add_int32_data(float_to_half(v));

  onnx::TensorProto* flags = graph->add_initializer();
  flags->set_name("flags");
  flags->set_data_type(onnx::TensorProto::BOOL);
  flags->add_dims(3);
  for (int v : {1, 0, 1}) flags->add_int32_data(v);

  onnx::TensorProto* bytes = graph->add_initializer();
  bytes->set_name("bytes");
  bytes->set_data_type(onnx::TensorProto::UINT8);
  bytes->add_dims(2);
  for (int v : {200, 7}) bytes->add_int32_data(v);

  onnx::TensorProto* empty = graph->add_initializer();  // zero elements, no data at all
  empty->set_name("empty");
  empty->set_data_type(onnx::TensorProto::INT32);
  empty->add_dims(0);

  const Graph loaded = parse(model);
  ASSERT_EQ(loaded.initializers.size(), 7u);
  const std::vector<double> w = loaded.initializers.at("w").to_double();
  for (size_t i = 0; i < weights.size(); ++i) EXPECT_EQ(w[i], weights[i]);
  EXPECT_EQ(loaded.initializers.at("floats").shape(), (Shape{2, 2}));
  const std::span<const float> loaded_floats = loaded.initializers.at("floats").values<float>();
  EXPECT_TRUE(std::equal(loaded_floats.begin(), loaded_floats.end(), float_values.begin()));
  EXPECT_EQ(loaded.initializers.at("longs").to_int64(), long_values);
  EXPECT_EQ(loaded.initializers.at("halves").dtype(), DType::f16);
  EXPECT_EQ(loaded.initializers.at("halves").to_double(), (std::vector<double>{0.5, -2.0, 1024.0}));
  EXPECT_EQ(loaded.initializers.at("flags").to_int64(), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(loaded.initializers.at("bytes").to_int64(), (std::vector<int64_t>{200, 7}));
  EXPECT_EQ(loaded.initializers.at("empty").numel(), 0);
  // An initializer's own dtype and shape are recorded as its value's.
  EXPECT_EQ(loaded.find_value("longs")->dtype, DType::i64);
  EXPECT_EQ(loaded.find_value("longs")->shape, Shape{3});
  EXPECT_EQ(loaded.inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(loaded.outputs, std::vector<std::string>{"y"});
  EXPECT_EQ(loaded.opset_version(""), 17);
  EXPECT_EQ(loaded.opset_version("ai.onnx"), 17);
  EXPECT_EQ(loaded.ir_version, 8);

  // A typed field with the wrong count is an error naming the tensor.
  longs->add_int64_data(5);
  expect_model_error([&] { parse(model); }, {"'longs'", "int64_data has 4 values"});
}

TEST(OnnxLoader, ConstantNodesBecomeInitializers) {
  onnx::ModelProto model = test::empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  test::add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {2});
  onnx::NodeProto* scalar = test::add_node(graph, "Constant", {}, {"c_float"}, "c1");
  auto* attribute = scalar->add_attribute();
  attribute->set_name("value_float");
  attribute->set_type(onnx::AttributeProto::FLOAT);
  attribute->set_f(2.5f);
  onnx::NodeProto* ints = test::add_node(graph, "Constant", {}, {"c_ints"}, "c2");
  attribute = ints->add_attribute();
  attribute->set_name("value_ints");
  attribute->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : {3, -1, 4}) attribute->add_ints(v);
  onnx::NodeProto* tensor = test::add_node(graph, "Constant", {}, {"c_tensor"}, "c3");
  attribute = tensor->add_attribute();
  attribute->set_name("value");
  attribute->set_type(onnx::AttributeProto::TENSOR);
  attribute->mutable_t()->set_data_type(onnx::TensorProto::INT32);
  attribute->mutable_t()->add_dims(1);
  attribute->mutable_t()->add_int32_data(42);
  test::add_node(graph, "Mul", {"x", "c_float"}, {"y"}, "scale");
  test::add_tensor_value(graph->mutable_output(), "y", onnx::TensorProto::FLOAT, {2});

  Graph loaded = parse(model);
  ASSERT_EQ(loaded.nodes.size(), 1u);
  EXPECT_EQ(loaded.nodes[0].op_type, "Mul");
  EXPECT_EQ(loaded.initializers.at("c_float").shape(), Shape{});
  EXPECT_EQ(loaded.initializers.at("c_float").to_double(), std::vector<double>{2.5});
  EXPECT_EQ(loaded.initializers.at("c_ints").to_int64(), (std::vector<int64_t>{3, -1, 4}));
  EXPECT_EQ(loaded.initializers.at("c_tensor").dtype(), DType::i32);
  EXPECT_EQ(loaded.initializers.at("c_tensor").to_int64(), std::vector<int64_t>{42});

  OnnxLoadOptions keep;
  keep.constants_to_initializers = false;
  loaded = parse(model, ".", keep);
  EXPECT_EQ(loaded.nodes.size(), 4u);
  EXPECT_EQ(loaded.nodes[0].attribute_float("value_float"), 2.5f);
}

TEST(OnnxLoader, ValueTypesAttributesAndSubgraphs) {
  onnx::ModelProto model = test::empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  onnx::ValueInfoProto* input =
      test::add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT16, {});
  auto* shape = input->mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->add_dim()->set_dim_param("batch");
  shape->add_dim()->set_dim_value(3);
  shape->add_dim();  // unknown, unnamed
  test::add_tensor_value(graph->mutable_input(), "cond", onnx::TensorProto::BOOL, {});
  test::add_tensor_value(graph->mutable_output(), "y", onnx::TensorProto::FLOAT16, {});

  onnx::NodeProto* node = test::add_node(graph, "If", {"cond"}, {"y"}, "choose");
  for (const char* branch_name : {"then_branch", "else_branch"}) {
    onnx::AttributeProto* branch = node->add_attribute();
    branch->set_name(branch_name);
    branch->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* body = branch->mutable_g();
    body->set_name(branch_name);
    const std::string out = std::string(branch_name) + "_out";
    onnx::NodeProto* inner =
        test::add_node(body, "LeakyRelu", {"x"}, {out}, std::string(branch_name) + "_op");
    auto* alpha = inner->add_attribute();
    alpha->set_name("alpha");
    alpha->set_type(onnx::AttributeProto::FLOAT);
    alpha->set_f(0.25f);
    test::add_tensor_value(body->mutable_output(), out, onnx::TensorProto::FLOAT16, {});
  }
  auto* strings = node->add_attribute();  // an attribute without a type field (old files)
  strings->set_name("tags");
  strings->add_strings("a");
  strings->add_strings("b");

  const Graph loaded = parse(model);
  const ValueInfo* x = loaded.find_value("x");
  ASSERT_TRUE(x && x->shape);
  EXPECT_EQ(x->dtype, DType::f16);
  EXPECT_EQ(*x->shape, (Shape{-1, 3, -1}));
  EXPECT_EQ(x->dim_params, (std::vector<std::string>{"batch", "", ""}));
  EXPECT_FALSE(x->has_static_shape());
  EXPECT_EQ(loaded.find_value("cond")->shape, Shape{});
  EXPECT_TRUE(loaded.find_value("cond")->has_static_shape());
  const Graph& then_branch = loaded.nodes[0].attribute_graph("then_branch");
  EXPECT_EQ(then_branch.nodes[0].attribute_float("alpha"), 0.25f);
  EXPECT_EQ(then_branch.opset_version(""), 17);
  EXPECT_EQ(loaded.nodes[0].attribute_strings("tags"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(loaded.node_count_recursive(), 3u);
}

TEST(OnnxLoader, UnsupportedDtypesAndTypesAreNamed) {
  onnx::ModelProto model = add_model({1.0f});
  onnx::TensorProto* d = model.mutable_graph()->add_initializer();
  d->set_name("bf16_weights");
  d->set_data_type(onnx::TensorProto::BFLOAT16);
  d->add_dims(1);
  d->add_int32_data(0x3f80);
  expect_model_error([&] { parse(model); }, {"'bf16_weights'", "BFLOAT16", "does not support"});

  model = add_model({1.0f});
  model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::STRING);
  expect_model_error([&] { parse(model); }, {"graph input 'x'", "STRING"});

  model = add_model({1.0f});
  model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_sequence_type();
  expect_model_error([&] { parse(model); }, {"graph output 'y'", "sequence"});
}

// DOUBLE, INT8, INT16, UINT16, UINT32 and UINT64 are carried in float32 / int32 / int64: their
// values arrive converted from raw bytes and from the typed fields, the declared inputs take the
// carrier, and a UINT64 beyond int64 is a named error.
TEST(OnnxLoader, CarriedTypesAreConvertedOnLoad) {
  test::Random random(test::test_seed());
  const std::vector<float> drawn = random.normal(5);
  const std::vector<double> doubles(drawn.begin(), drawn.end());
  onnx::ModelProto model = add_model({1.0f});
  onnx::GraphProto* graph = model.mutable_graph();
  auto initializer = [&](const char* name, onnx::TensorProto::DataType type, int64_t size) {
    onnx::TensorProto* t = graph->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    t->add_dims(size);
    return t;
  };
  onnx::TensorProto* raw_double = initializer("raw_double", onnx::TensorProto::DOUBLE, 5);
  raw_double->set_raw_data(doubles.data(), doubles.size() * sizeof(double));
  onnx::TensorProto* typed_double = initializer("typed_double", onnx::TensorProto::DOUBLE, 5);
  for (double v : doubles) typed_double->add_double_data(v);
  const std::vector<int8_t> int8s = {-128, -1, 0, 1, 127};
  initializer("raw_int8", onnx::TensorProto::INT8, 5)->set_raw_data(int8s.data(), int8s.size());
  onnx::TensorProto* typed_int16 = initializer("typed_int16", onnx::TensorProto::INT16, 3);
  for (int v : {-32768, 5, 32767}) typed_int16->add_int32_data(v);
  const std::vector<uint16_t> uint16s = {0, 65535};
  initializer("raw_uint16", onnx::TensorProto::UINT16, 2)->set_raw_data(uint16s.data(), 4);
  const std::vector<uint32_t> uint32s = {4294967295u, 7};
  initializer("raw_uint32", onnx::TensorProto::UINT32, 2)->set_raw_data(uint32s.data(), 8);
  onnx::TensorProto* typed_uint64 = initializer("typed_uint64", onnx::TensorProto::UINT64, 2);
  typed_uint64->add_uint64_data(uint64_t{1} << 40);
  typed_uint64->add_uint64_data(3);
  graph->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::DOUBLE);
  graph->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::DOUBLE);

  const Graph loaded = parse(model);
  EXPECT_EQ(loaded.find_value("x")->dtype, DType::f32);
  EXPECT_EQ(loaded.find_value("y")->dtype, DType::f32);
  for (const char* name : {"raw_double", "typed_double"}) {
    const HostTensor& t = loaded.initializers.at(name);
    ASSERT_EQ(t.dtype(), DType::f32) << name;
    const std::vector<double> got = t.to_double();
    for (size_t i = 0; i < doubles.size(); ++i)
      EXPECT_EQ(got[i], static_cast<double>(static_cast<float>(doubles[i])));
  }
  auto ints = [&](const char* name, DType dtype) {
    EXPECT_EQ(loaded.initializers.at(name).dtype(), dtype) << name;
    return loaded.initializers.at(name).to_int64();
  };
  EXPECT_EQ(ints("raw_int8", DType::i32), (std::vector<int64_t>{-128, -1, 0, 1, 127}));
  EXPECT_EQ(ints("typed_int16", DType::i32), (std::vector<int64_t>{-32768, 5, 32767}));
  EXPECT_EQ(ints("raw_uint16", DType::i32), (std::vector<int64_t>{0, 65535}));
  EXPECT_EQ(ints("raw_uint32", DType::i64), (std::vector<int64_t>{4294967295ll, 7}));
  EXPECT_EQ(ints("typed_uint64", DType::i64), (std::vector<int64_t>{int64_t{1} << 40, 3}));

  typed_uint64->set_uint64_data(0, uint64_t{1} << 63);
  expect_model_error([&] { parse(model); }, {"'typed_uint64'", "UINT64", "exceeds"});
  typed_uint64->set_uint64_data(0, 1);
  raw_double->mutable_raw_data()->pop_back();
  expect_model_error([&] { parse(model); }, {"'raw_double'", "raw_data", "DOUBLE"});
}

TEST(OnnxLoader, TruncatedAndGarbageFilesAreModelErrors) {
  const std::string bytes = add_model({1.0f, 2.0f, 3.0f}).SerializeAsString();
  // Every proper prefix: either the protobuf does not parse or a required part is missing.
  for (size_t length = 0; length < bytes.size(); ++length) {
    try {
      parse_onnx_model(std::string_view(bytes).substr(0, length), ".", "truncated model");
      ADD_FAILURE() << "a model truncated to " << length << " of " << bytes.size() << " bytes loaded";
    } catch (const ModelError&) {
    }
  }
  EXPECT_NO_THROW(parse_onnx_model(bytes, ".", "whole model"));
  expect_model_error([] { parse_onnx_model("this is a text file, not a model\n", ".", "text.onnx"); },
                     {"text.onnx"});
  expect_model_error([] { load_onnx_model("/nonexistent/model.onnx"); },
                     {"cannot open", "/nonexistent/model.onnx"});

  // A real model file cut short.
  const std::optional<std::filesystem::path> models = test::reference_models_dir();
  if (!models) GTEST_SKIP() << "reference models not found (set ONDA_MODELS_DIR)";
  const std::string real = test::read_file_bytes(*models / "mpsenet.onnx");
  TemporaryFolder folder;
  for (double fraction : {0.01, 0.5, 0.999}) {
    test::write_file(folder.path() / "cut.onnx", real.substr(0, static_cast<size_t>(real.size() * fraction)));
    expect_model_error([&] { load_onnx_model(folder.path() / "cut.onnx"); }, {"cut.onnx"});
  }
}

TEST(OnnxLoader, IrVersionCheck) {
  onnx::ModelProto model = add_model({1.0f});
  model.set_ir_version(2);
  expect_model_error([&] { parse(model); }, {"IR version 2 is older than 3"});
  model.set_ir_version(6);  // PyTorch 1.x exports, ONNX's ConvTranspose node tests
  EXPECT_NO_THROW(parse(model));
  OnnxLoadOptions newer_only;
  newer_only.minimum_ir_version = 7;
  expect_model_error([&] { parse(model, ".", newer_only); }, {"IR version 6 is older than 7"});
  model.mutable_opset_import(0)->set_domain("com.example");
  expect_model_error([&] { parse(model); }, {"Add 'adder'", "domain ''", "imports no opset"});
  model.clear_opset_import();
  expect_model_error([&] { parse(model); }, {"imports no opset"});
}

// w as external data in a temporary folder: [0, 16) is other data, w at offset 16.
struct ExternalModel {
  TemporaryFolder folder;
  std::vector<float> weights;
  onnx::ModelProto model;

  explicit ExternalModel(const std::string& location) {
    test::Random random(test::test_seed());
    weights = random.normal(5);
    model = add_model(weights);
    onnx::TensorProto* w = model.mutable_graph()->mutable_initializer(0);
    w->clear_raw_data();
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    for (auto [key, value] : {std::pair<std::string, std::string>{"location", location},
                              {"offset", "16"},
                              {"length", std::to_string(weights.size() * 4)}}) {
      auto* entry = w->add_external_data();
      entry->set_key(key);
      entry->set_value(value);
    }
    std::filesystem::create_directories(folder.path() / "model" / "sub");
    std::string file(16, 'x');
    file.append(reinterpret_cast<const char*>(weights.data()), weights.size() * 4);
    test::write_file(folder.path() / "model" / "sub" / "w.bin", file);
    test::write_file(folder.path() / "outside.bin", file);
    test::write_file(folder.path() / "model" / "model.onnx", model.SerializeAsString());
  }
  std::filesystem::path model_path() const { return folder.path() / "model" / "model.onnx"; }
  void rewrite() const { test::write_file(model_path(), model.SerializeAsString()); }
  void set_entry(const std::string& key, const std::string& value) {
    for (auto& entry : *model.mutable_graph()->mutable_initializer(0)->mutable_external_data())
      if (entry.key() == key) entry.set_value(value);
    rewrite();
  }
};

TEST(OnnxLoader, ExternalDataAtOffset) {
  for (const std::string location : {"sub/w.bin", "./sub/w.bin", "sub/../sub/w.bin"}) {
    ExternalModel external(location);
    const Graph graph = load_onnx_model(external.model_path());
    const HostTensor& w = graph.initializers.at("w");
    ASSERT_EQ(w.shape(), Shape{5}) << location;
    const std::span<const float> values = w.values<float>();
    EXPECT_TRUE(std::equal(values.begin(), values.end(), external.weights.begin())) << location;
    // Loaded from a relative path too (the model's folder is resolved from the path given).
    const std::filesystem::path previous = std::filesystem::current_path();
    std::filesystem::current_path(external.folder.path());
    EXPECT_NO_THROW(load_onnx_model("model/model.onnx"));
    std::filesystem::current_path(previous);
  }
}

TEST(OnnxLoader, ExternalDataErrors) {
  ExternalModel external("sub/w.bin");
  external.set_entry("location", (external.folder.path() / "outside.bin").string());
  expect_model_error([&] { load_onnx_model(external.model_path()); }, {"absolute path"});
  external.set_entry("location", "../outside.bin");
  expect_model_error([&] { load_onnx_model(external.model_path()); },
                     {"'../outside.bin'", "leaves the model's folder"});
  external.set_entry("location", "sub/../../outside.bin");
  expect_model_error([&] { load_onnx_model(external.model_path()); }, {"leaves the model's folder"});
  external.set_entry("location", "sub/missing.bin");
  expect_model_error([&] { load_onnx_model(external.model_path()); },
                     {"missing external data", "'w'", "sub/missing.bin"});
  external.set_entry("location", "sub/w.bin");
  external.set_entry("offset", "24");
  expect_model_error([&] { load_onnx_model(external.model_path()); }, {"past the end"});
  external.set_entry("offset", "16");
  external.set_entry("length", "12");
  expect_model_error([&] { load_onnx_model(external.model_path()); }, {"length 12 does not match"});
  external.set_entry("length", "twenty");
  expect_model_error([&] { load_onnx_model(external.model_path()); }, {"not a number"});
  external.set_entry("length", "20");
  EXPECT_NO_THROW(load_onnx_model(external.model_path()));

  // Weights looked up in another folder: found there, and only there.
  OnnxLoadOptions elsewhere;
  elsewhere.external_data_dir = external.folder.path() / "weights";
  std::filesystem::create_directories(*elsewhere.external_data_dir / "sub");
  expect_model_error([&] { load_onnx_model(external.model_path(), elsewhere); },
                     {"missing external data", "weights"});
  std::filesystem::copy_file(external.folder.path() / "model" / "sub" / "w.bin",
                             *elsewhere.external_data_dir / "sub" / "w.bin");
  const Graph graph = load_onnx_model(external.model_path(), elsewhere);
  EXPECT_EQ(graph.initializers.at("w").to_double()[0], external.weights[0]);
}

TEST(OnnxLoader, TensorProtoFiles) {
  test::Random random(test::test_seed());
  const std::vector<float> values = random.normal(6);
  onnx::TensorProto proto;
  proto.set_name("input_0");
  proto.set_data_type(onnx::TensorProto::FLOAT);
  proto.add_dims(2);
  proto.add_dims(3);
  proto.set_raw_data(values.data(), values.size() * 4);
  TemporaryFolder folder;
  test::write_file(folder.path() / "input_0.pb", proto.SerializeAsString());
  std::string name;
  const HostTensor tensor = read_tensor_proto_file(folder.path() / "input_0.pb", &name);
  EXPECT_EQ(name, "input_0");
  EXPECT_EQ(tensor.shape(), (Shape{2, 3}));
  const std::span<const float> loaded = tensor.values<float>();
  EXPECT_TRUE(std::equal(loaded.begin(), loaded.end(), values.begin()));

  const std::string bytes = proto.SerializeAsString();
  test::write_file(folder.path() / "cut.pb", bytes.substr(0, bytes.size() - 3));
  expect_model_error([&] { read_tensor_proto_file(folder.path() / "cut.pb"); }, {"cut.pb"});
}

}  // namespace
}  // namespace onda

namespace onda {
namespace {

// A model exercising every loader path and a shape chain for simplify_graph:
// x[2,3] -> Shape -> Gather -> Unsqueeze -> Concat -> Reshape -> Add(w) -> If(then: Neg, else: Abs).
onnx::ModelProto rich_model() {
  onnx::ModelProto model = test::empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  test::add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
  test::add_tensor_value(graph->mutable_input(), "cond", onnx::TensorProto::BOOL, {});
  auto add_ints = [&](const std::string& name, std::vector<int64_t> values, bool scalar) {
    onnx::TensorProto* t = graph->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    if (!scalar) t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
  };
  add_ints("one", {1}, true);
  add_ints("axis0", {0}, false);
  add_ints("minus_one", {-1}, false);
  onnx::TensorProto* w = graph->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  const float weights[] = {1.0f, 2.0f, 3.0f};
  w->set_raw_data(weights, sizeof weights);
  test::add_node(graph, "Shape", {"x"}, {"s"}, "shape");
  test::add_node(graph, "Gather", {"s", "one"}, {"d"}, "gather");
  test::add_node(graph, "Unsqueeze", {"d", "axis0"}, {"d1"}, "unsqueeze");
  auto* concat = test::add_node(graph, "Concat", {"minus_one", "d1"}, {"target"}, "concat");
  auto* axis = concat->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  test::add_node(graph, "Reshape", {"x", "target"}, {"r"}, "reshape");
  test::add_node(graph, "Add", {"r", "w"}, {"sum"}, "add");
  auto* branch = test::add_node(graph, "If", {"cond"}, {"y"}, "if");
  for (auto [attribute_name, op] :
       {std::pair<const char*, const char*>{"then_branch", "Neg"}, {"else_branch", "Abs"}}) {
    auto* attribute = branch->add_attribute();
    attribute->set_name(attribute_name);
    attribute->set_type(onnx::AttributeProto::GRAPH);
    test::add_node(attribute->mutable_g(), op, {"sum"}, {std::string(op) + "_out"}, op);
    test::add_tensor_value(attribute->mutable_g()->mutable_output(), std::string(op) + "_out",
                           onnx::TensorProto::FLOAT, {2, 3});
  }
  test::add_tensor_value(graph->mutable_output(), "y", onnx::TensorProto::FLOAT, {2, 3});
  return model;
}

// Random byte mutations: the loader and simplify_graph either succeed or throw ModelError; never
// another exception, a crash or a runaway allocation.
TEST(OnnxLoader, MutatedFilesFailCleanly) {
  const uint64_t seed = test::test_seed();
  std::mt19937_64 engine(seed);
  const std::string original = rich_model().SerializeAsString();
  {
    Graph graph = parse_onnx_model(original, ".", "rich model");
    const SimplifyReport report = simplify_graph(graph, {});
    EXPECT_EQ(report.folded_nodes, 4u);  // Shape, Gather, Unsqueeze, Concat
  }
  int loaded = 0, rejected = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string bytes = original;
    const int mutations = 1 + static_cast<int>(engine() % 4);
    for (int m = 0; m < mutations; ++m) bytes[engine() % bytes.size()] = static_cast<char>(engine() & 0xff);
    try {
      Graph graph = parse_onnx_model(bytes, ".", "mutated model");
      simplify_graph(graph, {});
      ++loaded;
    } catch (const ModelError&) {
      ++rejected;
    } catch (const std::exception& error) {
      ADD_FAILURE() << "trial " << trial << " (seed " << seed << "): " << typeid(error).name() << ": "
                    << error.what();
    }
  }
  std::printf("mutated models: %d loaded and simplified, %d rejected with ModelError (seed %llu)\n", loaded,
              rejected, static_cast<unsigned long long>(seed));
}

}  // namespace
}  // namespace onda

namespace onda {
namespace {

// com.example::Scale(x) = Mul(x, Constant(value_float = @alpha)); com.example::ScaleTwice(x) =
// Scale(Scale(x)) passes its own @alpha on (nested inlining and attribute references).
onnx::ModelProto model_with_functions() {
  onnx::ModelProto model = test::empty_model();
  auto* domain = model.add_opset_import();
  domain->set_domain("com.example");
  domain->set_version(1);
  onnx::FunctionProto* scale = model.add_functions();
  scale->set_name("Scale");
  scale->set_domain("com.example");
  scale->add_input("x");
  scale->add_output("y");
  scale->add_attribute("alpha");
  onnx::NodeProto* constant = scale->add_node();
  constant->set_op_type("Constant");
  constant->add_output("factor");
  auto* reference = constant->add_attribute();
  reference->set_name("value_float");
  reference->set_type(onnx::AttributeProto::FLOAT);
  reference->set_ref_attr_name("alpha");
  onnx::NodeProto* mul = scale->add_node();
  mul->set_op_type("Mul");
  mul->add_input("x");
  mul->add_input("factor");
  mul->add_output("y");

  onnx::FunctionProto* twice = model.add_functions();
  twice->set_name("ScaleTwice");
  twice->set_domain("com.example");
  twice->add_input("x");
  twice->add_output("y");
  twice->add_attribute("alpha");
  for (auto [in, out] : {std::pair<const char*, const char*>{"x", "mid"}, {"mid", "y"}}) {
    onnx::NodeProto* call = twice->add_node();
    call->set_op_type("Scale");
    call->set_domain("com.example");
    call->add_input(in);
    call->add_output(out);
    auto* passed = call->add_attribute();
    passed->set_name("alpha");
    passed->set_type(onnx::AttributeProto::FLOAT);
    passed->set_ref_attr_name("alpha");
  }

  onnx::GraphProto* graph = model.mutable_graph();
  test::add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {4});
  onnx::NodeProto* call = test::add_node(graph, "Scale", {"x"}, {"a"}, "by_three");
  call->set_domain("com.example");
  auto* alpha = call->add_attribute();
  alpha->set_name("alpha");
  alpha->set_type(onnx::AttributeProto::FLOAT);
  alpha->set_f(3.0f);
  onnx::NodeProto* twice_call = test::add_node(graph, "ScaleTwice", {"a"}, {"b"}, "by_four");
  twice_call->set_domain("com.example");
  auto* two = twice_call->add_attribute();
  two->set_name("alpha");
  two->set_type(onnx::AttributeProto::FLOAT);
  two->set_f(2.0f);
  test::add_tensor_value(graph->mutable_output(), "b", onnx::TensorProto::FLOAT, {4});
  return model;
}

TEST(OnnxLoader, ModelLocalFunctionsAreInlined) {
  const Graph graph = parse_onnx_model(model_with_functions().SerializeAsString(), ".", "functions");
  // Three Scale bodies: each a Mul, its Constant an initializer named after the call.
  ASSERT_EQ(graph.nodes.size(), 3u);
  std::vector<double> factors;
  for (const Node& node : graph.nodes) {
    EXPECT_EQ(node.op_type, "Mul");
    EXPECT_EQ(node.domain, "");
    factors.push_back(graph.find_initializer(node.inputs[1])->to_double().at(0));
  }
  EXPECT_EQ(factors, (std::vector<double>{3.0, 2.0, 2.0}));  // alpha of by_three, then by_four's twice
  EXPECT_EQ(graph.nodes[0].inputs[0], "x");
  EXPECT_EQ(graph.nodes[0].outputs[0], "a");
  EXPECT_EQ(graph.nodes[2].outputs[0], "b");
  EXPECT_EQ(graph.nodes[1].outputs[0], graph.nodes[2].inputs[0]);  // ScaleTwice's internal value
  std::set<std::string> initializer_names;
  for (const auto& [name, tensor] : graph.initializers) initializer_names.insert(name);
  EXPECT_EQ(initializer_names.size(), 3u);  // renamed per call: no collision

  onnx::ModelProto recursive = model_with_functions();
  recursive.mutable_functions(0)->mutable_node(1)->set_op_type("Scale");  // Scale calls itself
  recursive.mutable_functions(0)->mutable_node(1)->set_domain("com.example");
  recursive.mutable_functions(0)->mutable_node(1)->mutable_input()->RemoveLast();  // Scale takes one input
  expect_model_error([&] { parse_onnx_model(recursive.SerializeAsString(), ".", "recursive"); },
                     {"deeper than 32"});
}

}  // namespace
}  // namespace onda
