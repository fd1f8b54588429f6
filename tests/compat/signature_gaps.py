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
            'adjoint', 'all', 'amax', 'amin', 'any', 'argmax', 'argmin', 'argsort', 'argwhere',
            'as_strided', 'bincount', 'broadcast_to', 'chunk', 'clone', 'conj', 'count_nonzero',
            'cummax', 'cummin', 'cumprod', 'cumsum', 'diag_embed', 'diagflat', 'diagonal', 'dot',
            'flatten', 'flip', 'fliplr', 'flipud', 'imag', 'isfinite', 'isinf', 'isnan', 'isreal',
            'kthvalue', 'max', 'mean', 'median', 'min', 'mode', 'moveaxis', 'movedim', 'nanmedian',
            'nansum', 'narrow', 'nonzero', 'permute', 'prod', 'ravel', 'real', 'repeat_interleave',
            'reshape', 'resolve_conj', 'resolve_neg', 'roll', 'rot90', 'round', 'scatter',
            'scatter_add', 'scatter_reduce', 'select', 'sort', 'split', 'squeeze', 'std',
            'std_mean', 'sum', 'swapaxes', 'swapdims', 't', 'take', 'tensor_split', 'tile', 'topk',
            'trace', 'transpose', 'true_divide', 'unbind', 'unflatten', 'unsqueeze', 'var',
            'var_mean', 'view_as_complex', 'view_as_real',
        ),
        'complex': (
            'searchsorted',
        ),
        'unowned': (
            'as_tensor', 'asarray', 'bernoulli', 'can_cast', 'concatenate', 'empty', 'empty_like',
            'eye', 'full', 'full_like', 'is_tensor', 'linspace', 'logspace', 'normal', 'ones',
            'ones_like', 'promote_types', 'rand', 'rand_like', 'randn', 'randn_like', 'randperm',
            'relu_', 'tril_indices', 'triu_indices', 'typename', 'where', 'zeros', 'zeros_like',
        ),
        'surface': (
            'bartlett_window', 'blackman_window', 'hamming_window', 'hann_window', 'histogram',
            'histogramdd', 'index_reduce', 'is_storage', 'kaiser_window', 'rrelu_',
            'set_default_tensor_type', 'set_warn_always', 'trapz',
        ),
        'linalg': (
            'cholesky_inverse', 'cholesky_solve', 'det', 'logdet', 'matrix_power',
            'triangular_solve',
        ),
        'compile': (
            'compile',
        ),
        'DOC_NAMES': (
            'lu_solve', 'orgqr', 'ormqr',
        ),
        'nnrest': (
            'softmax',
        ),
    },
    'Tensor': {
        'WRAPPER': (
            'arctanh_', 'atanh_', 'bitwise_and', 'bitwise_and_', 'bitwise_or', 'bitwise_or_',
            'bitwise_xor', 'bitwise_xor_', 'bmm', 'cholesky', 'cholesky_inverse', 'cholesky_solve',
            'clone', 'det', 'dist', 'div', 'div_', 'divide', 'divide_', 'dsplit', 'flip', 'gather',
            'geqrf', 'hsplit', 'index_copy', 'index_copy_', 'inverse', 'logdet', 'logical_and',
            'logical_and_', 'logical_or', 'logical_or_', 'logical_xor', 'logical_xor_', 'logit',
            'logit_', 'lu', 'lu_solve', 'masked_scatter', 'matmul', 'matrix_exp', 'matrix_power',
            'mean', 'mul', 'mul_', 'multiply', 'multiply_', 'nansum', 'narrow', 'nonzero', 'norm',
            'orgqr', 'ormqr', 'pinverse', 'qr', 'repeat_interleave', 'roll', 'rot90', 'scatter',
            'scatter_', 'slogdet', 'split', 'std', 'svd', 'swapaxes', 'take', 'take_along_dim',
            'triangular_solve', 'true_divide', 'true_divide_', 'var', 'vsplit',
        ),
        'complex': (
            'amax', 'amin', 'argsort', 'floor_divide', 'floor_divide_', 'fmod', 'fmod_', 'frexp',
            'kthvalue', 'max', 'min', 'mode', 'remainder', 'remainder_', 'sort', 'topk',
        ),
        'unowned': (
            'bernoulli', 'bernoulli_', 'bfloat16', 'bool', 'byte', 'cauchy_', 'cdouble', 'cfloat',
            'char', 'contiguous', 'cpu', 'cuda', 'cumsum_', 'double', 'exponential_', 'float',
            'geometric_', 'half', 'int', 'is_contiguous', 'log_normal_', 'long', 'multinomial',
            'new_empty', 'new_full', 'new_ones', 'new_tensor', 'new_zeros', 'normal_', 'short',
            'stride', 'to_dense', 'to_sparse', 'to_sparse_coo', 'type', 'type_as', 'where',
        ),
        'surface': (
            'as_strided_', 'coalesce', 'col_indices', 'crow_indices', 'float_power_', 'gcd_',
            'heaviside_', 'histogram', 'index_reduce_', 'indices', 'ipu', 'is_coalesced', 'lcm_',
            'ldexp_', 'mtia', 'mvlgamma_', 'new_empty_strided', 'nextafter_', 'put', 'renorm_',
            'resize_', 'resize_as_', 'smm', 'sparse_resize_', 'sparse_resize_and_clear_',
            'squeeze_', 'sspaddmm', 'swapaxes_', 'swapdims_', 't_', 'transpose_', 'unsqueeze_',
            'values', 'xpu',
        ),
        'nnrest': (
            'softmax',
        ),
    },
    'nn.functional': {
        'WRAPPER': (
            'sigmoid', 'tanh',
        ),
    },
    'nn': {
        'nnrest': (
            'Hardtanh', 'LazyBatchNorm1d', 'LazyBatchNorm2d', 'LazyBatchNorm3d',
            'LazyConv1d',
            'LazyConv2d', 'LazyConv3d', 'LazyConvTranspose1d', 'LazyConvTranspose2d',
            'LazyConvTranspose3d', 'SyncBatchNorm',
        ),
    },
    'linalg': {
        'DOC_NAMES': (
            'cond', 'eig', 'eigvals', 'householder_product', 'ldl_factor', 'ldl_factor_ex',
            'tensorinv', 'tensorsolve',
        ),
        'linalg': (
            'matrix_rank', 'norm', 'vander',
        ),
    },
    'special': {
        'WRAPPER': (
            'airy_ai', 'bessel_j0', 'bessel_j1', 'bessel_y0', 'bessel_y1', 'entr', 'erfcx', 'i0',
            'i0e', 'i1', 'i1e', 'log_ndtr', 'modified_bessel_i0', 'modified_bessel_i1',
            'modified_bessel_k0', 'modified_bessel_k1', 'round', 'scaled_modified_bessel_k0',
            'scaled_modified_bessel_k1', 'spherical_bessel_j0',
        ),
    },
    'utils.data': {
        'surface': (
            'DataLoader', 'random_split',
        ),
    },
}
