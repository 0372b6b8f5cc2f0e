#!/usr/bin/env python3
"""Writes the generated corpus of benches/outputs.sh: the same bytes on every run and machine.

    make_corpus.py OUT    # writes OUT/gen/ (a file tree), OUT/gen.jsonl(.gz), OUT/planted.tsv

About 3,000 prose-like documents of varied length, drawn from a built-in word list with a fixed
seed, and planted among them:
  - near-duplicates: copies with 1-8% of their words substituted, deleted or inserted (some
    originals have several copies, making clusters),
  - exact copies (same bytes) and copies that differ only in case and white space,
  - documents quoting a chunk of another (whole or most of it), for --containment,
  - short documents (a few words, some shorter than one shingle), empty and blank files,
  - one binary file (a NUL byte), one Latin-1 file (invalid UTF-8), CRLF line ends, a BOM,
  - non-ASCII texts (accents, Greek, Cyrillic, CJK, Arabic, emoji, NFKC-sensitive forms such as
    ligatures, full-width letters and combining accents), a few with non-ASCII file names.
gen.jsonl holds one {"id": path, "text": ...} record per text file of the tree (in a shuffled
order), plus records with a nested id ({"meta": {"id": ...}}) for --id-field meta.id, one with a
numeric id, one without a text field and one malformed line. gen.jsonl.gz is the same bytes,
gzip-compressed with a zero timestamp. planted.tsv lists the planted pairs (kind, a, b: paths
relative to OUT) for the `ndup compare` commands.

Only the standard library; randomness comes only from Random.random() (whose sequence for a
given seed is stable across Python 3 versions), never from hash order.
"""

import bisect
import gzip
import json
import os
import random
import sys
import unicodedata

SEED = 20250611
N_ORIGINALS = 2570

COMMON = """the of and to a in is it that was for on are as with his they at be this from
have or by one had not but what all were when we there can an your which their said if do will
each about how up out them then she many some so these would other into has more her two like
him see time could no make than first been its who now people my made over did down only way
find use may water long little very after words called just where most know get through back
much before go good new write our used me man too any day same right look think also around
another came come work three word must because does part even place well such here take why
things help put years different away again off went old number great tell men say small every
found still between name should home big give air line set own under read last never us left
end along while might next sound below saw something thought both few those always looked show
large often together asked house world going want school important until form food keep children
feet land side without boy once animals life enough took sometimes four head above kind began
almost live page got earth need far hand high year mother light parts country father let night
following picture being study second eyes soon times story boys since white days ever paper hard
near sentence better best across during today others however sure means knew try told young miles
sun ways thing whole hear example heard several change answer room sea against top turned learn
point city play toward five using himself usually""".split()

SYLLABLES = """ba be bi bo bu ca ce ci co cu da de di do du fa fe fi fo fu ga ge gi go gu
ha he hi ho hu ja je jo ka ke ki ko ku la le li lo lu ma me mi mo mu na ne ni no nu pa pe pi po
pu ra re ri ro ru sa se si so su ta te ti to tu va ve vi vo wa we wi xa ya yo za ze zi zo an
en in on un ar er ir or ur al el il ol ul ost ist ent ant ine ure ion ous ive ment ness ing""".split()

