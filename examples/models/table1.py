"""The six workloads of the paper's Table 1, CPU-scaled (../shared/bench/SPEC.md).

Every builder takes the library module (``ember`` or ``torch``) so that the SAME source defines
both sides of the benchmark: identical layers, shapes and arithmetic. Each returns
``(model, optimizer, make_batches, loss_fn)``; a training step is ``zero_grad, forward, loss,
backward, step``.
"""
from __future__ import annotations

import math

import numpy as np


def _he_init(lib, model, final):
    nn = lib.nn
    with lib.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                if m is final:
                    nn.init.normal_(m.weight, 0.0, 0.01)
                else:
                    fan_in = m.weight[0].numel()
                    nn.init.normal_(m.weight, 0.0, math.sqrt(2.0 / fan_in))
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)


def _image_batches(lib, batch, size, seed=0):
    rng = np.random.default_rng(seed)
    return [(lib.from_numpy(rng.standard_normal((batch, 3, size, size)).astype(np.float32)),
             lib.from_numpy(rng.integers(0, 10, batch).astype(np.int64))) for _ in range(4)]


def _sgd(lib, model, lr):
    return lib.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)


def alexnet_s(lib):
    nn = lib.nn
    final = nn.Linear(4096, 10)
    model = nn.Sequential(
        nn.Conv2d(3, 64, 5, stride=2, padding=2), nn.ReLU(), nn.MaxPool2d(3, 2),
        nn.Conv2d(64, 192, 5, padding=2), nn.ReLU(), nn.MaxPool2d(3, 2),
        nn.Conv2d(192, 384, 3, padding=1), nn.ReLU(),
        nn.Conv2d(384, 256, 3, padding=1), nn.ReLU(),
        nn.Conv2d(256, 256, 3, padding=1), nn.ReLU(), nn.MaxPool2d(3, 2), nn.Flatten(),
        nn.Dropout(0.5), nn.Linear(2304, 4096), nn.ReLU(),
        nn.Dropout(0.5), nn.Linear(4096, 4096), nn.ReLU(), final)
    _he_init(lib, model, final)
    return model, _sgd(lib, model, 0.001), _image_batches(lib, 16, 64), nn.CrossEntropyLoss(), 16


def vgg19(lib):
    nn = lib.nn
    layers, cin = [], 3
    for block in ((64, 64), (128, 128), (256,) * 4, (512,) * 4, (512,) * 4):
        for cout in block:
            layers += [nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU()]
            cin = cout
        layers.append(nn.MaxPool2d(2, 2))
    final = nn.Linear(512, 10)
    model = nn.Sequential(*layers, nn.Flatten(), nn.Linear(512, 512), nn.ReLU(), nn.Dropout(0.5),
                          nn.Linear(512, 512), nn.ReLU(), nn.Dropout(0.5), final)
    _he_init(lib, model, final)
    return model, _sgd(lib, model, 0.01), _image_batches(lib, 8, 32), nn.CrossEntropyLoss(), 8


def _bottleneck(lib):
    nn = lib.nn

    class Bottleneck(nn.Module):
        def __init__(self, cin, mid, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, mid, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(mid)
            self.conv2 = nn.Conv2d(mid, mid, 3, stride, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(mid)
            self.conv3 = nn.Conv2d(mid, 4 * mid, 1, bias=False)
            self.bn3 = nn.BatchNorm2d(4 * mid)
            self.relu = nn.ReLU()
            self.down = None
            if stride != 1 or cin != 4 * mid:
                self.down = nn.Sequential(nn.Conv2d(cin, 4 * mid, 1, stride, bias=False),
                                          nn.BatchNorm2d(4 * mid))

        def forward(self, x):
            y = self.relu(self.bn1(self.conv1(x)))
            y = self.relu(self.bn2(self.conv2(y)))
            y = self.bn3(self.conv3(y))
            return self.relu(y + (x if self.down is None else self.down(x)))

    return Bottleneck


def resnet50(lib):
    nn = lib.nn
    Bottleneck = _bottleneck(lib)
    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
              nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for blocks, mid, stride in ((3, 64, 1), (4, 128, 2), (6, 256, 2), (3, 512, 2)):
        for i in range(blocks):
            layers.append(Bottleneck(cin, mid, stride if i == 0 else 1))
            cin = 4 * mid
    final = nn.Linear(2048, 10)
    model = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), final)
    _he_init(lib, model, final)
    return model, _sgd(lib, model, 0.01), _image_batches(lib, 8, 64), nn.CrossEntropyLoss(), 8


def _inverted_residual(lib):
    nn = lib.nn

    class InvertedResidual(nn.Module):
        def __init__(self, cin, cout, stride, t):
            super().__init__()
            hid = t * cin
            layers = []
            if t != 1:
                layers += [nn.Conv2d(cin, hid, 1, bias=False), nn.BatchNorm2d(hid), nn.ReLU6()]
            layers += [nn.Conv2d(hid, hid, 3, stride, 1, groups=hid, bias=False),
                       nn.BatchNorm2d(hid), nn.ReLU6(),
                       nn.Conv2d(hid, cout, 1, bias=False), nn.BatchNorm2d(cout)]
            self.block = nn.Sequential(*layers)
            self.residual = stride == 1 and cin == cout

        def forward(self, x):
            y = self.block(x)
            return x + y if self.residual else y

    return InvertedResidual


