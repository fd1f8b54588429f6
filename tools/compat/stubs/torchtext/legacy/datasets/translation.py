"""Multi30k read from the files data.multi30k writes (.data/multi30k/{train,val,test2016}.{en,
de}: one sentence per line, the lines of the two languages parallel); no download."""
import os

from ..data import Dataset, Example


class Multi30k(Dataset):
    name, dirname = "multi30k", ""

    @classmethod
    def splits(cls, exts, fields, root=".data", train="train", validation="val",
               test="test2016", **kwargs):
        names = [("src", fields[0]), ("trg", fields[1])]
        out = []
        for split in (train, validation, test):
            base = os.path.join(root, "multi30k", split)
            with open(base + exts[0], encoding="utf-8") as f:
                src = f.read().splitlines()
            with open(base + exts[1], encoding="utf-8") as f:
                trg = f.read().splitlines()
            examples = []
            for s, t in zip(src, trg):
                ex = Example()
                ex.src, ex.trg = fields[0].preprocess(s), fields[1].preprocess(t)
                examples.append(ex)
            out.append(Dataset(examples, names))
        return tuple(out)