LANGS = {
    "fr": "le la les une des été très déjà où français élève forêt château garçon noël "
          "hôpital naïf cœur œuvre ça reçu crème brûlée fenêtre île théâtre général "
          "société première étrangère grâce".split(),
    "de": "der die das und straße größe über schön müde grün fußball mädchen "
          "käse bäcker flüsse weiß heißen tür öffnen zurück ärger früh spät gemütlich "
          "übung".split(),
    "el": "καλημέρα ελλάδα θάλασσα ήλιος νερό βιβλίο σπίτι φίλος δρόμος ουρανός "
          "καρδιά χρόνος λόγος πόλη γλώσσα μουσική ιστορία αγάπη ψωμί ώρα".split(),
    "ru": "привет мир москва книга вода дом друг город время жизнь слово язык "
          "история музыка любовь хлеб солнце небо дорога школа".split(),
    "ja": "日本 東京 言語 文章 検索 重複 文書 類似 計算 方法 結果 時間 世界 "
          "学校 先生 友達 電車 図書館 天気 季節".split(),
    "zh": "中文 文本 相似 检测 重复 文件 数据 方法 结果 时间 世界 学校 老师 "
          "朋友 城市 天气 音乐 历史 语言 书籍".split(),
    "ar": "مرحبا العالم كتاب ماء بيت صديق مدينة وقت حياة كلمة لغة تاريخ موسيقى "
          "حب خبز شمس سماء طريق مدرسة".split(),
    "emoji": "🙂 🚀 naïve café ✓ ★ → ∑ ∞ ≈ 🎉 résumé 🐍 💡 ☕ 🌍 ½ ¼ © ™".split(),
}
# Languages written without spaces between words.
NO_SPACE = {"ja", "zh"}

rng = random.Random(SEED)


def rand_int(lo, hi):
    """A whole number in lo..=hi."""
    return lo + int(rng.random() * (hi - lo + 1))


def pick(seq):
    return seq[int(rng.random() * len(seq))]


def zipf_table(n, s=1.05):
    acc, out = 0.0, []
    for i in range(n):
        acc += 1.0 / (i + 1) ** s
        out.append(acc)
    return out


def make_vocabulary():
    words = {}
    while len(words) < 4000:
        w = "".join(pick(SYLLABLES) for _ in range(rand_int(2, 4)))
        words.setdefault(w, None)
    return list(words)


VOCAB = make_vocabulary()
COMMON_Z = zipf_table(len(COMMON))
VOCAB_Z = zipf_table(len(VOCAB), 0.9)


def zipf_pick(words, table):
    return words[bisect.bisect_left(table, rng.random() * table[-1])]


def word():
    if rng.random() < 0.45:
        return zipf_pick(COMMON, COMMON_Z)
    return zipf_pick(VOCAB, VOCAB_Z)


def prose(n_words):
    """About n_words words of sentences (6 to 20 words) in paragraphs (2 to 7 sentences)."""
    paras, sentences, done = [], [], 0
    para_len = rand_int(2, 7)
    while done < n_words:
        k = min(rand_int(6, 20), n_words - done)
        s = [word() for _ in range(k)]
        s[0] = s[0].capitalize()
        end = "." if rng.random() < 0.85 else pick(["?", "!", ";", ":"])
        if k > 8 and rng.random() < 0.3:
            s[rand_int(2, k - 3)] += ","
        sentences.append(" ".join(s) + end)
        done += k
        if len(sentences) >= para_len:
            paras.append(" ".join(sentences))
            sentences, para_len = [], rand_int(2, 7)
    if sentences:
        paras.append(" ".join(sentences))
    return "\n\n".join(paras) + "\n"


def doc_length():
    r = rng.random()
    if r < 0.20:
        return rand_int(15, 80)
    if r < 0.88:
        return rand_int(80, 600)
    return rand_int(600, 2500)


def edit(text, rate):
    """text with about rate of its words substituted, deleted or given a word inserted after."""
    paras = text.split("\n\n")
    out = []
    for p in paras:
        ws = p.split(" ")
        res = []
        for w in ws:
            if rng.random() < rate:
                op = rng.random()
                if op < 0.5:
                    res.append(word())
                elif op < 0.75:
                    continue
                else:
                    res.extend([w, word()])
            else:
                res.append(w)
        out.append(" ".join(res) if res else word())
    return "\n\n".join(p.rstrip("\n") for p in out) + "\n"


def reflow(text):
    """Same words after case folding and white-space collapsing: different bytes."""
    ws = text.split()
    lines, i = [], 0
    while i < len(ws):
        n = rand_int(3, 12)
        lines.append("  ".join(ws[i:i + n]))
        i += n
    return "\n".join(lines).upper() + "\n\n\n"


