"""Locally generated data for the corpus: each generator writes what one kind of program reads,
in the layout the program expects, into the program's working directory. Deterministic for a
given seed (numpy and Python's random only, so torch and ember runs see the same bytes)."""
from __future__ import annotations

import random
from pathlib import Path

import numpy as np

_SUBJECTS = ["the cat", "a dog", "the little girl", "tom", "the old man", "a bird", "the boy",
             "lily", "the sun", "a fish"]
_VERBS = ["saw", "liked", "found", "ate", "wanted", "made", "took", "helped", "played with",
          "looked at"]
_OBJECTS = ["a red ball", "the big tree", "some cake", "a small box", "the water", "her friend",
            "a toy car", "the garden", "a blue hat", "the moon"]
_ENDINGS = ["and smiled.", "in the park.", "every day.", "with joy.", "at night.", "again."]


def english(n_sentences: int, seed: int) -> str:
    """Simple story-like text: a small grammar, so language models can learn it quickly."""
    rng = random.Random(seed)
    out = []
    for _ in range(n_sentences):
        s = f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)}"
        if rng.random() < 0.5:
            s += " " + rng.choice(_ENDINGS)
        else:
            s += "."
        out.append(s[0].upper() + s[1:])
    return " ".join(out)


def lm_train_txt(cwd: Path, seed: int) -> None:
    """data/train.txt, one sentence per line (yunjey's language model reads words per line)."""
    (cwd / "data").mkdir(exist_ok=True)
    text = english(1500, seed).replace(". ", ".\n")
    (cwd / "data" / "train.txt").write_text(text + "\n")


def wikitext2(cwd: Path, seed: int) -> None:
    """data/wikitext-2/{train,valid,test}.txt in WikiText's layout (a blank line, a ` = Title = `
    heading, paragraphs of space-separated tokens ending in ` . `), for word_language_model."""
    root = cwd / "data" / "wikitext-2"
    root.mkdir(parents=True, exist_ok=True)
    for i, (name, n) in enumerate((("train", 1200), ("valid", 150), ("test", 150))):
        lines = []
        for j, sentence in enumerate(english(n, seed * 3 + i).split(". ")):
            if j % 40 == 0:
                lines += ["", f" = Section {j // 40} = ", ""]
            lines.append(" " + sentence.rstrip(".").lower() + " . ")
        (root / f"{name}.txt").write_text("\n".join(lines) + "\n")


def results_dir(cwd: Path, seed: int) -> None:
    """results/, which vae/main.py saves its images into (its repository ships the folder)."""
    (cwd / "results").mkdir(exist_ok=True)


def epochs_dir(cwd: Path, seed: int) -> None:
    """epochs/, where capsule-networks saves a state_dict per epoch (its repository ships the
    folder with a .gitkeep)."""
    (cwd / "epochs").mkdir(exist_ok=True)


def contents_dir(cwd: Path, seed: int) -> None:
    """minDiffusion saves its samples into ./contents/, a directory of the repository that holds
    only images (which the mirrors leave out)."""
    (cwd / "contents").mkdir(exist_ok=True)


def the_verdict(cwd: Path, seed: int) -> None:
    """the-verdict.txt, the short story LLMs-from-scratch trains on (6 kB here)."""
    (cwd / "the-verdict.txt").write_text(english(150, seed))


def tinystories_bins(cwd: Path, seed: int) -> None:
    """llama2.c's pretokenized TinyStories shards: uint16 token ids with BOS (1) per story, in
    data/TinyStories_all_data/ (vocab 'llama2') and data/tok512/ (vocab 'custom', 512)."""
    for sub, vocab in (("TinyStories_all_data", 32000), ("tok512", 512)):
        d = cwd / "data" / sub
        d.mkdir(parents=True, exist_ok=True)
        words = english(4000, seed).split()
        ids = {w: 3 + k % (vocab - 3) for k, w in enumerate(sorted(set(words)))}
        toks = []
        for k, w in enumerate(words):
            if k % 40 == 0:
                toks.append(1)
            toks.append(ids[w])
        arr = np.array(toks, dtype=np.uint16)
        for shard in range(2):
            arr.tofile(d / f"data{shard:02d}.bin")


