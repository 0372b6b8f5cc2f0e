"""Type stubs of the extension module `ndup._ndup` (re-exported by `ndup`)."""

from collections.abc import Hashable, Iterable
from typing import Any, Literal, Optional, TypedDict, Union

import numpy as np
import numpy.typing as npt

__version__: str
DEFAULT_MAX_FILESIZE: int

SketchName = Literal["fss", "oph", "classic"]
ShingleName = Literal["char", "word", "stopword"]
VerifyName = Literal["auto", "signature", "exact", "none"]

class MinHasher:
    """Makes MinHash signatures of texts, exactly as `ndup scan` signs documents."""

    def __init__(
        self,
        num_perm: int = 128,
        k: int = 9,
        shingle: ShingleName = "char",
        seed: int = 42,
        sketch: SketchName = "fss",
        *,
        w: int = 5,
        stopwords: Optional[list[str]] = None,
        nfkc: bool = True,
        lowercase: bool = True,
        collapse_whitespace: bool = True,
        trim: bool = True,
    ) -> None:
        """`stopwords` is a list of str (a lone str is a TypeError)."""
    def sign(self, text: str) -> Optional[Signature]:
        """The signature of `text`, or None when it has no shingle (nothing left after
        normalization: "" or white space alone). A text shorter than one shingle (`k`
        characters, `w` words) is one shingle, and has a signature."""
    def sign_batch(self, texts: Iterable[str], *, threads: Optional[int] = None) -> list[Optional[Signature]]:
        """The signatures of `texts`, in order, signed without the GIL on every core (or on
        `threads` threads; 1: the calling thread)."""
    def sign_hashes(self, hashes: Iterable[int]) -> Optional[Signature]:
        """The signature of precomputed uniform 64-bit hashes; None when there are none."""
    def sign_tokens(self, tokens: Iterable[Union[str, bytes]]) -> Optional[Signature]:
        """The signature of your own tokens, hashed as `MinHash.update` hashes them."""
    @property
    def num_perm(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def sketch(self) -> SketchName: ...
    @property
    def shingle(self) -> ShingleName: ...
    @property
    def k(self) -> int: ...
    @property
    def w(self) -> int: ...

class Signature:
    """A MinHash signature, the parameters that made it and, when signed from text, how the text
    was shingled; immutable, hashable (by parameters and slots), picklable."""

    def jaccard(self, other: Union[Signature, MinHash]) -> float:
        """The estimated Jaccard similarity; ValueError when `other` has other parameters, or
        was signed from text shingled otherwise."""
    def to_numpy(self) -> npt.NDArray[np.uint32]:
        """A read-only view of the slots, sharing this signature's memory."""
    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> npt.NDArray[Any]:
        """The slots (a read-only view), or a copy as `dtype`; with `copy=False`, ValueError
        when a copy is needed (NumPy 2's protocol)."""
    @staticmethod
    def from_numpy(
        slots: npt.NDArray[np.uint32],
        *,
        seed: int = 42,
        sketch: SketchName = "fss",
        shingling: Optional[str] = None,
    ) -> Signature:
        """A signature from a 1-d uint32 array of num_perm slots (copied)."""
    def digest(self) -> npt.NDArray[np.uint32]:
        """The slots, copied into a new array (datasketch's `MinHash.digest`)."""
    @property
    def num_perm(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def sketch(self) -> SketchName: ...
    @property
    def shingling(self) -> Optional[str]:
        """'char 9-shingles, nfkc+casefold+whitespace+trim'; None when made from tokens,
        hashes or slots."""
    def __len__(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class MinHash:
    """A signature fed token by token, as datasketch's `MinHash` is. It keeps each distinct
    token hash once, and its signature until the next change; an empty one's slots are all
    0xFFFFFFFF, as datasketch's. Equal to another MinHash of the same parameters and slots;
    unhashable."""

    def __init__(self, num_perm: int = 128, seed: int = 42, sketch: SketchName = "fss") -> None: ...
    def update(self, token: Union[str, bytes]) -> None: ...
    def update_batch(self, tokens: Iterable[Union[str, bytes]]) -> None: ...
    def merge(self, other: MinHash) -> None:
        """Adds every token of `other`: the MinHash of the union."""
    def jaccard(self, other: Union[MinHash, Signature]) -> float: ...
    def signature(self) -> Signature:
        """The signature of every token added (of none: every slot 0xFFFFFFFF)."""
    def digest(self) -> npt.NDArray[np.uint32]: ...
    def is_empty(self) -> bool: ...
    def copy(self) -> MinHash: ...
    def clear(self) -> None: ...
    @property
    def num_perm(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def sketch(self) -> SketchName: ...
    def __len__(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...
    __hash__: None  # type: ignore[assignment]

class LSH:
    """An in-memory banded LSH index, in the shape of datasketch's `MinHashLSH`; it pickles,
    and threads may share it (queries run side by side; a change waits for them)."""

    def __init__(
        self,
        threshold: float = 0.8,
        num_perm: int = 128,
        weights: Optional[tuple[float, float]] = None,
        params: Optional[tuple[int, int]] = None,
        *,
        bands: Optional[int] = None,
        rows: Optional[int] = None,
    ) -> None: ...
    def insert(self, key: Hashable, minhash: Union[Signature, MinHash], check_duplication: bool = True) -> None:
        """Indexes `minhash` under `key`; ValueError for a key already indexed. A refused
        insertion leaves the index unchanged."""
    def insert_batch(self, keys: Iterable[Hashable], minhashes: Iterable[Union[Signature, MinHash]]) -> None:
        """Indexes `minhashes[i]` under `keys[i]`, as many `insert` calls would, with the bands
        hashed on every core and the GIL released. All or nothing: a key already indexed or twice
        in `keys`, iterables of different lengths, or a signature of other parameters is a
        ValueError (an unhashable key a TypeError) and the index is unchanged."""
    def query(self, minhash: Union[Signature, MinHash]) -> list[Any]:
        """The keys sharing a band with `minhash`, in insertion order."""
    def query_batch(self, minhashes: Iterable[Union[Signature, MinHash]]) -> list[list[Any]]:
        """`query` for each, in order, on every core with the GIL released."""
    def remove(self, key: Hashable) -> None:
        """Removes `key`; ValueError when it is not indexed."""
    def keys(self) -> list[Any]: ...
    def is_empty(self) -> bool: ...
    def insertion_session(self, buffer_size: int = 50000) -> LSH:
        """This index (`buffer_size` is accepted, as in datasketch, and ignored)."""
    def __enter__(self) -> LSH: ...
    def __exit__(self, *args: object) -> bool: ...
    def __contains__(self, key: Hashable) -> bool: ...
    def __len__(self) -> int: ...
    @property
    def bands(self) -> int: ...
    @property
    def rows(self) -> int: ...
    @property
    def params(self) -> tuple[int, int]: ...
    @property
    def num_perm(self) -> int: ...
    @property
    def threshold(self) -> float: ...

class CurvePoint(TypedDict):
    s: float
    p: float

class Loss(TypedDict):
    s: float
    candidate: float
    verification: float
    total: float

class Memory(TypedDict):
    signatures: int
    band_hashes: int
    band_buckets: int
    documents: int
    total: int

class Weights(TypedDict):
    fp: float
    fn: float

Tuning = TypedDict(
    "Tuning",
    {
        "type": Literal["tune"],
        "threshold": float,
        "num_perm": int,
        "bands": int,
        "rows": int,
        "unbanded_slots": int,
        "unbanded_note": Optional[str],
        "tuned": bool,
        "lsh_threshold": float,
        "half_point": float,
        "weights": Weights,
        "cost": float,
        "verify": VerifyName,
        "curve": list[CurvePoint],
        "false_negatives": list[Loss],
        "memory_per_million": Memory,
    },
)

def tune(
    threshold: float = 0.8,
    num_perm: Optional[int] = None,
    *,
    bands: Optional[int] = None,
    rows: Optional[int] = None,
    fp_weight: float = 1.0,
    fn_weight: float = 100.0,
    verify: VerifyName = "auto",
) -> Tuning:
    """What `ndup tune --format json` prints for these arguments."""

def _scan_texts(ids: list[str], texts: list[Optional[str]], clusters: bool, options: dict[str, Any]) -> dict[str, Any]: ...
def _scan_paths(paths: list[str], clusters: bool, options: dict[str, Any]) -> dict[str, Any]: ...
def _dedup_arrow(
    table: Any, text_column: str, id_column: Optional[str], keep: str, options: dict[str, Any]
) -> tuple[Any, dict[str, Any]]: ...
def _signature_from_state(sketch: str, seed: int, slots: bytes, shingling: Optional[str] = None) -> Signature: ...
