"""The example programs run, in reduced form, and learn."""
import os
import runpy
import sys

import numpy as np
import pytest

import ember

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "examples"))


def test_train_digits_loss_falls_and_resume(tmp_path):
    pytest.importorskip("sklearn", reason="scikit-learn provides the digits dataset")
    import train_digits
    ckpt = str(tmp_path / "digits.ember")
    losses, acc = train_digits.main(["--epochs", "2", "--quiet", "--checkpoint", ckpt])
    assert np.mean(losses[-10:]) < 0.5 * np.mean(losses[:10])
    assert acc > 0.85 and os.path.exists(ckpt)
    saved = ember.load(ckpt)
    assert saved["epoch"] == 1 and "conv1.weight" in saved["model"]
    losses2, acc2 = train_digits.main(["--epochs", "3", "--quiet", "--checkpoint", ckpt,
                                       "--resume"])
    assert len(losses2) == len(losses) // 2  # only the third epoch ran
    assert acc2 > 0.85


def test_gan_learns_the_mixture(tmp_path):
    import gan
    _, untrained = gan.main(["--steps", "0", "--out", str(tmp_path / "g0.png")])
    history, trained = gan.main(["--steps", "400", "--out", str(tmp_path / "g.png"),
                                 "--log-every", "1000"])
    assert trained < 0.6 * untrained
    assert all(np.isfinite(d) and np.isfinite(g) for d, g in history)


def test_listing1_runs():
    runpy.run_path(os.path.join(ROOT, "examples", "listing1.py"), run_name="__main__")
