"""Hand-written keyword calls for the public callables whose inputs _kwcalls.py cannot find by
trial (several related shapes, sparse or complex operands, factorizations, ``*args``
signatures): each entry builds its call for either library. test_keyword_calls.py calls torch's
and ember's and compares the results with _kwcalls' comparison.

An entry maps a qualified name to ``lambda L: (callable, args, kwargs)``; args stay positional
only where torch takes ``*tensors`` (einsum's operands, meshgrid's tensors)."""
from __future__ import annotations

import numpy as np
from _kwcalls import _spd


def t(L, *shape):
    """A float64 tensor of `shape`: positive, no ties, symmetric positive-definite when the
    last two dims are square."""
    return L.tensor(_spd(shape))


def i(L, values):
    return L.tensor(np.asarray(values, dtype=np.int64))


def sparse(L):
    """A 2x3 COO matrix with three entries, coalesced."""
    return L.sparse_coo_tensor(i(L, [[0, 1, 1], [2, 0, 2]]), t(L, 3), (2, 3)).coalesce()


def spectrogram(L):
    return L.stft(t(L, 16), 4, hop_length=1, window=L.hann_window(4, dtype=L.float64),
                  return_complex=True)


def lu(L):
    return L.linalg.lu_factor(t(L, 3, 3) + i(L, [[0, 5, 0], [0, 0, 0], [3, 0, 0]]))


def call(fn, *args, **kwargs):
    return fn, args, kwargs


def _ctc(L, reduction):
    log_probs = t(L, 5, 2, 3).log_softmax(2)
    return dict(log_probs=log_probs, targets=i(L, [[1, 2], [2, 0]]),
                input_lengths=i(L, [5, 4]), target_lengths=i(L, [2, 1]), blank=0,
                reduction=reduction, zero_infinity=False)


def _mha(L):
    return dict(query=t(L, 3, 1, 4), key=t(L, 3, 1, 4) + 1, value=t(L, 3, 1, 4) * 2,
                embed_dim_to_check=4, num_heads=2, in_proj_weight=t(L, 12, 4) - 0.3,
                in_proj_bias=t(L, 12), bias_k=None, bias_v=None, add_zero_attn=False,
                dropout_p=0.0, out_proj_weight=t(L, 4, 4), out_proj_bias=t(L, 4),
                training=False, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False)


