#!/usr/bin/env python3
"""Print the seedfall_catalog records of a .wasm file (docs/abi.md).

Usage: read_catalog.py FILE.wasm
A record is `kind 0x1f file 0x1f line 0x1f message 0x1e`; one line is printed
per record as `kind | file | line | message`. Exits 1 if the section is absent.
"""
import sys


def leb_u32(buf, pos):
    result, shift = 0, 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


def custom_sections(buf):
    if buf[:4] != b"\0asm":
        raise SystemExit("not a wasm module")
    pos = 8
    while pos < len(buf):
        sid = buf[pos]
        size, pos = leb_u32(buf, pos + 1)
        end = pos + size
        if sid == 0:
            nlen, p = leb_u32(buf, pos)
            yield buf[p:p + nlen].decode("utf-8"), buf[p + nlen:end]
        pos = end


def main():
    data = open(sys.argv[1], "rb").read()
    payloads = [body for name, body in custom_sections(data) if name == "seedfall_catalog"]
    if not payloads:
        print("no seedfall_catalog section")
        sys.exit(1)
    print(f"{len(payloads)} seedfall_catalog section(s), {sum(map(len, payloads))} bytes")
    for body in payloads:
        for rec in body.split(b"\x1e"):
            if rec.strip(b"\0"):
                kind, file, line, msg = rec.decode("utf-8").split("\x1f")
                print(f"{kind} | {file} | {line} | {msg}")


if __name__ == "__main__":
    main()
