"""MinHasher, Signature and MinHash: the command line's signatures, bit for bit."""

from __future__ import annotations

import itertools
import json
import pickle
import threading

import numpy as np
import pytest

import ndup
from conftest import corpus, jsonl, words, write_jsonl

# Python keyword arguments and the command line's flags that mean the same.
CONFIGS = [
    ({}, []),
    ({"sketch": "oph", "num_perm": 64, "seed": 7}, ["--sketch", "oph", "--num-perm", "64", "--seed", "7"]),
    (
        {"sketch": "classic", "num_perm": 32, "shingle": "word", "w": 3},
        ["--sketch", "classic", "--num-perm", "32", "--shingle", "word", "-w", "3"],
    ),
    ({"k": 5, "lowercase": False, "nfkc": False}, ["-k", "5", "--no-lowercase", "--no-nfkc"]),
    ({"num_perm": 200, "seed": 2**64 - 1}, ["--num-perm", "200", "--seed", str(2**64 - 1)]),
]


@pytest.mark.parametrize("kwargs,flags", CONFIGS)
def test_estimates_are_the_command_lines_bit_for_bit(cli, tmp_path, kwargs, flags):
    texts = dict(corpus())
    hasher = ndup.MinHasher(**kwargs)
    pairs = [
        ("g0-base", "g0-edit0"),
        ("g2-base", "g2-edit2"),
        ("copy-a", "copy-b"),
        ("unicode-a", "unicode-b"),
        ("marked", "marked-copy"),
        ("long", "long-edit"),
        ("g1-base", "other0"),
    ]
    for a, b in pairs:
        (tmp_path / a).write_text(texts[a], encoding="utf-8")
        (tmp_path / b).write_text(texts[b], encoding="utf-8")
        out = json.loads(cli("compare", tmp_path / a, tmp_path / b, "--format", "json", *flags).stdout)
        sa, sb = hasher.sign(texts[a]), hasher.sign(texts[b])
        assert sa.jaccard(sb) == out["estimate"], (a, b, kwargs)
        assert out["params"]["num_perm"] == sa.num_perm == hasher.num_perm


def test_every_pair_a_scan_reports_has_the_signatures_estimate(cli, tmp_path):
    texts = corpus()
    path = write_jsonl(tmp_path / "c.jsonl", [{"id": i, "text": t} for i, t in texts])
    out = jsonl(cli("scan", path, "--format", "jsonl", "--threshold", "0.3", "--verify", "signature").stdout)
    pairs = [r for r in out if r["type"] == "pair"]
    assert len(pairs) > 10
    sigs = dict(zip((i for i, _ in texts), ndup.MinHasher().sign_batch([t for _, t in texts])))
    for p in pairs:
        assert sigs[p["a"]].jaccard(sigs[p["b"]]) == p["estimate"], p


def test_a_text_without_shingles_has_no_signature():
    h = ndup.MinHasher()
    assert h.sign("") is None
    assert h.sign("  \n\t ") is None
    # Shorter than k = 9 characters: the whole text is one shingle.
    assert h.sign("short").jaccard(h.sign("SHORT ")) == 1.0
    assert h.sign_batch(["", "a longer text here"])[0] is None
    assert h.sign_hashes([]) is None
    assert h.sign_tokens([]) is None


def test_sign_batch_is_sign_in_order_and_from_threads():
    h = ndup.MinHasher(num_perm=64)
    texts = [t for _, t in corpus()] * 3
    one_by_one = [h.sign(t) for t in texts]
    assert h.sign_batch(texts) == one_by_one
    assert h.sign_batch(iter(texts)) == one_by_one
    assert h.sign_batch(tuple(texts)) == one_by_one
    assert h.sign_batch(texts, threads=1) == one_by_one
    assert h.sign_batch(texts, threads=3) == one_by_one
    with pytest.raises(ValueError, match="threads"):
        h.sign_batch(texts, threads=0)
    # Several Python threads at once (the GIL is released while each batch is signed): the same
    # signatures, whatever the interleaving.
    results: list = [None] * 4
    errors: list = []

    def work(slot: int) -> None:
        try:
            results[slot] = h.sign_batch(texts, threads=1 if slot % 2 else None)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(r == one_by_one for r in results)