def mobilenet_v2(lib):
    nn = lib.nn
    IR = _inverted_residual(lib)
    layers = [nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU6()]
    cin = 32
    for t, c, n, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                       (6, 160, 3, 2), (6, 320, 1, 1)):
        for i in range(n):
            layers.append(IR(cin, c, s if i == 0 else 1, t))
            cin = c
    final = nn.Linear(1280, 10)
    model = nn.Sequential(*layers, nn.Conv2d(320, 1280, 1, bias=False), nn.BatchNorm2d(1280),
                          nn.ReLU6(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2),
                          final)
    _he_init(lib, model, final)
    return model, _sgd(lib, model, 0.01), _image_batches(lib, 16, 64), nn.CrossEntropyLoss(), 16


def _gnmt_module(lib):
    nn = lib.nn

    class GNMT(nn.Module):
        """GNMTv2-style seq2seq with additive attention (SPEC.md section 5)."""

        def __init__(self, vocab=2000, h=256):
            super().__init__()
            self.src_emb = nn.Embedding(vocab, h)
            self.tgt_emb = nn.Embedding(vocab, h)
            self.encoder = nn.LSTM(h, h, num_layers=2)
            self.dec1 = nn.LSTM(h, h)
            self.dec2 = nn.LSTM(2 * h, h)
            self.wq = nn.Linear(h, h, bias=False)
            self.wk = nn.Linear(h, h, bias=False)
            self.b_att = nn.Parameter(lib.zeros(h))
            self.v = nn.Parameter(lib.empty(h).uniform_(-1 / 16, 1 / 16))
            self.out = nn.Linear(h, vocab)
            with lib.no_grad():
                for emb in (self.src_emb, self.tgt_emb):
                    nn.init.normal_(emb.weight)
                for rnn in (self.encoder, self.dec1, self.dec2):
                    for p in rnn.parameters():
                        nn.init.uniform_(p, -1 / 16, 1 / 16)

        def forward(self, src, tgt_in):
            enc, _ = self.encoder(self.src_emb(src))            # S x B x H
            d1, _ = self.dec1(self.tgt_emb(tgt_in))              # T x B x H
            q = self.wq(d1).permute(1, 0, 2).unsqueeze(2)         # B x T x 1 x H
            k = self.wk(enc).permute(1, 0, 2).unsqueeze(1)        # B x 1 x S x H
            e = lib.tanh(q + k + self.b_att)                      # B x T x S x H
            a = lib.softmax(e @ self.v, dim=-1)                   # B x T x S
            ctx = lib.bmm(a, enc.permute(1, 0, 2)).permute(1, 0, 2)  # T x B x H
            d2, _ = self.dec2(lib.cat([d1, ctx], dim=-1))
            return self.out(d2)

    return GNMT


def gnmt_s(lib):
    model = _gnmt_module(lib)()
    rng = np.random.default_rng(0)
    batches = []
    for _ in range(4):
        src = lib.from_numpy(rng.integers(0, 2000, (20, 32)).astype(np.int64))
        tgt_in = lib.from_numpy(rng.integers(0, 2000, (20, 32)).astype(np.int64))
        tgt_out = lib.from_numpy(rng.integers(0, 2000, (20, 32)).astype(np.int64))
        batches.append(((src, tgt_in), tgt_out))
    ce = lib.nn.CrossEntropyLoss()

    def loss(logits, target):
        return ce(logits.reshape(-1, 2000), target.reshape(-1))

    return model, lib.optim.Adam(model.parameters(), lr=1e-3), batches, loss, 640


def _ncf_module(lib):
    nn = lib.nn

    class NeuMF(nn.Module):
        def __init__(self, users=10000, items=10000, d=32):
            super().__init__()
            self.u_gmf, self.i_gmf = nn.Embedding(users, d), nn.Embedding(items, d)
            self.u_mlp, self.i_mlp = nn.Embedding(users, d), nn.Embedding(items, d)
            self.fc1, self.fc2 = nn.Linear(64, 32), nn.Linear(32, 16)
            self.head = nn.Linear(48, 1)
            with lib.no_grad():
                for e in (self.u_gmf, self.i_gmf, self.u_mlp, self.i_mlp):
                    nn.init.normal_(e.weight, 0.0, 0.01)
                for fc in (self.fc1, self.fc2):
                    nn.init.normal_(fc.weight, 0.0, math.sqrt(2.0 / fc.in_features))
                    nn.init.zeros_(fc.bias)
                nn.init.xavier_uniform_(self.head.weight)
                nn.init.zeros_(self.head.bias)

        def forward(self, user, item):
            g = self.u_gmf(user) * self.i_gmf(item)
            m = lib.cat([self.u_mlp(user), self.i_mlp(item)], dim=1)
            m = lib.relu(self.fc2(lib.relu(self.fc1(m))))
            return self.head(lib.cat([g, m], dim=1)).squeeze(1)

    return NeuMF


def ncf(lib):
    model = _ncf_module(lib)()
    rng = np.random.default_rng(0)
    batches = []
    for _ in range(64):
        u = lib.from_numpy(rng.integers(0, 10000, 4096).astype(np.int64))
        i = lib.from_numpy(rng.integers(0, 10000, 4096).astype(np.int64))
        y = lib.from_numpy(rng.integers(0, 2, 4096).astype(np.float32))
        batches.append(((u, i), y))
    return (model, lib.optim.Adam(model.parameters(), lr=1e-3), batches,
            lib.nn.BCEWithLogitsLoss(), 4096)


WORKLOADS = {"alexnet": alexnet_s, "vgg19": vgg19, "resnet50": resnet50,
             "mobilenet_v2": mobilenet_v2, "gnmt": gnmt_s, "ncf": ncf}
ITEM_UNIT = {"alexnet": "img", "vgg19": "img", "resnet50": "img", "mobilenet_v2": "img",
             "gnmt": "tok", "ncf": "sample"}
