"""Deliberate gaps in ember's mirror of torch's module tree, each with its reason.

PACKAGE_GAPS: whole torch packages ember does not mirror (the test does not walk them).
NAME_GAPS: module -> names ember lacks there (None-valued modules are missing as a whole);
generated from the test's walk and kept current by test_module_paths_gap_list_is_current.
"""
from __future__ import annotations

_TS = ("TorchScript compiler/mobile internals: ember.jit captures ember.fx graphs, it has no "
       "TorchScript language, IR or lite interpreter")
_ONNX_TS = ("the TorchScript-era ONNX exporter's symbolic functions and helpers; ember.onnx "
            "exports from ember.fx graphs with its own translation table")
_FX_INTERNAL = ("torch.fx compiler-pass and symbolic-shape internals (partitioners, "
                "fake-tensor/proxy-tensor tracing, z3 shape checks) used by torch.compile")
_DIST = "torch.distributed feature not implemented in ember (its distributed runs on MPI): "
_DEVICE = "a device or backend ember does not run on (ember is CPU/NumPy only)"
_QUANT = "quantization: ember has no quantized dtypes or kernels"
_INTERNAL = "compiler/tooling internals of torch with no meaning for an eager NumPy library"

PACKAGE_GAPS = {
    "torch.jit.annotations": _TS, "torch.jit.frontend": _TS,
    "torch.jit.generate_bytecode": _TS, "torch.jit.mobile": _TS,
    "torch.jit.quantized": _QUANT, "torch.jit.supported_ops": _TS,
    "torch.jit.unsupported_tensor_ops": _TS,
    "torch.onnx.symbolic_helper": _ONNX_TS, "torch.onnx.utils": _ONNX_TS,
    "torch.onnx.operators": _ONNX_TS,
    **{f"torch.onnx.symbolic_opset{v}": _ONNX_TS for v in range(7, 21)},
    "torch.onnx.ops": "custom ONNX ops (torch.onnx.ops.symbolic, attention...) for the dynamo "
    "exporter: not implemented",
    "torch.onnx.verification": "comparison of a model with its ONNX export through "
    "onnxruntime: not implemented (tests compare ember and onnxruntime directly)",
    "torch.onnx.testing": _INTERNAL,
    "torch.fx.experimental": _FX_INTERNAL, "torch.fx.passes": _FX_INTERNAL,
    "torch.fx.config": _FX_INTERNAL, "torch.fx.operator_schemas": _FX_INTERNAL,
    "torch.fx.tensor_type": _FX_INTERNAL, "torch.fx.annotate": _FX_INTERNAL,
    "torch.fx.immutable_collections": _FX_INTERNAL,
    "torch.fx.traceback": "node provenance (stack traces, source nodes) recorded by "
    "torch.compile/export: ember.fx nodes keep no such metadata",
    "torch.export.custom_obj": _INTERNAL, "torch.export.custom_ops": _INTERNAL,
    "torch.export.decomp_utils": _INTERNAL, "torch.export.passes": _INTERNAL,
    "torch.export.experimental": _INTERNAL,
    "torch.export.pt2_archive": "torch's .pt2 archive layout: ember.export.save writes its "
    "own archive (NOTE [Graph archive format])",
    "torch.export.unflatten": "unflattening an exported program back into the module "
    "hierarchy: not implemented",
    "torch.distributed.elastic": _DIST + "elastic (fault-tolerant, resizable) agents and "
    "rendezvous behind torchrun",
    "torch.distributed.launcher": _DIST + "the elastic launcher API behind torchrun",
    "torch.distributed.launch": _DIST + "the deprecated torch launcher; start ember programs "
    "with mpiexec -n N",
    "torch.distributed.rpc": _DIST + "remote procedure calls and remote references (RRef)",
    "torch.distributed.autograd": _DIST + "autograd across RPC calls",
    "torch.distributed.nn": _DIST + "RemoteModule (built on rpc) and its templates; "
    "ember.distributed.nn has the autograd-aware collectives (all_reduce, all_gather, ...)",
    "torch.distributed.pipelining": _DIST + "pipeline parallelism (stages, schedules, "
    "microbatches)",
    "torch.distributed.tensor": _DIST + "DTensor (sharded tensors) and tensor parallelism; "
    "the names transformers imports exist (placements are real, the rest raises when used)",
    "torch.distributed.device_mesh": _DIST + "device meshes (the layout DTensor uses); the "
    "class and init_device_mesh exist and raise",
    "torch.distributed.fsdp": _DIST + "fully sharded data parallel (FSDP); the policies and "
    "fully_shard/FullyShardedDataParallel exist, and wrapping raises",
    "torch.distributed.checkpoint": _DIST + "sharded (distributed) checkpoints; "
    "ember.save/load of a state_dict per rank works (hf_storage's classes exist and raise)",
    "torch.distributed.algorithms": _DIST + "DDP communication hooks (PowerSGD, compression), "
    "Join and model averaging",
    "torch.distributed.flight_recorder": _DIST + "NCCL flight-recorder trace analysis",
    "torch.distributed.optim.functional_adadelta": _INTERNAL,
    "torch.distributed.optim.functional_adagrad": _INTERNAL,
    "torch.distributed.optim.functional_adam": _INTERNAL,
    "torch.distributed.optim.functional_adamax": _INTERNAL,
    "torch.distributed.optim.functional_adamw": _INTERNAL,
    "torch.distributed.optim.functional_rmsprop": _INTERNAL,
    "torch.distributed.optim.functional_rprop": _INTERNAL,
    "torch.distributed.optim.functional_sgd": _INTERNAL,
    "torch.distributed.optim.apply_optimizer_in_backward": _INTERNAL,
    "torch.distributed.optim.named_optimizer": _INTERNAL,
    "torch.distributed.optim.post_localSGD_optimizer": _DIST + "post-local SGD (needs "
    "model averaging)",
    "torch.distributed.optim.optimizer": _DIST + "DistributedOptimizer (built on rpc)",
    "torch.distributed.optim.utils": _INTERNAL,
    "torch.distributed.argparse_util": _INTERNAL, "torch.distributed.c10d_logger": _INTERNAL,
    "torch.distributed.collective_utils": _INTERNAL, "torch.distributed.config": _INTERNAL,
    "torch.distributed.constants": _INTERNAL, "torch.distributed.debug": _INTERNAL,
    "torch.distributed.logging_handlers": _INTERNAL,
    "torch.distributed.remote_device": _DIST + "remote devices for rpc",
    "torch.distributed.rendezvous": _DIST + "TCP/file/env rendezvous handlers (ember ranks "
    "meet through MPI)",
    "torch.distributed.utils": _INTERNAL,
    "torch.cuda": _DEVICE, "torch.mps": _DEVICE, "torch.xpu": _DEVICE, "torch.mtia": _DEVICE,
    "torch.backends": _DEVICE, "torch.accelerator": _DEVICE, "torch.cpu": _DEVICE,
    "torch.ao": _QUANT, "torch.quantization": _QUANT, "torch.nn.quantized": _QUANT,
    "torch.nn.quantizable": _QUANT, "torch.nn.qat": _QUANT, "torch.nn.intrinsic": _QUANT,
    "torch.compiler": _INTERNAL, "torch.package": _INTERNAL, "torch.utils.hipify": _INTERNAL,
    "torch.utils.benchmark": "partly: Timer, Measurement, Compare over Python statements "
    "(ember.utils.benchmark); the C++/callgrind timers, fuzzers and op benchmarks are not "
    "mirrored", "torch.utils.jit": _INTERNAL,
    "torch.utils.backcompat": _INTERNAL, "torch.utils.bottleneck": _INTERNAL,
    "torch.utils.model_dump": _INTERNAL, "torch.utils.viz": _INTERNAL,
    "torch.masked": "masked tensors: not implemented",
    "torch.nested": "nested (ragged) tensors: not implemented",
    "torch.contrib": _INTERNAL, "torch.testing": "ember.testing has its own API (issue 15)",
    "torch.utils.data.datapipes": "deprecated in torch; ember has the base classes and the common "
    "stages (map/filter/batch/shuffle/zip/concat...), not the whole catalogue",
}


