#!/usr/bin/env bash
# strict: true refuses at load what would run elsewhere than placed, naming the op; without
# it the same pipeline runs, each load-time decision logged once and counted in --json.
# The device is the fake GPU test plugin (a handful of f32 elementwise ops, no matmul).
set -uo pipefail
exe="$1"
fake="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/check.sh"

m="$tmp/demo.gguf"
"$exe" synth -o "$m" > /dev/null || { echo "FAIL: synth"; exit 1; }
printf 'model: %s\nplugin_path: [%s]\nbackends: [fake, cpu]\ncontext: { length: 256 }\nplacement: { gpu_layers: all }\n' \
  "$m" "$fake" > "$tmp/p.yaml"
check "without strict: weights fake0 cannot multiply stay in RAM, logged once per type" 0 \
  "fallback: fake0 has no matmul kernel for Q8_0 weights; tensors of that type stay in RAM" -- \
  "$exe" run -P "$tmp/p.yaml" --prompt-ids 1,2,3 -n 2
check "without strict: counted in --json" 0 '"weights_kept_on_host":[1-9]' -- \
  "$exe" --log-level error run -P "$tmp/p.yaml" --prompt-ids 1,2,3 -n 2 --json
cp "$tmp/p.yaml" "$tmp/s.yaml"
printf 'strict: true\n' >> "$tmp/s.yaml"
check "strict: refused at load, naming the device, the op and the type" 1 \
  "fake0 has no matmul kernel for (Q8_0|F32) weights \(.*\) and \`strict: true\` forbids running it elsewhere" -- \
  "$exe" run -P "$tmp/s.yaml" --prompt-ids 1,2,3 -n 2
# Every weight pinned to the CPU, the layers (so their caches) on fake0, which cannot update
# them (the demo model's layer 3 is its full-attention layer).
printf 'model: %s\nplugin_path: [%s]\nbackends: [fake, cpu]\ncontext: { length: 256 }\nstrict: true\nplacement: { gpu_layers: all, overrides: [".=cpu"] }\n' \
  "$m" "$fake" > "$tmp/c.yaml"
check "strict: a cache the layer's device cannot update is refused at load" 1 \
  "fake0 cannot run (conv1d|set_rows) on layer [0-9]+'s F(16|32) cache and \`strict: true\` forbids keeping the cache in RAM" -- \
  "$exe" run -P "$tmp/c.yaml" --prompt-ids 1,2,3 -n 2
sed -i '/strict/d' "$tmp/c.yaml"
check "without strict: that cache stays in RAM, logged" 0 "fallback: fake0 cannot run set_rows on layer 3's F16 cache; that layer's cache stays in RAM" -- \
  "$exe" run -P "$tmp/c.yaml" --prompt-ids 1,2,3 -n 2

[ "$failures" -eq 0 ] || { echo "$failures failed"; exit 1; }
echo "all passed"