def test_signatures_of_other_parameters_are_refused():
    text = words(1, 100)
    a = ndup.MinHasher(num_perm=64, seed=1).sign(text)
    cases = [
        (ndup.MinHasher(num_perm=128, seed=1), "num-perm 64 vs 128"),
        (ndup.MinHasher(num_perm=64, seed=2), "seed 1 vs 2"),
        (ndup.MinHasher(num_perm=64, seed=1, sketch="oph"), "sketch fss vs oph"),
    ]
    for hasher, want in cases:
        with pytest.raises(ValueError, match=want):
            a.jaccard(hasher.sign(text))
    assert a.jaccard(a) == 1.0
    with pytest.raises(TypeError):
        a.jaccard("not a signature")


def test_signatures_of_texts_shingled_otherwise_are_refused():
    text = words(2, 100)
    nine = ndup.MinHasher(k=9).sign(text)
    assert nine.shingling == "char 9-shingles, nfkc+casefold+whitespace+trim"
    cases = [
        (ndup.MinHasher(k=5), "shingling `char 9-shingles, .*` vs `char 5-shingles, "),
        (ndup.MinHasher(shingle="word", w=3), "vs `word 3-shingles, "),
        (ndup.MinHasher(lowercase=False), "vs `char 9-shingles, nfkc\\+whitespace\\+trim`"),
    ]
    for hasher, want in cases:
        with pytest.raises(ValueError, match=want):
            nine.jaccard(hasher.sign(text))
    # A signature of an ndup that lowercased rather than case-folded says so, and is refused.
    lowercased = ndup.Signature.from_numpy(
        nine.to_numpy(), shingling="char 9-shingles, nfkc+lowercase+whitespace+trim"
    )
    with pytest.raises(ValueError, match="nfkc\\+lowercase\\+whitespace\\+trim` vs `char 9-shingles, nfkc\\+casefold"):
        lowercased.jaccard(nine)
    with pytest.raises(ValueError, match="shingling"):
        nine.jaccard(lowercased)
    # Tokens and slots from elsewhere say nothing of their making: compared on parameters alone.
    tokens = ndup.MinHash()
    tokens.update_batch(text.split())
    assert tokens.signature().shingling is None
    assert 0.0 <= nine.jaccard(tokens) <= 1.0
    bare = ndup.Signature.from_numpy(nine.to_numpy())
    assert bare.shingling is None and bare == nine and bare.jaccard(nine) == 1.0
    told = ndup.Signature.from_numpy(nine.to_numpy(), shingling=nine.shingling)
    assert told.shingling == nine.shingling
    assert pickle.loads(pickle.dumps(nine)).shingling == nine.shingling
    assert "shingling='char 9-shingles" in repr(nine)


def test_case_folding_byte_order_marks_and_short_word_texts_as_the_command_line(cli, tmp_path):
    # Upper-case copies (a Greek final sigma, a German sharp s), a copy saved with a byte-order
    # mark, and a short text that differs in punctuation: the same text, here and in `compare`.
    greek = "Ο Σίσυφος κυλούσε την πέτρα του στην κορυφή του λόφου, ξανά και ξανά."
    cases = [
        ({}, [], greek, greek.upper()),
        ({}, [], "Die große Straße", "Die große Straße".upper()),
        ({}, [], "OK\n", "\ufeffOK\n"),
        ({"shingle": "word"}, ["--shingle", "word"], "Hello, world!", "hello world"),
        ({"shingle": "stopword"}, ["--shingle", "stopword"], "Hello, world!", "hello world"),
    ]
    for kwargs, flags, a, b in cases:
        hasher = ndup.MinHasher(**kwargs)
        assert hasher.sign(a).jaccard(hasher.sign(b)) == 1.0, (kwargs, a)
        (tmp_path / "a.txt").write_text(a, encoding="utf-8")
        (tmp_path / "b.txt").write_text(b, encoding="utf-8")
        out = json.loads(
            cli("compare", tmp_path / "a.txt", tmp_path / "b.txt", "--format", "json", *flags).stdout
        )
        assert out["jaccard"] == out["estimate"] == 1.0, (kwargs, a)
    # Lowercasing, the rule before folding, kept them apart; with the step off they still are.
    off = ndup.MinHasher(lowercase=False)
    assert off.sign(greek).jaccard(off.sign(greek.upper())) < 0.5


def test_signatures_pickle_and_compare():
    h = ndup.MinHasher(num_perm=32, seed=5, sketch="classic", shingle="word", w=2)
    s = h.sign(words(3, 50))
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        again = pickle.loads(pickle.dumps(s, protocol=protocol))
        assert again == s and hash(again) == hash(s)
        assert (again.num_perm, again.seed, again.sketch) == (32, 5, "classic")
        assert again.jaccard(s) == 1.0
    h2 = pickle.loads(pickle.dumps(h))
    assert repr(h2) == repr(h)
    assert h2.sign(words(3, 50)) == s
    assert s != h.sign(words(4, 50))
    assert len({s, again}) == 1


