#!/usr/bin/env python3
"""Writes a Hugging Face tokenizer.json of at most N tokens cut from a real one (the shared
Qwen3 tokenizer): its pre-tokenizer, normaliser and decoder, the byte tokens, the first merges
whose parts and result all fit, and the first added tokens placed at the last ids. The
shared tiny checkpoints have a 512-token vocabulary and no tokenizer; with this one they
read and write text, so convert can be checked end to end (llama.cpp tokenizes the same way).
  tiny_tokenizer.py SOURCE_TOKENIZER_JSON N OUT_DIR
"""
import json
import sys


def main():
    src, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    t = json.load(open(src, encoding="utf-8"))
    added = t["added_tokens"][:3]
    n_plain = n - len(added)
    vocab = {tok: i for tok, i in t["model"]["vocab"].items() if i < n_plain}
    merges = []
    for m in t["model"]["merges"]:
        a, b = m if isinstance(m, list) else m.split(" ", 1)
        if a in vocab and b in vocab and a + b in vocab:
            merges.append([a, b])
    for k, a in enumerate(added):
        a = dict(a)
        a["id"] = n_plain + k
        added[k] = a
    t["added_tokens"] = added
    t["model"]["vocab"] = vocab
    t["model"]["merges"] = merges
    json.dump(t, open(f"{out}/tokenizer.json", "w", encoding="utf-8"), ensure_ascii=False)
    cfg = {
        "bos_token": None,
        "eos_token": added[0]["content"],
        "chat_template": "{%- for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}"
        "{%- endfor %}{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{%- endif %}",
    }
    json.dump(cfg, open(f"{out}/tokenizer_config.json", "w", encoding="utf-8"))
    print(f"{len(vocab) + len(added)} tokens, {len(merges)} merges")


if __name__ == "__main__":
    main()