_NOT_YET = "not implemented in ember yet"

NAME_GAPS = {
    'torch': (
        'AVG', 'AcceleratorError', 'AggregationType', 'AliasDb', 'AnyType', 'Argument',
        'ArgumentSpec', 'AwaitType', 'BenchmarkConfig', 'BenchmarkExecutionStats', 'Block',
        'BoolStorage', 'BoolType', 'BufferDict', 'ByteStorage', 'CallStack', 'Capsule',
        'CharStorage', 'ClassType', 'Code', 'CompilationUnit', 'CompleteArgumentSpec',
        'ComplexType', 'ConcreteModuleType', 'ConcreteModuleTypeBuilder', 'DeepCopyMemoTable',
        'DeserializationStorageContext', 'DeviceObjType', 'DictType', 'DisableTorchFunction',
        'DisableTorchFunctionSubclass', 'DispatchKey', 'DispatchKeySet', 'DoubleStorage',
        'EnumType', 'ErrorReport', 'ExcludeDispatchKeyGuard', 'ExecutionPlan',
        'FatalError', 'FileCheck', 'FloatStorage', 'FloatType', 'FunctionSchema', 'Future',
        'FutureType', 'Gradient', 'Graph', 'GraphExecutorState', 'IODescriptor',
        'InferredType', 'IntStorage', 'IntType', 'InterfaceType', 'JITException', 'ListType',
        'LiteScriptModule', 'LockingLogger', 'LongStorage', 'ModuleDict', 'Node', 'NoneType',
        'NoopLogger', 'NumberType', 'OperatorInfo', 'OptionalType', 'ParameterDict', 'PyObjectType',
        'RRefType',
        'SUM', 'ScriptClass', 'ScriptClassFunction', 'ScriptDict', 'ScriptDictIterator',
        'ScriptDictKeyIterator', 'ScriptList', 'ScriptListIterator',
        'ScriptMethod', 'ScriptModuleSerializer', 'ScriptObject',
        'ScriptObjectProperty', 'SerializationStorageContext', 'ShortStorage', 'StaticModule',
        'StreamObjType', 'StringType', 'SymBool', 'SymBoolType', 'SymFloat', 'SymInt',
        'SymIntType', 'Tag', 'TensorType', 'ThroughputBenchmark', 'TracingState', 'TupleType',
        'Type', 'TypedStorage', 'UnionType', 'Use', 'Value',
        'affine_grid_generator', 'alias_copy', 'alpha_dropout_', 'as_strided_copy',
        'as_strided_scatter', 'autocast_decrement_nesting',
        'autocast_increment_nesting', 'batch_norm_backward_elemt', 'batch_norm_backward_reduce',
        'batch_norm_elemt', 'batch_norm_gather_stats', 'batch_norm_gather_stats_with_counts',
        'batch_norm_stats', 'batch_norm_update_stats', 'bit', 'bits16', 'bits1x8', 'bits2x4',
        'bits4x2', 'bits8', 'ccol_indices_copy',
        'chalf',
        'choose_qparams_optimized', 'col_indices_copy', 'complex32',
        'constant_pad_nd', 'conv_tbc',
        'cpp', 'crow_indices_copy',
        'cudnn_affine_grid_generator', 'cudnn_batch_norm', 'cudnn_convolution',
        'cudnn_convolution_add_relu', 'cudnn_convolution_relu', 'cudnn_convolution_transpose',
        'cudnn_grid_sampler', 'cudnn_is_acceptable', 'dequantize', 'detach_copy', 'diagonal_copy',
        'diagonal_scatter', 'dropout_', 'embedding_renorm_',
        'empty_permuted', 'empty_quantized', 'expand_copy',
        'fake_quantize_per_channel_affine', 'fake_quantize_per_tensor_affine',
        'fbgemm_linear_fp16_weight', 'fbgemm_linear_fp16_weight_fp32_activation',
        'fbgemm_linear_int8_weight', 'fbgemm_linear_int8_weight_fp32_activation',
        'fbgemm_linear_quantize_weight', 'fbgemm_pack_gemm_matrix_fp16',
        'fbgemm_pack_quantized_matrix', 'feature_alpha_dropout_', 'feature_dropout',
        'feature_dropout_', 'float4_e2m1fn_x2', 'fork', 'fused_moving_avg_obs_fake_quant',
        'get_autocast_gpu_dtype',
        'get_autocast_ipu_dtype', 'get_autocast_xla_dtype', 'grid_sampler',
        'grid_sampler_2d', 'grid_sampler_3d',
        'gru', 'gru_cell', 'has_lapack', 'has_mkl', 'has_openmp', 'has_spectral', 'hash_tensor',
        'import_ir_module',
        'import_ir_module_from_buffer', 'indices_copy', 'init_num_threads', 'int1',
        'int2', 'int3', 'int4', 'int5', 'int6', 'int7', 'int_repr', 'is_autocast_ipu_enabled',
        'is_autocast_xla_enabled', 'is_distributed', 'lstm', 'lstm_cell', 'max_pool1d_with_indices',
        'merge_type_from_type_comment',
        'miopen_batch_norm', 'miopen_convolution', 'miopen_convolution_add_relu',
        'miopen_convolution_relu', 'miopen_convolution_transpose', 'miopen_ctc_loss',
        'miopen_depthwise_convolution', 'miopen_rnn', 'mkldnn_adaptive_avg_pool2d',
        'mkldnn_convolution', 'mkldnn_linear_backward_weights', 'mkldnn_max_pool2d',
        'mkldnn_max_pool3d', 'mkldnn_rnn_layer', 'native_batch_norm',
        'native_channel_shuffle', 'native_dropout', 'native_group_norm', 'native_layer_norm',
        'native_norm', 'nonzero_static', 'norm_except_dim',
        'parse_ir', 'parse_schema', 'parse_type_comment', 'permute_copy', 'q_per_channel_axis',
        'q_per_channel_scales', 'q_per_channel_zero_points',
        'q_scale', 'q_zero_point', 'qint32', 'qint8', 'qscheme', 'quantize_per_channel',
        'quantize_per_tensor', 'quantize_per_tensor_dynamic', 'quantized_batch_norm',
        'quantized_gru_cell', 'quantized_lstm_cell', 'quantized_max_pool1d', 'quantized_max_pool2d',
        'quantized_max_pool3d', 'quantized_rnn_relu_cell', 'quantized_rnn_tanh_cell', 'quint2x4',
        'quint4x2', 'quint8', 'rnn_relu',
        'rnn_relu_cell', 'rnn_tanh', 'rnn_tanh_cell', 'row_indices_copy', 'select_copy',
        'select_scatter', 'set_autocast_gpu_dtype', 'set_autocast_ipu_dtype',
        'set_autocast_ipu_enabled', 'set_autocast_xla_dtype', 'set_autocast_xla_enabled',
        'slice_copy', 'slice_inverse',
        'slice_scatter', 'sparse_bsc_tensor', 'sparse_bsr_tensor',
        'sparse_compressed_tensor', 'sparse_csc_tensor', 'sparse_csr_tensor', 'split_copy',
        'split_with_sizes_copy', 'squeeze_copy', 'sym_constrain_range',
        'sym_constrain_range_for_size', 'sym_float', 'sym_fresh_size', 'sym_int', 'sym_ite',
        'sym_max', 'sym_min', 'sym_not', 'sym_sqrt', 'sym_sum', 't_copy', 'thread_safe_generator',
        'transpose_copy', 'uint1',
        'uint2', 'uint3', 'uint4', 'uint5', 'uint6', 'uint7',
        'unbind_copy', 'unfold_copy', 'unify_type_list', 'unsafe_chunk', 'unsafe_split',
        'unsafe_split_with_sizes', 'unsqueeze_copy', 'values_copy',
        'view_as_complex_copy', 'view_as_real_copy', 'view_copy', 'wait',
    ),
    'torch.amp.autocast_mode': (
        'autocast_decorator',
    ),
    'torch.autograd': (
        'enforce_grad_layout_policy', ),
    'torch.autograd.function': (
        'BackwardCFunction', 'FunctionMeta', 'InplaceFunction', 'NestedIOFunction',
    ),
    'torch.autograd.grad_mode': (
        'enforce_grad_layout_policy', 'set_multithreading_enabled',
    ),
    'torch.autograd.gradcheck': (
        'get_analytical_jacobian', 'get_numerical_jacobian',
        'get_numerical_jacobian_wrt_specific_input',
    ),
    'torch.autograd.graph': (
        'region_activation_memory_budget', 'set_override_stale_capture_stream',
        'set_warn_on_accumulate_grad_stream_mismatch',
    ),
    'torch.autograd.profiler': (
        'EnforceUnique', 'FunctionEvent', 'KinetoStepTracker', 'MemRecordsAcc',
        'load_nvprof', 'parse_nvprof_trace',
    ),
    'torch.autograd.profiler_legacy': None,
    'torch.autograd.profiler_util': None,
    'torch.autograd.variable': None,
    'torch.futures': None,
    'torch.library': (
        'Library', 'define', 'fallthrough_kernel', 'get_ctx', 'get_kernel', 'impl',
        'impl_abstract', 'infer_schema', 'register_autocast', 'register_torch_dispatch',
        'register_vmap', 'triton_op', 'wrap_triton',
    ),
    'torch.monitor': None,
    'torch.multiprocessing.pool': None,
    'torch.multiprocessing.queue': None,
    'torch.multiprocessing.reductions': (
        'SharedCache', 'StorageWeakRef', 'fd_id', 'rebuild_cuda_tensor', 'rebuild_event',
        'rebuild_meta_tensor', 'rebuild_nested_tensor', 'rebuild_sparse_compressed_tensor',
        'rebuild_sparse_coo_tensor', 'rebuild_storage_empty', 'rebuild_storage_fd',
        'rebuild_storage_filename', 'rebuild_typed_storage', 'rebuild_typed_storage_child',
        'reduce_event', 'reduce_nested_tensor', 'reduce_sparse_tensor', 'reduce_storage',
        'reduce_typed_storage', 'reduce_typed_storage_child', 'shared_cache', 'storage_from_cache',
    ),
    'torch.multiprocessing.spawn': (
        'SpawnContext',
    ),
    'torch.nativert': None,
    'torch.nativert.backends': None,
    'torch.nn.attention': (
        'WARN_FOR_UNFUSED_KERNELS', 'activate_flash_attention_impl',
        'current_flash_attention_impl', 'list_flash_attention_impls',
        'register_flash_attention_impl', 'restore_flash_attention_impl',
    ),
    'torch.nn.attention.bias': None,
    'torch.nn.attention.experimental': None,
    'torch.nn.attention.flex_attention': None,
    'torch.nn.attention.varlen': None,
    'torch.nn.backends': None,
    'torch.nn.backends.thnn': None,
    'torch.nn.common_types': None,
    'torch.nn.cpp': None,
    'torch.nn.functional': (
        'ScalingType', 'SwizzleType', 'assert_int_or_pair', 'scaled_grouped_mm',
        'scaled_mm',
    ),
    'torch.nn.grad': None,
    'torch.nn.modules.linear_cross_entropy': None,
    'torch.nn.modules.module': (
        'register_module_backward_hook', 'register_module_buffer_registration_hook',
        'register_module_module_registration_hook', 'register_module_parameter_registration_hook',
    ),
    'torch.nn.modules.utils': None,
    'torch.nn.parallel.comm': None,
    'torch.nn.parallel.parallel_apply': None,
    'torch.nn.parameter': (
        'UninitializedTensorMixin',
    ),
    'torch.nn.utils.spectral_norm': (
        'SpectralNormLoadStateDictPreHook', 'SpectralNormStateDictHook',
    ),
    'torch.numa': None,
    'torch.numa.binding': None,
    'torch.optim': (
        ),
    'torch.optim.adadelta': (
        'adadelta',
    ),
    'torch.optim.adagrad': (
        'adagrad',
    ),
    'torch.optim.adam': (
        'adam',
    ),
    'torch.optim.adamax': (
        'adamax',
    ),
    'torch.optim.adamw': (
        'adamw',
    ),
    'torch.optim.asgd': (
        'asgd',
    ),
    'torch.optim.nadam': (
        'nadam',
    ),
    'torch.optim.radam': (
        'radam',
    ),
    'torch.optim.rmsprop': (
        'rmsprop',
    ),
    'torch.optim.rprop': (
        'rprop',
    ),
    'torch.optim.sgd': (
        'sgd',
    ),
    'torch.overrides': None,
    'torch.profiler': (
        'DeviceType', 'ExecutionTraceObserver', 'supported_activities',
    ),
    'torch.profiler.itt': None,
    'torch.profiler.profiler': (
        'ExecutionTraceObserver', 'ProfilerAction', 'schedule', 'supported_activities',
        'tensorboard_trace_handler',
    ),
    'torch.profiler.python_tracer': None,
    'torch.return_types': None,
    'torch.serialization': (
        'StorageType', 'check_module_version_greater_or_equal', 'mkdtemp',
        'normalize_storage_type', 'register_package', 'skip_data', 'storage_to_tensor_type',
        'validate_cuda_device', 'validate_hpu_device',
    ),
    'torch.sparse': (
        'SparseSemiStructuredTensor', 'SparseSemiStructuredTensorCUSPARSELT',
        'SparseSemiStructuredTensorCUTLASS', 'as_sparse_gradcheck', 'solve',
        'to_sparse_semi_structured',
    ),
    'torch.sparse.semi_structured': None,
    'torch.storage': None,
    'torch.utils': (
        'set_module', 'swap_tensors',
    ),
    'torch.utils.backend_registration': None,
    'torch.utils.bundled_inputs': None,
    'torch.utils.checkpoint': (
        'CheckpointPolicy', 'GraphExecGroup', 'SAC_IGNORED_OPS', 'SelectiveCheckpointContext',
        'create_selective_checkpoint_contexts',
    ),
    'torch.utils.collect_env': None,
    'torch.utils.cpp_backtrace': None,
    'torch.utils.cpp_extension': None,
    'torch.utils.data': (
        '_DatasetKind',
        ),
    'torch.utils.data.backward_compatibility': None,
    'torch.utils.data.graph': None,
    'torch.utils.data.graph_settings': None,
    'torch.utils.debug_log': None,
    'torch.utils.deterministic': None,
    'torch.utils.file_baton': None,
    'torch.utils.flop_counter': None,
    'torch.utils.hooks': ('BackwardHook', 'warn_if_has_hooks'),
    'torch.utils.mkldnn': None,
    'torch.utils.mobile_optimizer': None,
    'torch.utils.module_tracker': None,
    'torch.utils.serialization': None,
    'torch.utils.serialization.config': None,
    'torch.utils.show_pickle': None,
    'torch.utils.tensorboard': (
        'RecordWriter',
    ),
    'torch.utils.tensorboard.summary': None,
    'torch.utils.throughput_benchmark': None,
    'torch.utils.weak': None,
    # torch.distributed / export / fx / jit / onnx: names inside modules ember mirrors;
    # each group's reason is in NAME_GAP_REASONS below.
    'torch.distributed': (
        'QueueEmptyError', 'breakpoint',
    ),
    'torch.distributed.distributed_c10d': (
        'AllToAllOptions', 'AllreduceCoalescedOptions', 'AllreduceOptions', 'BackendConfig',
        'BarrierOptions', 'BroadcastOptions', 'GatherOptions', 'GroupName',
        'PrefixStore', 'ProcessGroupGloo', 'ReduceOptions', 'ReduceScatterOptions',
        'ScatterOptions', 'Store', 'all_gather_coalesced', 'all_gather_single',
        'all_reduce_coalesced', 'get_backend_config',
        'get_default_backend_for_device', 'new_subgroups_by_enumeration', 'record_comm',
        'reduce_scatter_single', 'shrink_group', 'split_group',
    ),
    'torch.distributed.optim': (
        'DistributedOptimizer', 'PostLocalSGDOptimizer', 'as_functional_optim',
    ),
    'torch.distributed.run': (
        'config_from_args', 'determine_local_world_size', 'get_args_parser', 'get_rdzv_endpoint',
        'get_use_env', 'parse_args', 'parse_min_max_nnodes', 'run', 'run_script_path',
    ),
    'torch.export': (
        'AdditionalInputs', 'Constraint', 'CustomDecompTable', 'ExportBackwardSignature',
        'FlatArgsAdapter', 'ModuleCallEntry', 'ModuleCallSignature', 'ShapesCollection',
        'UnflattenedModule', 'default_decompositions', 'draft_export', 'register_dataclass',
        'unflatten',
    ),
    'torch.export.dynamic_shapes': (
        'AdditionalInputs', 'Constraint', 'refine_dynamic_shapes_from_suggested_fixes',
    ),
    'torch.export.exported_program': (
        'ModuleCallEntry', 'ModuleCallSignature', 'default_decompositions',
    ),
    'torch.export.graph_signature': (
        'ConstantArgument', 'CustomObjArgument', 'ExportBackwardSignature', 'SymBoolArgument',
        'SymFloatArgument', 'SymIntArgument',
    ),
    'torch.fx.graph': (
        'CodeGen',
    ),
    'torch.fx.graph_module': (
        'reduce_graph_module', 'reduce_package_graph_module',
    ),
    'torch.fx.node': (
        'has_side_effect',
    ),
    'torch.fx.proxy': (
        'MetaProxy', 'ParameterProxy', 'Scope', 'ScopeContextManager',
    ),
    'torch.fx.subgraph_rewriter': (
        'ReplacedPatterns', 'replace_pattern_with_filters',
    ),
    'torch.jit': (
        'CompilationUnit', 'Future', 'export_opnames',
    ),
    'torch.onnx': (
        'ExportableModule', 'InputObserver', 'ops',
    ),
}

