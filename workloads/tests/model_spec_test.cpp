// Tests of model specs: derived tensor lists match published parameter counts; inconsistent specs are errors.
#include <doctest/doctest.h>

#include "commsim/core/error.hpp"
#include "commsim/workloads/model_spec.hpp"

using namespace commsim;
using namespace commsim::workloads;

TEST_CASE("model_spec: derived parameter counts match the published ones") {
  CHECK(model_spec("qwen2.5-32b").parameters() == 32763876352ULL);
  CHECK(model_spec("qwen2.5-32b").tensors().size() == 771);
  CHECK(model_spec("qwen2.5-32b").bytes() == 2 * 32763876352ULL);
  CHECK(model_spec("llama-3-8b").parameters() == 8030261248ULL);
  CHECK(model_spec("llama-3-70b").parameters() == 70553706496ULL);
  const auto gpt3 = model_spec("gpt3-175b").parameters();
  CHECK(gpt3 > 174'000'000'000ULL);
  CHECK(gpt3 < 175'500'000'000ULL);
}

TEST_CASE("model_spec: tensor shapes follow the architecture") {
  const auto t = model_spec("llama-3-8b").tensors();
  CHECK(t.front().name == "model.embed_tokens.weight");
  CHECK(t[2].name == "model.layers.0.self_attn.k_proj.weight");
  CHECK(t[2].shape == std::vector<std::int64_t>{1024, 4096});  // 8 kv heads x 128
  CHECK(t.back().name == "lm_head.weight");
  const auto g = model_spec("gpt3-175b").tensors();
  CHECK(g.back().name == "model.norm.bias");  // tied embeddings: no lm_head
}

TEST_CASE("model_spec: unknown names and inconsistent shapes are reported") {
  CHECK_THROWS_WITH_AS(model_spec("gpt5"), doctest::Contains("known models: gpt3-175b, llama-3-70b"),
                       UsageError);
  const char* bad_heads =
      "[m]\nlayers = 2\nhidden = 100\nintermediate = 400\nheads = 3\nkv_heads = 1\nvocab = 10\n";
  CHECK_THROWS_WITH_AS(parse_model_specs(bad_heads, "m.toml"), doctest::Contains("m.toml:5:9"), InputError);
  const char* bad_kv =
      "[m]\nlayers = 2\nhidden = 128\nintermediate = 400\nheads = 8\nkv_heads = 3\nvocab = 10\n";
  CHECK_THROWS_WITH_AS(parse_model_specs(bad_kv, "m.toml"), doctest::Contains("multiple of kv_heads"),
                       InputError);
  const char* bad_count =
      "[m]\nlayers = 1\nhidden = 8\nintermediate = 16\nheads = 2\nkv_heads = 2\nvocab = 10\nparameters = 5\n";
  CHECK_THROWS_WITH_AS(parse_model_specs(bad_count, "m.toml"), doctest::Contains("inconsistent"), InputError);
  CHECK_THROWS_AS(parse_model_specs("[m]\nlayers = 0\n", "m.toml"), InputError);
}
