"""``SummaryWriter``: log scalars, histograms, images, text and hyper-parameters for TensorBoard.

The files are real TensorBoard event files (TFRecord-framed ``Event`` protos, encoded by ember
itself), so neither TensorFlow nor the ``tensorboard`` package is needed to write them;
``tensorboard --logdir runs`` (``pip install tensorboard``) displays them.
"""
from __future__ import annotations

import os
import socket
import time
from datetime import datetime

from . import _proto as P
from . import _summary
from ._record import EventFileWriter

__all__ = ["SummaryWriter", "FileWriter"]


class FileWriter:
    """Writes Event protos holding summaries to one event file in ``log_dir``."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        self.event_writer = EventFileWriter(log_dir, max_queue, flush_secs, filename_suffix)

    def get_logdir(self):
        return self.event_writer.get_logdir()

    def add_summary(self, summary, global_step=None, walltime=None):
        walltime = time.time() if walltime is None else walltime
        step = 0 if global_step is None else int(global_step)
        self.event_writer.add_event(P.event(walltime, step, summary=summary))

    def add_session_log_start(self, step, walltime=None):
        walltime = time.time() if walltime is None else walltime
        self.event_writer.add_event(
            P.event(walltime, step, session_log=P.session_log(P.SESSION_START)))

    def flush(self):
        self.event_writer.flush()

    def close(self):
        self.event_writer.close()

    def reopen(self):
        self.event_writer.reopen()


class SummaryWriter:
    """Write TensorBoard event files into ``log_dir``.

    Args:
        log_dir: directory to write to; default ``runs/<Mon DD_HH-MM-SS>_<hostname><comment>``.
        comment: suffix of the default log_dir (ignored when log_dir is given).
        purge_step: on resuming at this step, TensorBoard hides the events with a step >= it
            written by earlier runs into the same directory (a SessionLog START event).
        max_queue: events buffered before they are written to disk.
        flush_secs: at most this many seconds pass before buffered events reach disk.
        filename_suffix: appended to the event file's name.

    Example:
        >>> import tempfile, ember
        >>> from ember.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tempfile.mkdtemp()) as w:
        ...     w.add_scalar("loss", 0.5, global_step=1)

    Differs from torch: ``add_hparams`` records bool hyper-parameters as booleans (PyTorch
    stores them as the numbers 0/1); ``add_graph``, ``add_embedding``, audio and video are not
    supported yet.
    """

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        if not log_dir:
            current_time = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", current_time + "_" + socket.gethostname() + comment)
        self.log_dir = str(log_dir)
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = None
        self.all_writers = None
        self._get_file_writer()

    def _get_file_writer(self):
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs,
                                          self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                self.file_writer.add_session_log_start(self.purge_step)
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        return self.log_dir

    # ---------------------------------------------------------------------------- add_*
    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """Log one number (a Python number or a 1-element tensor/array) under ``tag``."""
        summary = _summary.scalar(tag, scalar_value, new_style, double_precision)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Log several numbers on one chart: each goes to the run ``<log_dir>/<main_tag>_<tag>``
        (a sub-directory with its own event file) under the tag ``main_tag``."""
        walltime = time.time() if walltime is None else walltime
        base = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            sub_dir = base + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self.all_writers.get(sub_dir)
            if fw is None:
                fw = FileWriter(sub_dir, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[sub_dir] = fw
            fw.add_summary(_summary.scalar(main_tag, value), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        """Log the distribution of ``values``; ``bins`` is "tensorflow" (TensorFlow's
        exponential buckets) or anything ``numpy.histogram`` accepts ("auto", an int, edges)."""
        summary = _summary.histogram(tag, values, bins, max_bins)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """Log an image: uint8 in [0, 255] or floats in [0, 1], laid out as ``dataformats``
        ("CHW", "HWC", "HW", ...); 1-channel images are shown in grey."""
        summary = _summary.image(tag, img_tensor, dataformats)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """Log a batch of images tiled into one grid image (8 per row)."""
        summary = _summary.image(tag, img_tensor, dataformats)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """Log a matplotlib figure (or a list of them, as a batch) rendered to an image."""
        import numpy as np
        figures = figure if isinstance(figure, list) else [figure]
        images = []
        for fig in figures:
            fig.canvas.draw()
            images.append(np.asarray(fig.canvas.buffer_rgba())[..., :3].copy())
            if close:
                import matplotlib.pyplot as plt
                plt.close(fig)
        if isinstance(figure, list):
            batch = np.stack(images).transpose(0, 3, 1, 2)
            self.add_images(tag, batch, global_step, walltime, dataformats="NCHW")
        else:
            self.add_image(tag, images[0], global_step, walltime, dataformats="HWC")

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """Log a (markdown) string; TensorBoard shows it under ``<tag>/text_summary``."""
        summary = _summary.text(tag, text_string)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None):
        """Log one trial's hyper-parameters and final metrics for TensorBoard's HParams tab.

        Writes to the run ``<log_dir>/<run_name>`` (default: the current time), like PyTorch:
        the hparams-plugin summaries and then each metric as a scalar.
        """
        exp, ssi, sei = _summary.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        if not run_name:
            run_name = str(time.time())
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=logdir) as w_hp:
            for s in (exp, ssi, sei):
                w_hp.file_writer.add_summary(s, global_step)
            for k, v in metric_dict.items():
                w_hp.add_scalar(k, v, global_step)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        raise RuntimeError("SummaryWriter.add_graph: graph export is not supported by ember "
                           "(it has no graph tracer); log scalars, histograms and images "
                           "instead.")

    # ------------------------------------------------------------------------- lifecycle
    def flush(self):
        """Write every buffered event to disk."""
        if self.all_writers is None:
            return
        for w in self.all_writers.values():
            w.flush()

    def close(self):
        """Flush and close every event file (later add_* calls open new files)."""
        if self.all_writers is None:
            return
        for w in self.all_writers.values():
            w.flush()
            w.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()
