#!/usr/bin/env bash
# GGUF strings that are not UTF-8, as a user meets them: a key or tensor name is refused
# with its offset; string values are printed by inspect (text and --json) and in log lines
# with each invalid byte as \xNN, exactly Python's bytes.decode("utf-8", "backslashreplace"),
# and --json is always valid JSON. The files are written here by Python from the GGUF
# specification, independently of the reader.
set -uo pipefail
exe="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/check.sh"

python3 - "$tmp" <<'PY'
import struct, sys
d = sys.argv[1]
def s(b): return struct.pack('<Q', len(b)) + b
def kv_str(k, v): return s(k) + struct.pack('<I', 8) + s(v)
def kv_u32(k, v): return s(k) + struct.pack('<II', 4, v)
def kv_strs(k, items): return s(k) + struct.pack('<IIQ', 9, 8, len(items)) + b''.join(s(i) for i in items)
def gguf(kvs, tensors=b'', n_tensors=0, data=b''):
    head = b'GGUF' + struct.pack('<IQQ', 3, n_tensors, len(kvs)) + b''.join(kvs) + tensors
    return head + b'\0' * (-len(head) % 32) + data
def tensor(name): return s(name) + struct.pack('<IQIQ', 1, 8, 0, 0)  # F32 [8] at offset 0
values = gguf([kv_str(b'general.architecture', b'llama'), kv_str(b'general.name', b'caf\xc3\xa9 \xff\xfe end'),
               kv_u32(b'llama.block_count', 1), kv_strs(b'llama.tags', [b'ok', b'\xc0\xaf', b'\xe2\x82'])],
              tensor(b'w'), 1, b'\0' * 32)
open(f'{d}/values.gguf', 'wb').write(values)
open(f'{d}/bad-key.gguf', 'wb').write(gguf([kv_u32(b'gen\xffral.x', 1)]))
open(f'{d}/bad-name.gguf', 'wb').write(gguf([], tensor(b'blk.\x80w'), 1, b'\0' * 32))
PY

check "a key that is not UTF-8 is refused with its offset" 1 \
  "bad-key.gguf: metadata key 'gen\\\\xffral.x' at offset 24 is not valid UTF-8 \(byte 0xff at position 3\)" \
  -- "$exe" inspect "$tmp/bad-key.gguf"
check "a tensor name that is not UTF-8 is refused with its offset" 1 \
  "bad-name.gguf: tensor name 'blk.\\\\x80w' at offset 24 is not valid UTF-8 \(byte 0x80 at position 4\)" \
  -- "$exe" inspect "$tmp/bad-name.gguf"

"$exe" inspect "$tmp/values.gguf" > "$tmp/text.out" 2> "$tmp/text.err"; rc=$?
"$exe" inspect --json --tensors "$tmp/values.gguf" > "$tmp/json.out" 2> "$tmp/json.err"; rc_json=$?
check "inspect and inspect --json exit 0" 0 "ok" -- bash -c "[ $rc = 0 ] && [ $rc_json = 0 ] && echo ok"
check "text and JSON are UTF-8 and escape as Python's backslashreplace" 0 "^ok$" -- python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
def br(b): return b.decode('utf-8', 'backslashreplace')
name, tag1, tag2 = br(b'caf\xc3\xa9 \xff\xfe end'), br(b'\xc0\xaf'), br(b'\xe2\x82')
text = open(d + '/text.out', 'rb').read().decode('utf-8')  # strict: raises on any invalid byte
assert 'name:           ' + name + '\n' in text, text
assert 'llama.tags = ["ok", "' + tag1 + '", "' + tag2 + '"]' in text, text
j = json.loads(open(d + '/json.out', 'rb').read().decode('utf-8'))
assert j['name'] == name, j['name']
assert j['hyperparameters']['llama.tags'] == ['ok', tag1, tag2], j['hyperparameters']
assert j['tensors'][0]['name'] == 'w'
print('ok')
PY

# Log lines: a model path that is not UTF-8 reaches the "model" logger's load line.
bad_path="$tmp/m"$'\xff'".gguf"
"$exe" synth -o "$bad_path" --layers 4 --vocab 300 > /dev/null 2>&1
"$exe" --log-level info run -m "$bad_path" --prompt-ids 1,2 -n 1 > /dev/null 2> "$tmp/log.err"
check "log lines escape bytes that are not UTF-8" 0 "^ok$" -- python3 - "$tmp" <<'PY'
import sys
d = sys.argv[1]
err = open(d + '/log.err', 'rb').read().decode('utf-8')  # strict
assert '[model]' in err and 'm\\xff.gguf' in err, err
print('ok')
PY

echo "$failures failure(s)"
[ "$failures" = 0 ]