def char_names(cwd: Path, seed: int) -> None:
    """data/names/<Language>.txt for the char-RNN tutorials: made-up names whose spelling
    depends on the 'language', so the language is learnable from the letters (nine of them,
    among them the four the generation tutorial samples from)."""
    rng = random.Random(seed)
    d = cwd / "data" / "names"
    d.mkdir(parents=True, exist_ok=True)
    styles = {"English": ("th", "son", "ley"), "Italian": ("ini", "etti", "ello"),
              "Japanese": ("ka", "moto", "shi"), "Polish": ("ski", "wicz", "czak"),
              "Greek": ("opoulos", "akis", "ou"), "Russian": ("ov", "in", "enko"),
              "German": ("mann", "berg", "er"), "Spanish": ("ez", "ado", "ita"),
              "Chinese": ("ang", "ing", "ao")}
    for lang, (a, b, c) in styles.items():
        names = []
        for _ in range(120):
            stem = "".join(rng.choice("abcdefghiklmnoprstu") for _ in range(rng.randint(2, 4)))
            names.append((stem + rng.choice((a, b, c))).capitalize())
        (d / f"{lang}.txt").write_text("\n".join(names) + "\n")


def names_txt(cwd: Path, seed: int, n: int = 8000) -> None:
    """names.txt, one lower-case made-up name per line (makemore's input): syllables whose
    order follows a few rules, so a character model has something to learn."""
    rng = random.Random(seed)
    # every letter occurs: the bigram lecture indexes a 27 x 27 table by itos[0..26]
    onsets = ["", *"bcdfghjklmnpqrstvwxz", "ch", "sh"]
    vowels = ["a", "e", "i", "o", "u", "y", "ay", "ee", "ia"]
    endings = ["", "", "n", "h", "lyn", "ra", "son", "elle", "y"]
    names = []
    for _ in range(n):
        parts = [rng.choice(onsets) + rng.choice(vowels) for _ in range(rng.randint(1, 3))]
        names.append("".join(parts) + rng.choice(endings))
    (cwd / "names.txt").write_text("\n".join(names) + "\n")


def shakespeare_bins(cwd: Path, seed: int) -> None:
    """llm.c's GPT-2 token shards (header of 256 int32, magic 20240520, version 1, count; then
    uint16 tokens) for dev/data/tinyshakespeare/tiny_shakespeare_{train,val}.bin."""
    d = cwd / "dev" / "data" / "tinyshakespeare"
    d.mkdir(parents=True, exist_ok=True)
    for split, s in (("train", seed), ("val", seed + 1)):
        toks = np.frombuffer(english(3000, s).encode(), dtype=np.uint8).astype(np.uint16)
        header = np.zeros(256, dtype=np.int32)
        header[:3] = (20240520, 1, len(toks))
        with open(d / f"tiny_shakespeare_{split}.bin", "wb") as fh:
            fh.write(header.tobytes())
            fh.write(toks.tobytes())


_CORA_CLASSES = ["Case_Based", "Genetic_Algorithms", "Neural_Networks", "Probabilistic_Methods",
                 "Reinforcement_Learning", "Rule_Learning", "Theory"]


def cora(cwd: Path, seed: int, n_nodes: int = 1700, n_words: int = 280) -> None:
    """A Cora-like citation graph in Cora's file layout: cora/cora.content (paper id, 0/1 word
    features, class name per line) and cora/cora.cites (cited id, citing id per line). Papers
    draw some words from their class's vocabulary and cite mostly papers of their class, so
    both the features and the graph carry the label. Also served as cora.tgz (the LINQS
    archive's layout) from _compat_serve/ for programs that download it (stubs/requests)."""
    import io
    import tarfile

    rng = np.random.default_rng(seed)
    n_cls = len(_CORA_CLASSES)
    ids = rng.choice(np.arange(1, 10 * n_nodes), size=n_nodes, replace=False)
    labels = rng.integers(0, n_cls, size=n_nodes)
    topic = rng.permutation(n_words).reshape(n_cls, -1)      # class vocabularies, disjoint
    feats = np.zeros((n_nodes, n_words), dtype=np.int64)
    for i in range(n_nodes):
        feats[i, rng.choice(topic[labels[i]], size=4, replace=False)] = 1
        feats[i, rng.choice(n_words, size=8, replace=False)] = 1
    by_class = [np.flatnonzero(labels == c) for c in range(n_cls)]
    cites = set()
    for i in range(n_nodes):
        for _ in range(rng.integers(1, 4)):
            pool = by_class[labels[i]] if rng.random() < 0.8 else np.arange(n_nodes)
            j = int(rng.choice(pool))
            if j != i:
                cites.add((int(ids[j]), int(ids[i])))
    content = "".join(
        f"{ids[i]}\t" + "\t".join(map(str, feats[i])) + f"\t{_CORA_CLASSES[labels[i]]}\n"
        for i in range(n_nodes))
    cites_txt = "".join(f"{a}\t{b}\n" for a, b in sorted(cites))
    (cwd / "cora").mkdir(exist_ok=True)
    (cwd / "cora" / "cora.content").write_text(content)
    (cwd / "cora" / "cora.cites").write_text(cites_txt)
    serve = cwd / "_compat_serve"
    serve.mkdir(exist_ok=True)
    with tarfile.open(serve / "cora.tgz", "w:gz") as tgz:
        for name, text in (("cora/cora.content", content), ("cora/cora.cites", cites_txt)):
            blob = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(blob)
            tgz.addfile(info, io.BytesIO(blob))


