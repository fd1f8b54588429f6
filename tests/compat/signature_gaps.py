"""Known differences between ember's signatures and torch 2.13's, found by test_signatures.py
(regenerate the raw list with `python tests/compat/_signatures.py`).

Each namespace maps an owner class to the callables whose signature differs from torch's
(parameter names, order, kinds or defaults). The owner class says whose code it is this session
(COORD.md) and so who fixes it; test_signatures.py fails on a difference not listed here, and on
a listed name that now matches torch (delete it from the list then: the list stays honest).
"""
from __future__ import annotations

REASONS = {
    "WRAPPER": "a registered op: ember/ops/registry.py wraps it as (*args, out=None, **kwargs), "
               "so its parameter names, defaults and kinds are not visible or checked",
    "nnrest": "ember.nn / nn.functional code (helper nnrest this session)",
    "linalg": "ember.linalg / ember.ops.linalg code (helper linalg this session)",
    "surface": "ember/ops/numeric.py, _tensor_surface.py, utils.data, distributions, optim "
               "(helper surface this session)",
    "compile": "ember.compile (helper compile this session)",
    "complex": "ember/ops/complex.py (helper complex this session)",
    "unowned": "code no helper owns this session: not fixed yet (compat's to fix next)",
    "DOC_NAMES": "torch's docstring names differ from the names its argument parser accepts; "
                 "ember follows the parser (checked by the linalg helper against torch calls)",
}

SIGNATURE_GAPS = {
    'torch': {
        'WRAPPER': (
            'split',
        ),
        'unowned': (
            'is_tensor', 'typename',
        ),
        'surface': (
            'is_storage', 'set_default_tensor_type', 'set_warn_always',
        ),
        'compile': (
            'compile',
        ),
    },
    'Tensor': {
        'WRAPPER': (
            'lu', 'norm',
        ),
        'unowned': (
            'cdouble', 'cfloat', 'to_sparse_coo',
        ),
        'surface': (
            'ipu', 'mtia',
        ),
    },
    'nn.functional': {
        'WRAPPER': (
            'sigmoid', 'tanh',
        ),
    },
    'nn': {
        'nnrest': (
            'LazyBatchNorm1d', 'LazyBatchNorm2d', 'LazyBatchNorm3d', 'LazyConv1d', 'LazyConv2d',
            'LazyConv3d', 'LazyConvTranspose1d', 'LazyConvTranspose2d', 'LazyConvTranspose3d',
            'SyncBatchNorm',
        ),
    },
    'linalg': {
        'DOC_NAMES': (
            'cholesky', 'cholesky_ex', 'cond', 'eig', 'eigh', 'eigvals', 'eigvalsh',
            'householder_product', 'ldl_factor', 'ldl_factor_ex', 'lstsq', 'matrix_exp',
            'matrix_norm', 'matrix_power', 'pinv', 'solve_triangular', 'tensorinv',
            'tensorsolve',
        ),
        'linalg': (
            'matrix_rank', 'norm', 'vander',
        ),
    },
    'special': {
        'WRAPPER': (
            'round',
        ),
    },
    'utils.data': {
        'surface': (
            'random_split',
        ),
    },
}
