"""Writes the hand-made seeds of fuzz/corpus/<target>/seed-* in the input format of fuzz/src/case.rs.

    python3 fuzz/seeds.py          # rewrites fuzz/corpus/{decode,ops}/seed-*

Each seed is a readable list of operations below; `cargo fuzz fmt <target> <seed>` prints what
it decodes to. Keep this in step with case.rs when the format changes.
"""
import os, struct, sys

LARGE = [65, 100, 127, 128, 255, 256, 1000, 1024, 4096, 8192, 65536]
RA_CHUNKS = [1, 2, 7, 64, 100, 1024, 4096, 65536]
READS = ["Byte","I8","U16","I16","U32","I32","U64","I64","U16Le","I16Le","U32Le","I32Le",
         "U64Le","I64Le","VInt","VLong","VarintU64","ZInt","ZLong","String"]
INTO = ["U16","U32","U64","I32","I64","U16Le","U32Le","U64Le","I32Le","I64Le"]
VIEW = ["I8","VInt","VLong","ZInt","ZLong","String","GetU8","GetU16","GetU32","GetU64",
        "GetU16Le","GetU32Le","GetU64Le"]

u16 = lambda v: struct.pack("<H", v & 0xffff)
u32 = lambda v: struct.pack("<I", v & 0xffffffff)
u64 = lambda v: struct.pack("<Q", v & 0xffffffffffffffff)

def cap(c):
    return bytes([c - 1]) if c <= 64 else bytes([200 + LARGE.index(c)])

def header(source, capacity, chunk=0, pending=0, fail_after=None, fail_every=0, seek_fail=None,
           refuse=False, seed=7, ra=(64, 2), retry=False):
    src = {"stream": 0, "positional": 1, "readahead": 2}[source]
    flags = (1 if fail_after is not None else 0) | (2 if seek_fail is not None else 0) \
        | (4 if refuse else 0) | (fail_every << 3) | (0x40 if retry else 0)
    return bytes([src]) + cap(capacity) + bytes([chunk, pending]) + u16(fail_after or 0) \
        + bytes([flags, seek_fail or 0, seed, RA_CHUNKS.index(ra[0]), ra[1] - 1])

# ----- segments -----
def raw(b): return bytes([0, len(b)]) + b
def varint_bits(bits, raw_u64=0xffffffffffffffff): return bytes([1, bits]) + u64(raw_u64)
def zigzag(v, shift=0): return bytes([2, shift]) + u64(v)
def string(b): return bytes([3, len(b)]) + b
def prefixed(length, b, shift=0): return bytes([4, shift]) + u32(length) + bytes([len(b)]) + b
def fill(byte, count): return bytes([5, byte]) + u16(count)
def pattern(n): return bytes([6]) + u16(n)
def overlong(groups, low, last): return bytes([7, groups, low, last])
def segments(*segs): return bytes([len(segs)]) + b"".join(segs)

# ----- sizes, targets -----
def small(n): return bytes([0]) + u16(n)
def capsize(mult, delta):
    for v in range(0, 65536):
        if v % 5 == mult and (v >> 3) % 7 == delta + 3:
            return bytes([2]) + u16(v)
def big(n): return bytes([3]) + u16(n)
def huge(n): return bytes([4]) + u16(n)
def abs_(n): return bytes([0]) + u16(n)
def rel(d): return bytes([1]) + u16(d)
def from_end(d): return bytes([2]) + u16(d)
def in_window(permille): return bytes([3]) + u16(permille)
def huge_target(n): return bytes([4]) + u16(n)

# ----- ops -----
def read(kind): return bytes([READS.index(kind)])
def read_bytes(size): return bytes([20]) + size
def read_owned(size): return bytes([21]) + size
def read_into(kind, count): return bytes([22, INTO.index(kind)]) + u16(count)
def view(*ops):
    out = bytes([23, len(ops)])
    for op in ops:
        if isinstance(op, tuple):
            out += bytes([{"CopyToSlice": 13, "Advance": 14}[op[0]], op[1]])
        else:
            out += bytes([VIEW.index(op)])
    return out
def fill_(size): return bytes([24]) + size
def seek_to(target): return bytes([25]) + target
def skip(size): return bytes([26]) + size
def seek_start(target): return bytes([27, 0]) + target
def seek_current(d): return bytes([27, 2]) + u16(d)
def seek_end(d): return bytes([27, 4]) + u16(d)
def seek_current_min(v=0): return bytes([27, 6]) + u16(v)
def async_read(size): return bytes([29]) + size
def fill_buf_consume(f): return bytes([30, f])
LENGTH = bytes([31])
def disturb(arg): return bytes([32]) + u16(arg)
CLONE = bytes([33])
def slice_(target, size): return bytes([34]) + target + size
def switch(n): return bytes([35, n])
START_CHECKSUM = bytes([36])
CHECKSUM = bytes([37])
STOP_CHECKSUM = bytes([38, 0])
RELEASE = bytes([38, 1])
def crc32_of(a, b): return bytes([39]) + a + b
def cancel(polls): return bytes([40, polls - 1])

