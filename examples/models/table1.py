"""The six workloads of the paper's Table 1, CPU-scaled, plus GPT-S (../shared/bench/SPEC.md).

Every builder takes the library module (``ember`` or ``torch``) so that the SAME source defines
both sides of the benchmark: identical layers, shapes and arithmetic. Each returns
``(model, optimizer, make_batches, loss_fn)``; a training step is ``zero_grad, forward, loss,
backward, step``.
"""
from __future__ import annotations

import math

import numpy as np


def train_step(model, opt, loss_fn, batch):
    """One training step on ``batch = (inputs, target)`` (inputs a tuple for several-input
    models): zero_grad, forward, loss, backward, step. Returns the loss."""
    x, y = batch
    opt.zero_grad()
    loss = loss_fn(model(*x) if isinstance(x, tuple) else model(x), y)
    loss.backward()
    opt.step()
    return loss


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


def _gpt_module(lib):
    nn = lib.nn
    F = nn.functional

    class Block(nn.Module):
        """Pre-LayerNorm transformer block: causal self-attention, then a GELU MLP."""

        def __init__(self, d, heads):
            super().__init__()
            self.heads = heads
            self.ln1 = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.ln2 = nn.LayerNorm(d)
            self.fc1 = nn.Linear(d, 4 * d)
            self.fc2 = nn.Linear(4 * d, d)

        def attend(self, x, past):
            b, t, d = x.shape
            hd = d // self.heads
            # (B, T, 3d) -> three (B, heads, T, hd) views
            q, k, v = self.qkv(x).view(b, t, 3, self.heads, hd).permute(2, 0, 3, 1, 4).unbind(0)
            if past is not None:
                k = lib.cat([past[0], k], dim=2)
                v = lib.cat([past[1], v], dim=2)
            if past is None or t == 1:
                # a single new query may see every cached key: no mask at all
                y = F.scaled_dot_product_attention(q, k, v, is_causal=past is None)
            else:
                # several new queries after a cache: causal, aligned to the END of the keys
                s = k.shape[2]
                mask = lib.ones(t, s, dtype=lib.bool).tril(diagonal=s - t)
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
            y = y.transpose(1, 2).reshape(b, t, d)
            return self.proj(y), (k, v)

        def forward(self, x, past=None):
            a, present = self.attend(self.ln1(x), past)
            x = x + a
            x = x + self.fc2(F.gelu(self.fc1(self.ln2(x))))
            return x, present

    class GPT(nn.Module):
        """Decoder-only transformer of SPEC.md section 7, with an optional key/value cache.

        ``model(idx)`` returns the logits (B, T, vocab). ``model(idx, cache)`` with ``cache`` a
        list (empty before the first call) returns ``(logits, cache)``: the keys and values of
        every layer so far, so that the next call only feeds the new tokens.
        """

        def __init__(self, vocab=1024, ctx=128, d=256, heads=4, layers=4):
            super().__init__()
            self.ctx = ctx
            self.tok = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(ctx, d)
            self.blocks = nn.ModuleList([Block(d, heads) for _ in range(layers)])
            self.ln_f = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab, bias=False)
            self.head.weight = self.tok.weight  # tied: one parameter, both gradients summed
            with lib.no_grad():
                for p in self.parameters():
                    if p.dim() == 2:
                        nn.init.normal_(p, 0.0, 0.02)
                    # biases are zero and LayerNorm gamma/beta 1/0 by construction

        def forward(self, idx, cache=None):
            start = 0
            if cache:  # generation: positions continue after the cached ones
                start = cache[0][0].shape[2]
                if start + idx.shape[1] > self.ctx:
                    raise ValueError(f"GPT: {start + idx.shape[1]} positions exceed the "
                                     f"context of {self.ctx}")
            # the rows of the position table for positions start..start+T-1 (a slice rather
            # than a lookup keeps the model traceable by torch.fx-style tracers)
            x = self.tok(idx) + self.pos.weight[start:start + idx.shape[1]]
            present = []
            for i, block in enumerate(self.blocks):
                x, kv = block(x, cache[i] if cache else None)
                present.append(kv)
            logits = self.head(self.ln_f(x))
            return logits if cache is None else (logits, present)

    return GPT