def test_numpy_view_and_back():
    h = ndup.MinHasher(num_perm=16, seed=9)
    s = h.sign(words(2, 40))
    view = s.to_numpy()
    assert view.dtype == np.uint32 and view.shape == (16,)
    assert not view.flags.writeable
    with pytest.raises(ValueError):
        view[0] = 1
    # The view shares the signature's memory: no copy.
    assert np.shares_memory(view, s.to_numpy())
    assert view.base is not None
    assert np.asarray(s).tolist() == view.tolist()
    assert np.asarray(s, dtype=np.int64).dtype == np.int64
    back = ndup.Signature.from_numpy(view, seed=9)
    assert back == s
    digest = s.digest()
    digest[0] ^= 1  # a copy: the signature does not change
    assert ndup.Signature.from_numpy(digest, seed=9) != s
    assert s.to_numpy()[0] == view[0]
    # The view keeps the signature alive.
    del s
    assert view.tolist() == back.to_numpy().tolist()
    with pytest.raises(TypeError, match="uint32"):
        ndup.Signature.from_numpy(view.astype(np.int64), seed=9)
    with pytest.raises(ValueError, match="slots"):
        ndup.Signature.from_numpy(np.zeros(0, dtype=np.uint32))
    with pytest.raises(ValueError, match="sketch"):
        ndup.Signature.from_numpy(view, sketch="nope")


def test_minhash_is_datasketchs_minhash():
    m1, m2 = ndup.MinHash(num_perm=64), ndup.MinHash(num_perm=64)
    a = words(1, 200).split()
    b = a[:180] + words(2, 20).split()
    for w in a:
        m1.update(w.encode("utf8"))
    m2.update_batch(b)  # str and bytes tokens hash alike
    assert abs(m1.jaccard(m2) - len(set(a) & set(b)) / len(set(a) | set(b))) < 0.2
    # Order does not matter, and the signature is MinHasher.sign_tokens's.
    m3 = ndup.MinHash(num_perm=64)
    m3.update_batch(reversed(a))
    assert m3.signature() == m1.signature() == ndup.MinHasher(num_perm=64).sign_tokens(a)
    assert m1.digest().tolist() == m1.signature().to_numpy().tolist()
    # Union.
    u = m1.copy()
    u.merge(m2)
    assert u.signature() == ndup.MinHasher(num_perm=64).sign_tokens(a + b)
    u.merge(u)
    assert u.signature() == ndup.MinHasher(num_perm=64).sign_tokens(a + b)
    assert pickle.loads(pickle.dumps(m1)).signature() == m1.signature()
    with pytest.raises(ValueError, match="num-perm"):
        ndup.MinHash().jaccard(m1)
    with pytest.raises(ValueError, match="num-perm"):
        m1.merge(ndup.MinHash(num_perm=128))
    with pytest.raises(TypeError):
        m1.update(3)
    assert len(m1) == 64 and not m1.is_empty()
    m1.clear()
    assert m1.is_empty()


def test_bad_arguments_are_exceptions_not_crashes():
    with pytest.raises(ValueError, match="num_perm"):
        ndup.MinHasher(num_perm=0)
    with pytest.raises(ValueError, match="num_perm"):
        ndup.MinHasher(num_perm=-3)
    with pytest.raises(ValueError, match="num_perm"):
        ndup.MinHasher(num_perm=10**6)
    with pytest.raises(ValueError, match="k must be at least 1"):
        ndup.MinHasher(k=0)
    with pytest.raises(ValueError, match="w must be at least 1"):
        ndup.MinHasher(shingle="word", w=0)
    with pytest.raises(ValueError, match="shingle"):
        ndup.MinHasher(shingle="sentence")
    with pytest.raises(ValueError, match="sketch"):
        ndup.MinHasher(sketch="simhash")
    with pytest.raises(ValueError, match="seed"):
        ndup.MinHasher(seed=-1)
    with pytest.raises(ValueError, match="stopwords"):
        ndup.MinHasher(shingle="stopword", stopwords=[])
    with pytest.raises(TypeError):
        ndup.MinHasher().sign(b"bytes")
    with pytest.raises(TypeError, match="item 1"):
        ndup.MinHasher().sign_batch(["fine text here", None])
    with pytest.raises(TypeError):
        ndup.MinHasher().sign_batch(5)
    # One item where an iterable of items is taken would be split into characters: refused.
    h = ndup.MinHasher()
    with pytest.raises(TypeError, match=r"sign_batch takes an iterable of str, not a single str \(write \['one text'\]\)"):
        h.sign_batch("one text")
    with pytest.raises(TypeError, match="sign_tokens takes an iterable"):
        h.sign_tokens("abc")
    with pytest.raises(TypeError, match="sign_tokens takes an iterable"):
        h.sign_tokens(b"abc")
    with pytest.raises(TypeError, match=r"stopwords takes an iterable of str, not a single str \(write \['the'\]\)"):
        ndup.MinHasher(shingle="stopword", stopwords="the")
    # Ranges named as they are: a negative count is not "at least 0", threads at most 1024.
    with pytest.raises(ValueError, match="num_perm must not be negative, not -1"):
        ndup.MinHasher(num_perm=-1)
    with pytest.raises(ValueError, match="threads must be at most 1024, not 100000"):
        h.sign_batch(["a text"], threads=100000)
    for name in ("max_memory", "max_filesize"):
        with pytest.raises(ValueError, match=f"{name} must be a number of bytes"):
            ndup.scan(["a text", "b text"], **{name: -1})
        with pytest.raises(TypeError, match=f"{name} takes an int"):
            ndup.scan(["a text", "b text"], **{name: "1G"})


