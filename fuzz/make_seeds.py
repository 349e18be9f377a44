"""Writes the seed corpora of the fuzz targets into OUT/<target>/ from workloads/ and fuzz/seeds/.

Usage: python3 fuzz/make_seeds.py OUT
command_parse: every distinct workload line (first byte 0: the line as written) and the hand-written
hostile lines of fuzz/seeds/commands.txt; commands_file: each workload file and the hostile lines as
.txt (first byte even) and as .tsv (odd); cache_record: a sound entry for the fuzzer's fixed key and a
few broken ones; npy_writer: small tensors of each dtype and rank.
"""
import hashlib
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def write(folder, name, data):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)


def lines_of(path):
    return [l.strip() for l in path.read_text().splitlines() if l.strip() and not l.startswith("#")]


def main():
    out = pathlib.Path(sys.argv[1])
    workloads = sorted((ROOT / "workloads").glob("*.txt"))
    hostile = ROOT / "fuzz" / "seeds" / "commands.txt"
    lines = sorted({l for w in workloads + [hostile] for l in lines_of(w)})
    for i, line in enumerate(lines):
        write(out / "command_parse", f"line{i:04d}", b"\0" + line.encode())
    for path in workloads + [hostile]:
        text = path.read_bytes()
        write(out / "commands_file", path.stem + ".txt", b"\0" + text)
        tsv = b"\n".join(b"\t".join(l.split()) for l in text.splitlines())
        write(out / "commands_file", path.stem + ".tsv", b"\1" + tsv)
    # The cache record fuzzer's fixed key (cache_record_fuzzer.cpp): KeyRecord schema=1, fuzz=record.
    record = "schema=1\nfuzz=record\n"
    key = hashlib.sha256(record.encode()).hexdigest()
    cubin = b"\x7fELF fuzz cubin"
    meta = {"key": key, "key_record": record, "cubin_sha256": hashlib.sha256(cubin).hexdigest(),
            "cubin_bytes": len(cubin), "implementation": "gpu:conv:direct", "compile_ms": 12.5, "registers": 32}
    sound = json.dumps(meta).encode()
    write(out / "cache_record", "sound", sound + b"\0" + cubin)
    write(out / "cache_record", "truncated-artifact", sound + b"\0" + cubin[:5])
    write(out / "cache_record", "other-key", sound.replace(key.encode(), b"0" * 64) + b"\0" + cubin)
    write(out / "cache_record", "truncated-metadata", sound[: len(sound) // 2] + b"\0" + cubin)
    for dtype in range(4):
        for rank in range(5):
            dims = bytes([2, 3, 1, 4][:rank])
            write(out / "npy_writer", f"dtype{dtype}-rank{rank}", bytes([rank, dtype, rank]) + dims + bytes(range(256)))


if __name__ == "__main__":
    main()
