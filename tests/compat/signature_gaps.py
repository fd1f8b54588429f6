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
            'abs', 'absolute', 'acos', 'acosh', 'add', 'addbmm', 'addcdiv', 'addcmul', 'addmm',
            'addmv', 'addr', 'adjoint', 'all', 'amax', 'amin', 'angle', 'any', 'arccos', 'arccosh',
            'arcsin', 'arcsinh', 'arctan', 'arctan2', 'arctanh', 'argmax', 'argmin', 'argsort',
            'argwhere', 'as_strided', 'asin', 'asinh', 'atan', 'atan2', 'atanh', 'baddbmm',
            'bincount', 'bitwise_and', 'bitwise_left_shift', 'bitwise_not', 'bitwise_or',
            'bitwise_right_shift', 'bitwise_xor', 'bmm', 'broadcast_to', 'ceil', 'chunk', 'clamp',
            'clip', 'clone', 'complex', 'conj', 'conj_physical', 'copysign', 'cos', 'cosh',
            'count_nonzero', 'cross', 'cummax', 'cummin', 'cumprod', 'cumsum', 'deg2rad', 'diag',
            'diag_embed', 'diagflat', 'diagonal', 'digamma', 'div', 'divide', 'dot', 'eq', 'erf',
            'erfc', 'erfinv', 'exp', 'exp2', 'expm1', 'fix', 'flatten', 'flip', 'fliplr', 'flipud',
            'float_power', 'floor', 'floor_divide', 'fmax', 'fmin', 'fmod', 'frac', 'gather', 'ge',
            'greater', 'greater_equal', 'gt', 'histc', 'hypot', 'i0', 'igamma', 'igammac', 'imag',
            'index_add', 'index_copy', 'index_select', 'isfinite', 'isinf', 'isnan', 'isneginf',
            'isposinf', 'isreal', 'kron', 'kthvalue', 'le', 'lerp', 'less', 'less_equal', 'lgamma',
            'log', 'log10', 'log1p', 'log2', 'logcumsumexp', 'logical_and', 'logical_not',
            'logical_or', 'logical_xor', 'logit', 'logsumexp', 'lt', 'masked_select', 'matmul',
            'max', 'maximum', 'mean', 'median', 'min', 'minimum', 'mm', 'mode', 'moveaxis',
            'movedim', 'msort', 'mul', 'multiply', 'mv', 'mvlgamma', 'nan_to_num', 'nanmean',
            'nanmedian', 'nanquantile', 'nansum', 'narrow', 'ne', 'neg', 'negative', 'nonzero',
            'not_equal', 'outer', 'permute', 'polar', 'polygamma', 'pow', 'prod', 'quantile',
            'rad2deg', 'ravel', 'real', 'reciprocal', 'remainder', 'repeat_interleave', 'reshape',
            'resolve_conj', 'resolve_neg', 'roll', 'rot90', 'round', 'rsqrt', 'scatter',
            'scatter_add', 'scatter_reduce', 'select', 'sgn', 'sigmoid', 'sign', 'signbit', 'sin',
            'sinc', 'sinh', 'sort', 'split', 'sqrt', 'square', 'squeeze', 'std', 'std_mean', 'sub',
            'subtract', 'sum', 'swapaxes', 'swapdims', 't', 'take', 'take_along_dim', 'tan',
            'tanh', 'tensor_split', 'tile', 'topk', 'trace', 'transpose', 'tril', 'triu',
            'true_divide', 'trunc', 'unbind', 'unflatten', 'unsqueeze', 'var', 'var_mean',
            'view_as_complex', 'view_as_real', 'xlogy',
        ),
        'complex': (
            'searchsorted',
        ),
        'unowned': (
            'as_tensor', 'asarray', 'bernoulli', 'can_cast', 'concatenate',
            'empty', 'empty_like', 'eye', 'full', 'full_like', 'ger',
            'is_tensor', 'linspace', 'logspace', 'normal', 'ones', 'ones_like', 'promote_types',
            'rand', 'rand_like', 'randn', 'randn_like', 'randperm', 'relu_',
            'tril_indices', 'triu_indices', 'typename', 'where', 'zeros', 'zeros_like',
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
            'abs', 'abs_', 'absolute', 'absolute_', 'acos', 'acos_', 'acosh', 'acosh_', 'add',
            'add_', 'addbmm', 'addbmm_', 'addcdiv', 'addcdiv_', 'addcmul', 'addcmul_', 'addmm',
            'addmm_', 'addmv', 'addmv_', 'addr', 'addr_', 'adjoint', 'all', 'angle',
            'any', 'arccos', 'arccos_', 'arcsin', 'arcsin_', 'arcsinh', 'arcsinh_', 'arctan',
            'arctan_', 'arctanh', 'arctanh_', 'argwhere', 'as_strided', 'asin', 'asin_', 'asinh',
            'asinh_', 'atan', 'atan_', 'atanh', 'atanh_', 'baddbmm', 'baddbmm_', 'bincount',
            'bitwise_and', 'bitwise_and_', 'bitwise_left_shift', 'bitwise_left_shift_',
            'bitwise_not', 'bitwise_not_', 'bitwise_or', 'bitwise_or_', 'bitwise_right_shift',
            'bitwise_right_shift_', 'bitwise_xor', 'bitwise_xor_', 'bmm', 'broadcast_to', 'ceil',
            'ceil_', 'cholesky', 'cholesky_inverse', 'cholesky_solve', 'chunk', 'clone', 'conj',
            'conj_physical', 'conj_physical_', 'cos', 'cos_', 'cosh', 'cosh_',
            'count_nonzero', 'cross', 'cumprod', 'cumprod_', 'cumsum', 'deg2rad',
            'deg2rad_', 'det', 'diag', 'diag_embed', 'diagflat', 'diagonal', 'digamma',
            'digamma_', 'dist', 'div', 'div_', 'divide', 'divide_', 'dot', 'dsplit', 'eq', 'eq_',
            'erf', 'erf_', 'erfc', 'erfc_', 'erfinv', 'erfinv_', 'exp', 'exp2', 'exp2_',
            'exp_', 'expm1', 'expm1_', 'fix', 'fix_', 'flatten', 'flip', 'fliplr', 'flipud',
            'float_power', 'floor', 'floor_', 'frac', 'frac_', 'gather', 'ge', 'ge_',
            'geqrf', 'greater', 'greater_', 'greater_equal', 'greater_equal_', 'gt', 'gt_',
            'hsplit', 'i0', 'i0_', 'igamma', 'igamma_', 'igammac', 'igammac_', 'index_add',
            'index_add_', 'index_copy', 'index_copy_', 'index_fill', 'index_fill_', 'index_put',
            'index_put_', 'index_select', 'inverse', 'isfinite',
            'isinf', 'isnan', 'isneginf', 'isposinf', 'isreal', 'kron', 'le', 'le_', 'lerp',
            'lerp_', 'less_', 'less_equal', 'less_equal_', 'lgamma', 'lgamma_', 'log', 'log10',
            'log10_', 'log1p', 'log1p_', 'log2', 'log2_', 'log_', 'logcumsumexp', 'logdet',
            'logical_and', 'logical_and_', 'logical_not', 'logical_not_', 'logical_or',
            'logical_or_', 'logical_xor', 'logical_xor_', 'logit', 'logit_', 'logsumexp', 'lt',
            'lt_', 'lu', 'lu_solve', 'masked_fill', 'masked_fill_', 'masked_scatter',
            'masked_scatter_', 'masked_select', 'matmul', 'matrix_exp', 'matrix_power', 'mean',
            'mm', 'moveaxis', 'movedim', 'mul', 'mul_', 'multiply', 'multiply_', 'mv', 'mvlgamma',
            'nan_to_num', 'nan_to_num_', 'nanmean', 'nanquantile', 'nansum', 'narrow', 'ne', 'ne_',
            'neg', 'neg_', 'negative', 'negative_', 'nonzero', 'norm', 'not_equal', 'not_equal_',
            'orgqr', 'ormqr', 'outer', 'pinverse', 'pow', 'pow_', 'prod', 'qr',
            'quantile', 'rad2deg', 'rad2deg_', 'ravel', 'reciprocal', 'reciprocal_',
            'repeat_interleave', 'resolve_conj', 'resolve_neg', 'roll', 'rot90', 'round', 'round_',
            'rsqrt', 'rsqrt_', 'scatter', 'scatter_', 'scatter_add', 'scatter_add_',
            'scatter_reduce', 'scatter_reduce_', 'select', 'sgn', 'sgn_', 'sigmoid', 'sigmoid_',
            'sign', 'sign_', 'sin', 'sin_', 'sinc', 'sinc_', 'sinh', 'sinh_', 'slogdet', 'split',
            'sqrt', 'sqrt_', 'square', 'square_', 'squeeze', 'std', 'sub', 'sub_', 'subtract',
            'subtract_', 'sum', 'svd', 'swapaxes', 'swapdims', 't', 'take', 'take_along_dim',
            'tan', 'tan_', 'tanh', 'tanh_', 'tensor_split', 'tile', 'trace', 'transpose',
            'triangular_solve', 'tril', 'tril_', 'triu', 'triu_', 'true_divide', 'true_divide_',
            'trunc', 'trunc_', 'unbind', 'unflatten', 'unique', 'unique_consecutive', 'unsqueeze',
            'var', 'vsplit', 'xlogy', 'xlogy_',
        ),
        'complex': (
            'amax', 'amin', 'arctan2', 'argmax', 'argmin', 'argsort', 'atan2', 'atan2_',
            'clamp', 'clamp_', 'clip', 'clip_', 'copysign', 'copysign_', 'cummax', 'cummin',
            'floor_divide', 'floor_divide_', 'fmax', 'fmin', 'fmod', 'fmod_', 'frexp',
            'histc', 'hypot', 'hypot_', 'kthvalue', 'max',
            'maximum', 'median', 'min', 'minimum', 'mode', 'msort', 'nanmedian',
            'remainder', 'remainder_', 'signbit', 'sort', 'topk',
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
            'airy_ai', 'bessel_j0', 'bessel_j1', 'bessel_y0', 'bessel_y1', 'digamma', 'entr',
            'erf', 'erfc', 'erfcx', 'erfinv', 'exp2', 'expit', 'expm1', 'gammaln', 'i0', 'i0e',
            'i1', 'i1e', 'log1p', 'log_ndtr', 'logit', 'logsumexp', 'modified_bessel_i0',
            'modified_bessel_i1', 'modified_bessel_k0', 'modified_bessel_k1', 'psi', 'round',
            'scaled_modified_bessel_k0', 'scaled_modified_bessel_k1', 'sinc',
            'spherical_bessel_j0', 'xlogy',
        ),
        'unowned': (
            'gammainc', 'gammaincc', 'multigammaln', 'polygamma', 'xlog1py',
            'zeta',
        ),
    },
    'utils.data': {
        'surface': (
            'DataLoader', 'random_split',
        ),
    },
}