def airfoil(cwd: Path, seed: int, n_rows: int = 1503) -> None:
    """NASA's airfoil self-noise table in its file layout (tab-separated, 5 features then the
    sound level, 1503 rows), served as _compat_serve/airfoil_self_noise.dat for d2l's
    optimisation chapters (d2l.get_data_ch11 downloads it). The target is a linear function of
    the features plus noise, so a linear model's loss falls as it does on the real table."""
    rng = np.random.default_rng(seed)
    feats = np.column_stack([rng.choice([800, 1000, 1250, 1600, 2000, 2500, 3150, 4000],
                                        n_rows).astype(float),
                             rng.uniform(0, 22, n_rows), rng.choice([0.0254, 0.1016, 0.3048],
                                                                     n_rows),
                             rng.choice([31.7, 39.6, 55.5, 71.3], n_rows),
                             rng.uniform(0.0004, 0.058, n_rows)])
    z = (feats - feats.mean(0)) / feats.std(0)
    level = 125 + z @ np.array([-4.0, -2.0, -3.0, 1.5, -2.5]) + rng.normal(0, 1.5, n_rows)
    serve = cwd / "_compat_serve"
    serve.mkdir(exist_ok=True)
    rows = np.column_stack([feats, level])
    (serve / "airfoil_self_noise.dat").write_text(
        "".join("\t".join(f"{v:.6g}" for v in row) + "\n" for row in rows))


def shakespeare_txt(cwd: Path, seed: int) -> None:
    """A stand-in for char-rnn's tinyshakespeare input.txt (served as _compat_serve/input.txt,
    which nanoGPT's data/shakespeare_char/prepare.py downloads): 300 kB of story-like text."""
    serve = cwd / "_compat_serve"
    serve.mkdir(exist_ok=True)
    (serve / "input.txt").write_text(english(6000, seed).replace(". ", ".\n") + "\n")


def char_input_txt(cwd: Path, seed: int) -> None:
    """input.txt in the working directory (minGPT's chargpt reads it; tinyshakespeare there).
    It holds every character of chargpt's sampling prompt, "O God, O God!"."""
    (cwd / "input.txt").write_text("O God, O God!\n" + english(3000, seed).replace(". ", ".\n")
                                   + "\n")


def target_png(cwd: Path, seed: int) -> None:
    """img.png, the picture normflows' image example fits a flow to (ImagePrior reads channel
    0 and inverts it): a dark ring and a bar on white, 64 x 64 RGB."""
    from PIL import Image
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:64, 0:64]
    r = np.hypot(yy - 32 + rng.integers(-3, 4), xx - 32)
    ink = (np.abs(r - 18) < 4) | ((np.abs(yy - 32) < 3) & (np.abs(xx - 32) < 14))
    img = np.where(ink, 0, 255).astype(np.uint8)
    Image.fromarray(np.stack([img] * 3, axis=-1)).save(cwd / "img.png")


def mnist_pkl_gz(cwd: Path, seed: int, n_train: int = 5000, n_valid: int = 1000) -> None:
    """data/mnist/mnist.pkl.gz in the layout of deeplearning.net's pickle that nn_tutorial
    reads: ((x_train, y_train), (x_valid, y_valid), (x_test, y_test)), images as float32 rows
    of 784 values in [0, 1], labels int64. Each digit class is a prototype image shifted by up
    to two pixels plus noise (the torchvision stand-in's recipe, drawn here with NumPy)."""
    import gzip
    import pickle
    protos = np.random.default_rng(1234).random((10, 28, 28)) ** 3
    rng = np.random.default_rng(seed)

    def split(n):
        labels = rng.integers(0, 10, n)
        shifts = rng.integers(-2, 3, (n, 2))
        images = np.stack([np.roll(protos[y], tuple(s), axis=(0, 1))
                           for y, s in zip(labels, shifts)])
        images = np.clip(images + 0.25 * rng.standard_normal(images.shape), 0.0, 1.0)
        return images.reshape(n, 784).astype(np.float32), labels.astype(np.int64)

    d = cwd / "data" / "mnist"
    d.mkdir(parents=True, exist_ok=True)
    with gzip.open(d / "mnist.pkl.gz", "wb") as f:
        pickle.dump((split(n_train), split(n_valid), split(n_valid)), f)