HAND = {
    # products with several operands
    "torch.addbmm": lambda L: call(L.addbmm, input=t(L, 3, 4), batch1=t(L, 2, 3, 5),
                                   batch2=t(L, 2, 5, 4), beta=0.5, alpha=2.0),
    "Tensor.addbmm": lambda L: call(t(L, 3, 4).addbmm, batch1=t(L, 2, 3, 5),
                                    batch2=t(L, 2, 5, 4), beta=0.5, alpha=2.0),
    "Tensor.addbmm_": lambda L: call(t(L, 3, 4).addbmm_, batch1=t(L, 2, 3, 5),
                                     batch2=t(L, 2, 5, 4), beta=0.5, alpha=2.0),
    "torch.addmv": lambda L: call(L.addmv, input=t(L, 3), mat=t(L, 3, 4), vec=t(L, 4),
                                  beta=0.5, alpha=2.0),
    "torch.addmv_": lambda L: call(L.addmv_, input=t(L, 3), mat=t(L, 3, 4), vec=t(L, 4),
                                   beta=0.5, alpha=2.0),
    "Tensor.addmv": lambda L: call(t(L, 3).addmv, mat=t(L, 3, 4), vec=t(L, 4), beta=0.5,
                                   alpha=2.0),
    "Tensor.addmv_": lambda L: call(t(L, 3).addmv_, mat=t(L, 3, 4), vec=t(L, 4), beta=0.5,
                                    alpha=2.0),
    "torch.chain_matmul": lambda L: call(L.chain_matmul, t(L, 2, 3), t(L, 3, 4), t(L, 4, 2),
                                         out=L.empty(2, 2, dtype=L.float64)),
    "torch.einsum": lambda L: call(L.einsum, "bij,bjk->bik", t(L, 2, 2, 3), t(L, 2, 3, 4)),
    "nn.functional.bilinear": lambda L: call(L.nn.functional.bilinear, input1=t(L, 2, 3),
                                             input2=t(L, 2, 4), weight=t(L, 5, 3, 4),
                                             bias=t(L, 5)),
    "nn.functional.grouped_mm": lambda L: call(  # float32 only, 16-byte strides in torch
        L.nn.functional.grouped_mm, mat_a=t(L, 8, 4).float(), mat_b=t(L, 2, 4, 4).float(),
        offs=L.tensor(np.array([3, 8], np.int32)), bias=None, out_dtype=L.float32),
    # strides and views
    "torch.as_strided": lambda L: call(L.as_strided, input=t(L, 3, 3), size=(2, 2),
                                       stride=(1, 2), storage_offset=1),
    "torch.as_strided_": lambda L: call(L.as_strided_, input=t(L, 3, 3), size=(2, 2),
                                        stride=(1, 2), storage_offset=1),
    "Tensor.as_strided": lambda L: call(t(L, 3, 3).as_strided, size=(2, 2), stride=(1, 2),
                                        storage_offset=1),
    "Tensor.as_strided_": lambda L: call(t(L, 3, 3).as_strided_, size=(2, 2), stride=(1, 2),
                                         storage_offset=1),
    "torch.split_with_sizes": lambda L: call(L.split_with_sizes, input=t(L, 3, 2),
                                             split_sizes=[1, 2], dim=0),
    "Tensor.split_with_sizes": lambda L: call(t(L, 2, 3).split_with_sizes, split_sizes=[2, 1],
                                              dim=-1),
    "torch.meshgrid": lambda L: call(L.meshgrid, t(L, 2), t(L, 3), indexing="xy"),
    "torch.view_as_real": lambda L: call(L.view_as_real, input=L.complex(t(L, 3), t(L, 3) + 1)),
    "torch.view_as_complex": lambda L: call(L.view_as_complex, input=t(L, 3, 2)),
    "torch.imag": lambda L: call(L.imag, input=L.complex(t(L, 3), t(L, 3) + 1)),
    "Tensor.as_subclass": lambda L: call(t(L, 3).as_subclass, cls=L.Tensor),
    # indexing
    "torch.index_put": lambda L: call(L.index_put, input=t(L, 3, 3), indices=(i(L, [0, 2, 0]),),
                                      values=t(L, 3), accumulate=True),
    "torch.index_put_": lambda L: call(L.index_put_, input=t(L, 3, 3),
                                       indices=(i(L, [0, 2]), i(L, [1, 1])), values=t(L, 2),
                                       accumulate=False),
    "Tensor.index_put": lambda L: call(t(L, 3, 3).index_put, indices=(i(L, [2, 2]),),
                                       values=t(L, 3), accumulate=True),
    "Tensor.index_put_": lambda L: call(t(L, 3, 3).index_put_,
                                        indices=(i(L, [1]), i(L, [0])), values=t(L, 1)),
    # constructors
    "torch.tensor": lambda L: call(L.tensor, data=[[1, 2], [3, 4]], dtype=L.float32,
                                   device="cpu", requires_grad=False),
    "torch.as_tensor": lambda L: call(L.as_tensor, data=[1.5, 2.5], dtype=L.float64,
                                      device="cpu"),
    "torch.asarray": lambda L: call(L.asarray, obj=[1, 2, 3], dtype=L.float32, copy=True,
                                    requires_grad=False),
    "torch.from_numpy": lambda L: call(L.from_numpy, np.arange(4.0)),
    "torch.frombuffer": lambda L: call(L.frombuffer, buffer=bytearray(
        np.arange(4, dtype=np.float32).tobytes()), dtype=L.float32, count=2, offset=4),
    "torch.scalar_tensor": lambda L: call(L.scalar_tensor, s=2.5, dtype=L.float64),
    "torch.empty_strided": lambda L: call(L.empty_strided, size=(2, 3), stride=(1, 2),
                                          dtype=L.float32),
    "Tensor.new_empty_strided": lambda L: call(t(L, 3).new_empty_strided, size=(2, 3),
                                               stride=(3, 1), dtype=L.float32),
    "Tensor.new_tensor": lambda L: call(t(L, 3).new_tensor, data=[1, 2], dtype=L.float32,
                                        requires_grad=False),
    "Tensor.new": lambda L: call(t(L, 3).new, 2, 3, device="cpu"),
    # random draws with a determined result
    "torch.binomial": lambda L: call(L.binomial, count=L.tensor([3.0, 4.0, 5.0]),
                                     prob=L.tensor([0.0, 1.0, 1.0]), generator=None),
    # normalization, convolution, pooling, losses
    "torch.batch_norm": lambda L: call(
        L.batch_norm, input=t(L, 2, 3, 4), weight=t(L, 3), bias=t(L, 3),
        running_mean=L.zeros(3, dtype=L.float64), running_var=L.ones(3, dtype=L.float64),
        training=False, momentum=0.1, eps=1e-5, cudnn_enabled=False),
    "torch.instance_norm": lambda L: call(
        L.instance_norm, input=t(L, 2, 3, 4), weight=t(L, 3), bias=t(L, 3), running_mean=None,
        running_var=None, use_input_stats=True, momentum=0.1, eps=1e-5, cudnn_enabled=False),
    "torch.convolution": lambda L: call(
        L.convolution, input=t(L, 1, 2, 5, 5), weight=t(L, 3, 2, 3, 3), bias=t(L, 3),
        stride=[2, 1], padding=[1], dilation=[1, 1], transposed=False, output_padding=[0],
        groups=1),
    "torch.conv_transpose1d": lambda L: call(
        L.conv_transpose1d, input=t(L, 1, 2, 5), weight=t(L, 2, 3, 2), bias=t(L, 3), stride=2,
        padding=1, output_padding=1, groups=1, dilation=1),
    "nn.functional.conv_transpose1d": lambda L: call(
        L.nn.functional.conv_transpose1d, input=t(L, 1, 2, 5), weight=t(L, 2, 1, 3),
        bias=None, stride=1, padding=0, output_padding=0, groups=2, dilation=2),
    "nn.functional.fold": lambda L: call(L.nn.functional.fold, input=t(L, 1, 4, 4),
                                         output_size=(3, 3), kernel_size=2, dilation=1,
                                         padding=0, stride=1),
    "nn.functional.lp_pool1d": lambda L: call(L.nn.functional.lp_pool1d, input=t(L, 1, 2, 6),
                                              norm_type=2.0, kernel_size=2, stride=2,
                                              ceil_mode=False),
    "nn.functional.lp_pool2d": lambda L: call(L.nn.functional.lp_pool2d, input=t(L, 1, 2, 4, 4),
                                              norm_type=3.0, kernel_size=2, stride=None,
                                              ceil_mode=False),
    "nn.functional.lp_pool3d": lambda L: call(L.nn.functional.lp_pool3d,
                                              input=t(L, 1, 1, 4, 4, 4), norm_type=2.0,
                                              kernel_size=2, stride=2, ceil_mode=True),
    "nn.functional.adaptive_avg_pool2d": lambda L: call(L.nn.functional.adaptive_avg_pool2d,
                                                        input=t(L, 1, 4, 4), output_size=2),
    "nn.functional.adaptive_avg_pool3d": lambda L: call(L.nn.functional.adaptive_avg_pool3d,
                                                        input=t(L, 1, 2, 4, 4),
                                                        output_size=(1, 2, 2)),
    "nn.functional.affine_grid": lambda L: call(L.nn.functional.affine_grid, theta=t(L, 1, 2, 3),
                                                size=[1, 1, 3, 3], align_corners=False),
    "torch.ctc_loss": lambda L: call(L.ctc_loss, **_ctc(L, 1)),
    "nn.functional.ctc_loss": lambda L: call(L.nn.functional.ctc_loss, **_ctc(L, "sum")),
    "torch.poisson_nll_loss": lambda L: call(L.poisson_nll_loss, input=t(L, 3), target=t(L, 3),
                                             log_input=True, full=True, eps=1e-8, reduction=1),
    "torch.embedding_bag": lambda L: call(
        L.embedding_bag, weight=t(L, 5, 3), indices=i(L, [0, 1, 2, 4]), offsets=i(L, [0, 2]),
        scale_grad_by_freq=False, mode=1, sparse=False, per_sample_weights=None,
        include_last_offset=False, padding_idx=None),
    "nn.functional.embedding_bag": lambda L: call(
        L.nn.functional.embedding_bag, input=i(L, [0, 1, 2, 4]), weight=t(L, 5, 3),
        offsets=i(L, [0, 2]), max_norm=None, norm_type=2, scale_grad_by_freq=False,
        mode="sum", sparse=False, per_sample_weights=t(L, 4), include_last_offset=False,
        padding_idx=None),
    "nn.functional.multi_head_attention_forward": lambda L: call(
        L.nn.functional.multi_head_attention_forward, **_mha(L)),
    # spectral
    "torch.stft": lambda L: call(L.stft, input=t(L, 16), n_fft=4, hop_length=1, win_length=4,
                                 window=L.hann_window(4, dtype=L.float64), center=True,
                                 pad_mode="reflect", normalized=False, onesided=True,
                                 return_complex=True),
    "Tensor.stft": lambda L: call(t(L, 2, 12).stft, n_fft=6, hop_length=2, window=None,
                                  center=False, return_complex=True),
    "torch.istft": lambda L: call(L.istft, input=spectrogram(L), n_fft=4, hop_length=1,
                                  win_length=4, window=L.hann_window(4, dtype=L.float64),
                                  center=True, normalized=False, onesided=True, length=16,
                                  return_complex=False),
    "Tensor.istft": lambda L: call(spectrogram(L).istft, n_fft=4, hop_length=1,
                                   window=L.hann_window(4, dtype=L.float64)),
    # factorizations and solves
    "torch.lu_solve": lambda L: call(L.lu_solve, input=t(L, 3, 2), LU_data=lu(L)[0],
                                     LU_pivots=lu(L)[1]),
    "Tensor.lu_solve": lambda L: call(t(L, 3, 2).lu_solve, LU_data=lu(L)[0],
                                      LU_pivots=lu(L)[1]),
    "torch.lu_unpack": lambda L: call(L.lu_unpack, LU_data=lu(L)[0], LU_pivots=lu(L)[1],
                                      unpack_data=True, unpack_pivots=True),
    "linalg.lu_solve": lambda L: call(L.linalg.lu_solve, LU=lu(L)[0], pivots=lu(L)[1],
                                      B=t(L, 2, 3), left=False, adjoint=True),
    "linalg.ldl_solve": lambda L: call(L.linalg.ldl_solve, LD=L.linalg.ldl_factor(t(L, 3, 3))[0],
                                       pivots=L.linalg.ldl_factor(t(L, 3, 3))[1], B=t(L, 3, 2),
                                       hermitian=False),
    "linalg.solve_triangular": lambda L: call(L.linalg.solve_triangular, input=t(L, 3, 3).triu(),
                                              B=t(L, 2, 3), upper=True, left=False,
                                              unitriangular=False),
    "linalg.householder_product": lambda L: call(L.linalg.householder_product,
                                                 input=L.geqrf(t(L, 3, 2))[0],
                                                 tau=L.geqrf(t(L, 3, 2))[1]),
    "linalg.tensorinv": lambda L: call(L.linalg.tensorinv, input=t(L, 4, 4).reshape(4, 2, 2),
                                       ind=1),
    # sparse operands
    "Tensor.coalesce": lambda L: call(L.sparse_coo_tensor(i(L, [[1, 0, 1]]), t(L, 3),
                                                          (2,)).coalesce),
    "Tensor.indices": lambda L: call(sparse(L).indices),
    "Tensor.values": lambda L: call(sparse(L).values),
    "torch.spmm": lambda L: call(L.spmm, input=sparse(L), mat2=t(L, 3, 2)),
    "torch.smm": lambda L: call(L.smm, input=sparse(L), mat2=t(L, 3, 2)),
    "Tensor.smm": lambda L: call(sparse(L).smm, mat2=t(L, 3, 2)),
    "torch.hspmm": lambda L: call(L.hspmm, mat1=sparse(L), mat2=t(L, 3, 2)),
    "torch.hsmm": lambda L: call(L.hsmm, mat1=sparse(L), mat2=t(L, 3, 2)),
    "torch.saddmm": lambda L: call(L.saddmm, input=L.sparse_coo_tensor(
        i(L, [[0], [1]]), t(L, 1), (2, 3)), mat1=sparse(L), mat2=t(L, 3, 3), beta=0.5, alpha=2.0),
    "torch.sspaddmm": lambda L: call(L.sspaddmm, input=L.sparse_coo_tensor(
        i(L, [[0], [1]]), t(L, 1), (2, 2)), mat1=sparse(L), mat2=t(L, 3, 2), beta=0.5, alpha=2.0),
    "Tensor.sspaddmm": lambda L: call(L.sparse_coo_tensor(i(L, [[1], [0]]), t(L, 1), (2, 2))
                                      .sspaddmm, mat1=sparse(L), mat2=t(L, 3, 2)),
    # autograd and init
    "Tensor.retain_grad": lambda L: call(t(L, 3).requires_grad_().mul(2).retain_grad),
    # (the deprecated init spellings without the trailing underscore warn and fill in place)
    "nn.init.constant": lambda L: call(L.nn.init.constant, tensor=t(L, 2, 3), val=0.25),
    "nn.init.dirac": lambda L: call(L.nn.init.dirac, tensor=t(L, 2, 2, 3), groups=1),
    "nn.init.eye": lambda L: call(L.nn.init.eye, tensor=t(L, 2, 3)),
    "nn.init.normal": lambda L: call(L.nn.init.normal, tensor=t(L, 2, 3), mean=1.0, std=0.5),
    "nn.init.uniform": lambda L: call(L.nn.init.uniform, tensor=t(L, 2, 3), a=-1.0, b=2.0),
    "nn.init.kaiming_normal": lambda L: call(L.nn.init.kaiming_normal, tensor=t(L, 2, 3), a=0.1,
                                             mode="fan_out", nonlinearity="leaky_relu"),
    "nn.init.kaiming_uniform": lambda L: call(L.nn.init.kaiming_uniform, tensor=t(L, 2, 3),
                                              a=0.1, mode="fan_in", nonlinearity="relu"),
    "nn.init.xavier_normal": lambda L: call(L.nn.init.xavier_normal, tensor=t(L, 2, 3),
                                            gain=2.0),
    "nn.init.xavier_uniform": lambda L: call(L.nn.init.xavier_uniform, tensor=t(L, 2, 3),
                                             gain=2.0),
    "nn.init.orthogonal": lambda L: call(L.nn.init.orthogonal, tensor=t(L, 2, 3), gain=2.0),
    "nn.init.sparse": lambda L: call(L.nn.init.sparse, tensor=t(L, 4, 3), sparsity=0.5,
                                     std=0.1),
    # *tensors signatures (nothing to name but the options)
    "torch.atleast_1d": lambda L: call(L.atleast_1d, t(L), t(L, 2)),
    "torch.atleast_2d": lambda L: call(L.atleast_2d, t(L, 3)),
    "torch.atleast_3d": lambda L: call(L.atleast_3d, t(L, 2, 3)),
    "torch.block_diag": lambda L: call(L.block_diag, t(L, 2, 3), t(L, 1), t(L, 2, 2)),
    "torch.broadcast_tensors": lambda L: call(L.broadcast_tensors, t(L, 2, 1), t(L, 3)),
    "torch.cartesian_prod": lambda L: call(L.cartesian_prod, t(L, 2), t(L, 3)),
    "torch.unique_consecutive": lambda L: call(L.unique_consecutive, input=i(L, [1, 1, 2, 2, 3, 1]),
                                               return_inverse=True, return_counts=True, dim=None),
    "torch.clear_autocast_cache": lambda L: call(L.clear_autocast_cache),
    "Tensor.resize": lambda L: call(t(L, 6).resize, 2, 3),
    "linalg.lu_factor": lambda L: call(L.linalg.lu_factor, A=t(L, 3, 3), pivot=True),
    "nn.functional.scaled_dot_product_attention": lambda L: call(
        L.nn.functional.scaled_dot_product_attention, query=t(L, 1, 2, 3, 4),
        key=t(L, 1, 2, 3, 4) - 0.2, value=t(L, 1, 2, 3, 4) * 2, attn_mask=None, dropout_p=0.0,
        is_causal=True, scale=0.5, enable_gqa=False),
    "nn.init.calculate_gain": lambda L: call(L.nn.init.calculate_gain,
                                             nonlinearity="leaky_relu", param=0.2),
    "nn.init.constant_": lambda L: call(L.nn.init.constant_, tensor=t(L, 2, 3), val=0.25),
}

