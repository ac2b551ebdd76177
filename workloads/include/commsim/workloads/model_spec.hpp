// Model architectures (workloads/specs/models.toml) and the tensor lists derived from them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace commsim::workloads {

struct TensorSpec {
  std::string name;  ///< Hugging Face style, e.g. "model.layers.3.mlp.up_proj.weight"
  std::vector<std::int64_t> shape;
  std::uint64_t elements = 0;
  std::uint64_t bytes = 0;
};

/// One architecture. Shapes are derived, never listed by hand.
struct ModelSpec {
  std::string name;
  std::string description;
  int layers = 0;
  std::int64_t hidden = 0;
  std::int64_t intermediate = 0;
  int heads = 0;
  int kv_heads = 0;
  std::int64_t vocab = 0;
  bool tied_embeddings = false;
  bool qkv_bias = false;
  std::string mlp = "gated";     ///< gated | dense
  std::string norm = "rmsnorm";  ///< rmsnorm | layernorm
  std::int64_t positions = 0;    ///< learned position embeddings (0: none, e.g. RoPE)
  std::string dtype = "bf16";
  int dtype_bytes = 2;
  std::uint64_t expected_parameters = 0;  ///< published count, 0 when not given

  /// Every weight tensor in the order a checkpoint lists them.
  std::vector<TensorSpec> tensors() const;
  std::uint64_t parameters() const;
  std::uint64_t bytes() const { return parameters() * static_cast<std::uint64_t>(dtype_bytes); }
};

/// Parses a spec file; inconsistent shapes (hidden not divisible by heads, heads by kv_heads, non-positive
/// sizes, a derived count that differs from `parameters`) throw InputError naming file, line and column.
std::vector<ModelSpec> parse_model_specs(std::string_view toml_text, const std::string& file);
/// The bundled specs (workloads/specs/models.toml, embedded).
const std::vector<ModelSpec>& model_specs();
/// By name; UsageError listing the known names otherwise.
const ModelSpec& model_spec(std::string_view name);

}  // namespace commsim::workloads
