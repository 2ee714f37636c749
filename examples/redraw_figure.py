"""Redraw Yan's Fig 4.5 (mean queue length L1 against the downstream buffer m)
from repro's Parquet export with polars and matplotlib.

    repro run --quick yan-credit-downstream
    repro export --quick yan-credit-downstream --format parquet --out results.parquet
    python3 examples/redraw_figure.py results.parquet fig-4.5.png

The export is tidy: one row per (experiment, series, point, metric) with the
sweep axes as columns (here `m`), `value`, `half_width` (95% CI of
simulations, null for models) and `ci_n`. Prints one line per series with its
number of points, so a script (or CI) can check what was drawn.
"""

import sys

import polars as pl


def main(parquet: str, out: str) -> int:
    df = pl.read_parquet(parquet)
    fig45 = (
        df.filter(
            (pl.col("experiment") == "yan-credit-downstream")
            & (pl.col("metric") == "L1")
            & (pl.col("status") == "done")
        )
        .select(["series", "solver", "m", "value", "half_width"])
        .sort(["series", "m"])
    )
    if fig45.is_empty():
        print("no L1 rows of yan-credit-downstream in", parquet, file=sys.stderr)
        return 1

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8.5 / 2.54, 6 / 2.54))
    for (series, solver), rows in fig45.group_by(["series", "solver"], maintain_order=True):
        m = rows["m"].to_list()
        v = rows["value"].to_list()
        if rows["half_width"].null_count() == rows.height:
            ax.plot(m, v, "-", color="#0072B2", label=f"{series} ({solver})")
        else:
            hw = rows["half_width"].fill_null(0.0).to_list()
            ax.errorbar(m, v, yerr=hw, fmt="o", mfc="white", color="#0072B2",
                        capsize=2, label=f"{series} ({solver}, 95% CI)")
        print(f"{series}: {rows.height} points")
    ax.set_xlabel("downstream buffer m (packets)")
    ax.set_ylabel("mean queue length L1")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=200)
    print("wrote", out)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