def bsds300(cwd: Path, seed: int, n_train: int = 16, n_test: int = 4) -> None:
    """dataset/BSDS300/images/{train,test}/<id>.jpg, where super_resolution's data.py looks
    before it downloads the Berkeley segmentation set: 300 x 300 RGB pictures of smooth
    random colour fields with a few discs, so upscaling has edges and texture to learn."""
    from PIL import Image
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:300, 0:300] / 300.0
    for split, n in (("train", n_train), ("test", n_test)):
        d = cwd / "dataset" / "BSDS300" / "images" / split
        d.mkdir(parents=True, exist_ok=True)
        for k in range(n):
            img = np.zeros((300, 300, 3))
            for c in range(3):
                fx, fy, phase = rng.uniform(1, 8), rng.uniform(1, 8), rng.uniform(0, 6.3)
                img[:, :, c] = 0.5 + 0.25 * np.sin(2 * np.pi * (fx * xx + fy * yy) + phase)
            for _ in range(6):
                cy, cx, r = rng.uniform(0, 1), rng.uniform(0, 1), rng.uniform(0.03, 0.15)
                img[(yy - cy) ** 2 + (xx - cx) ** 2 < r * r] = rng.uniform(0, 1, 3)
            Image.fromarray((img * 255).astype(np.uint8)).save(d / f"{1000 * k + 17}.jpg")


def gpt_fast_checkpoint(cwd: Path, seed: int) -> None:
    """gpt-fast's checkpoints/stories15M/: the byte-level tokenizer.model the sentencepiece
    stand-in reads, and _compat_prepare.py, which a program's `pre` step runs (under the
    implementation being tested) to save the model's randomly initialised state dict as
    model.pth (gpt-fast converts Hugging Face weights; there is no network here)."""
    ckpt = cwd / "checkpoints" / "stories15M"
    ckpt.mkdir(parents=True, exist_ok=True)
    (ckpt / "tokenizer.model").write_text("compat-byte-tokenizer\n")
    (cwd / "_compat_prepare.py").write_text(
        "import torch\n"
        "from model import Transformer\n"
        f"torch.manual_seed({seed})\n"
        "model = Transformer.from_name('stories15M')\n"
        "torch.save(model.state_dict(), 'checkpoints/stories15M/model.pth')\n")


def multi30k(cwd: Path, seed: int, n_train: int = 640, n_eval: int = 64) -> None:
    """.data/multi30k/{train,val,test2016}.{en,de} for stubs/torchtext's Multi30k: sentences of
    the story grammar and a made-up "German" that translates word by word (each word spelt
    backwards with -en, kept in order), so a small translation model learns it; and result/
    and saved/, where hyunwoongko/transformer's train.py writes losses and checkpoints (the
    repository ships saved/ with text files only under a subfolder)."""
    root = cwd / ".data" / "multi30k"
    root.mkdir(parents=True, exist_ok=True)
    (cwd / "result").mkdir(exist_ok=True)
    (cwd / "saved").mkdir(exist_ok=True)
    for k, (split, n) in enumerate([("train", n_train), ("val", n_eval), ("test2016", n_eval)]):
        en = [s.strip() + "." for s in english(n, seed * 3 + k).split(".") if s.strip()][:n]
        de = [" ".join(w[::-1] + "en" for w in s.rstrip(".").lower().split()) + " ." for s in en]
        (root / f"{split}.en").write_text("\n".join(en) + "\n")
        (root / f"{split}.de").write_text("\n".join(de) + "\n")


def binarized_mnist(cwd: Path, seed: int, n_train: int = 3000, n_valid: int = 500) -> None:
    """binarized_mnist.npz with train_data/valid_data/test_data, (N, 784) float32 0/1 images as
    in the MADE paper's file: thick random strokes on a 28x28 grid, so neighbouring pixels are
    strongly dependent (something an autoregressive model can learn)."""
    rng = np.random.default_rng(seed)

    def images(n):
        out = np.zeros((n, 28, 28), np.float32)
        for k in range(n):
            for _ in range(rng.integers(1, 3)):
                r, c = rng.integers(4, 24, 2)
                dr, dc = rng.integers(-1, 2, 2)
                for step in range(rng.integers(6, 14)):
                    rr, cc = np.clip(r + dr * step, 1, 26), np.clip(c + dc * step, 1, 26)
                    out[k, rr - 1:rr + 2, cc - 1:cc + 2] = 1.0
        return out.reshape(n, 784)

    np.savez(cwd / "binarized_mnist.npz", train_data=images(n_train),
             valid_data=images(n_valid), test_data=images(n_valid))


def enwik8_gz(cwd: Path, seed: int) -> None:
    """data/enwik8.gz, the byte-level corpus of performer-pytorch's enwik8_simple/train.py (the
    first 100 MB of an English Wikipedia dump there): 300 kB of story-like text, gzipped."""
    import gzip
    (cwd / "data").mkdir(exist_ok=True)
    with gzip.open(cwd / "data" / "enwik8.gz", "wb") as fh:
        fh.write(english(10000, seed).encode())


