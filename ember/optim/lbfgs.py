"""L-BFGS with an optional strong-Wolfe line search (after minFunc), as ``torch.optim.LBFGS``.

All parameters are handled as one flat vector: the gradient is gathered into a NumPy array, the
two-loop recursion runs on flat arrays, and updates are scattered back into the parameters.
Scalars are NumPy scalars of the parameters' dtype, so float32 problems compute in float32 as in
torch (NumPy 2's promotion keeps Python floats "weak", like torch's wrapped numbers).
"""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor, _make
from .optimizer import Optimizer, _check_lr, _closure_loss, _to_float

__all__ = ["LBFGS"]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimizer of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to the bounds."""
    if bounds is not None:
        lo, hi = bounds
    else:
        lo, hi = (x1, x2) if x1 <= x2 else (x2, x1)
    # the cubic's stationary point, in the numerically stable form of Nocedal & Wright (3.59)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, lo), hi)
    return (lo + hi) / 2.0  # no real minimizer: bisect


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """Line search along d from x for a step t satisfying the strong Wolfe conditions.

    Returns (f_new, g_new, t, evaluations). Bracketing phase, then zoom by cubic interpolation
    (Nocedal & Wright, algorithms 3.5 and 3.6).
    """
    d_norm = np.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    bracket = bracket_f = bracket_g = bracket_gtd = None
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        # extrapolate: the next trial lies in [t + 0.01 (t - t_prev), 10 t]
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        previous = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = previous, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:  # reached the evaluation budget while extrapolating
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom: shrink the bracket until a point satisfies the conditions
    insuf_progress = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                               bracket[1], bracket_f[1], bracket_gtd[1])
        # keep the trial away from the bracket ends (safeguard against stalling)
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low]:
            bracket[high], bracket_f[high] = t, f_new
            bracket_g[high], bracket_gtd[high] = g_new.copy(), gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low] = t, f_new
            bracket_g[low], bracket_gtd[low] = g_new.copy(), gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evals


def _store(value):
    """State values are kept as ember tensors (arrays and NumPy scalars) so they serialize."""
    if isinstance(value, (np.ndarray, np.generic)):
        return _make(np.array(value))
    if isinstance(value, list):
        return [_store(v) for v in value]
    return value


def _unstore(value):
    if isinstance(value, Tensor):
        arr = value._data
        return arr[()] if arr.ndim == 0 else arr
    if isinstance(value, list):
        return [_unstore(v) for v in value]
    return value


class LBFGS(Optimizer):
    """Limited-memory BFGS, as ``torch.optim.LBFGS``.

    ``step(closure)`` requires a closure that zeroes the gradients, computes the loss, calls
    ``backward()`` and returns the loss; it may run up to ``max_iter`` iterations.

    Args:
        params: parameters to optimize (a single group; per-group options are not supported).
        lr (float): learning rate (default: 1).
        max_iter (int): maximal number of iterations per step (default: 20).
        max_eval (int): maximal number of function evaluations per step
            (default: ``max_iter * 5 // 4``).
        tolerance_grad (float): stop when the largest gradient entry is at most this
            (default: 1e-7).
        tolerance_change (float): stop when the loss or the step changes less than this
            (default: 1e-9).
        history_size (int): number of stored curvature pairs (default: 100).
        line_search_fn (str): ``None`` (fixed step ``lr``) or ``'strong_wolfe'``.

    Example:
        >>> import ember
        >>> w = ember.tensor([3.0, -2.0], dtype=ember.float64, requires_grad=True)
        >>> opt = ember.optim.LBFGS([w], line_search_fn="strong_wolfe")
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = ((w - 1.0) ** 2).sum()
        ...     loss.backward()
        ...     return loss
        >>> _ = opt.step(closure)
        >>> [round(v, 6) for v in w.tolist()]
        [1.0, 1.0]
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        _check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(f"LBFGS: line_search_fn must be None or 'strong_wolfe'; got "
                             f"{line_search_fn!r}")
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                        tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                        history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # ------------------------------------------------------------------ flat-vector helpers
    def _gather_flat_grad(self) -> np.ndarray:
        parts = [p.grad._data.reshape(-1) if p.grad is not None
                 else np.zeros(p._data.size, dtype=p._data.dtype) for p in self._params]
        return np.concatenate(parts)

    def _add_grad(self, step_size, update: np.ndarray) -> None:
        offset = 0
        for p in self._params:
            n = p._data.size
            p._data[...] = p._data + step_size * update[offset:offset + n].reshape(p._data.shape)
            p._bump_version()
            offset += n

    def _clone_param(self):
        return [np.array(p._data, copy=True) for p in self._params]

    def _set_param(self, params_data) -> None:
        for p, data in zip(self._params, params_data):
            p._data[...] = data
            p._bump_version()

    def _evaluate(self, closure) -> float:
        return float(_closure_loss(closure))

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = self._evaluate(closure)
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    # ------------------------------------------------------------------ step
    def step(self, closure):
        """Run up to ``max_iter`` L-BFGS iterations; returns the loss at the starting point."""
        if closure is None:
            raise RuntimeError("LBFGS.step: a closure that re-evaluates the model and returns the "
                               "loss is required; got None.")
        group = self.param_groups[0]
        lr = _to_float(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = _closure_loss(closure)
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if np.abs(flat_grad).max() <= tolerance_grad:
            return orig_loss  # already optimal

        d, t = _unstore(state.get("d")), _unstore(state.get("t"))
        old_dirs, old_stps = _unstore(state.get("old_dirs")), _unstore(state.get("old_stps"))
        ro, H_diag = _unstore(state.get("ro")), _unstore(state.get("H_diag"))
        prev_flat_grad, prev_loss = _unstore(state.get("prev_flat_grad")), state.get("prev_loss")
        al = _unstore(state.get("al"))

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                d, H_diag, al = self._direction(flat_grad, prev_flat_grad, d, t, old_dirs,
                                                old_stps, ro, H_diag, al, history_size)
                # the state's keys in torch's order (its 'al' appears at the first two-loop
                # step, before the end-of-step keys); the value is stored at the end
                state.setdefault("al", None)
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            # the first step is scaled so that it moves at most lr in the max norm
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:  # not a descent direction
                break

            evals = 0
            if line_search_fn is not None:
                x_init = self._clone_param()

                def obj_func(x, t, d):
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, evals = _strong_wolfe(obj_func, x_init, t, d, loss, flat_grad,
                                                          gtd, max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    loss = self._evaluate(closure)
                    flat_grad = self._gather_flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    evals = 1
            current_evals += evals
            state["func_evals"] += evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * t).max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state.update(d=_store(d), t=_store(t), old_dirs=_store(old_dirs),
                     old_stps=_store(old_stps), ro=_store(ro), H_diag=_store(H_diag),
                     prev_flat_grad=_store(prev_flat_grad), prev_loss=prev_loss)
        if al is not None:
            state["al"] = _store(al)
        return orig_loss

    @staticmethod
    def _direction(flat_grad, prev_flat_grad, d, t, old_dirs, old_stps, ro, H_diag, al,
                   history_size):
        """Update the curvature history and return the quasi-Newton direction (two-loop)."""
        y = flat_grad - prev_flat_grad
        s = d * t
        ys = y.dot(s)
        if ys > 1e-10:  # keep the pair only if it preserves positive definiteness
            if len(old_dirs) == history_size:
                old_dirs.pop(0)
                old_stps.pop(0)
                ro.pop(0)
            old_dirs.append(y)
            old_stps.append(s)
            ro.append(1.0 / ys)
            H_diag = ys / y.dot(y)  # initial Hessian approximation gamma_k = s'y / y'y
        num_old = len(old_dirs)
        if al is None:
            al = [None] * history_size
        q = -flat_grad
        for i in range(num_old - 1, -1, -1):
            al[i] = old_stps[i].dot(q) * ro[i]
            q = q + (-al[i]) * old_dirs[i]
        r = q * H_diag
        for i in range(num_old):
            be_i = old_dirs[i].dot(r) * ro[i]
            r = r + (al[i] - be_i) * old_stps[i]
        return r, H_diag, al

