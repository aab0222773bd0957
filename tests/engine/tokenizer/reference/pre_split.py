#!/usr/bin/python3
"""Independent reference for pre-tokenizer word splitting, run by Debian's python3 with
python3-regex (the `regex` module, the engine the published patterns are written for).

Usage: pre_split.py INPUT.json OUTPUT.json
  INPUT: {"patterns": [...], "text": "..."}. Each pattern in turn splits every piece left by the
  previous one: matches and the text between them become pieces, in order (HF tokenizers'
  Split with behavior "Isolated"). OUTPUT: the list of pieces.
Nothing here is shared with the C++ code under test.
"""
import json
import sys

import regex


def split(pieces, pattern):
    rx = regex.compile(pattern)
    out = []
    for piece in pieces:
        pos = 0
        for m in rx.finditer(piece):
            if m.start() == m.end():
                continue
            if m.start() > pos:
                out.append(piece[pos : m.start()])
            out.append(m.group())
            pos = m.end()
        if pos < len(piece):
            out.append(piece[pos:])
    return out


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        job = json.load(f)
    pieces = [job["text"]]
    for p in job["patterns"]:
        pieces = split(pieces, p)
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(pieces, f, ensure_ascii=False)


if __name__ == "__main__":
    main()