def foreign(lang, n_words):
    vocab = LANGS[lang]
    sep = "" if lang in NO_SPACE else " "
    stop = "。" if lang in NO_SPACE else "."
    sentences = []
    done = 0
    while done < n_words:
        k = rand_int(4, 12)
        sentences.append(sep.join(pick(vocab) for _ in range(k)) + stop)
        done += k
    return "\n".join(sentences) + "\n"


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    tree = os.path.join(out, "gen")
    files = {}  # relative path -> bytes, in creation order
    planted = []  # (kind, a, b): the planted pairs, listed in planted.tsv

    def add(rel, data):
        assert rel not in files, rel
        files[rel] = data.encode("utf-8") if isinstance(data, str) else data

    def place(i, ext=".txt"):
        return "d%02d/doc-%05d%s" % (i % 30, i, ext)

    originals = []
    for i in range(N_ORIGINALS):
        rel = place(i, ".md" if rng.random() < 0.15 else ".txt")
        text = prose(doc_length())
        add(rel, text)
        originals.append((rel, text))

    serial = [N_ORIGINALS]

    def next_place(ext=".txt"):
        serial[0] += 1
        return place(serial[0], ext)

    # Near-duplicates: single copies at various edit rates, and clusters of 2-4 copies.
    for _ in range(180):
        rel, text = pick(originals)
        copy = next_place()
        add(copy, edit(text, pick([0.01, 0.02, 0.03, 0.05, 0.08])))
        planted.append(("near", rel, copy))
    for _ in range(30):
        rel, text = pick(originals)
        for _ in range(rand_int(2, 4)):
            add(next_place(), edit(text, pick([0.01, 0.02, 0.04])))

    # Exact copies, and copies equal after normalization.
    for _ in range(40):
        rel, text = pick(originals)
        copy = "copies/" + os.path.basename(next_place())
        add(copy, files[rel])
        planted.append(("exact", rel, copy))
    for _ in range(10):
        rel, text = pick(originals)
        add("copies/reflowed-%05d.txt" % serial[0], reflow(text))
        serial[0] += 1

    # Containment: a new document quoting all or most of a source document.
    for n in range(25):
        while True:
            rel, text = pick(originals)
            if 60 <= len(text.split()) <= 300:
                break
        ws = text.split()
        if n < 15:
            chunk = ws
        else:
            keep = int(len(ws) * pick([0.6, 0.75, 0.9]))
            start = rand_int(0, len(ws) - keep)
            chunk = ws[start:start + keep]
        host = prose(rand_int(150, 600)).split("\n\n")
        at = rand_int(0, len(host))
        quote = 'As %s wrote in %s: "%s"' % (word(), rel, " ".join(chunk))
        host.insert(at, quote)
        add("quotes/quote-%02d.txt" % n, "\n\n".join(h.rstrip("\n") for h in host) + "\n")
        planted.append(("contained" if n < 15 else "partly-contained", rel,
                        "quotes/quote-%02d.txt" % n))

    # Short, empty and blank documents.
    shorts = ["Thanks!", "ok", "See above.", "TODO", "Hello, world.", "yes yes yes",
              "Lorem ipsum dolor sit amet.", "N/A", "x", "Fixed in the next release."]
    for n in range(40):
        if n < 20:
            text = pick(shorts)
        else:
            text = " ".join(word() for _ in range(rand_int(1, 8)))
        add("short/short-%02d.txt" % n, text + ("\n" if rng.random() < 0.5 else ""))
    for n in range(6):
        add("short/empty-%d.txt" % n, b"")
    for n, blank in enumerate([" ", "\n\n\n", "\t \r\n  \n"]):
        add("short/blank-%d.txt" % n, blank)

    # Encodings and odd bytes.
    add("odd/binary.bin", bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13])
        + bytes(rand_int(0, 255) for _ in range(2000)))
    latin = prose(120)
    add("odd/latin1.txt", ("Caf\u00e9 cr\u00e8me, na\u00efve fa\u00e7ade. " + latin)
        .encode("latin-1"))
    crlf_src = pick(originals)[1]
    add("odd/crlf.txt", crlf_src.replace("\n", "\r\n"))
    add("odd/bom.txt", b"\xef\xbb\xbf" + pick(originals)[1].encode("utf-8"))

    # Non-ASCII texts: languages, near-duplicates among them, NFKC-equal variants.
    uni = []
    for n, lang in enumerate(sorted(LANGS)):
        for m in range(2):
            text = foreign(lang, rand_int(40, 200))
            rel = "unicode/%s-%d.txt" % (lang, m)
            add(rel, text)
            uni.append((rel, text))
    for n in range(4):
        rel, text = pick(uni)
        chars = list(text)
        for _ in range(max(1, len(chars) // 60)):
            j = rand_int(0, len(chars) - 1)
            if chars[j] not in " \n":
                chars[j] = pick(LANGS["emoji"])[0]
        add("unicode/edited-%d.txt" % n, "".join(chars))
    fr = files["unicode/fr-0.txt"].decode("utf-8")
    add("unicode/fr-0-decomposed.txt", unicodedata.normalize("NFD", fr))
    planted.append(("nfd", "unicode/fr-0.txt", "unicode/fr-0-decomposed.txt"))
    rel, src = pick(originals)
    add("unicode/fullwidth.txt", "".join(
        chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in src))
    planted.append(("fullwidth", rel, "unicode/fullwidth.txt"))
    add("unicode/ligatures.txt", src.replace("fi", "\ufb01").replace("fl", "\ufb02"))
    add("unicode/caf\u00e9 r\u00e9sum\u00e9.txt", foreign("fr", 80))
    add("unicode/\u65e5\u672c\u8a9e.txt", foreign("ja", 80))
    add("unicode/name with spaces.txt", files["unicode/de-1.txt"])

    for rel, data in files.items():
        path = os.path.join(tree, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)

    with open(os.path.join(out, "planted.tsv"), "w", encoding="utf-8") as f:
        for kind, a, b in planted:
            f.write("%s\tgen/%s\tgen/%s\n" % (kind, a, b))

    # JSON lines: every text file, shuffled, then the odd records.
    records = []
    for rel, data in files.items():
        if b"\0" in data:
            continue
        records.append({"id": "gen/" + rel, "text": data.decode("utf-8", errors="replace")})
    order = list(range(len(records)))
    for i in range(len(order) - 1, 0, -1):
        j = int(rng.random() * (i + 1))
        order[i], order[j] = order[j], order[i]
    lines = []
    for n, i in enumerate(order):
        # Most records raw UTF-8, some with \u escapes.
        lines.append(json.dumps(records[i], ensure_ascii=(n % 7 == 0)))
    for n in range(2):
        rel, text = pick(originals)
        lines.append(json.dumps({"meta": {"id": "nested-%d" % n, "source": "gen/" + rel},
                                 "text": edit(text, 0.02)}, ensure_ascii=False))
    lines.append(json.dumps({"id": 12345, "text": pick(originals)[1]}))
    lines.append(json.dumps({"id": "no-text", "body": "this record has no text field"}))
    lines.append('{"id": "malformed", "text": "unterminated')
    lines.append(json.dumps({"id": "last", "text": pick(originals)[1]}))
    data = ("\n".join(lines) + "\n").encode("utf-8")
    with open(os.path.join(out, "gen.jsonl"), "wb") as f:
        f.write(data)
    with open(os.path.join(out, "gen.jsonl.gz"), "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as f:
            f.write(data)
    print("make_corpus.py: %d files (%d bytes), %d JSON lines" % (
        len(files), sum(len(d) for d in files.values()), len(lines)), file=sys.stderr)


if __name__ == "__main__":
    main()
