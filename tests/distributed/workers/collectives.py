"""Run by test_distributed.py under ``ember-run --nproc-per-node 2``: every collective on
every dtype against NumPy on every rank, groups, objects, p2p, errors and the timeout.

Any failed check raises, which fails the rank and makes the launcher exit non-zero with it.
"""
from __future__ import annotations

import sys
from datetime import timedelta

import numpy as np

import ember
import ember.distributed as dist
from ember import _dtype as D

R = dist.ReduceOp


def value(rank, dtype, shape=(2, 3)):
    """Distinct small values per rank (exact in every dtype, products stay small)."""
    n = int(np.prod(shape))
    base = np.arange(n).reshape(shape)
    if dtype == D.bool_:
        return (base + rank) % 2 == 0
    return ((base % 3) + rank + 1).astype(dtype.np)


def check(got, want, what):
    got = np.asarray(got._data if isinstance(got, ember.Tensor) else got)
    want = np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(
            got.astype(np.float64), want.astype(np.float64)):
        raise AssertionError(f"{what}: got {got!r}, expected {want!r}")


def np_reduce(arrays, op, dtype):
    stack = np.stack([a.astype(np.float64) for a in arrays])
    if dtype == D.bool_:
        stack = stack.astype(np.uint8)
    fn = {R.SUM: np.sum, R.PRODUCT: np.prod, R.MIN: np.min, R.MAX: np.max,
          R.AVG: np.mean}.get(op)
    if fn is not None:
        out = fn(stack, axis=0)
        if dtype == D.bool_:
            out = out > 0 if op in (R.SUM, R.MAX) else out > 0
        if op == R.AVG and dtype in D.INTEGRAL:
            out = np.trunc(out)
        return out.astype(dtype.np)
    ints = [a.astype(np.int64) for a in arrays]
    fold = {R.BAND: np.bitwise_and, R.BOR: np.bitwise_or, R.BXOR: np.bitwise_xor}[op]
    out = ints[0]
    for a in ints[1:]:
        out = fold(out, a)
    return out.astype(dtype.np)