def gpt_generate(lib, model, prompt, new_tokens, use_cache=True):
    """Greedy decoding: append the argmax token ``new_tokens`` times; returns (B, T + new).

    With ``use_cache`` the prompt runs once (prefill) and each later call feeds only the newest
    token against the cached keys and values; without it every step reruns the whole sequence.
    The caller chooses grad mode (the benchmark runs under no_grad).
    """
    idx = prompt
    if use_cache:
        logits, cache = model(idx, [])
        for i in range(new_tokens):
            nxt = logits[:, -1].argmax(dim=-1, keepdim=True)
            idx = lib.cat([idx, nxt], dim=1)
            if i + 1 < new_tokens:
                logits, cache = model(nxt, cache)
        return idx
    for _ in range(new_tokens):
        nxt = model(idx)[:, -1].argmax(dim=-1, keepdim=True)
        idx = lib.cat([idx, nxt], dim=1)
    return idx


def adamw_param_groups(model, weight_decay):
    """Decay the 2-D weights (embeddings, Linear weights) only, as SPEC.md section 7 says."""
    params = list(model.parameters())  # the tied weight appears once
    return [{"params": [p for p in params if p.dim() == 2], "weight_decay": weight_decay},
            {"params": [p for p in params if p.dim() != 2], "weight_decay": 0.0}]


def gpt_s(lib):
    model = _gpt_module(lib)()
    rng = np.random.default_rng(0)
    batches = []
    for _ in range(4):
        tokens = rng.integers(0, 1024, (8, 129)).astype(np.int64)
        batches.append((lib.from_numpy(tokens[:, :-1].copy()),
                        lib.from_numpy(tokens[:, 1:].copy())))

    def loss(logits, target):
        return lib.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                               target.reshape(-1))

    opt = lib.optim.AdamW(adamw_param_groups(model, 0.1), lr=3e-4, betas=(0.9, 0.95),
                          eps=1e-8)
    return model, opt, batches, loss, 1024


# Matmul FLOPs of one GPT-S training step by SPEC's counting rules (2 per multiply-add, forward
# + backward, no input gradient for the embedding lookups). Per token and block the Linears do
# 256*768 + 256*256 + 256*1024 + 1024*256 = 786,432 multiply-adds, the tied head 256*1024 =
# 262,144: (4 * 786,432 + 262,144) * 1024 tokens * 2 = 6.979 GFLOP forward. Attention per
# block is two (B*heads, 128, 128, 64) products, Q K^T and P V, counted over the full 128 x 128
# square (the causal half is not discounted): 2 * 8*4*128*128*64 * 2 * 4 = 0.537 GFLOP forward.
# Backward doubles both (weight and input gradient of every Linear; dQ, dK, dV, dP in
# attention): 3 * 7.516 = 22.549 GFLOP per step, 22.0 MFLOP per token. (torch 2.13's
# FlopCounterMode reports 20.938: it has no formula for the CPU attention kernel, so it counts
# only the Linears; the attention products are matmuls by SPEC's rules and are counted here.)
GPT_S_GFLOP = 3 * 2 * ((4 * 786_432 + 262_144) * 1024 + 2 * 8 * 4 * 128 * 128 * 64 * 4) / 1e9


WORKLOADS = {"alexnet": alexnet_s, "vgg19": vgg19, "resnet50": resnet50,
             "mobilenet_v2": mobilenet_v2, "gnmt": gnmt_s, "ncf": ncf, "gpts": gpt_s}
ITEM_UNIT = {"alexnet": "img", "vgg19": "img", "resnet50": "img", "mobilenet_v2": "img",
             "gnmt": "tok", "ncf": "sample", "gpts": "tok"}
# GFLOP per training step (SPEC.md's reference table; GPT-S derived above)
GFLOP = {"alexnet": 19.528, "vgg19": 19.107, "resnet50": 15.862, "mobilenet_v2": 2.320,
         "gnmt": 11.482, "ncf": 0.064, "gpts": GPT_S_GFLOP}
