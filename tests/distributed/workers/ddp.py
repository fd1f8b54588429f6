"""Run by test_distributed.py under ``ember-run --nproc-per-node 2``: DistributedDataParallel
and SyncBatchNorm against one process training on the concatenated batches.

Any failed check raises, which fails the rank and makes the launcher exit non-zero with it.
"""
from __future__ import annotations

import copy
import os
import pickle
import sys
import tempfile

import numpy as np

import ember
import ember.distributed as dist
from ember import nn
from ember.nn.parallel import DistributedDataParallel as DDP

TOL = 1e-6


def close(a, b, what):
    a = a.detach().numpy() if isinstance(a, ember.Tensor) else np.asarray(a)
    b = b.detach().numpy() if isinstance(b, ember.Tensor) else np.asarray(b)
    if a.shape != b.shape or not np.allclose(a, b, rtol=TOL, atol=TOL):
        raise AssertionError(f"{what}: max difference {np.max(np.abs(a - b))}")


def mlp(seed):
    ember.manual_seed(seed)
    return nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 8), nn.Tanh(),
                         nn.Linear(8, 3)).double()


def batches(steps, per_rank, n):
    rng = np.random.default_rng(1)
    return [(ember.from_numpy(rng.standard_normal((per_rank * n, 5))),
             ember.from_numpy(rng.standard_normal((per_rank * n, 3)))) for _ in range(steps)]


def train_equivalence(me, n, **ddp_kwargs):
    """Three SGD steps with DDP on half-batches == one process on the whole batches."""
    data = batches(3, 4, n)
    ref = mlp(100)
    model = DDP(mlp(100 + me), bucket_cap_mb=0.0005, **ddp_kwargs)  # rank 0's weights win
    for p, q in zip(ref.parameters(), model.module.parameters(), strict=False):
        close(p, q, "parameters broadcast from rank 0 at construction")
    opt_ref = ember.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = nn.MSELoss()
    for x, y in data:
        opt_ref.zero_grad()
        loss_fn(ref(x), y).backward()
        opt_ref.step()
        opt.zero_grad()
        loss_fn(model(x[me * 4:(me + 1) * 4]), y[me * 4:(me + 1) * 4]).backward()
        opt.step()
    for (name, p), q in zip(ref.named_parameters(), model.module.parameters(), strict=False):
        close(q, p, f"DDP {ddp_kwargs} parameter {name} after 3 steps")
    return model


def check_no_sync(me, n):
    """Gradients accumulated under no_sync and then synchronised equal the whole-batch sum."""
    (x1, y1), (x2, y2) = batches(2, 3, n)
    ref = mlp(0)
    model = DDP(mlp(0))
    loss_fn = nn.MSELoss()
    for x, y in ((x1, y1), (x2, y2)):
        loss_fn(ref(x), y).backward()
    part = slice(me * 3, (me + 1) * 3)
    with model.no_sync():
        loss_fn(model(x1[part]), y1[part]).backward()
    loss_fn(model(x2[part]), y2[part]).backward()
    # each rank's loss is the mean of its half, so the average equals the whole-batch loss
    for p, q in zip(ref.parameters(), model.parameters(), strict=False):
        close(q.grad, p.grad, "no_sync then a synchronised backward")


class Branchy(nn.Module):
    """``skip`` is never used; ``extra`` only on rank 0."""

    def __init__(self):
        super().__init__()
        ember.manual_seed(3)
        self.a = nn.Linear(4, 4).double()
        self.skip = nn.Linear(4, 4).double()
        self.extra = nn.Linear(4, 4).double()

    def forward(self, x, use_extra):
        h = self.a(x)
        return self.extra(h) if use_extra else h


def check_unused_parameters(me, n):
    x = ember.from_numpy(np.random.default_rng(2).standard_normal((4, 4)))
    model = DDP(Branchy(), find_unused_parameters=True)
    for _ in range(2):  # a second iteration must not wait for the unused ones
        model.zero_grad()
        model(x * (me + 1), use_extra=(me == 0)).sum().backward()
    assert model.module.skip.weight.grad is None, "a parameter unused everywhere keeps None"
    # reference: the gradient of each rank's loss, averaged
    grads = []
    for r in range(n):
        ref = Branchy()
        ref(x * (r + 1), use_extra=(r == 0)).sum().backward()
        grads.append(ref)
    for name in ("a.weight", "a.bias", "extra.weight"):
        want = sum((dict(g.named_parameters())[name].grad if dict(g.named_parameters())[
            name].grad is not None else 0) for g in grads) / n
        close(dict(model.module.named_parameters())[name].grad, want, f"unused: {name}")
    # without find_unused_parameters the next forward says what went wrong
    strict = DDP(Branchy())
    strict(x, use_extra=False).sum().backward()
    try:
        strict(x, use_extra=False)
    except RuntimeError as e:
        assert "find_unused_parameters=True" in str(e), e
    else:
        raise AssertionError("no error for parameters that got no gradient")