def ett_csv(cwd: Path, seed: int, n_rows: int = 1600) -> None:
    """dataset/ETTh1.csv in the Electricity Transformer Temperature layout (a `date` column of
    hourly stamps, six load columns HUFL..LULL, the oil temperature OT last), for the long-term
    forecasting models of LTSF-Linear read as its `custom` data set (a 70/10/20 split by rows).
    Each column is daily and weekly cycles of its own phase and amplitude, a slow drift and
    noise, and OT mixes the loads: forecasts beat the mean by learning the cycles."""
    import datetime
    rng = np.random.default_rng(seed)
    t = np.arange(n_rows, dtype=float)
    cols = []
    for _ in range(6):
        day = rng.uniform(1, 3) * np.sin(2 * np.pi * t / 24 + rng.uniform(0, 2 * np.pi))
        week = rng.uniform(0.5, 1.5) * np.sin(2 * np.pi * t / 168 + rng.uniform(0, 2 * np.pi))
        drift = rng.uniform(-1, 1) * t / n_rows
        cols.append(rng.uniform(-2, 8) + day + week + drift + rng.normal(0, 0.3, n_rows))
    loads = np.column_stack(cols)
    ot = 20 + loads @ rng.uniform(0.2, 0.8, 6) * 0.5 + rng.normal(0, 0.3, n_rows)
    start = datetime.datetime(2016, 7, 1)
    lines = ["date,HUFL,HULL,MUFL,MULL,LUFL,LULL,OT"]
    for i in range(n_rows):
        stamp = (start + datetime.timedelta(hours=i)).strftime("%Y-%m-%d %H:%M:%S")
        lines.append(stamp + "," + ",".join(f"{v:.3f}" for v in loads[i]) + f",{ot[i]:.3f}")
    (cwd / "dataset").mkdir(exist_ok=True)
    (cwd / "dataset" / "ETTh1.csv").write_text("\n".join(lines) + "\n")


def criteo_kaggle(cwd: Path, seed: int, n_rows: int = 14000) -> None:
    """input/train.txt in the layout of Criteo's Kaggle display-advertising log, which DLRM's
    data_utils splits into seven "days" and encodes: a 0/1 click label, 13 integer counts and
    26 categorical values as 8-digit hex strings, tab-separated, some fields empty. The click is
    drawn from a logistic model of a few categorical fields and two counts, so a model beats
    the base rate (~0.6 accuracy) only by learning their embeddings and weights."""
    rng = np.random.default_rng(seed)
    vocab = [rng.integers(0, 2**32, size=int(rng.integers(4, 60))) for _ in range(26)]
    effect = [rng.normal(0, 2.5 if f < 4 else 0.1, size=len(v)) for f, v in enumerate(vocab)]
    lines = []
    for _ in range(n_rows):
        ints = rng.poisson(rng.uniform(0.5, 20, 13))
        cats = [int(rng.integers(0, len(v))) for v in vocab]
        logit = -0.5 + 0.6 * np.log1p(ints[0]) - 0.4 * np.log1p(ints[1])
        logit += sum(effect[f][c] for f, c in enumerate(cats))
        label = int(rng.random() < 1 / (1 + np.exp(-logit)))
        fields = [str(label)]
        fields += ["" if rng.random() < 0.05 else str(int(v)) for v in ints]
        fields += ["" if rng.random() < 0.03 else f"{int(vocab[f][c]):08x}"
                   for f, c in enumerate(cats)]
        lines.append("\t".join(fields))
    (cwd / "input").mkdir(exist_ok=True)
    (cwd / "input" / "train.txt").write_text("\n".join(lines) + "\n")