ALL_READS = b"".join(read(k) for k in READS)

DECODE = {
    # Every typed read over well-formed values, a tiny window, a well-behaved stream.
    "values-stream-cap7": header("stream", 7) + segments(
        varint_bits(7), varint_bits(32, 0xffffffff00000000), varint_bits(63), varint_bits(64),
        zigzag(-1), zigzag(1 << 62, 1), string("héllo, wörld €😀".encode()), pattern(600),
    ) + read("VInt") + read("VLong") + read("VLong") + read("VarintU64") + read("ZLong")
      + read("ZLong") + read("String") + ALL_READS + read_into("U32", 40)
      + read_into("I64Le", 20) + view("VInt", "GetU32", "String", ("Advance", 3), "ZLong")
      + read_bytes(capsize(2, 1)) + read_owned(capsize(1, 0)) + seek_to(abs_(0)) + ALL_READS,
    # The same through short reads (1..3 bytes) and Pending before every other read.
    "values-short-pending-cap3": header("stream", 3, chunk=3, pending=1) + segments(
        varint_bits(35), varint_bits(64), zigzag(-(1 << 40) & 0xffffffffffffffff, 3),
        string(b"a" * 40), pattern(300),
    ) + read("VInt") + read("VarintU64") + read("ZLong") + read("String") + ALL_READS
      + read_into("U16Le", 30) + fill_(small(5)) + view("GetU16", "VInt", "I8"),
    # A positional source with read-ahead, bytes at hand in short pieces, an error after 100
    # bytes: values across chunk and window edges.
    "readahead-faults-cap16": header("readahead", 16, chunk=5, pending=2, fail_after=100,
                                     ra=(64, 2)) + segments(
        pattern(90), varint_bits(50), string("ééééé".encode()), pattern(2000),
    ) + read_bytes(big(90)) + read("VLong") + read("String") + ALL_READS + ALL_READS
      + read_into("U64", 100) + read("VLong") + read("VLong") + seek_to(abs_(90))
      + read("VLong") + read_owned(big(1500)),
    # Malformed data: over-long and unterminated varints, a lying string length, bad UTF-8,
    # a corrupt huge length; reads past the end.
    "malformed-positional-cap5": header("positional", 5) + segments(
        overlong(5, 0x7f, 0x7f), overlong(9, 0, 0x01), overlong(9, 0, 0x02),
        prefixed(3, b"\xc3\x28\x41"), prefixed(0xffffffff, b"ab"), overlong(11, 0x55, 0x00),
    ) + read("VInt") + seek_to(abs_(5)) + read("VLong") + read("VarintU64") + read("ZLong")
      + seek_to(abs_(6)) + read("VLong") + read("String") + seek_to(abs_(16)) + read("String")
      + read("VInt") + seek_to(abs_(26)) + read("String") + read_owned(huge(0))
      + read_into("U32", 5000) + seek_to(abs_(31)) + read("VarintU64") + view("VLong", "ZInt")
      + seek_to(from_end(-2)) + read("U32") + read("VInt") + seek_to(huge_target(0)) + read("Byte"),
    # Issue 22: reads retried after every injected error must make progress. A string whose
    # prefix lies before the window's edge, 2-byte read-ahead chunks, every 8th request failing
    # (fail_every=7), then every typed and bulk read, all retried until they complete.
    "retry-readahead-cap64": header("readahead", 64, fail_every=7, ra=(2, 4), retry=True)
      + segments(pattern(40), string(b"s" * 65), pattern(300), string(b"t" * 200), pattern(3000))
      + read_bytes(big(40)) + read("String") + read_bytes(big(300)) + read("String")
      + ALL_READS + read_into("U32", 300) + read_owned(big(500)) + read_bytes(big(700)),
    # A string longer than the window, 2^31 as a length, a window of 1 byte.
    "long-string-stream-cap1": header("stream", 1, chunk=2) + segments(
        string(bytes(range(0x41, 0x5b)) * 9), prefixed(1 << 31, b"xyz"), fill(0xc3, 40),
    ) + read("String") + read("String") + read("String") + read_bytes(small(3)) + read("String"),
}

