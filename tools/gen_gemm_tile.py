"""Write ember/ops/_kernels/gemm_tile.py, the register tile of NOTE [A register tile] in
ember/ops/_kernels/gemm.py.

    python tools/gen_gemm_tile.py

The tile keeps MR x NR sums in named locals (LLVM's SLP vectoriser packs each row's NR of them
into vector registers); written by hand they would be a page of near-identical lines, so this
script writes them. Rerun it after changing MR or NR here, and commit the result.
"""
import os

MR, NR = 8, 32
OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                   "ember", "ops", "_kernels", "gemm_tile.py")


def _source():
    sums = [(i, j) for i in range(MR) for j in range(NR)]
    out = [
        '"""The register tile of NOTE [A register tile] in gemm.py. Written by',
        'tools/gen_gemm_tile.py: edit that and rerun it, not this file."""',
        "",
        "import numba",
        "import numpy as np",
        "",
        f"MR, NR = {MR}, {NR}",
        "_U = np.uint64",
        "",
        "",
        '@numba.njit(nogil=True, cache=True, fastmath={"contract"})',
        "def tile(a, r, q0, b, br, bc, kk, c, cr, cc):",
        f'    """c[cr:cr+{MR}, cc:cc+{NR}] += a[r:r+{MR}, q0:q0+kk] @ b[br:br+kk, bc:bc+{NR}] (all',
        "    indices unsigned). Each sum starts at zero and takes its kk terms in order, one FMA",
        "    a term, before it is added to c.\"\"\"",
        "    z = c.dtype.type(0)",
    ]
    for i, j in sums:
        out.append(f"    s{i}_{j} = z")
    out.append("    for p in range(_U(0), kk):")
    out.append("        q = q0 + p")
    out.append("        t = br + p")
    for i in range(MR):
        out.append(f"        x{i} = a[r + _U({i}), q]")
    for j in range(NR):
        out.append(f"        b{j} = b[t, bc + _U({j})]")
    for i, j in sums:
        out.append(f"        s{i}_{j} += x{i} * b{j}")
    for i in range(MR):
        out.append(f"    r{i} = cr + _U({i})")
    for i, j in sums:
        out.append(f"    c[r{i}, cc + _U({j})] += s{i}_{j}")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    with open(OUT, "w") as f:
        f.write(_source())
    print("wrote", OUT)
