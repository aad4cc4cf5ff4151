#!/usr/bin/env python3
"""Prints a GGUF file's tensor table as JSON ([{name, type, shape, bytes}]), read straight
from the file by the GGUF specification (ggml's docs/gguf.md), so that tests compare the
project's figures with ones it did not compute. Types: ggml's numbering and block sizes.
usage: gguf_tensors.py FILE"""
import json
import struct
import sys

# ggml type id: (name, elements per block, bytes per block)
TYPES = {0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20), 6: ("Q5_0", 32, 22),
         7: ("Q5_1", 32, 24), 8: ("Q8_0", 32, 34), 10: ("Q2_K", 256, 84), 11: ("Q3_K", 256, 110),
         12: ("Q4_K", 256, 144), 13: ("Q5_K", 256, 176), 14: ("Q6_K", 256, 210), 20: ("IQ4_NL", 32, 18),
         23: ("IQ4_XS", 256, 136), 30: ("BF16", 1, 2)}
SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}


def main(path):
    with open(path, "rb") as f:
        data = f.read()
    pos = 0

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from("<" + fmt, data, pos)
        pos += struct.calcsize("<" + fmt)
        return v[0] if len(v) == 1 else v

    def string():
        nonlocal pos
        n = take("Q")
        s = data[pos:pos + n].decode("utf-8", "replace")
        pos += n
        return s

    def skip_value(t):
        if t == 8:
            string()
        elif t == 9:
            et, n = take("I"), take("Q")
            for _ in range(n):
                skip_value(et)
        else:
            take(SCALARS[t])

    if data[:4] != b"GGUF":
        sys.exit(f"{path}: not a GGUF file")
    pos = 4
    _version, n_tensors, n_kv = take("I"), take("Q"), take("Q")
    for _ in range(n_kv):
        string()
        skip_value(take("I"))
    tensors = []
    for _ in range(n_tensors):
        name = string()
        dims = [take("Q") for _ in range(take("I"))]
        type_id, _offset = take("I"), take("Q")
        tname, block, block_bytes = TYPES[type_id]
        elements = 1
        for d in dims:
            elements *= d
        tensors.append({"name": name, "type": tname, "shape": dims, "bytes": elements // block * block_bytes})
    print(json.dumps(tensors))


if __name__ == "__main__":
    main(sys.argv[1])
