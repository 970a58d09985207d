#!/usr/bin/env python3
"""png_colours.py FILE [RRGGBB...]: how many colours an 8-bit RGB(A) PNG holds, and how many
pixels of each colour asked for (within 8 per channel: anti-aliasing). Standard library only.
Prints "colours N" then "RRGGBB N" per colour."""
import struct
import sys
import zlib


def pixels(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    at, idat = 8, b""
    while at < len(data):
        n, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), "only 8-bit RGB or RGBA"
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        at += 12 + n
    raw, stride, prev, rows = zlib.decompress(idat), w * bpp, bytearray(w * bpp), []
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return [bytes(r[i:i + 3]) for r in rows for i in range(0, stride, bpp)]


def main():
    px = pixels(sys.argv[1])
    counts = {}
    for p in px:
        counts[p] = counts.get(p, 0) + 1
    print("colours", len(counts))
    for want in sys.argv[2:]:
        rgb = bytes.fromhex(want)
        n = sum(c for p, c in counts.items() if all(abs(p[i] - rgb[i]) <= 8 for i in range(3)))
        print(want, n)


main()