def check_sync_batchnorm(me, n):
    """SyncBatchNorm on two half-batches == BatchNorm1d/2d on the whole batch."""
    rng = np.random.default_rng(5)
    for shape, bn in (((8, 3), nn.BatchNorm1d), ((6, 3, 2, 2), nn.BatchNorm2d)):
        x = ember.from_numpy(rng.standard_normal(shape) * 3 + 1)
        ember.manual_seed(0)
        ref = nn.Sequential(bn(3), nn.Tanh()).double()
        ember.manual_seed(0)
        model = DDP(nn.SyncBatchNorm.convert_sync_batchnorm(
            nn.Sequential(bn(3), nn.Tanh()).double()))
        assert isinstance(model.module[0], nn.SyncBatchNorm)
        half = shape[0] // n
        xr = x.clone().requires_grad_()
        xs = x[me * half:(me + 1) * half].clone().requires_grad_()
        w = ember.from_numpy(rng.standard_normal(shape))
        for _ in range(2):
            ref.zero_grad()
            model.zero_grad()
            out_ref = ref(xr)
            (out_ref * w).sum().backward()
            out = model(xs)
            (out * w[me * half:(me + 1) * half]).sum().backward()
        close(out, out_ref[me * half:(me + 1) * half], f"SyncBatchNorm {shape} output")
        close(xs.grad, xr.grad[me * half:(me + 1) * half], f"SyncBatchNorm {shape} input grad")
        # each rank's loss is a part of the whole sum; DDP averages, so compare to sum / n
        close(model.module[0].weight.grad, ref[0].weight.grad / n, "SyncBatchNorm weight grad")
        close(model.module[0].bias.grad, ref[0].bias.grad / n, "SyncBatchNorm bias grad")
        close(model.module[0].running_mean, ref[0].running_mean, "SyncBatchNorm running_mean")
        close(model.module[0].running_var, ref[0].running_var, "SyncBatchNorm running_var")
        model.eval()
        ref.eval()
        close(model(xs), ref(xr)[me * half:(me + 1) * half], "SyncBatchNorm eval")


def check_checkpoint_and_join(me, n, model):
    keys = list(model.state_dict())
    assert keys and all(k.startswith("module.") for k in keys), keys
    path = os.path.join(tempfile.gettempdir(), f"ember_ddp_ckpt_{os.environ['MASTER_PORT']}_"
                        f"{os.getppid()}.pt")
    objs = [path]
    dist.broadcast_object_list(objs, src=0)
    path = objs[0]
    if me == 0:
        ember.save(model.state_dict(), path)
    dist.barrier()
    state = ember.load(path, map_location="cpu")
    for k, v in model.state_dict().items():
        close(state[k], v, f"checkpoint {k}")
    dist.barrier()
    if me == 0:
        os.remove(path)
    # uneven inputs: rank 0 has 3 batches, rank 1 has 2
    data = batches(3, 2, 1)
    ddp = DDP(mlp(0))
    with ddp.join():
        for x, y in data[:3 - me]:
            ddp.zero_grad()
            nn.MSELoss()(ddp(x), y).backward()
    if me == 0:  # the last step was averaged with rank 1's zeros (divide_by_initial)
        ref = mlp(0)
        nn.MSELoss()(ref(data[2][0]), data[2][1]).backward()
        for p, q in zip(ref.parameters(), ddp.parameters(), strict=False):
            close(q.grad, p.grad / n, "join: the lone rank's step")


def check_copies(me, n, model):
    """copy.deepcopy and pickle of a DDP module (NOTE [Copies of a DDP module]): a copy trains
    as a DDP of its own parameters, the original keeps only its own hooks, a copy made on one
    rank alone runs forward without waiting for the others, a non-default group refuses."""
    x = ember.from_numpy(np.random.default_rng(2).standard_normal((4 * n, 5)))
    y = ember.from_numpy(np.random.default_rng(3).standard_normal((4 * n, 3)))
    if me == 0:  # an evaluation copy on one rank: no collective, so no waiting
        alone = copy.deepcopy(model)
        with ember.no_grad():
            close(alone(x), model.module(x), "a deep copy made on rank 0 alone")
    for make in (copy.deepcopy, lambda m: pickle.loads(pickle.dumps(m))):
        ref = copy.deepcopy(model.module)
        twin = make(model)
        if not isinstance(twin, DDP) or any(
                p is q for p, q in zip(twin.module.parameters(), model.module.parameters(),
                                       strict=True)):
            raise AssertionError("a copy of a DDP module must be a DDP over new parameters")
        for p in model.module.parameters():
            if len(p._post_acc_hooks) != 1:
                raise AssertionError("copying a DDP module added hooks to the original's "
                                     "parameters")
        nn.MSELoss()(ref(x), y).backward()
        nn.MSELoss()(twin(x[me * 4:(me + 1) * 4]), y[me * 4:(me + 1) * 4]).backward()
        for (name, p), q in zip(ref.named_parameters(), twin.module.parameters(), strict=True):
            close(q.grad, p.grad, f"gradient of {name} in a copied DDP module")
    group = dist.new_group(list(range(n)))
    other = DDP(mlp(7), process_group=group)
    try:
        copy.deepcopy(other)
    except RuntimeError as e:
        if "default process group" not in str(e):
            raise
    else:
        raise AssertionError("deepcopy of a DDP module on a non-default group did not raise")


def main():
    dist.init_process_group("gloo")
    me, n = dist.get_rank(), dist.get_world_size()
    model = train_equivalence(me, n)
    train_equivalence(me, n, gradient_as_bucket_view=True, static_graph=True)
    check_no_sync(me, n)
    check_unused_parameters(me, n)
    check_sync_batchnorm(me, n)
    check_checkpoint_and_join(me, n, model)
    check_copies(me, n, model)
    dist.destroy_process_group()
    print(f"rank {me}: ddp OK", flush=True)


if __name__ == "__main__":
    main()
    sys.exit(0)