# Shared callables with nothing to call here, and why.
NOT_CALLED = {
    "Tensor.ccol_indices": "compressed sparse layouts (CSC/BSC): ember stores sparse as COO only",
    "Tensor.col_indices": "compressed sparse layouts (CSR/BSR): COO only",
    "Tensor.crow_indices": "compressed sparse layouts (CSR/BSR): COO only",
    "Tensor.row_indices": "compressed sparse layouts (CSC/BSC): COO only",
    "Tensor.ipu": "a device neither library has in a CPU build",
    "Tensor.mtia": "a device neither library has in a CPU build",
    "Tensor.xpu": "a device neither library has in a CPU build",
    "Tensor.reinforce": "removed from torch: raises there for any input",
    "torch.resize_as_sparse_": "resizing a sparse tensor in place: not implemented in ember "
                               "(NotImplementedError for any input)",
    "Tensor.resize_as_sparse_": "as torch.resize_as_sparse_",
}
# compared by shape and dtype only (uninitialized memory)
UNDETERMINED = {"Tensor.new", "torch.empty_strided", "Tensor.new_empty_strided",
                # random draws
                "nn.init.uniform", "nn.init.kaiming_normal", "nn.init.kaiming_uniform",
                "nn.init.xavier_normal", "nn.init.xavier_uniform", "nn.init.orthogonal",
                "nn.init.sparse"}
