#!/usr/bin/env python3
"""Debian's fortunes databases as one UTF-8 text file, for `balancenet train --data text:FILE`.

Usage: .venv/bin/python examples/fortunes_to_text.py OUT [--source DIR]
  --source  the databases (default /usr/share/games/fortunes: Debian's fortunes and fortunes-min)
Every plain file of DIR (not its .dat indexes, .u8 links or sub-folders such as fortunes-off's off/) in
sorted order, about 2.5 MB of English; the "%" line after each fortune is kept as its end-of-document mark.
Overstruck characters (X backspace Y, for bold or underline on a teletype) become the character that is
seen and other control characters but tab and newline are dropped, as `col -b` would do.
Prints the size and the text's unigram entropy in bits per byte: a model that learnt only the byte
frequencies reaches that loss; a character-level model must go well below it.
"""
import argparse
import collections
import math
import os
import re
import sys

# One overstrike: any character then a backspace, the backspace showing the next character instead.
OVERSTRIKE = re.compile(r"[^\n\x08]\x08")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def plain(text):
    while True:
        struck = OVERSTRIKE.sub("", text)
        if struck == text:
            return CONTROL.sub("", text)
        text = struck


def databases(source):
    names = sorted(n for n in os.listdir(source) if "." not in n)
    paths = [os.path.join(source, n) for n in names]
    return [p for p in paths if os.path.isfile(p) and not os.path.islink(p)]


def unigram_entropy(data):
    counts = collections.Counter(data)
    return -sum(c / len(data) * math.log2(c / len(data)) for c in counts.values())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--source", default="/usr/share/games/fortunes")
    args = parser.parse_args()
    paths = databases(args.source) if os.path.isdir(args.source) else []
    if not paths:
        sys.exit("%s: no fortunes databases (install Debian's fortunes package)" % args.source)
    parts = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            text = plain(f.read())
        # Most databases end with a "%" line already; the others get one, so every fortune ends with one.
        text = text if text.endswith("\n") else text + "\n"
        parts.append(text if text.endswith("\n%\n") else text + "%\n")
    data = "".join(parts).encode("utf-8")
    # Written beside its final name and renamed, so a reader never sees half a file.
    temporary = args.out + ".partial"
    with open(temporary, "wb") as f:
        f.write(data)
    os.replace(temporary, args.out)
    print("%s: %d bytes from %d databases, unigram entropy %.3f bits per byte"
          % (args.out, len(data), len(paths), unigram_entropy(data)))


if __name__ == "__main__":
    main()
