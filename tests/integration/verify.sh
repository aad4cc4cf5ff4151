#!/usr/bin/env bash
# `switchyard verify` as a user drives it, with coreutils' sha256sum as the independent
# digest: a manifest that matches, a corrupted byte, a file the manifest lists that is gone,
# .sha256 files beside a Hugging Face folder, a truncated GGUF, and --all writing a
# manifest sha256sum itself accepts.
#   verify.sh SWITCHYARD SHARED_DIR
set -uo pipefail
exe="$1"
shared="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/check.sh"

require_shared "$shared" fixtures
cp "$shared/fixtures/llama-e256-q8_0.gguf" "$tmp/m.gguf"
(cd "$tmp" && sha256sum m.gguf > SHA256SUMS)

check "structure of a GGUF" 0 'structure: gguf, 21 tensors in 1 file, every tensor inside its file' -- "$exe" verify "$tmp/m.gguf"
check "a manifest that matches" 0 "OK +$tmp/m.gguf \(sha256 as $tmp/SHA256SUMS says\)" -- "$exe" verify "$tmp/m.gguf" --sha256 "$tmp/SHA256SUMS"
check "--json" 0 '"ok":true' -- "$exe" verify "$tmp/m.gguf" --sha256 "$tmp/SHA256SUMS" --json
"$exe" verify "$tmp/m.gguf" --all 2>/dev/null | grep -E '^[0-9a-f]{64}  ' > "$tmp/ours.sums"
check "--all writes lines sha256sum accepts" 0 'OK' -- sha256sum -c "$tmp/ours.sums"
cp "$tmp/SHA256SUMS" "$tmp/SUMS2"
echo "$(printf '0%.0s' $(seq 1 64))  gone.gguf" >> "$tmp/SUMS2"
check "a listed file that is gone" 1 "MISSING +$tmp/gone.gguf" -- "$exe" verify "$tmp/m.gguf" --sha256 "$tmp/SUMS2"
printf 'x' | dd of="$tmp/m.gguf" bs=1 seek=100000 conv=notrunc 2>/dev/null
check "one corrupted byte" 1 "FAILED +$tmp/m.gguf: sha256 [0-9a-f]{64}, but .* says [0-9a-f]{64}; download it again" -- \
  "$exe" verify "$tmp/m.gguf" --sha256 "$tmp/SHA256SUMS"
head -c 200000 "$shared/fixtures/llama-e256-q8_0.gguf" > "$tmp/cut.gguf"
check "a truncated GGUF" 1 'cut.gguf' -- "$exe" verify "$tmp/cut.gguf"

cp -r "$shared/formats/qwen3-tiny/bf16" "$tmp/hf"
(cd "$tmp/hf" && sha256sum model.safetensors > model.safetensors.sha256)
check "a folder with .sha256 files beside it" 0 "OK +$tmp/hf/model.safetensors \(sha256 as $tmp/hf/model.safetensors.sha256 says\)" -- \
  "$exe" verify "$tmp/hf"
echo "$(printf 'f%.0s' $(seq 1 64))" > "$tmp/hf/model.safetensors.sha256"
check "a sidecar that disagrees" 1 'FAILED' -- "$exe" verify "$tmp/hf"
check "not a model" 1 'is neither a GGUF file, a .safetensors file nor a model folder' -- "$exe" verify "$tmp/SHA256SUMS"

[ "$failures" = 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "all verify checks passed"
