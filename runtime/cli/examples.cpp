#include "cli/examples.hpp"

namespace sy::cli {

// Each line must parse with this build's flags: tests/integration/help.sh runs every one
// (up to a redirection) through `switchyard --parse-only`. File names are placeholders.
const std::vector<Example>& examples() {
  static const std::vector<Example> table{
      {"plugins", "switchyard plugins", "List the installed plugins and the components each one provides."},
      {"plugins", "switchyard plugins --check", "Also load every plugin library and check it against its manifest."},
      {"plugins", "switchyard plugins --json", "The same list as JSON, for scripts."},

      {"validate", "switchyard validate pipeline.yaml", "Check one pipeline file; each mistake is reported as file:line:column."},
      {"validate", "switchyard validate configs/demo.yaml configs/cpu-only.yaml",
       "Check several files; the exit status is 1 when any of them is invalid."},
      {"validate", "switchyard validate pipeline.yaml --set context.length=8192",
       "Check the pipeline as it would be with one key overridden."},
      {"validate", "switchyard validate pipeline.yaml -m model.gguf",
       "Also read the model's header: token ids within the vocabulary, the tokenizer fits, the context fits in memory."},

      {"inspect", "switchyard inspect model.gguf", "Show the architecture, hyper-parameters, tokenizer and a summary of the tensors."},
      {"inspect", "switchyard inspect model.gguf --tensors", "List every tensor with its type, shape and size in bytes."},
      {"inspect", "switchyard inspect model.gguf --dump token_embd.weight --out embd.f32",
       "Write one tensor, dequantized, to a raw little-endian f32 file."},
      {"inspect", "switchyard inspect model-00001-of-00003.gguf --json",
       "Any shard of a split model shows the whole model; JSON output."},

      {"run", "switchyard run -m model.gguf -p \"Once upon a time\" -n 64",
       "Generate 64 tokens after the prompt with the built-in default pipeline around model.gguf."},
      {"run", "switchyard run -m model.gguf -p \"Write a haiku\" -c 8192 -t 8 -ngl 99 --temp 0.7",
       "llama.cpp's flags: an 8192-token context, 8 threads, every layer on the GPU, temperature 0.7."},
      {"run", "switchyard run -P pipeline.yaml -p \"Hello\" --chat",
       "Use a pipeline file's model, backends and samplers; the prompt is wrapped in the chat template."},
      {"run", "switchyard run -P pipeline.yaml --set context.kv_type=q8_0 -f prompt.txt --json",
       "Override one pipeline key, read the prompt from a file, print one JSON object with ids, text and timings."},
      {"run", "switchyard run -m model.gguf --temp 0.2 --top-k 40 --print-pipeline",
       "Print the pipeline the flags produce (here the default sampler chain, retuned) as YAML, and exit."},

      {"synth", "switchyard synth --list", "List the built-in topologies."},
      {"synth", "switchyard synth --topology demo -o demo.gguf", "Write the tiny demo model with deterministic random weights."},
      {"synth", "switchyard synth --topology qwen3-30b-a3b --layers 2 --type q4_k_m -o moe.gguf",
       "The first 2 layers of Qwen3-30B-A3B in q4_k_m: a real MoE shape, small enough for any machine."},
      {"synth", "switchyard synth --topology llama-3.1-8b --layers 4 --tokenizer tokenizer.json -o small.gguf",
       "Embed a real Hugging Face tokenizer instead of a synthetic vocabulary."},

      {"plan", "switchyard plan -m model.gguf --vram 24GiB",
       "Memory per device, placement and speed ceiling on one 24 GiB GPU; only the model's header is read."},
      {"plan", "switchyard plan --topology qwen3-30b-a3b --vram 24GiB --ctx 32768 --explain",
       "Plan a model you do not have yet, with a 32768-token context, and say why each tensor group went where."},
      {"plan", "switchyard plan -m model.gguf --vram 24GiB,16GiB --n-cpu-moe 10",
       "Two GPUs; the routed experts of the first 10 layers stay in host memory."},
      {"plan", "switchyard plan -P pipeline.yaml --json", "The plan for a pipeline file's model, context and placement, as JSON."},

      {"tokenize", "switchyard tokenize -m model.gguf --text \"Hello, world\"", "Token ids of a text under the model's own tokenizer."},
      {"tokenize", "switchyard tokenize --tokenizer tokenizer.json --file input.txt --json",
       "A Hugging Face tokenizer.json on a file's raw bytes; JSON output."},
      {"tokenize", "switchyard tokenize -m model.gguf --text \"<|im_start|>user\" --parse-special --add-special",
       "Special tokens written in the text become their ids; BOS/EOS are added as the tokenizer asks."},

      {"detokenize", "switchyard detokenize -m model.gguf --ids 9707,11,1879", "Token ids back to text, printed byte for byte."},
      {"detokenize", "switchyard detokenize --tokenizer tokenizer.json --ids 1,2,3", "The same with a Hugging Face tokenizer.json."},

      {"template", "switchyard template --template chat.jinja --context messages.json",
       "Render a chat template with the variables in a JSON file, printed exactly."},
      {"template", "switchyard template --template chat.jinja --context messages.json --now 2024-07-26T00:00:00",
       "The same with a fixed clock for strftime_now, so the output is reproducible."},

      {"chat", "switchyard chat -m model.gguf", "Chat in the terminal with the model's own chat template."},
      {"chat", "switchyard chat -m model.gguf -sys \"You are terse.\" -n 256 -c 8192",
       "llama.cpp's flags: a system prompt, at most 256 tokens per answer, an 8192-token context."},
      {"chat", "switchyard chat -P pipeline.yaml --temp 0.3", "A pipeline file's model and samplers, with the temperature lowered."},

      {"conformance", "switchyard conformance cpu --require-all",
       "Every op case on the CPU backend's fastest kernels against its scalar ones; a refused case fails too."},
      {"conformance", "switchyard conformance vulkan --ops matmul,attention --types Q4_K,Q8_0",
       "Only some ops and storage types on the first Vulkan device."},
      {"conformance", "switchyard conformance vulkan --fixtures ../shared/fixtures --json > report.json",
       "Also every shared fixture model placed on the GPU; the whole report as JSON."},
      {"conformance", "switchyard conformance mybackend --plugin-path build/plugins --device 1",
       "An out-of-tree backend from its build folder, on its second device."},

      {"bench", "switchyard bench -m model.gguf", "Prompt (512 tokens) and generation (128) speed, 5 fresh processes each."},
      {"bench", "switchyard bench -m model.gguf -p 512 -n 64 -t 2,4 -d 0,4096 -r 3 --json",
       "Every combination of the lists, 3 repetitions, as one JSON object."},
      {"bench", "switchyard bench -m model.gguf -p 512 -n 64 -t 2 -r 3 --compare llama-bench/llama-bench",
       "Alternate with llama.cpp's llama-bench on the same file; both rows and the ratios of the medians."},

      {"perplexity", "switchyard perplexity -m model.gguf -f wiki.test.raw",
       "Perplexity over chunks of 512 tokens, the second half of each scored, as llama-perplexity."},
      {"perplexity", "switchyard perplexity -m model-f16.gguf -f text.txt --save-logits base.bin",
       "Keep the run's distributions as the reference for a comparison."},
      {"perplexity", "switchyard perplexity -m model-q4_k_m.gguf --kl-divergence base.bin",
       "KL divergence, top-1 agreement and perplexity ratio against the reference (llama.cpp's files work too)."},

      {"quantize", "switchyard quantize model-f16.gguf model-q4_k_m.gguf Q4_K_M",
       "llama.cpp's Q4_K_M recipe: Q6_K where it pays (output, some attn_v and ffn_down), Q4_K elsewhere."},
      {"quantize", "switchyard quantize --pure model-f16.gguf out.gguf Q8_0 8",
       "Every matrix in Q8_0, on 8 threads."},

      {"quantize", "switchyard quantize ./Qwen3-8B Q4_K_M",
       "Straight from a Hugging Face folder: writes ./Qwen3-8B/ggml-model-Q4_K_M.gguf."},

      {"imatrix", "switchyard imatrix -m model-f16.gguf -f calibration.txt -o imatrix.gguf",
       "Importance matrix on a text, in chunks of 512 tokens (llama.cpp's imatrix GGUF)."},
      {"imatrix", "switchyard imatrix -m model-f16.gguf -f calibration.txt -c 256 --chunks 100 -o imatrix.gguf",
       "Chunks of 256 tokens, at most 100 of them."},
      {"quantize", "switchyard quantize --imatrix imatrix.gguf model-f16.gguf model-q4_k_m.gguf Q4_K_M",
       "Each tensor the matrix names quantized with its columns' importance as weights."},

      {"eval", "switchyard eval configs/eval/kv-q8-vs-f16.yaml",
       "Pipelines against the reference on a prompt set; exit 3 when a threshold is crossed."},
      {"eval", "switchyard eval gate.yaml --report out/report.md --json --max-prompts 4",
       "The first 4 prompts only; the figures as JSON, the report and plot under out/."},

      {"convert", "switchyard convert ./Qwen3-8B",
       "A Hugging Face folder to ./Qwen3-8B/ggml-model-auto.gguf, bf16 kept bf16, tokenizer and chat template included."},
      {"convert", "switchyard convert ./Qwen3-8B-AWQ --outtype f16 --outfile qwen3-8b-f16.gguf",
       "A quantized checkpoint dequantized to f16, for llama.cpp or for quantize."},

      {"gguf", "switchyard gguf split --split-max-size 4G model.gguf model",
       "Shards of at most 4 GiB of tensors: model-00001-of-0000N.gguf ..."},
      {"gguf", "switchyard gguf merge model-00001-of-00003.gguf model.gguf", "The shards back into one file."},

      {"verify", "switchyard verify ./Qwen3-8B --all",
       "A Hugging Face folder: every shard its index names, tensors in bounds; each file's SHA-256 printed."},
      {"verify", "switchyard verify model-00001-of-00003.gguf --sha256 SHA256SUMS",
       "Every shard present and whole, every tensor inside its file, each digest as published."},

      {"serve", "switchyard serve -m model.gguf --port 8080",
       "An OpenAI-compatible server on 127.0.0.1:8080 (/v1/chat/completions, /v1/completions, /v1/models)."},
      {"serve", "switchyard serve -P configs/chat-24gb.yaml --host 0.0.0.0 --api-key secret",
       "The pipeline's model and placement, on every interface, clients sending the key."},

      {"help", "switchyard help", "List the commands."},
      {"help", "switchyard help run", "One command's options and examples (the same as switchyard run --help)."},

      {"completion", "switchyard completion bash",
       "Print the bash completion script; source <(switchyard completion bash) turns it on in this shell."},
      {"completion", "switchyard completion bash > ~/.local/share/bash-completion/completions/switchyard",
       "Install it for your user: bash-completion loads it in every new shell (regenerate it after an upgrade)."},
  };
  return table;
}

std::string examples_text(std::string_view command) {
  std::string out;
  for (const auto& e : examples()) {
    if (e.command != command) continue;
    if (out.empty()) out = "Examples:\n";
    out.append("  ").append(e.line).append("\n      ").append(e.what).append("\n");
  }
  return out;
}

}  // namespace sy::cli
