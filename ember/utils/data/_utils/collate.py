"""``torch.utils.data._utils.collate``: the collate functions, by their torch names."""
from .._collate import (  # noqa: F401
    _ERR_FORMAT as default_collate_err_msg_format,
)
from .._collate import (  # noqa: F401
    _STRING_KINDS as np_str_obj_array_pattern,
)
from .._collate import (  # noqa: F401
    collate,
    collate_float_fn,
    collate_int_fn,
    collate_numpy_array_fn,
    collate_numpy_scalar_fn,
    collate_str_fn,
    collate_tensor_fn,
    default_collate,
    default_collate_fn_map,
    default_convert,
)