OPS = {
    # Tokio's traits and seeks of every kind on a hostile stream, dropped End seeks included.
    "seeks-stream-cap8": header("stream", 8, chunk=4, pending=1, refuse=True) + segments(
        pattern(3000),
    ) + cancel(1) + seek_end(-10) + read("U32") + seek_current(5) + cancel(1) + seek_end(-100)
      + seek_current(0) + async_read(small(20)) + fill_buf_consume(128) + LENGTH
      + seek_end(-3) + read("U32") + seek_current_min() + skip(huge(0)) + seek_to(abs_(5000))
      + read_bytes(small(1)) + async_read(small(4)) + fill_buf_consume(255)
      + disturb(1234) + read_bytes(capsize(3, -1)) + seek_start(in_window(500)) + read("U64")
      + cancel(2) + read_owned(big(2000)) + cancel(1) + read("VInt") + read_bytes(big(2500)),
    # Clones and slices of a positional input with read-ahead, read in turns.
    "clones-slices-readahead-cap32": header("readahead", 32, chunk=9, pending=1, ra=(100, 3))
      + segments(pattern(5000)) + read_bytes(big(700)) + CLONE + read_bytes(big(300))
      + switch(0) + slice_(abs_(1000), big(2000)) + read_bytes(big(1999)) + read("U16")
      + slice_(abs_(10), big(50)) + read_owned(big(50)) + switch(1) + read("U64") + switch(0)
      + disturb(5) + read_bytes(big(1000)) + slice_(abs_(4990), big(20)) + LENGTH
      + cancel(1) + read_bytes(big(900)) + disturb(1) + read_bytes(big(400)) + RELEASE
      + read_bytes(big(100)),
    # Checksums across window refills, direct reads, forward and backward seeks, dropped reads.
    "checksums-stream-cap16": header("stream", 16, chunk=7) + segments(pattern(4000))
      + START_CHECKSUM + read_bytes(small(10)) + read_bytes(big(100)) + CHECKSUM
      + seek_to(rel(50)) + read("U32") + CHECKSUM + cancel(1) + read_bytes(big(500)) + CHECKSUM
      + read_owned(capsize(1, 0)) + CHECKSUM + crc32_of(abs_(3), abs_(3000)) + RELEASE + CHECKSUM
      + seek_to(abs_(5000)) + CHECKSUM + seek_to(abs_(10)) + CHECKSUM + STOP_CHECKSUM + CHECKSUM
      + START_CHECKSUM + async_read(big(64)) + fill_buf_consume(100) + CHECKSUM,
    # Injected errors everywhere: every 3rd read, a failed seek, a failed length request.
    "errors-positional-cap4": header("positional", 4, chunk=2, pending=3, fail_after=50,
                                     fail_every=2, seek_fail=0) + segments(pattern(500))
      + LENGTH + LENGTH + read_bytes(big(100)) + read_bytes(big(100)) + read("U64")
      + read("U64") + read_owned(big(300)) + read_owned(big(300)) + slice_(abs_(400), big(100))
      + read_bytes(big(100)) + read_bytes(big(100)) + START_CHECKSUM + read_bytes(big(60))
      + CHECKSUM + CHECKSUM + crc32_of(abs_(0), abs_(500)) + crc32_of(abs_(0), abs_(500)),
    # Every other read call of a stream in short pieces fails, every read retried; checksums.
    "retry-stream-cap7": header("stream", 7, chunk=3, pending=2, fail_every=1, retry=True)
      + segments(pattern(100), string(b"u" * 30), pattern(2000)) + START_CHECKSUM
      + read_bytes(big(100)) + read("String") + ALL_READS + CHECKSUM + read_into("U64", 50)
      + read_owned(big(300)) + seek_to(rel(100)) + read_bytes(big(20)) + CHECKSUM,
    "errors-stream-cap64": header("stream", 64, chunk=30, fail_after=200, fail_every=4,
                                  seek_fail=1) + segments(pattern(1000))
      + read_bytes(big(300)) + read_bytes(big(300)) + seek_end(-50) + seek_end(-50)
      + read_bytes(big(50)) + seek_to(abs_(0)) + read_owned(big(999)) + read_owned(big(999))
      + async_read(big(200)) + fill_buf_consume(200) + read("String"),
}

def write(directory, seeds):
    os.makedirs(directory, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(directory, "seed-" + name), "wb") as f:
            f.write(data)
        print(f"{directory}/seed-{name}: {len(data)} bytes")

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
write(os.path.join(root, "decode"), DECODE)
write(os.path.join(root, "ops"), OPS)