def _shape_parts(kind: str, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """n points on a toy object of a ShapeNet category, and each point's part label (1-based,
    as ShapeNet's .seg files): boxes and cylinders whose proportions vary per instance."""
    def box(lo, hi, m):
        return rng.uniform(lo, hi, size=(m, 3))

    def cylinder(centre, radius, axis, lo, hi, m):
        angle = rng.uniform(0, 2 * np.pi, m)
        pts = np.zeros((m, 3))
        other = [a for a in range(3) if a != axis]
        pts[:, other[0]] = centre[0] + radius * np.cos(angle)
        pts[:, other[1]] = centre[1] + radius * np.sin(angle)
        pts[:, axis] = rng.uniform(lo, hi, m)
        return pts

    s = rng.uniform(0.8, 1.2, 3)          # per-instance proportions
    parts: list = []
    if kind == "Chair":                   # back, seat, legs, arms
        parts.append(box([-.5, 0, -.5], [.5, s[1], -.45], n // 4))
        parts.append(box([-.5, 0, -.5], [.5, .05, .5 * s[2]], n // 4))
        legs = [cylinder((x, z), .03, 1, -.8 * s[1], 0, n // 16)
                for x in (-.45, .45) for z in (-.45, .45 * s[2])]
        parts.append(np.concatenate(legs))
        arms = [box([x - .03, .3, -.5], [x + .03, .35, .4 * s[2]], n // 8) for x in (-.5, .5)]
        parts.append(np.concatenate(arms))
    elif kind == "Table":                 # top, legs, shelf
        parts.append(box([-s[0], 0, -.6 * s[2]], [s[0], .05, .6 * s[2]], n // 2))
        legs = [cylinder((x, z), .04, 1, -s[1], 0, n // 16)
                for x in (-.9 * s[0], .9 * s[0]) for z in (-.5 * s[2], .5 * s[2])]
        parts.append(np.concatenate(legs))
        parts.append(box([-.9 * s[0], -.6 * s[1], -.5 * s[2]], [.9 * s[0], -.57 * s[1], .5 * s[2]],
                         n // 4))
    elif kind == "Airplane":              # fuselage, wings, tail fin, engines
        parts.append(cylinder((0, 0), .12, 0, -s[0], s[0], n // 3))
        parts.append(box([-.2, -.02, -s[2]], [.2, .02, s[2]], n // 3))
        parts.append(box([-s[0], 0, -.02], [-.8 * s[0], .4, .02], n // 8))
        engines = [cylinder((-.1, z), .06, 0, -.1, .25, n // 12) for z in (-.5 * s[2], .5 * s[2])]
        parts.append(np.concatenate(engines))
    else:                                 # Mug: body, handle
        parts.append(cylinder((0, 0), .4 * s[0], 1, -.5 * s[1], .5 * s[1], 3 * n // 4))
        angle = rng.uniform(-np.pi / 2, np.pi / 2, n // 4)
        handle = np.stack([.4 * s[0] + .25 * np.cos(angle), .25 * np.sin(angle),
                           rng.normal(0, .02, n // 4)], 1)
        parts.append(handle)
    points = np.concatenate(parts)
    labels = np.concatenate([np.full(len(p), i + 1) for i, p in enumerate(parts)])
    return points + rng.normal(0, .01, points.shape), labels


def shapenet_parts(cwd: Path, seed: int, n_train: int = 60, n_test: int = 20) -> None:
    """shapenet/ in the layout of ShapeNet's part-segmentation benchmark (shapenetcore_partanno
    _segmentation_benchmark_v0, read by pointnet.pytorch's ShapeNetDataset): a synset list,
    shuffled train/test file lists, and per shape a .pts file of xyz rows and a .seg file of part
    labels. Four categories of toy objects (chairs, tables, airplanes, mugs) whose parts are
    boxes and cylinders with proportions drawn per instance, 600 points each."""
    rng = np.random.default_rng(seed)
    root = cwd / "shapenet"
    synsets = {"Airplane": "02691156", "Chair": "03001627", "Mug": "03797390",
               "Table": "04379243"}
    (root / "train_test_split").mkdir(parents=True, exist_ok=True)
    (root / "synsetoffset2category.txt").write_text(
        "".join(f"{name}\t{syn}\n" for name, syn in synsets.items()))
    lists: dict = {"train": [], "test": []}
    for name, syn in synsets.items():
        (root / syn / "points").mkdir(parents=True, exist_ok=True)
        (root / syn / "points_label").mkdir(parents=True, exist_ok=True)
        for i in range(n_train + n_test):
            uid = f"{seed:02d}{i:05d}{syn[-3:]}"
            points, labels = _shape_parts(name, rng, 600)
            np.savetxt(root / syn / "points" / f"{uid}.pts", points, fmt="%.5f")
            np.savetxt(root / syn / "points_label" / f"{uid}.seg", labels, fmt="%d")
            lists["train" if i < n_train else "test"].append(f"shape_data/{syn}/{uid}")
    import json
    for split, names in lists.items():
        order = rng.permutation(len(names))
        (root / "train_test_split" / f"shuffled_{split}_file_list.json").write_text(
            json.dumps([names[j] for j in order]))


def carvana_like(cwd: Path, seed: int, n: int = 160, size: int = 64) -> None:
    """data/imgs/<id>.png and data/masks/<id>_mask.png in the Carvana layout that
    Pytorch-UNet's CarvanaDataset reads: RGB pictures of a textured background with one
    coloured "car" (an ellipse with a darker roof stripe) and a few distractor squares, and the
    car's 0/1 mask (mode L). The car's colour, place, size and angle vary per image, and the
    distractors share its colours, so colour alone does not segment it."""
    from PIL import Image as _Image
    rng = np.random.default_rng(seed)
    (cwd / "data" / "imgs").mkdir(parents=True, exist_ok=True)
    (cwd / "data" / "masks").mkdir(parents=True, exist_ok=True)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float64)
    for i in range(n):
        img = rng.uniform(60, 140, (1, 1, 3)) + rng.normal(0, 18, (size, size, 3))
        colour = rng.uniform(0, 255, 3)
        for _ in range(rng.integers(1, 4)):        # squares in the car's colour family
            x0, y0, w = rng.integers(0, size - 10), rng.integers(0, size - 10), rng.integers(4, 9)
            img[y0:y0 + w, x0:x0 + w] = colour * rng.uniform(0.7, 1.1)
        cx, cy = rng.uniform(0.3, 0.7, 2) * size
        a, b = rng.uniform(0.18, 0.3) * size, rng.uniform(0.09, 0.15) * size
        t = rng.uniform(0, np.pi)
        u = (xx - cx) * np.cos(t) + (yy - cy) * np.sin(t)
        v = -(xx - cx) * np.sin(t) + (yy - cy) * np.cos(t)
        mask = (u / a) ** 2 + (v / b) ** 2 <= 1.0
        img[mask] = colour
        img[mask & (np.abs(u) < a * 0.35)] = colour * 0.5  # the roof
        img += rng.normal(0, 8, img.shape)
        pixels = np.clip(img, 0, 255).astype(np.uint8)
        name = f"{seed:02d}{i:04d}"
        _Image.fromarray(pixels, "RGB").save(cwd / "data" / "imgs" / f"{name}.png")
        _Image.fromarray(mask.astype(np.uint8), "L").save(
            cwd / "data" / "masks" / f"{name}_mask.png")


def milk_csv(cwd: Path, seed: int, n_months: int = 168) -> None:
    """data/milk.csv in the layout of the monthly milk-production series N-BEATS' notebook reads
    (a quoted "month" column 1962-01.., a production column): a rising trend with a yearly
    cycle peaking in May and noise, about 600-950 pounds like the original."""
    rng = np.random.default_rng(seed)
    (cwd / "data").mkdir(exist_ok=True)
    t = np.arange(n_months)
    values = (600 + 1.7 * t + 70 * np.cos(2 * np.pi * (t - 4) / 12)
              + 25 * np.cos(4 * np.pi * t / 12) + rng.normal(0, 6, n_months))
    rows = ['"month","milk_production_pounds"']
    rows += [f'"{1962 + m // 12}-{m % 12 + 1:02d}",{int(round(v))}' for m, v in zip(t, values)]
    (cwd / "data" / "milk.csv").write_text("\n".join(rows) + "\n")


def movielens_1m(cwd: Path, seed: int, n_users: int = 500, n_items: int = 300,
                 n_ratings: int = 40000) -> None:
    """ml-1m/ratings.dat in MovieLens 1M's layout (`user::movie::rating::timestamp`, ids from
    1): ratings 1-5 from a rank-4 taste model (user and movie factors plus a per-movie bias)
    with noise, so a factorisation model can learn who likes what above the base rate."""
    rng = np.random.default_rng(seed)
    users = rng.normal(0, 1, (n_users, 4))
    items = rng.normal(0, 1, (n_items, 4))
    bias = rng.normal(0, 0.6, n_items)
    u = rng.integers(0, n_users, n_ratings)
    i = rng.integers(0, n_items, n_ratings)
    score = (users[u] * items[i]).sum(1) / 2 + bias[i] + rng.normal(0, 0.5, n_ratings)
    rating = np.clip(np.round(3.4 + score), 1, 5).astype(int)
    (cwd / "ml-1m").mkdir(exist_ok=True)
    lines = [f"{a + 1}::{b + 1}::{r}::{978300760 + k}" for k, (a, b, r) in
             enumerate(zip(u, i, rating))]
    (cwd / "ml-1m" / "ratings.dat").write_text("\n".join(lines) + "\n")


def mutag_like(cwd: Path, seed: int, n_graphs: int = 188) -> None:
    """dataset/MUTAG/MUTAG.txt in the layout powerful-gnns' util.load_data reads (graph count;
    per graph `n_nodes label`; per node `tag n_neighbours neighbour...`): molecule-like graphs
    of 10-22 nodes, a random tree of tags 0 and 2 with a chain of six tag-1 nodes attached.
    In class 1 the chain is closed into a ring (one edge more), so the label lies in the
    structure, not in the tag counts."""
    rng = np.random.default_rng(seed)
    lines = [str(n_graphs)]
    for g in range(n_graphs):
        label = g % 2
        n_tree = int(rng.integers(4, 17))
        tags = [int(t) for t in rng.choice([0, 2], size=n_tree)] + [1] * 6
        edges = {(int(rng.integers(0, i)), i) for i in range(1, n_tree)}   # a random tree
        chain = list(range(n_tree, n_tree + 6))
        edges |= {(chain[k], chain[k + 1]) for k in range(5)}
        edges.add((int(rng.integers(0, n_tree)), chain[0]))
        if label == 1:
            edges.add((chain[0], chain[5]))
        nbrs: list[list[int]] = [[] for _ in tags]
        for a, b in edges:
            nbrs[a].append(b)
            nbrs[b].append(a)
        lines.append(f"{len(tags)} {label}")
        lines += [" ".join(map(str, [tags[i], len(nbrs[i])] + sorted(nbrs[i])))
                  for i in range(len(tags))]
    (cwd / "dataset" / "MUTAG").mkdir(parents=True, exist_ok=True)
    (cwd / "dataset" / "MUTAG" / "MUTAG.txt").write_text("\n".join(lines) + "\n")


def _primitive(kind: str, rng: np.random.Generator, n: int) -> np.ndarray:
    """n points on the surface of a toy solid whose proportions vary per instance."""
    s = rng.uniform(0.7, 1.3, 3)
    u, v = rng.uniform(0, 2 * np.pi, n), rng.uniform(-1, 1, n)
    if kind == "sphere":
        r = np.sqrt(1 - v ** 2)
        return np.stack([r * np.cos(u), r * np.sin(u), v], 1) * s
    if kind == "cylinder":
        return np.stack([np.cos(u), np.sin(u), v * s[2]], 1) * [s[0], s[0], 1]
    if kind == "cone":
        h = rng.uniform(0, 1, n)
        return np.stack([(1 - h) * np.cos(u), (1 - h) * np.sin(u), 2 * h - 1], 1) * s
    if kind == "torus":
        w = rng.uniform(0, 2 * np.pi, n)
        ring = 1 + 0.3 * s[1] * np.cos(w)
        return np.stack([ring * np.cos(u), ring * np.sin(u), 0.3 * s[1] * np.sin(w)], 1)
    if kind == "box":                     # a point on a random face of a box
        pts = rng.uniform(-1, 1, (n, 3))
        axis = rng.integers(0, 3, n)
        pts[np.arange(n), axis] = rng.choice([-1.0, 1.0], n)
        return pts * s
    # "dumbbell": two spheres on a bar
    half = _primitive("sphere", rng, n // 2) * 0.4 + [0, 0, 0.8 * s[2]]
    other = _primitive("sphere", rng, n - n // 2) * 0.4 - [0, 0, 0.8 * s[2]]
    return np.concatenate([half, other])


def modelnet_like(cwd: Path, seed: int, n_train: int = 20, n_test: int = 6,
                  n_points: int = 256) -> None:
    """data/modelnet40_normal_resampled/ in the layout Pointnet_Pointnet2_pytorch's
    ModelNetDataLoader reads for --num_category 10: modelnet10_shape_names.txt, the
    modelnet10_{train,test}.txt id lists and <class>/<class>_NNNN.txt files of comma-separated
    `x,y,z,nx,ny,nz` rows. Ten classes of toy objects: the four ShapeNet-like ones of
    _shape_parts and six solids, each turned by a random angle about the vertical axis and
    jittered; the normals are the unit directions from the centroid (the programs that read
    them here ignore them)."""
    rng = np.random.default_rng(seed)
    root = cwd / "data" / "modelnet40_normal_resampled"
    parts = {"airplane": "Airplane", "chair": "Chair", "table": "Table", "mug": "Mug"}
    names = list(parts) + ["sphere", "cylinder", "cone", "torus", "box", "dumbbell"]
    lists: dict = {"train": [], "test": []}
    for name in names:
        (root / name).mkdir(parents=True, exist_ok=True)
        for i in range(n_train + n_test):
            if name in parts:
                pts = _shape_parts(parts[name], rng, n_points + 64)[0]
                pts = pts[rng.permutation(len(pts))[:n_points]]
            else:
                pts = _primitive(name, rng, n_points)
            angle = rng.uniform(0, 2 * np.pi)
            c, s = np.cos(angle), np.sin(angle)
            pts = pts @ np.array([[c, 0, -s], [0, 1, 0], [s, 0, c]])
            pts = pts + rng.normal(0, 0.01, pts.shape)
            normals = pts - pts.mean(0)
            normals /= np.linalg.norm(normals, axis=1, keepdims=True) + 1e-9
            uid = f"{name}_{i + 1:04d}"
            np.savetxt(root / name / f"{uid}.txt", np.concatenate([pts, normals], 1),
                       fmt="%.6f", delimiter=",")
            lists["train" if i < n_train else "test"].append(uid)
    (root / "modelnet10_shape_names.txt").write_text("\n".join(names) + "\n")
    for split, ids in lists.items():
        (root / f"modelnet10_{split}.txt").write_text("\n".join(ids) + "\n")
