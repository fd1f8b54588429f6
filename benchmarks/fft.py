"""FFT sizes in ember.fft, scipy.fft (what ember calls) and torch.fft, measured side by side in
one run (issue 17: "at the speed of scipy.fft").

    python benchmarks/fft.py [--repeats 30] [--threads 1]

Prints the median time per call of each and the ratios ember/scipy (the overhead ember adds
around pocketfft: argument checks, the Tensor wrap, the autograd bookkeeping) and ember/torch.
All three are pinned to the same thread count (--threads, default 1) so the ratios compare the
libraries, not the thread pools; on a shared machine the numbers are a smoke run.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

# (label, shape, transform, transform kwargs)
CASES = [
    ("fft 1k c64", (1024,), "fft", {}),
    ("fft 64x4k c64", (64, 4096), "fft", {}),
    ("fft 1M c64", (1 << 20,), "fft", {}),
    ("rfft 64x4k f32", (64, 4096), "rfft", {}),
    ("rfft 1M f64", (1 << 20,), "rfft", {}),
    ("irfft 64x2049 c64", (64, 2049), "irfft", {}),
    ("fft2 512x512 c64", (512, 512), "fft2", {}),
    ("rfft2 16x256x256 f32", (16, 256, 256), "rfft2", {}),
    ("fft 64x4095 (odd) c64", (64, 4095), "fft", {}),
    ("stft 16k f32 n_fft=512", (16000,), "stft", {}),
]


def _data(shape, transform, label):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape)
    dtype = "float64" if "f64" in label else "float32"
    if "c64" in label:
        return (a + 1j * rng.standard_normal(shape)).astype("complex64")
    return a.astype(dtype)


def _median(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _calls(transform, a):
    import scipy.fft as sf
    import torch

    import ember
    if transform == "stft":
        w_e, w_t = ember.hann_window(512), torch.hann_window(512)
        x_e, x_t = ember.tensor(a), torch.tensor(a)
        return (lambda: ember.stft(x_e, 512, 128, window=w_e, return_complex=True),
                None,
                lambda: torch.stft(x_t, 512, 128, window=w_t, return_complex=True))
    x_e, x_t = ember.tensor(a), torch.tensor(a)
    axes = (-2, -1) if transform.endswith("2") else (-1,)
    sp = {"fft": sf.fft, "rfft": sf.rfft, "irfft": sf.irfft, "fft2": sf.fft2,
          "rfft2": sf.rfft2}[transform]
    return (lambda: getattr(ember.fft, transform)(x_e),
            lambda: sp(a, axes=axes) if len(axes) == 2 else sp(a),
            lambda: getattr(torch.fft, transform)(x_t))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    import torch

    import ember
    torch.set_num_threads(args.threads)
    ember.set_num_threads(args.threads)
    print(f"threads={args.threads} repeats={args.repeats}  (median ms per call)")
    print(f"{'case':26s} {'ember':>9s} {'scipy':>9s} {'torch':>9s} {'e/scipy':>8s} "
          f"{'e/torch':>8s}")
    for label, shape, transform, _ in CASES:
        a = _data(shape, transform, label)
        ours, sp, ref = _calls(transform, a)
        t_e = _median(ours, args.repeats)
        t_s = _median(sp, args.repeats) if sp else float("nan")
        t_t = _median(ref, args.repeats)
        print(f"{label:26s} {t_e * 1e3:9.3f} {t_s * 1e3:9.3f} {t_t * 1e3:9.3f} "
              f"{t_e / t_s:8.2f} {t_e / t_t:8.2f}")


if __name__ == "__main__":
    main()
