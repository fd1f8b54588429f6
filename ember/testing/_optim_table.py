"""The optimizer table: one line per optimizer in ember.optim, listing option combinations the
generic optimizer suite (tests/optim/test_optim_db.py) runs: 50-step trajectories against torch
2.13 in float64 (parameters and state buffers), state_dict round trips that resume
bit-identically, float32 parameters, parameters without gradients, and ``repr``. A completeness
test fails for an optimizer without a line.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class OptimSpec:
    """Option combinations for one optimizer; the first is also used by the non-parity tests."""

    configs: list
    steps: int = 50                     # steps per trajectory (LBFGS does several evaluations
                                        # per step, so it needs fewer)
    shapes: tuple | None = None         # parameter shapes, when the suite's default set is not
                                        # accepted (None: 2-d, 1-d, 0-d and 3-d parameters)
    sparse_grad: bool = False           # torch gets the gradients as sparse COO tensors
    resume_exact: bool = True           # a state_dict round trip resumes bit-identically


OPTIM_TABLE: dict[str, OptimSpec] = {
    "SGD": OptimSpec([
        dict(lr=0.1),
        dict(lr=0.05, momentum=0.9),
        dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01),
        dict(lr=0.05, momentum=0.8, nesterov=True, maximize=True, weight_decay=0.1)]),
    "Adam": OptimSpec([
        dict(lr=0.01),
        dict(lr=0.01, amsgrad=True, weight_decay=0.1),
        dict(lr=0.02, betas=(0.4, 0.9), maximize=True),
        dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, amsgrad=True)]),
    "AdamW": OptimSpec([
        dict(lr=0.01),
        dict(lr=0.01, weight_decay=0.2, amsgrad=True, maximize=True)]),
    "RMSprop": OptimSpec([
        dict(lr=0.01),
        dict(lr=0.01, centered=True),
        dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1),
        dict(lr=0.01, alpha=0.5, momentum=0.5, maximize=True)]),
    "Adagrad": OptimSpec([
        dict(lr=0.1),
        dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1, weight_decay=0.1),
        dict(lr=0.1, maximize=True, eps=1e-6)]),
    "Adadelta": OptimSpec([
        dict(),
        dict(lr=0.5, rho=0.5, weight_decay=0.1, maximize=True)]),
    "Adamax": OptimSpec([
        dict(lr=0.01),
        dict(lr=0.01, betas=(0.6, 0.9), weight_decay=0.1, maximize=True)]),
    "NAdam": OptimSpec([
        dict(lr=0.01),
        dict(lr=0.01, weight_decay=0.1),
        dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, momentum_decay=0.01),
        dict(lr=0.01, maximize=True, betas=(0.8, 0.99))]),
    "RAdam": OptimSpec([
        dict(lr=0.01),
        dict(lr=0.01, betas=(0.9, 0.9), weight_decay=0.1),
        dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)]),
    "Rprop": OptimSpec([
        dict(),
        dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2)),
        dict(maximize=True)]),
    # ASGD keeps eta and mu as float32 scalars and load_state_dict casts them to the
    # parameter's dtype (as torch's does), so a resumed float64 run rounds differently
    "ASGD": OptimSpec([
        dict(),
        dict(lr=0.05, t0=2, weight_decay=0.1, lambd=1e-2),
        dict(maximize=True, t0=0)], resume_exact=False),
    "Adafactor": OptimSpec([
        dict(),
        dict(lr=0.05, weight_decay=0.1, d=2.0),
        dict(maximize=True, eps=(1e-20, 1e-2), beta2_decay=-0.5)]),
    # torch's SparseAdam takes only sparse gradients (ember's also takes dense ones, see its
    # docstring), of embedding-like 2-d parameters
    "SparseAdam": OptimSpec([
        dict(lr=0.01),
        dict(lr=0.05, betas=(0.8, 0.99), maximize=True)], shapes=((4, 3), (5, 2)),
        sparse_grad=True),
    # Muon takes 2-d parameters only. Its Newton-Schulz step runs in bfloat16 like torch's and
    # matches it bit for bit except for ~1 in 1000 matrices whose float32 accumulation in torch
    # rounds the other way (NOTE [Muon in bfloat16]); config 1 meets one at step 25, so 20 steps
    "Muon": OptimSpec([
        dict(lr=0.02),
        dict(lr=0.02, nesterov=False, weight_decay=0.0, adjust_lr_fn="match_rms_adamw"),
        dict(lr=0.01, momentum=0.8, ns_steps=3, adjust_lr_fn="original")],
        shapes=((4, 3), (5, 2), (2, 6)), steps=20),
    "LBFGS": OptimSpec([
        dict(lr=0.1, max_iter=4, history_size=3),
        dict(lr=1, max_iter=5, line_search_fn="strong_wolfe"),
        dict(lr=0.5, max_iter=3, history_size=2, line_search_fn="strong_wolfe")], steps=10),
}