def test_sign_hashes_takes_any_iterable_of_ints():
    h = ndup.MinHasher()
    hashes = [(i * 0x9E3779B97F4A7C15) % (1 << 64) for i in range(1, 200)]
    want = h.sign_hashes(hashes)
    assert want is not None
    for given in (iter(hashes), (x for x in hashes), tuple(hashes), np.array(hashes, dtype=np.uint64)):
        assert h.sign_hashes(given) == want
    assert h.sign_hashes(iter([])) is None
    with pytest.raises(TypeError):
        h.sign_hashes(iter(["not", "ints"]))
    with pytest.raises(TypeError, match="sign_hashes takes an iterable of int"):
        h.sign_hashes("123")


def test_an_empty_minhash_is_datasketchs():
    # datasketch's empty MinHash: every slot is the maximum, the minimum over an empty set.
    a, b = ndup.MinHash(num_perm=32, seed=3, sketch="oph"), ndup.MinHash(num_perm=32, seed=3, sketch="oph")
    assert a.is_empty()
    assert a.jaccard(b) == 1.0
    digest = a.digest()
    assert digest.dtype == np.uint32 and digest.tolist() == [0xFFFFFFFF] * 32
    sig = a.signature()
    assert (sig.num_perm, sig.seed, sig.sketch, sig.shingling) == (32, 3, "oph", None)
    assert sig.to_numpy().tolist() == [0xFFFFFFFF] * 32
    full = ndup.MinHash(num_perm=32, seed=3, sketch="oph")
    full.update_batch(words(1, 50).split())
    assert a.jaccard(full) == 0.0
    # Every empty MinHash lands in the same buckets, as in datasketch.
    lsh = ndup.LSH(num_perm=32, threshold=0.5)
    lsh.insert("e1", a)
    lsh.insert_batch(["e2"], [b])
    lsh.insert("full", full)
    assert lsh.query(ndup.MinHash(num_perm=32, seed=3, sketch="oph")) == ["e1", "e2"]
    assert lsh.query(full) == ["full"]
    # Other parameters are still refused.
    with pytest.raises(ValueError, match="seed 3 vs 42"):
        lsh.insert("other", ndup.MinHash(num_perm=32))
    # A text without a shingle still has no signature: the scan never pairs it.
    assert ndup.MinHasher().sign("") is None


def test_minhash_equality_is_datasketchs():
    m = ndup.MinHash(num_perm=16)
    m.update_batch(["a", "b", "c"])
    assert m == m.copy() and not (m != m.copy())
    assert m == m
    other = m.copy()
    other.update(b"d")
    assert m != other
    # The same tokens in another order, repeated: the same slots.
    same = ndup.MinHash(num_perm=16)
    same.update_batch(["c", b"b", "a", "a"])
    assert m == same
    assert ndup.MinHash(num_perm=16) == ndup.MinHash(num_perm=16)
    assert ndup.MinHash(num_perm=16, seed=1) != ndup.MinHash(num_perm=16, seed=2)
    assert ndup.MinHash(num_perm=16) != ndup.MinHash(num_perm=16, sketch="classic")
    assert m != m.signature() and m != "m"
    # Mutable, so unhashable, as datasketch's.
    assert ndup.MinHash.__hash__ is None
    with pytest.raises(TypeError, match="unhashable"):
        hash(m)


