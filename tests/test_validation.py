"""The validation appendix's tables (multigpu.evidence.validation): every comparison accounted for, error bounds.

The measured values come from data/measurements.csv (sources row by row there), measurements.OUT_OF_SAMPLE
and trainingruns.K22_RUNS (Korthikanti et al. 2022, https://arxiv.org/abs/2205.05198, Table 5); the bounds
below are the error budget the appendix reports, so a change that makes the model worse on any row fails.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from multigpu.book import app_validation_figures, plotting
from multigpu.comm import calibration
from multigpu.evidence import bottlenecks, measurements, trainingruns, validation


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return validation.comparisons()


def test_every_comparison_is_there_once(table):
    compared = measurements.compare()
    assert len(table) == len(compared) + len(measurements.OUT_OF_SAMPLE) + len(trainingruns.training_validation())
    assert table["ref"].is_unique
    assert {f"#{i}" for i in compared["id"]} <= set(table["ref"])
    assert set(table["set"]) <= set(validation.SETS) and set(table["kind"]) == set(validation.KINDS)


def test_error_is_predicted_over_measured_minus_one(table):
    expected = 100 * (table["predicted"] / table["measured"] - 1)
    assert (table["error_pct"] - expected).abs().max() < 1e-9
    row75 = table.set_index("ref").loc["#75"]
    # [MLM] 138 TFLOP/s per GPU -> ~32 s per iteration; the model, at the megatron stack's kernels, within 5 %
    assert row75["unit"] == "s per iteration" and 31 < row75["measured"] < 33 and abs(row75["error_pct"]) < 5


def test_sets_follow_the_fits(table):
    fitted_ids = calibration.default().fitted_ids()
    refs = table.set_index("ref")
    for i in measurements.compare()["id"]:
        assert (refs.loc[f"#{i}", "set"] == "fitted on") == (i in fitted_ids), i
    training = refs[refs["kind"] == "training"]
    assert not (training["set"] == "fitted on").any()  # Korthikanti et al.'s runs are in no fit
    assert (training["set"] == "out of sample").sum() == 2 * len(trainingruns.K22_RUNS) + 1
    assert set(refs[refs.index.str.startswith("O")]["set"]) == {"out of sample"}


def test_every_measured_row_is_compared_or_explained():
    coverage = validation.coverage()
    measured = measurements.measurements()
    assert set(coverage["id"]) == set(measured[measured["kind"] == "measured"]["id"])
    unexplained = coverage[(coverage["compared"] == "no") & (coverage["note"].str.len() < 40)]
    assert unexplained.empty
    assert set(coverage[coverage["compared"] == "no"]["id"]) >= {79, 80, 81, 82}  # MLPerf time-to-train


def test_coverage_refuses_an_unexplained_row(monkeypatch):
    monkeypatch.setattr(validation, "NOT_COMPARED", {k: v for k, v in validation.NOT_COMPARED.items() if k != 96})
    with pytest.raises(ValueError, match="measurement 96"):
        validation.coverage()


#: |error| bounds (%) per set and kind: what the appendix reports, with the documented misses apart. Held-out
#: collectives: #9 (1 MiB through torch.distributed, -27 %) is the worst since the harness cost is fitted on sweeps;
#: held-out training: row 75, +0.4 %; out-of-sample training: Korthikanti et al.'s runs, the worst the 530B run
#: with 8-way data parallelism (K9, -9.8 %).
BOUNDS = {("fitted on", "collective"): 10, ("fitted on", "copy"): 8,
          ("held out", "collective"): 30, ("held out", "copy"): 20, ("held out", "training"): 5,
          ("out of sample", "collective"): 20, ("out of sample", "training"): 11}


def test_error_bounds_by_set_and_kind(table):
    regular = table[table["known_miss"] == ""]
    for (row_set, kind), part in regular.groupby(["set", "kind"]):
        worst = part["error_pct"].abs().max()
        assert worst <= BOUNDS[(row_set, kind)], (row_set, kind, part.loc[part["error_pct"].abs().idxmax(), "ref"])


def test_documented_misses_are_misses_and_have_a_corrected_twin(table):
    misses = table[table["known_miss"] != ""].set_index("ref")
    assert len(misses) >= 1
    assert (misses["error_pct"].abs() > 20).all()
    refs = table.set_index("ref")
    # the catalogue-wiring misses have a check with the measured box's wiring, which passes
    assert abs(refs.loc["O13", "error_pct"]) <= 10 and abs(refs.loc["O10", "error_pct"]) <= 20


def test_error_summary_regimes(table):
    summary = validation.error_summary(table).set_index("regime")
    assert summary.loc["all comparisons", "rows"] == len(table)
    assert summary.loc["fitted on (in sample)", "rows"] + summary.loc["not fitted (held out + out of sample)",
                                                                      "rows"] == len(table)
    assert summary.loc["collectives", "rows"] + summary.loc["copies", "rows"] + \
        summary.loc["training iterations", "rows"] == len(table)
    # in sample is better than out of sample, and the bandwidth-bound regime is the best of all
    assert summary.loc["fitted on (in sample)", "median_abs_error_pct"] <= \
        summary.loc["not fitted (held out + out of sample)", "median_abs_error_pct"]
    assert summary.loc["collectives, large messages (>= 64 MiB) and NIC rates", "median_abs_error_pct"] <= 3
    assert summary.loc["not fitted (held out + out of sample)", "median_abs_error_pct"] <= 10
    assert summary.loc["out of sample, documented misses left out", "worst_abs_error_pct"] <= 20
    worst = summary.loc["all comparisons"]
    assert worst["worst_abs_error_pct"] == pytest.approx(table["error_pct"].abs().max(), abs=0.05)


def test_summary_on_a_small_table_is_exact():
    table = pd.DataFrame({"ref": ["a", "b", "c"], "set": ["fitted on", "held out", "out of sample"],
                          "kind": ["collective", "copy", "training"], "size_class": ["large", "large", ""],
                          "known_miss": ["", "", ""], "error_pct": [1.0, -4.0, 30.0]})
    s = validation.error_summary(table).set_index("regime")
    assert s.loc["all comparisons", "median_abs_error_pct"] == 4.0
    assert s.loc["all comparisons", "worst_ref"] == "c" and s.loc["all comparisons", "within_10pct"] == 2
    assert s.loc["all comparisons", "median_error_pct"] == 1.0
    assert "collectives, small messages (< 64 MiB)" not in s.index  # empty regimes are left out


def test_misses_are_sorted_worst_first(table):
    misses = validation.misses(table, above_pct=10)
    assert (misses["error_pct"].abs() > 10).all()
    assert list(misses["error_pct"].abs()) == sorted(misses["error_pct"].abs(), reverse=True)
    assert len(misses) == int((table["error_pct"].abs().round(1) > 10).sum())  # as shown: 10.04 % is no miss


def test_print_tables_split_the_comparisons(table):
    reference = validation.reference_table(table)
    training = validation.training_table(table)
    oos = validation.out_of_sample_table(table)
    assert len(reference) + len(training) + len(oos) == len(table)
    assert {"measured_GBps", "predicted_GBps", "error_pct"} <= set(reference.columns)
    assert {"measured_s", "predicted_s"} <= set(training.columns)
    assert list(oos["ref"]) == [f"O{i}" for i in range(1, len(measurements.OUT_OF_SAMPLE) + 1)]
    # a wiring the measurements rule out is a named catalogue variant (O12), not the default (O13)
    by_ref = oos.set_index("ref")
    assert by_ref.loc["O12", "system"] != by_ref.loc["O13", "system"] and by_ref.loc["O13", "variant"] == ""
    assert by_ref.loc["O8", "variant"] == "pcie_p2p=True" and by_ref.loc["O1", "variant"] == ""
    # the tolerance column is the one the package's tests use (test_calibration.test_out_of_sample_checks)
    assert (oos["within_tolerance"] == (oos["known_miss"] == "")).all()


def test_vendor_rows_are_kept_apart(table):
    vendor = validation.vendor_statements()
    kinds = measurements.measurements().set_index("id")["kind"]
    assert len(vendor) >= 1 and (kinds[vendor["id"]] != "measured").all()
    assert not set(f"#{i}" for i in vendor["id"]) & set(table["ref"])


def test_figure_has_both_panels_and_markers_for_every_row(table):
    fig, axes = plotting.figure("t", "measured", "predicted", source="test", ncols=2)
    app_validation_figures.plot_predicted_vs_measured(axes, table)
    left, right = axes
    points = lambda ax: sum(len(c.get_offsets()) for c in ax.collections)  # noqa: E731
    assert points(left) == int((table["kind"] != "training").sum())
    assert points(right) == int((table["kind"] == "training").sum())
    assert left.get_xscale() == left.get_yscale() == "log"
    assert "GB/s" in left.get_xlabel() and "s per iteration" in right.get_ylabel()
    labels = {t.get_text() for ax in axes for t in ax.texts}
    assert set(table[table["error_pct"].abs() > 10]["ref"]) <= labels
    plt.close(fig)


def test_training_nodes_are_dgx_a100_nodes(table):
    training = table[table["kind"] == "training"]
    assert all(n == math.ceil(g / 8) for g, n in zip(training["gpus"], training["nodes"]))


def test_the_appendix_names_every_miss():
    # the prose of "Where the model is weak, and why" is written by hand around glued numbers: every row
    # off by more than 10 % must be named there, so that a new miss cannot pass unexplained
    import re
    from pathlib import Path

    import nbformat

    notebook = nbformat.read(Path(__file__).resolve().parents[1] / "book" / "appendix" / "validation.ipynb",
                             as_version=4)
    text = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    weak = text[text.index("## Where the model is weak"):text.index("## Vendor-modelled rows")]
    named = set(re.findall(r"(#\d+|\b[OK]\d+\b)", weak))
    assert set(validation.misses(above_pct=10)["ref"]) <= named


def test_every_regime_has_a_key_and_a_mask(table):
    summary = validation.error_summary(table)
    assert list(summary["regime"]) == list(validation.REGIMES.values())  # every regime has rows here
    assert len(set(validation.REGIMES.values())) == len(validation.REGIMES)


def test_comparisons_use_the_calibration_they_are_given(table):
    slow = validation.comparisons(bottlenecks.scaled_network(bandwidth=0.5))
    assert list(slow["ref"]) == list(table["ref"]) and (slow["measured"] == table["measured"]).all()
    refs = slow.set_index("ref")["predicted"] / table.set_index("ref")["predicted"]
    kind = table.set_index("ref")["kind"]
    # every bandwidth-bound collective is predicted slower; the reference-set rows, the out-of-sample ones
    # and the training runs all see the calibration
    assert (refs[kind == "collective"] < 1).any() and (refs[kind == "training"] > 1).all()
    assert (refs[[r for r in refs.index if r.startswith("O")]] < 1).all()
    vendor = validation.vendor_statements(bottlenecks.scaled_network(bandwidth=0.5))
    assert (vendor["predicted_GBps"] < validation.vendor_statements()["predicted_GBps"]).all()
