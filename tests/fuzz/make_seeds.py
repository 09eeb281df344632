#!/usr/bin/env python3
"""Writes the hand-made seed corpora of the fuzz targets (checked in; run
again only to change them): record streams, small perf.data files, ring
reader programs and command lines. The replay seeds come from the
simulator itself (docs/reliability.md), the real perf.data seeds from
ringsim-record and perf record."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE, LOST, AUX, COMM, AUXTRACE = 9, 2, 11, 3, 71


def hdr(type_, size, misc=0):
    return struct.pack("<IHH", type_, misc, size)


def sample(ip=0x401000, pid=1, tid=1, time=1000, cpu=0):
    # sample_type IP | TID | TIME | CPU
    return hdr(SAMPLE, 40) + struct.pack("<QIIQII", ip, pid, tid, time, cpu, 0)


def lost(id_=1, n=5, time=2000, cpu=0):
    # id, lost, then the sample_id trailer (tid, time, cpu).
    return hdr(LOST, 48) + struct.pack("<QQIIQII", id_, n, 1, 1, time, cpu, 0)


def aux(off=0, size=64, flags=0):
    return hdr(AUX, 32) + struct.pack("<QQQ", off, size, flags)


def comm(name=b"ringsim\0"):
    body = struct.pack("<II", 1, 1) + name
    return hdr(COMM, 8 + len(body)) + body


def auxtrace(data=b"\xab" * 16):
    return hdr(AUXTRACE, 48) + struct.pack("<QQQIIII", len(data), 0, 7, 0, 1, 0, 0) + data


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def records():
    t = "records_fuzz"
    write(t, "samples", sample() + sample(time=1001) + sample(time=1002))
    write(t, "lost", sample() + lost())
    write(t, "aux", aux() + sample())
    write(t, "auxtrace", auxtrace() + sample())
    write(t, "comm", comm() + sample())
    write(t, "mixed", comm() + sample() + lost() + aux() + auxtrace() + sample(cpu=1))
    write(t, "truncated", sample() + sample()[:20])
    write(t, "size_zero", sample() + hdr(SAMPLE, 0) + b"\0" * 32)
    write(t, "lost_too_small", sample() + hdr(LOST, 16) + b"\0" * 8)


def perf_data(records_, sample_type=0x1 | 0x2 | 0x4 | 0x80, sample_id_all=True, attrs=1):
    attr_size = 120 + 16  # PERF_ATTR_SIZE_VER5 + the ids section
    attrs_offset = 104
    ids_offset = attrs_offset + attr_size * attrs
    ids = b"".join(struct.pack("<Q", i + 1) for i in range(attrs))
    data_offset = ids_offset + len(ids)
    data = b"".join(records_)
    flags = (1 << 18) if sample_id_all else 0
    out_attrs = b""
    for i in range(attrs):
        attr = struct.pack("<IIQQQQQ", 1, 120, 0, 4000, sample_type, 0, flags)
        attr += b"\0" * (120 - len(attr))
        attr += struct.pack("<QQ", ids_offset + 8 * i, 8)
        out_attrs += attr
    header = struct.pack("<QQQQQQQQQ", 0x32454C4946524550, 104, attr_size, attrs_offset, attr_size * attrs,
                         data_offset, len(data), 0, 0)
    header += b"\0" * (104 - len(header))  # adds_features bitmap
    return header + out_attrs + ids + data


def perf_data_files():
    t = "perf_data_fuzz"
    write(t, "samples", perf_data([sample(), sample(time=1100, cpu=1), sample(time=1200)]))
    write(t, "lost", perf_data([sample(), lost(time=1500), sample(time=3000)]))
    write(t, "auxtrace", perf_data([aux(), auxtrace(), sample()]))
    write(t, "empty_data", perf_data([]))
    write(t, "no_sample_id_all", perf_data([sample(), lost()], sample_id_all=False))
    identified = 0x1 | 0x2 | 0x4 | 0x80 | 0x10000
    id_sample = hdr(SAMPLE, 48) + struct.pack("<QQIIQII", 2, 0x401000, 1, 1, 1000, 0, 0)
    write(t, "two_attrs", perf_data([id_sample, sample(time=900)], sample_type=identified, attrs=2))


def ring_programs():
    t = "ring_reader_fuzz"
    # setup: ring byte (n % 10: area 8 << n; bits 6-7: the mode: 0 normal,
    # 1 backward, 2 forward_overwrite, 3 backward_writable), aux byte
    # (n % 11: 0 none, else 4 << n; bit 7: snapshot); then operations:
    # 0 write(size/8-1, type) 1 head=u64 2 head+=8*i8 3 poke(u16,u64)
    # 4 read 5 aux write(n) 6 aux_head=u64 7 aux op 8 failures
    # 9 change inside the next read 10 aux_head+=n 11 write n samples
    normal, backward, forward_overwrite, backward_writable = 0x00, 0x40, 0x80, 0xC0
    write(t, "forward", bytes([normal | 3, 0, 11, 5, 4, 0, 4, 9, 4, 11, 3, 4, 4]))
    write(t, "forward_wrap", bytes([normal | 2, 0, 11, 6, 4, 11, 7, 4, 11, 15, 4]))
    write(t, "forward_corrupt", bytes([normal | 3, 0, 11, 4, 3, 8, 0] + [0] * 8 + [4, 2, 0xFF, 4, 2, 3, 4]))
    write(t, "backward", bytes([backward | 3, 0, 11, 5, 4, 0, 2, 9, 4, 11, 12, 4, 4]))
    write(t, "backward_pause_fails", bytes([backward | 3, 0, 11, 3, 8, 1, 4, 8, 0, 4]))
    write(t, "backward_changed", bytes([backward | 4, 0, 11, 8, 9, 3, 2, 0, 0, 0, 0, 0, 0, 0, 0, 16, 0, 4]))
    write(t, "forward_overwrite", bytes([forward_overwrite | 3, 0, 11, 5, 4, 11, 12, 4, 0, 2, 9, 4, 4]))
    write(t, "forward_overwrite_late", bytes([forward_overwrite | 4, 0, 11, 6, 9, 2, 1, 24, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4]))
    write(t, "backward_writable", bytes([backward_writable | 3, 0, 11, 5, 4, 0, 2, 9, 4, 11, 3, 4, 4]))
    write(t, "backward_writable_corrupt", bytes([backward_writable | 3, 0, 11, 4, 3, 8, 0] + [0] * 8 + [4]))
    write(t, "aux", bytes([3, 5, 5, 40, 7, 1, 1, 5, 3, 7, 1, 0, 7, 1, 1, 7, 0]))
    write(t, "aux_snapshot", bytes([3, 0x85, 5, 200, 7, 5, 200, 5, 200, 7, 8, 2, 7, 10, 9, 7]))
    write(t, "head_past", bytes([3, 5, 1] + [0xFF] * 8 + [4, 6] + [0x10] + [0] * 7 + [7, 1, 0]))


def command_lines():
    t = "cli_fuzz"
    lines = {
        "campaign": (0, ["--runs=3", "--seed=7", "--cpus=2", "--mode=backward"]),
        "campaign_jobs": (0, ["--runs", "10", "--jobs", "2", "--output=aio", "--cblocks=3"]),
        "campaign_bad": (0, ["--ring-pages=3", "--runs=1"]),
        "campaign_help": (0, ["--help"]),
        "replay": (1, ["file.json", "-v", "--trace", "t.json"]),
        "replay_missing": (1, []),
        "record": (2, ["-a", "-F", "1000", "-g", "--aio", "4", "-o", "x.data", "--", "sleep", "1"]),
        "record_dwarf": (2, ["-e", "cpu-clock:u", "--call-graph", "dwarf,4096", "--switch-output", "100M", "ls"]),
        "record_bad": (2, ["-m", "3", "--", "true"]),
        "record_overwrite": (2, ["--overwrite", "-c", "10000", "-r", "5", "--header-interval-ms", "0", "--", "x"]),
        "bench": (3, ["--reps", "3", "--producer-batch=8"]),
        "bench_bad": (3, ["--reps=0"]),
        "compare": (4, ["--seed=5", "--runs", "2", "--cpus=2", "--ring-pages=4", "--json", "c.json"]),
        "compare_bad": (4, ["--runs=0", "--mode=backward"]),
    }
    for name, (command, args) in lines.items():
        write(t, name, bytes([command]) + b"\0".join(a.encode() for a in args))


if __name__ == "__main__":
    records()
    perf_data_files()
    ring_programs()
    command_lines()