@pytest.mark.parametrize("sketch", ["fss", "oph", "classic"])
def test_a_minhash_keeps_each_token_once(sketch):
    m = ndup.MinHash(num_perm=64, sketch=sketch)
    m.update_batch(itertools.repeat(b"same-token", 2_000_000))
    for _ in range(10_000):
        m.update("same-token")
    # What it keeps is what it pickles: one hash, not two million.
    assert repr(m).endswith("with 1 distinct tokens")
    assert len(pickle.dumps(m)) < 200
    fresh = ndup.MinHash(num_perm=64, sketch=sketch)
    fresh.update(b"same-token")
    assert m.signature() == fresh.signature() and m == fresh
    # The signature depends on the set of tokens alone, whatever the repeats and their order.
    tokens = words(5, 3000).split()
    many = ndup.MinHash(num_perm=64, sketch=sketch)
    for t in tokens * 3:
        many.update(t)
    distinct = sorted(set(tokens))
    once = ndup.MinHash(num_perm=64, sketch=sketch)
    once.update_batch(reversed(distinct))
    assert many.digest().tolist() == once.digest().tolist()
    assert many.signature() == ndup.MinHasher(num_perm=64, sketch=sketch).sign_tokens(distinct)
    assert repr(many).endswith(f"with {len(distinct)} distinct tokens")
    # The union with itself is itself; with another, the union of the sets.
    many.merge(many)
    assert repr(many).endswith(f"with {len(distinct)} distinct tokens") and many == once
    many.merge(m)
    assert repr(many).endswith(f"with {len(distinct) + 1} distinct tokens")
    assert many.signature() == ndup.MinHasher(num_perm=64, sketch=sketch).sign_tokens(distinct + ["same-token"])
    # The signature is kept until a change, and made again after one.
    small = ndup.MinHash(num_perm=64, sketch=sketch)
    small.update("a")
    assert small.signature() == ndup.MinHasher(num_perm=64, sketch=sketch).sign_tokens(["a"])
    small.update("b")
    assert small.signature() == ndup.MinHasher(num_perm=64, sketch=sketch).sign_tokens(["a", "b"])
    small.merge(many)
    assert small.signature() == ndup.MinHasher(num_perm=64, sketch=sketch).sign_tokens(distinct + ["same-token", "a", "b"])
    many.clear()
    assert many.is_empty() and many.digest().tolist() == [0xFFFFFFFF] * 64
    restored = pickle.loads(pickle.dumps(once))
    assert restored == once and repr(restored) == repr(once)


def test_update_batch_lets_its_iterator_use_the_minhash():
    m = ndup.MinHash(num_perm=16)
    m.update(b"a")
    seen = []

    def tokens():
        yield b"x"
        seen.append(m.jaccard(m))
        seen.append(repr(m))
        yield b"y"

    m.update_batch(tokens())
    assert seen[0] == 1.0
    assert seen[1].startswith("MinHash(")
    assert m.signature() == ndup.MinHasher(num_perm=16).sign_tokens(["a", "x", "y"])
    # Tokens before an invalid one stay added.
    with pytest.raises(TypeError):
        m.update_batch([b"z", 3])
    assert m.signature() == ndup.MinHasher(num_perm=16).sign_tokens(["a", "x", "y", "z"])


def test_a_text_shorter_than_k_has_a_signature():
    h = ndup.MinHasher(k=9)
    assert isinstance(h.sign("abc"), ndup.Signature)
    doc = " ".join(ndup.MinHasher.sign.__doc__.split())
    assert "shorter than one shingle (`k` characters, `w` words) is one shingle" in doc
    words = ndup.MinHasher(shingle="word", w=5)
    assert words.sign("Hello, world!") == words.sign("hello world")


def test_array_protocol_copies_only_when_allowed():
    s = ndup.MinHasher(num_perm=16).sign(words(3, 40))
    for kwargs in [{}, {"copy": False}, {"dtype": np.uint32, "copy": False}, {"dtype": "uint32"}]:
        a = np.asarray(s, **kwargs)
        assert np.shares_memory(a, s.to_numpy()) and not a.flags.writeable, kwargs
    with pytest.raises(ValueError, match="copy"):
        np.asarray(s, dtype=float, copy=False)
    with pytest.raises(ValueError, match="copy"):
        s.__array__(dtype=np.int64, copy=False)
    as_float = np.asarray(s, dtype=float)
    assert as_float.dtype == np.float64 and as_float.tolist() == s.to_numpy().tolist()
    copied = np.array(s, copy=True)
    assert copied.flags.writeable and not np.shares_memory(copied, s.to_numpy())
    copied[0] ^= 1
    assert s.to_numpy()[0] != copied[0]