def main():
    import os
    me = int(os.environ["RANK"])
    expect_error(lambda: dist.init_process_group("gloo", "tcp://127.0.0.1:29511", world_size=3,
                                                 rank=me),
                 "world_size is 3 but MPI started 2 process", "world_size mismatch")
    expect_error(lambda: dist.init_process_group("mpi", "env://", rank=1 - me),
                 f"rank {1 - me} was requested but MPI numbered this process {me}",
                 "rank mismatch")
    assert not dist.is_initialized()
    dist.init_process_group("gloo", init_method="file:///tmp/unused-by-mpi", world_size=2,
                            rank=me)
    me, n = dist.get_rank(), dist.get_world_size()
    assert n == 2 and dist.is_initialized() and dist.get_backend() == "gloo"
    assert dist.get_process_group_ranks(dist.group.WORLD) == [0, 1]
    everyone = [value(r, D.float32) for r in range(n)]

    for dtype in D.ALL:
        mine = [value(r, dtype) for r in range(n)]
        ops = [R.SUM, R.PRODUCT, R.MIN, R.MAX]
        if dtype != D.bool_:
            ops.append(R.AVG)
        if dtype in D.INTEGRAL or dtype == D.bool_:
            ops += [R.BAND, R.BOR, R.BXOR]
        for op in ops:
            t = ember.from_numpy(mine[me].copy())
            dist.all_reduce(t, op=op)
            check(t, np_reduce(mine, op, dtype), f"all_reduce {op} {dtype}")
        # a non-contiguous view is reduced in place
        base = ember.from_numpy(np.concatenate([mine[me], mine[me]], axis=1).copy())
        view = base[:, ::2]
        dist.all_reduce(view, op=R.MAX)
        check(view, np_reduce([np.concatenate([m, m], 1)[:, ::2] for m in mine], R.MAX, dtype),
              f"all_reduce non-contiguous {dtype}")
        # movement
        t = ember.from_numpy(mine[me].copy())
        dist.broadcast(t, src=1)
        check(t, mine[1], f"broadcast {dtype}")
        outs = [ember.from_numpy(np.zeros_like(mine[0])) for _ in range(n)]
        dist.all_gather(outs, ember.from_numpy(mine[me]).t())
        for r in range(n):
            check(outs[r], mine[r].T.reshape(2, 3), f"all_gather {dtype}")
        out = ember.from_numpy(np.zeros((2 * n, 3), dtype.np))
        dist.all_gather_into_tensor(out, ember.from_numpy(mine[me]))
        check(out, np.concatenate(mine), f"all_gather_into_tensor {dtype}")
        t = ember.from_numpy(mine[me].copy())
        dist.reduce(t, dst=0, op=R.MAX)
        check(t, np_reduce(mine, R.MAX, dtype) if me == 0 else mine[me], f"reduce {dtype}")
        gl = [ember.from_numpy(np.zeros_like(mine[0])) for _ in range(n)] if me == 1 else None
        dist.gather(ember.from_numpy(mine[me]), gl, dst=1)
        if me == 1:
            for r in range(n):
                check(gl[r], mine[r], f"gather {dtype}")
        t = ember.from_numpy(np.zeros_like(mine[0]))
        dist.scatter(t, [ember.from_numpy(m) for m in mine] if me == 0 else None, src=0)
        check(t, mine[me], f"scatter {dtype}")
        out = ember.from_numpy(np.zeros((1, 3), dtype.np))
        dist.reduce_scatter_tensor(out, ember.from_numpy(mine[me]), op=R.MAX)
        check(out, np_reduce(mine, R.MAX, dtype)[me:me + 1], f"reduce_scatter_tensor {dtype}")
        out = ember.from_numpy(np.zeros(3, dtype.np))
        dist.reduce_scatter(out, [ember.from_numpy(mine[me][r]) for r in range(n)], op=R.MIN)
        check(out, np_reduce(mine, R.MIN, dtype)[me], f"reduce_scatter {dtype}")
        # all_to_all: rank r sends row j of its array to rank j
        outs = [ember.from_numpy(np.zeros(3, dtype.np)) for _ in range(n)]
        dist.all_to_all(outs, [ember.from_numpy(mine[me][j]) for j in range(n)])
        for r in range(n):
            check(outs[r], mine[r][me], f"all_to_all {dtype}")
        out = ember.from_numpy(np.zeros((2, 3), dtype.np))
        dist.all_to_all_single(out, ember.from_numpy(mine[me]))
        check(out, np.stack([mine[r][me] for r in range(n)]), f"all_to_all_single {dtype}")
        # point to point, both directions at once
        got = ember.from_numpy(np.zeros_like(mine[0]))
        works = dist.batch_isend_irecv([dist.P2POp(dist.isend, ember.from_numpy(mine[me]),
                                                   1 - me),
                                        dist.P2POp(dist.irecv, got, 1 - me)])
        for w in works:
            w.wait()
        check(got, mine[1 - me], f"isend/irecv {dtype}")

    # all_to_all_single with uneven splits: rank 0 sends 1 row to 0 and 2 rows to 1, ...
    rows = [[1, 2], [3, 1]]
    data = ember.from_numpy(np.arange(sum(rows[me]) * 2, dtype=np.float64).reshape(-1, 2)
                            + 100 * me)
    recv_rows = [rows[r][me] for r in range(n)]
    out = ember.zeros(sum(recv_rows), 2, dtype=ember.float64)
    dist.all_to_all_single(out, data, recv_rows, rows[me])
    want = []
    for r in range(n):
        src = np.arange(sum(rows[r]) * 2, dtype=np.float64).reshape(-1, 2) + 100 * r
        start = sum(rows[r][:me])
        want.append(src[start:start + rows[r][me]])
    check(out, np.concatenate(want), "all_to_all_single uneven")

    # blocking send/recv (rank 0 -> 1) and 0-d tensors
    if me == 0:
        dist.send(ember.tensor(7.5), dst=1)
    else:
        t = ember.tensor(0.0)
        assert dist.recv(t, src=0) == 0
        check(t, np.float32(7.5), "send/recv 0-d")
        t = ember.tensor(0.0)
    # async collectives
    t = ember.from_numpy(everyone[me].copy())
    work = dist.all_reduce(t, async_op=True)
    assert work.wait() is True and work.is_completed()
    check(t, everyone[0] + everyone[1], "all_reduce async")
    works = [dist.broadcast(ember.ones(4) * me, src=0, async_op=True) for _ in range(3)]
    for w in works:
        w.wait()
    # empty tensors
    t = ember.zeros(0)
    dist.all_reduce(t)
    check(t, np.zeros(0, np.float32), "all_reduce empty")

    # objects
    objs = [None, None]
    dist.all_gather_object(objs, {"rank": me, "list": [me] * (me + 1)})
    assert objs == [{"rank": 0, "list": [0]}, {"rank": 1, "list": [1, 1]}], objs
    lst = ["a", me, None] if me == 0 else [None, None, None]
    dist.broadcast_object_list(lst, src=0)
    assert lst == ["a", 0, None], lst
    gl = [None, None] if me == 0 else None
    dist.gather_object(("x", me), gl, dst=0)
    assert me != 0 or gl == [("x", 0), ("x", 1)], gl
    out = [None]
    dist.scatter_object_list(out, [{"to": 0}, {"to": 1}] if me == 1 else None, src=1)
    assert out == [{"to": me}], out

    box = [None, None]
    if me == 0:
        dist.send_object_list([{"k": 1}, "two"], dst=1)
    else:
        assert dist.recv_object_list(box, src=0) == 0 and box == [{"k": 1}, "two"], box
    # argument errors are raised before any communication
    expect_error(lambda: dist.all_reduce([1.0]), "tensor must be an ember Tensor",
                 "non-tensor", TypeError)
    expect_error(lambda: dist.all_gather([ember.zeros(1)], ember.zeros(1)),
                 "has 1 tensors; got 1, expected one per rank", "list length", ValueError)
    expect_error(lambda: dist.broadcast(ember.zeros(1), src=5), "src=5 is not a member",
                 "bad src", ValueError)

    # groups
    sub, subgroups = dist.new_subgroups(group_size=1)
    assert len(subgroups) == 2 and dist.get_process_group_ranks(sub) == [me]
    g = dist.new_group([1])
    if me == 1:
        assert dist.get_rank(g) == 0 and dist.get_world_size(g) == 1
        t = ember.ones(2)
        dist.all_reduce(t, group=g)
        check(t, np.ones(2, np.float32), "all_reduce in a one-rank group")
    else:
        assert g is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(g) == -1
    g2 = dist.new_group([0, 1], timeout=timedelta(seconds=2))
    assert dist.get_process_group_ranks(g2) == [0, 1]
    dist.barrier(group=g2)
    dist.monitored_barrier(timeout=timedelta(seconds=30))

    # mismatches raise on every rank instead of corrupting memory
    expect_error(lambda: dist.all_reduce(ember.ones(3 + me)), "number of elements differs",
                 "shape mismatch")
    g3 = dist.new_group([0, 1])
    expect_error(lambda: dist.broadcast(ember.ones(2, dtype=[ember.float32, ember.int64][me]),
                                        src=0, group=g3), "dtype differs", "dtype mismatch")
    g4 = dist.new_group([0, 1])
    expect_error(lambda: (dist.barrier(group=g4) if me == 0 else
                          dist.all_reduce(ember.ones(1), group=g4)),
                 "called different collectives", "different collectives")
    expect_error(lambda: dist.all_reduce(ember.ones(2), op=R.BAND), "needs an integer",
                 "BAND on floats")

    # functional collectives (gpt-fast's tensor parallelism): new tensors, inputs untouched;
    # a group may be a list of every rank
    from ember.distributed import _functional_collectives as funcol
    x = ember.tensor(value(me, D.float32))
    before = x.clone()
    check(funcol.all_reduce(x, "sum", [0, 1]), sum(everyone), "funcol.all_reduce sum")
    check(funcol.wait_tensor(funcol.all_reduce(x, "max", None)), np.maximum(*everyone),
          "funcol.all_reduce max")
    check(funcol.all_gather_tensor(x, 0, [1, 0]), np.concatenate(everyone, 0),
          "funcol.all_gather_tensor")
    check(funcol.broadcast(x, 1, None), everyone[1], "funcol.broadcast")
    check(x, before.numpy(), "funcol leaves its input alone")
    expect_error(lambda: funcol.all_reduce(x, "sum", [0]), "must list every rank",
                 "funcol group of some ranks", NotImplementedError)
    data.requires_grad_()
    out = funcol.all_to_all_single_autograd(data, recv_rows, rows[me], None)
    check(out.detach(), np.concatenate(want), "funcol.all_to_all_single_autograd")
    (out * w_rows(out.shape[0])).sum().backward()
    # each input row's gradient is the weight its row got on the receiving rank
    got_w = []
    for r in range(n):
        recv_start = sum(rows[q][r] for q in range(me))  # rows r received before mine
        got_w.append(100 * r + recv_start + np.arange(rows[me][r]))
    check(data.grad, np.repeat(np.concatenate(got_w)[:, None], 2, 1).astype(np.float64),
          "funcol.all_to_all_single_autograd grad")
    check(funcol.all_to_all_single(x, None, None, [0, 1]),
          np.concatenate([everyone[0][me:me + 1], everyone[1][me:me + 1]]),
          "funcol.all_to_all_single equal splits")

    # torch.distributed.nn: collectives that autograd differentiates. Rank r weighs its
    # output by r + 1, so each gradient says which ranks' outputs reached which inputs.
    import ember.distributed.nn as dnn
    w = float(me + 1)

    def leaf():
        return ember.tensor(value(me, D.float32), requires_grad=True)

    x = leaf()
    y = dnn.all_reduce(x)
    (y * w).sum().backward()
    check(y.detach(), sum(everyone), "nn.all_reduce value")
    check(x.grad, np.full((2, 3), 3, np.float32), "nn.all_reduce grad: 1 + 2")
    x = leaf()
    y = dnn.broadcast(x, src=1)
    (y * w).sum().backward()
    check(y.detach(), everyone[1], "nn.broadcast value")
    if me == 1:
        check(x.grad, np.full((2, 3), 3, np.float32), "nn.broadcast grad on src")
    x = leaf()
    y = dnn.reduce(x, dst=0)
    (y * w).sum().backward()
    check(y.detach(), sum(everyone) if me == 0 else everyone[me], "nn.reduce value")
    check(x.grad, np.ones((2, 3), np.float32), "nn.reduce grad: dst's weight, broadcast")
    x = leaf()
    parts = dnn.all_gather(x)
    sum(p * (k + 1) * w for k, p in enumerate(parts)).sum().backward()
    for k in range(n):
        check(parts[k].detach(), everyone[k], f"nn.all_gather piece {k}")
    check(x.grad, np.full((2, 3), 3 * (me + 1), np.float32), "nn.all_gather grad")
    x = leaf()
    out = ember.zeros(2, 3)
    y = dnn.reduce_scatter(out, [x * 1, x * 2])
    (y * w).sum().backward()
    check(y.detach(), (me + 1) * sum(everyone), "nn.reduce_scatter value")
    check(out, (me + 1) * sum(everyone), "nn.reduce_scatter writes output")
    check(x.grad, np.full((2, 3), 5, np.float32), "nn.reduce_scatter grad: 1*1 + 2*2")

    # a collective that rank 1 never joins times out on rank 0, naming it
    if me == 0:
        expect_error(lambda: dist.all_reduce(ember.ones(2), group=g2),
                     r"all_reduce: Timed out after 0:00:02 .* rank 1 never joined it",
                     "timeout")
    dist.barrier()
    dist.destroy_process_group()
    assert not dist.is_initialized()
    print(f"rank {me}: collectives OK", flush=True)


def w_rows(k):
    """Row weights 100 * rank + row index, as a (k, 1) column: a gradient names its row."""
    me = dist.get_rank()
    return ember.from_numpy(100.0 * me + np.arange(k, dtype=np.float64)[:, None])


def expect_error(fn, pattern, what, kind=RuntimeError):
    import re
    try:
        fn()
    except kind as e:
        if not re.search(pattern, str(e)):
            raise AssertionError(f"{what}: message {str(e)!r} does not match {pattern!r}") from e
        return
    raise AssertionError(f"{what}: no error raised")


if __name__ == "__main__":
    main()
    sys.exit(0)
