// Model specs: parsing, consistency checks, and tensor lists derived from the architecture.
#include "commsim/workloads/model_spec.hpp"

#include "commsim/core/embedded.hpp"
#include "commsim/core/error.hpp"
#include "commsim/core/toml_fields.hpp"

namespace commsim::workloads {

std::span<const EmbeddedFile> embedded_specs();  // generated from workloads/specs

std::vector<TensorSpec> ModelSpec::tensors() const {
  std::vector<TensorSpec> out;
  auto add = [&](std::string n, std::vector<std::int64_t> shape) {
    TensorSpec t{std::move(n), std::move(shape), 1, 0};
    for (auto d : t.shape) t.elements *= static_cast<std::uint64_t>(d);
    t.bytes = t.elements * static_cast<std::uint64_t>(dtype_bytes);
    out.push_back(std::move(t));
  };
  const std::int64_t h = hidden, kv = hidden / heads * kv_heads;
  add("model.embed_tokens.weight", {vocab, h});
  if (positions > 0) add("model.embed_positions.weight", {positions, h});
  for (int l = 0; l < layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    add(p + "self_attn.q_proj.weight", {h, h});
    add(p + "self_attn.k_proj.weight", {kv, h});
    add(p + "self_attn.v_proj.weight", {kv, h});
    if (qkv_bias) {
      add(p + "self_attn.q_proj.bias", {h});
      add(p + "self_attn.k_proj.bias", {kv});
      add(p + "self_attn.v_proj.bias", {kv});
    }
    add(p + "self_attn.o_proj.weight", {h, h});
    if (mlp == "dense") {
      add(p + "self_attn.o_proj.bias", {h});
      add(p + "mlp.fc1.weight", {intermediate, h});
      add(p + "mlp.fc1.bias", {intermediate});
      add(p + "mlp.fc2.weight", {h, intermediate});
      add(p + "mlp.fc2.bias", {h});
    } else {
      add(p + "mlp.gate_proj.weight", {intermediate, h});
      add(p + "mlp.up_proj.weight", {intermediate, h});
      add(p + "mlp.down_proj.weight", {h, intermediate});
    }
    add(p + "input_layernorm.weight", {h});
    if (norm == "layernorm") add(p + "input_layernorm.bias", {h});
    add(p + "post_attention_layernorm.weight", {h});
    if (norm == "layernorm") add(p + "post_attention_layernorm.bias", {h});
  }
  add("model.norm.weight", {h});
  if (norm == "layernorm") add("model.norm.bias", {h});
  if (!tied_embeddings) add("lm_head.weight", {vocab, h});
  return out;
}

std::uint64_t ModelSpec::parameters() const {
  std::uint64_t n = 0;
  for (const auto& t : tensors()) n += t.elements;
  return n;
}

std::vector<ModelSpec> parse_model_specs(std::string_view toml_text, const std::string& file) {
  const toml::table root = parse_toml(toml_text, file);
  std::vector<ModelSpec> out;
  for (const auto& [k, v] : root) {
    TomlFields top(root, file, "");
    if (!v.is_table()) top.fail(k.str(), "each model is a [name] table");
    std::string context = "[";
    context += k.str();
    context += "]";
    TomlFields f(*v.as_table(), file, context);
    f.reject_unknown_keys({"description", "layers", "hidden", "intermediate", "heads", "kv_heads", "vocab",
                           "tied_embeddings", "qkv_bias", "mlp", "norm", "positions", "dtype", "parameters"});
    ModelSpec m;
    m.name = std::string(k.str());
    m.description = f.string("description").value_or("");
    auto positive = [&](std::string_view key) {
      const auto v2 = f.required_integer(key);
      if (v2 <= 0 || v2 > (1LL << 40)) f.fail(key, "must be a positive integer");
      return v2;
    };
    m.layers = static_cast<int>(positive("layers"));
    m.hidden = positive("hidden");
    m.intermediate = positive("intermediate");
    m.heads = static_cast<int>(positive("heads"));
    m.kv_heads = static_cast<int>(positive("kv_heads"));
    m.vocab = positive("vocab");
    m.tied_embeddings = f.boolean("tied_embeddings").value_or(false);
    m.qkv_bias = f.boolean("qkv_bias").value_or(false);
    m.mlp = f.string("mlp").value_or("gated");
    m.norm = f.string("norm").value_or("rmsnorm");
    m.positions = f.integer("positions").value_or(0);
    m.dtype = f.string("dtype").value_or("bf16");
    if (m.mlp != "gated" && m.mlp != "dense") f.fail("mlp", "must be \"gated\" or \"dense\"");
    if (m.norm != "rmsnorm" && m.norm != "layernorm") f.fail("norm", "must be \"rmsnorm\" or \"layernorm\"");
    if (m.positions < 0) f.fail("positions", "must be 0 or positive");
    if (m.dtype == "bf16" || m.dtype == "fp16") {
      m.dtype_bytes = 2;
    } else if (m.dtype == "fp32") {
      m.dtype_bytes = 4;
    } else {
      f.fail("dtype", "must be \"bf16\", \"fp16\" or \"fp32\"");
    }
    if (m.hidden % m.heads != 0) {
      f.fail("heads", "hidden (" + std::to_string(m.hidden) + ") is not divisible by heads (" +
                          std::to_string(m.heads) + ")");
    }
    if (m.heads % m.kv_heads != 0 || m.kv_heads > m.heads) {
      f.fail("kv_heads", "heads (" + std::to_string(m.heads) + ") is not a multiple of kv_heads (" +
                             std::to_string(m.kv_heads) + ")");
    }
    if (auto p = f.integer("parameters")) {
      m.expected_parameters = static_cast<std::uint64_t>(*p);
      if (m.parameters() != m.expected_parameters) {
        f.fail("parameters", "the architecture gives " + std::to_string(m.parameters()) +
                                 " parameters, not " + std::to_string(*p) + ": a shape is inconsistent");
      }
    }
    out.push_back(std::move(m));
  }
  if (out.empty()) throw InputError({file, 1, 1}, "no model specs");
  return out;
}

const std::vector<ModelSpec>& model_specs() {
  static const std::vector<ModelSpec> specs = [] {
    for (const auto& f : embedded_specs()) {
      if (f.path == "models.toml") return parse_model_specs(f.contents, "workloads/specs/models.toml");
    }
    throw Error("workloads/specs/models.toml was not embedded in this build");
  }();
  return specs;
}

const ModelSpec& model_spec(std::string_view name) {
  std::string known;
  for (const auto& m : model_specs()) {
    if (m.name == name) return m;
    if (!known.empty()) known += ", ";
    known += m.name;
  }
  throw UsageError("unknown model '" + std::string(name) + "'; known models: " + known);
}

}  // namespace commsim::workloads
