"""``ember.utils.tensorboard.summary``: the builders of Summary records, for programs that write
them through a FileWriter themselves (Lightning's TensorBoardLogger logs hyperparameters with
``hparams(params, metrics)`` and ``writer._get_file_writer().add_summary(...)``).

torch's builders return protobuf objects; ember's return the serialized bytes, which its
FileWriter.add_summary writes (ember has no protobuf dependency).
"""
from __future__ import annotations

from ._summary import histogram, hparams, image, scalar, text

__all__ = ["histogram", "hparams", "image", "scalar", "text"]