# Why the names above are missing, for the packages ember mirrors in part (user-readable).
NAME_GAP_REASONS = {
    "torch.library": "ember.library serves custom_op with register_autograd/register_fake; "
    "operator libraries per dispatch key (Library, define, impl), kernels for other "
    "dispatch keys (autocast, vmap, torch_dispatch) and Triton ops are not implemented",
    "torch.distributed": "QueueEmptyError belongs to the TCP store; breakpoint (a pdb stop on "
    "one rank) is not implemented",
    "torch.distributed.distributed_c10d": "per-collective option structs, stores, Gloo and "
    "coalesced/split-group collectives of c10d: ember's collectives take their options as "
    "arguments and run on MPI",
    "torch.distributed.optim": "DistributedOptimizer needs rpc; post-local SGD needs model "
    "averaging; neither is implemented (ZeroRedundancyOptimizer is)",
    "torch.distributed.run": "torchrun's elastic launcher internals: ember.distributed.run "
    "starts ranks through mpiexec",
    "torch.export": "ember.export has export/save/load, ExportedProgram and Dim; constraints, "
    "decomposition tables, draft_export, unflatten and dataclass registration are not "
    "implemented",
    "torch.export.dynamic_shapes": "only Dim: no constraint objects or suggested-fix refinement",
    "torch.export.exported_program": "no module-call signatures or decomposition tables",
    "torch.export.graph_signature": "ember's signatures hold tensor arguments only (no "
    "symbolic ints, constants or custom objects, no backward signature)",
    "torch.fx.graph": "CodeGen (pluggable code generation of a Graph) is not implemented",
    "torch.fx.graph_module": "pickling hooks of torch.package",
    "torch.fx.node": "has_side_effect registers ops for dead-code elimination: not implemented",
    "torch.fx.proxy": "ParameterProxy, MetaProxy and module-scope tracking are not implemented",
    "torch.fx.subgraph_rewriter": "replace_pattern works; the filtered variant is not "
    "implemented",
    "torch.jit": "TorchScript's CompilationUnit and Future types and mobile op lists: ember has "
    "no TorchScript runtime (jit.fork runs eagerly)",
    "torch.onnx": "the dynamo exporter's ExportableModule/InputObserver and custom ops "
    "(torch.onnx.ops) are not implemented",
}
