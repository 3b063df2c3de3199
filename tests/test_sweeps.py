"""Published collective sweeps: the split rule, the fit that uses only the fit split, and the model's
error on sweeps it never saw (``data/sweeps_index.csv``, ``data/sweeps.csv``)."""

import dataclasses
import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from multigpu.comm import calibration, collectives
from multigpu.comm.ncclenv import Settings
from multigpu.common.datafiles import DATA_DIR
from multigpu.evidence import fitquality, sweepfit, sweeps


def split_of(ident: str) -> str:
    """The rule every data file of published runs uses: the first hex digit of sha256(id)."""
    digit = int(hashlib.sha256(ident.encode()).hexdigest()[0], 16)
    return "fit" if digit <= 4 else ("holdout" if digit <= 10 else "sealed")


#: the sealed sweeps opened in the first look (2026-12-04, at a44b4e9)
FIRST_LOOK = {"a100-16-2n-ar-roce-ocioke", "a100-8-ar-nccltests-mleng", "a100-8-sendrecv-nccltests-liplus",
              "gb200-1440-20rack-ar-coreweave", "h100-16-2n-ag-tcpx-cta3high", "h100-16-2n-ag-tcpxo-a3mega-gke",
              "h100-16-2n-ar-efa-eksbp1966", "h100-16-2n-ar-efa-eksbp2035", "h100-16-2n-ar-ib-ncclt309",
              "h200-16-2n-ar-socket-schmaus", "h200-8-ar-azure-ndh200v5", "t4-2-2n-ar-socket-awsdoeks",
              "v100-4-ar-oneshot-sglangv100pr2"}
#: the sweeps sealed after the first look, opened in the second (2026-12-04, at 1fa6699)
SECOND_LOOK = {"h100-1024-128n-ar-unk-ncclt322", "h100-128-16n-ar-unk-nccl1469", "h100-64-8n-ag-efa-cgawsbench",
               "h200-16-2n-ag-roce-gcpgibpods", "v100-32-4n-ar-efa-jkgist2019", "v100-64-8n-ar-efa-jkgist2019"}
#: the sweeps sealed after the second look, opened in the third (2026-12-04, at 25a1480)
THIRD_LOOK = {"gb200-8-ar-mnnvl-ocioke", "mi355x-8-ar-alibabaamd", "h100-16-2n-ag-tcpx-ctk3644",
              "h100-4-ag-nvswitch-whquiet", "h100-80-10n-ar-xxrjun", "h100-8-ar-xxrjun", "a100-16-2n-ar-tcp-aksipoib"}
#: every sealed sweep, each opened once; a sweep added later whose hash says sealed goes to sealed2
OPENED_SEALED = FIRST_LOOK | SECOND_LOOK | THIRD_LOOK


@pytest.mark.parametrize("name, column", [("sweeps_index.csv", "sweep"), ("training_runs.csv", "id"),
                                          ("serving_runs.csv", "id")])
def test_every_split_follows_the_sha256_rule(name, column):
    table = pd.read_csv(DATA_DIR / name)
    assert table[column].is_unique
    split = table["split"].replace("sealed2", "sealed")
    assert (table[column].map(split_of) == split).all()


def test_the_opened_sealed_set_stays_as_it_was_opened():
    """Sweeps added after the looks at the sealed sets (2026-12-04) that hash to sealed form the next sealed
    set, ``sealed2``: the opened set neither grows nor shrinks, and no book page shows a sealed2 sweep."""
    table = pd.read_csv(DATA_DIR / "sweeps_index.csv")
    assert set(table.loc[table["split"] == "sealed", "sweep"]) == OPENED_SEALED
    next_sealed = set(table.loc[table["split"] == "sealed2", "sweep"])
    pages = sorted((Path(__file__).resolve().parents[1] / "book").rglob("*.ipynb"))
    assert len(pages) >= 8
    for page in pages:  # no page shows a sweep of the next sealed set
        text = page.read_text(encoding="utf-8")
        assert not [name for name in next_sealed if name in text], page.name


def test_every_point_belongs_to_a_listed_sweep_and_agrees_with_its_own_bandwidths():
    data = sweeps.points()
    assert set(data["sweep"]) <= {s.sweep for s in sweeps.sweeps()}
    both = data.dropna(subset=["time_us", "algbw_GBps"])
    both = both[both["algbw_GBps"] >= 1.0]  # printed to 2 decimals: smaller values are too rounded to check
    assert np.allclose(both["bytes"] / both["time_us"] / 1e3, both["algbw_GBps"], rtol=0.03)


def test_unmodelled_sweeps_say_why():
    missing = sweeps.not_modelled()
    assert not missing.empty and missing["reason"].str.len().gt(10).all()


def test_the_fit_reads_only_the_fit_split():
    data = sweepfit.fit_data()
    assert data.sweeps and {s.split for s in data.sweeps} == {"fit"}


@pytest.fixture(scope="module")
def refit():
    return sweepfit.fit_result()


def test_the_shipped_constants_reach_the_refits_loss(refit):
    """The optimiser's path depends on how the machine's BLAS rounds (the fit is flat in several directions), the
    loss it reaches does not: the shipped constants must reach it within fitquality.LOSS_RTOL (0.01 %)."""
    shipped = sweepfit.loss()
    assert fitquality.loss_agrees(shipped, refit.loss), (shipped, refit.loss)


def test_each_constant_the_data_determine_is_the_refits(refit):
    """By the rule of multigpu.evidence.fitquality: a determined constant (one standard error at most 10 % of
    its value) within one standard error of the refit; one at a bound at the same bound; a loose one (the data
    leave it free at the same loss) is not compared. The file records what the data say of each: the same
    constants are determined in the shipped file and in the refit."""
    shipped = calibration.default()
    for parameter in sweepfit.FITTED:
        estimate = refit.estimates[parameter.ident]
        value = shipped.value(*parameter.ident)
        assert fitquality.agrees(value, estimate, (parameter.low, parameter.high), parameter.log), (
            parameter.ident, value, estimate)
        recorded = shipped.constant(*parameter.ident)
        assert (recorded.fit_status == calibration.DETERMINED) == (estimate.status == calibration.DETERMINED), (
            parameter.ident, recorded.fit_status, estimate)
        if estimate.status == calibration.DETERMINED:
            assert recorded.std_error == pytest.approx(estimate.std_error, rel=0.25), parameter.ident
    determined = [e for e in refit.estimates.values() if e.status == calibration.DETERMINED]
    assert len(determined) >= len(sweepfit.FITTED) / 2  # most constants are pinned down by the data


def test_each_fitted_constant_names_the_sweeps_it_moves():
    shipped = calibration.default()
    moved = sweepfit.influence(shipped)
    for parameter in sweepfit.FITTED:
        constant = shipped.constant(*parameter.ident)
        assert constant.fitted_sweeps == moved[parameter.ident]
        assert constant.fitted_sweeps, parameter.ident  # a constant no fit sweep moves was not fitted on anything
        assert constant.source.startswith("fitted")


def test_the_ramp_lowers_bandwidth_only_below_its_full_size():
    """Below S_full the ramp makes mid-size messages slower than the ramp-free model; above, it changes
    nothing (H100 NVLS on 8 GPUs: 16 MiB slower, twice S_full = 8 x ``bytes_per_rank`` equal)."""
    from multigpu.comm import collectives

    shipped = calibration.default()
    flat = shipped.replace({("bandwidth_ramp", "exponent"): 0.0})
    sizes = np.array([2.0**24, 2 * 8 * shipped.value("bandwidth_ramp", "bytes_per_rank")])
    ramped = collectives.time_us("allreduce", "hgx-h100", 8, sizes, algorithm="nvls", cal=shipped)
    plain = collectives.time_us("allreduce", "hgx-h100", 8, sizes, algorithm="nvls", cal=flat)
    assert ramped[0] > plain[0] * 1.1
    assert ramped[1] == pytest.approx(plain[1])


@pytest.mark.parametrize("system, fabric", [("hgx-h100", "efa"), ("dgx-b200", "roce"), ("hgx-h200", "ib")])
def test_all_gather_and_reduce_scatter_fill_the_network_at_all_reduces_message_size(system, fabric):
    """Each ring step of all-reduce, all-gather and reduce-scatter carries S/n bytes per rank, so across nodes the
    three reach the same share of their bandwidth at the same message size S; all-gather, moving half all-reduce's
    bytes, has then run half as long. Ring/Simple on 2 nodes, 1 MiB to 32 GiB: the ramp's extra time over the
    bandwidth term (the ramp-free time's growth from S/2 to S is half that term, whatever the latency) is the same
    share of it for the three, and falls from above 10 % to below 1 %."""
    from multigpu.comm import collectives

    shipped = calibration.default()
    flat = shipped.replace({("bandwidth_ramp", "net.exponent"): 0.0})
    sizes = 2.0 ** np.arange(20, 36, 0.125)
    where = f"{system}@{fabric}"

    def shortfall(op):
        ramped, plain, plain_half = (
            collectives.evaluate(op, where, 16, s, nodes=2, algorithm="ring", protocol="simple", cal=c)["time_us"]
            for s, c in ((sizes, shipped), (sizes, flat), (sizes / 2, flat)))
        share = (ramped - plain) / (2 * (plain - plain_half))
        assert share[0] > 0.1 and share[-1] < 0.01 and np.all(np.diff(share) < 0), op
        return share

    assert np.allclose(shortfall("allgather"), shortfall("allreduce"), rtol=1e-6)
    assert np.allclose(shortfall("reducescatter"), shortfall("allreduce"), rtol=1e-6)


@pytest.fixture(scope="module")
def holdout():
    return sweeps.summary(sweeps.compare(("holdout",))).set_index("size_class")


def test_holdout_error_on_large_messages(holdout):
    """Out of sample, from 64 MiB, where bandwidth rules: the median |error| over the held-out sweeps is the
    collective model's accuracy goal (10 %). The held-out sweeps come from many clouds and NCCL releases
    (data/SWEEPS-NOTES.md describes each source), so each new sweep moves the median a little."""
    assert holdout.loc["large", "points"] >= 150
    assert holdout.loc["large", "median_abs_error"] <= 0.10


def test_holdout_error_on_small_messages_is_reported_not_hidden(holdout):
    """Below 64 MiB latency rules, and it depends on the deployment (cloud RoCE, TCP and EFA stacks measure
    10-20x the bare-metal figure): the held-out median is reported, and bounded at the goal of 25 % so that it
    cannot get worse unnoticed (about 21 % over 592 points when written)."""
    assert holdout.loc["small", "points"] >= 300
    assert holdout.loc["small", "median_abs_error"] <= 0.25


def test_fit_error(holdout):
    fit = sweeps.summary(sweeps.compare(("fit",))).set_index("size_class")
    # the fitted sweeps' own error: how well the fitted constants describe what they were fitted on (about 6.5 %
    # for large messages and 12 % for small ones when written); a rise means a structural change fits worse
    assert fit.loc["large", "median_abs_error"] <= 0.07
    assert fit.loc["small", "median_abs_error"] <= 0.13


def test_the_sealed_sweeps_are_compared_only_when_named():
    """A plain ``compare()`` never opens the sealed third (seen once, at the end), though sealed sweeps exist."""
    assert any(s.split == "sealed" for s in sweeps.sweeps())
    assert set(sweeps.compare()["split"]) == {"fit", "holdout"}


def test_sealed_sweeps_opened_once_stay_where_they_were_found():
    """The sealed third, compared once (2026-12-04, at a44b4e9), after the collective model's last change for issue
    12, and reported apart in the validation appendix (the six sweeps sealed after that look joined it in a second
    look, held in the next test; the bounds below still hold with them). Found then: large messages 10.5 % at the
    median over 80 points (the goal is 10 %), small 21.3 % over 167 (goal 25 %; 59 % of the points within 25 %). 18
    large points are off by more than 35 %, 14 of them in two sweeps far from anything in the fit split: 20 GB200
    NVL72 racks (1,440 GPUs; the fit's largest run is 2 racks), whose busbw still grows at 16 GiB where the model's
    is flat (+93 to +333 %), and NCCL's socket transport over eight NICs per H200 node, which stops at 92 GB/s where
    the model's TCP efficiency on the links allows 239 (+153 %). The bounds keep a later change from losing that
    quietly."""
    sealed = sweeps.compare(("sealed",))
    errors = sealed.assign(abs_error=sealed["rel_error"].abs())
    large, small = (errors[errors["size_class"] == c]["abs_error"] for c in ("large", "small"))
    assert len(large) >= 80 and large.median() <= 0.11
    assert len(small) >= 167 and small.median() <= 0.25
    wide = errors[(errors["size_class"] == "large") & (errors["abs_error"] > 0.35)]
    assert len(wide) <= 21  # 18 at the look; the later looks' sweeps and refits brought it to 21
    assert set(wide["sweep"]) >= {"gb200-1440-20rack-ar-coreweave", "h200-16-2n-ar-socket-schmaus"}


def test_sweeps_sealed_after_the_first_look_stay_where_the_second_found_them():
    """The second sealed set, opened once (2026-12-04, at 1fa6699) with nothing changed first: the unseen test of
    the changes made after the first look (all-gather filling the network in half all-reduce's time, a run's
    recorded NCCL settings). Found: large messages 11.0 % at the median over 19 points, one above 35 % (the
    128-node Ring/LL128 run at 1 GiB, +50 %); small 17.4 % over 27, one above 35 % (the two-node A3 Ultra
    all-gather at 512 KiB, -36 %). The bounds below hold the later changes (the smooth network ramp, the refits)
    to about where that look found them."""
    second = sweeps.compare(("sealed",))
    second = second[second["sweep"].isin(SECOND_LOOK)]
    assert {s.sweep for s in sweeps.sweeps() if s.sweep in SECOND_LOOK} == SECOND_LOOK
    errors = second["rel_error"].abs()
    large, small = (errors[second["size_class"] == c] for c in ("large", "small"))
    assert len(large) == 19 and large.median() <= 0.12 and (large > 0.35).sum() <= 1
    assert len(small) == 27 and small.median() <= 0.235 and (small > 0.35).sum() <= 2


def test_sweeps_sealed_after_the_second_look_stay_where_the_third_found_them():
    """The third sealed set, opened once (2026-12-04, at 25a1480) with nothing changed first: the
    unseen test of the changes since the second look (the smooth network ramp, TCPX's fitted latency, the
    refits and nccl-tests' launch floor). Five of its seven sweeps are modelled.
    Found: large messages 6.3 % at the median over 37 points, one above 35 % (the 10-node H100 all-reduce at
    64 MiB, +56 %); small 17.4 % over 51, seven above 35 % (the A3 High all-gather at 1-8 MiB, +38 to +125 %, and
    one 8 KiB point of the 4-GPU all-gather whose measured busbw dips, +187 %). The 4-GPU H100 all-gather, run with
    one thread for its 4 GPUs (``-g 4``), is 7.8 % off at the median of its small sizes (58 % with the constants
    before the launch floor); the two-tray GB200 all-reduce, one process per GPU, is 21 % too fast there (11 %
    before, when the intra-node latency scale was 1.68 rather than 1.46). With those earlier constants the whole
    set was large 5.6 %, small 13.6 % with 19 points above 35 %."""
    third = sweeps.compare(("sealed",))
    third = third[third["sweep"].isin(THIRD_LOOK)]
    assert {s.sweep for s in sweeps.sweeps() if s.sweep in THIRD_LOOK and not s.reason} == THIRD_LOOK - {
        "mi355x-8-ar-alibabaamd", "a100-16-2n-ar-tcp-aksipoib"}
    errors = third["rel_error"].abs()
    large, small = (errors[third["size_class"] == c] for c in ("large", "small"))
    assert len(large) == 37 and large.median() <= 0.07 and (large > 0.35).sum() <= 1
    assert len(small) == 51 and small.median() <= 0.18 and (small > 0.35).sum() <= 7
    quiet = third[(third["sweep"] == "h100-4-ag-nvswitch-whquiet") & (third["size_class"] == "small")]
    assert quiet["rel_error"].abs().median() <= 0.10


def test_small_message_latency_reads_the_sweeps_own_times():
    # dstackai/dstack PR #3961: two AWS p6-b200 over EFA, all_reduce_perf 8-256 B at 50.58-57.14 us (median of
    # the six rows 55.095). EFA's latency is fitted on that pair and on aws-samples' p4de and p5 sweeps
    # (awsome-distributed-training micro-benchmarks/nccl-tests README: 161 and 73 us at 8-256 B): one latency for
    # three EFA generations lands within 10 % on p4de and p5 and 36 % too slow on p6 (31 % before the p5 runs at
    # 4-32 nodes joined the fit and moved EFA's latency from 19.5 to 21.1 us; within 10 % when fitted on the p6
    # pair alone)
    efa = sweeps.small_message_latency("efa").set_index("sweep")
    assert efa.loc["b200-16-2n-ar-efa-dstack3961", "measured_us"] == pytest.approx(55.095)
    for sweep, bound in (("b200-16-2n-ar-efa-dstack3961", 0.40), ("a100-16-2n-ar-efa-awsome-p4de", 0.10),
                         ("h100-16-2n-ar-efa-awsome-p5", 0.10)):
        fitted = efa.loc[sweep]
        assert fitted["split"] == "fit"
        assert fitted["predicted_us"] == pytest.approx(fitted["measured_us"], rel=bound), sweep
    assert set(efa["split"]) <= {"fit", "holdout"}  # the sealed sweeps stay closed
    assert sweeps.small_message_latency("no-such-fabric").empty


def test_deployment_spread_pairs_only_runs_the_model_cannot_tell_apart():
    """aws-samples/awsome-distributed-training prints two p5 two-node all-reduce sweeps, Slurm (69-75 us at
    8-256 B) and EKS (NCCL 2.18.5, 172-178 us): the same machine, collective and algorithm, so the model gives both
    one time, and the slower run takes more than twice as long on small messages. Crusoe's NVLSTree run and
    Nebius's default run on the same H100 pair are different algorithms, so they are not a pair; the sealed
    sweeps stay closed."""
    spread = sweeps.deployment_spread()
    pair = spread[(spread["sweep"] == "h100-16-2n-ar-efa-awsome-p5")
                  & (spread["other_sweep"] == "h100-16-2n-ar-efa-awsome-p5eks")].set_index("size_class")
    assert pair.loc["small", "spread_pct"] > 100 and pair.loc["small", "points"] >= 20
    s = pair.loc["small", "spread_pct"] / 100
    assert pair.loc["small", "floor_pct"] == pytest.approx(100 * s / (2 + s))
    assert (spread["floor_pct"] < spread["spread_pct"] / 2).all() and (spread["spread_pct"] >= 0).all()
    named = set(spread["sweep"]) | set(spread["other_sweep"])
    assert "h100-16-2n-ar-ib-crusoe" not in named
    sealed = {s.sweep for s in sweeps.sweeps() if s.split == "sealed"}
    assert not named & sealed
    assert set(sweeps.deployment_spread(("holdout",))["splits"]) == {"holdout/holdout"}


def test_a_run_that_switched_nvls_off_is_modelled_without_it():
    """A sweep whose recorded conditions set NCCL_NVLS_ENABLE=0 is modelled as it ran: OCI's two GB200 racks
    (oracle-quickstart/oci-hpc-oke, the Kueue manifest of the same image and sweep) without NVLS; aws-samples'
    p5 EKS run, which sets NCCL_NVLS_ENABLE=1, with it."""
    by_id = {s.sweep: s for s in sweeps.sweeps()}
    gb200, p5 = by_id["gb200-128-32n-ar-roce-ocioke"], by_id["h100-16-2n-ar-efa-awsome-p5eks"]
    assert not gb200.nvls and p5.nvls
    sizes = np.array([2.0**20, 2.0**30])
    cal = calibration.default()
    plain = collectives.time_us("allreduce", gb200.system, gb200.gpus, sizes, nodes=gb200.nodes, nvls=False)
    with_nvls = collectives.time_us("allreduce", gb200.system, gb200.gpus, sizes, nodes=gb200.nodes)
    assert sweeps.predict(gb200, sizes) == pytest.approx(plain + cal.harness_overhead_us(gb200.harness))
    assert np.all(with_nvls < plain)


def test_a_forced_protocol_is_modelled_as_forced():
    """A run that set NCCL_PROTO (the index's ``protocol``) is modelled with that protocol only."""
    base = next(s for s in sweeps.sweeps() if s.sweep == "h100-16-2n-ar-efa-cgawsbench")
    sizes = np.array([2.0**10, 2.0**30])
    forced = sweeps.predict(dataclasses.replace(base, algorithm="ring", protocol="ll128"), sizes)
    ring = collectives.evaluate("allreduce", base.system, base.gpus, sizes, nodes=2, algorithm="ring")
    ll128 = collectives.evaluate("allreduce", base.system, base.gpus, sizes, nodes=2, algorithm="ring",
                                 protocol="ll128")
    overhead = calibration.default().harness_overhead_us(base.harness)
    assert forced == pytest.approx(ll128["time_us"] + overhead)
    assert list(ring["protocol"]) != ["ll128", "ll128"]  # NCCL's own choice differs, so forcing is seen


def test_the_algorithm_and_protocol_columns_agree_with_the_recorded_nccl_settings():
    """Where a run's recorded conditions set NCCL_ALGO or NCCL_PROTO, the index's columns say the same (read
    as ``validate`` reads a log), except Azure's A100 script, which forces NVLS on a GPU without it (so what
    NCCL ran is unknown, and the column is left to NCCL's choice)."""
    index = pd.read_csv(sweeps.INDEX_CSV, dtype=str).fillna("")
    checked = 0
    for row in index.itertuples():
        settings = Settings.from_environment(row.conditions)
        if row.sweep == "a100-8-ar-azure-nda100v4" or not settings.changed:
            continue
        if settings.algorithm != "auto":
            assert sweeps.ALGORITHMS.get(row.algorithm) == settings.algorithm, row.sweep
        assert (row.protocol or "auto") == settings.protocol, row.sweep
        checked += 1
    assert checked >= 15


@pytest.mark.parametrize(("conditions", "expected"), [
    ("NCCL_ALGO=NVLS all_reduce_perf -b 8 -e 8G -f 2 -g 8 -n 40; in-place", 8),
    ("mpirun -np 16 all_reduce_perf -b 8 -e 16G -f 2 -g 1", 1),
    ("single process, -g 8 (nThread 1 nGpus 8)", 8),
    ("header: nThread 1 nGpus 4 minBytes 8", 4),
    ("all_gather_perf --ngpus 2 -b 8", 2),
    ("rccl-tests all_reduce_perf -b 8 -e 8G -f 2 -G 1", 1),  # -G is CUDA-graph launch, not GPUs
    ("srun -N 4 -G 32 --gres=gpu:4 --ntasks-per-node=8", 1),  # Slurm's GPU options are not the harness's
    ("NCCL_IB_GID_INDEX=3 NCCL_SOCKET_IFNAME=net1", 1),
    ("", 1),
])
def test_gpus_per_thread_is_read_from_the_recorded_command_line(conditions, expected):
    assert sweeps.gpus_per_thread(conditions) == expected


def test_one_thread_driving_n_gpus_takes_at_least_n_launches():
    """nccl-tests with one thread driving N GPUs (``-g N``) launches the N kernels of every iteration one after
    another, so a collective takes at least N launches, whatever the GPUs do; with one process per GPU the launches
    overlap the kernels. Measured at 8-256 B on one node: one process for 8 GPUs 35-45 us (Together's H100 ring,
    AMD's MI300X acceptance run, Azure's A100 node), one process per GPU 13-19 us (a DGX H100, a p5 node, an MI300X
    node). The floor is a floor: from a few MiB the kernels take longer than the launches."""
    cal = calibration.default()
    per_gpu = cal.value("harness_launch_us", "nccl-tests")
    assert 3.0 < per_gpu < 7.0  # fitted: 5.19 us
    by_name = {s.sweep: s for s in sweeps.sweeps()}
    one_thread, per_gpu_process = by_name["h100-8-ar-ring-together"], by_name["h100-8-ar-dgxcbench"]
    assert (one_thread.gpus_per_thread, per_gpu_process.gpus_per_thread) == (8, 1)
    sizes = 2.0 ** np.arange(3, 34)
    ring = collectives.time_us("allreduce", "hgx-h100", 8, sizes, algorithm="ring", cal=cal)
    floored = sweeps.predict(one_thread, sizes, cal)
    assert np.all(floored >= 8 * per_gpu) and np.all(floored >= ring)
    assert floored[0] > ring[0] and floored[-1] == pytest.approx(ring[-1])
    assert np.all(np.diff(floored) >= 0)
    auto = collectives.time_us("allreduce", "hgx-h100", 8, sizes, cal=cal)
    assert sweeps.predict(per_gpu_process, sizes, cal) == pytest.approx(auto)
    # the measured runs: one process for 8 GPUs takes more than twice as long as one process per GPU, and the model
    # follows (both within 25 % at the median of their small sizes)
    compared = sweeps.compare(("fit", "holdout"))
    for name in ("h100-8-ar-ring-together", "mi300x-8-ar-amdsysacc", "h100-8-ar-dgxcbench", "mi300x-8-ar-rccltests"):
        small = compared[(compared["sweep"] == name) & (compared["size_class"] == "small")]
        assert small["rel_error"].abs().median() < 0.25, name


def test_one_predicted_time_is_within_a_limit_of_two_runs_only_up_to_the_reachable_ratio():
    """|t / p - 1| <= e for two measured times needs t_slow / t_fast <= (1 + e) / (1 - e): at that ratio the one
    time that serves both is t_slow / (1 + e), exactly e off each; 2.08 at e = 35 %."""
    for limit in (0.1, 0.25, 0.35):
        reach = sweeps.reachable_ratio(limit)
        fast, slow = 100.0, 100.0 * reach
        p = slow / (1 + limit)
        assert slow / p - 1 == pytest.approx(limit) and fast / p - 1 == pytest.approx(-limit)
    assert sweeps.reachable_ratio(0.35) == pytest.approx(2.0769, abs=1e-4)


def test_wide_misses_sit_beside_the_runs_the_model_cannot_tell_apart():
    """aws-samples/awsome-distributed-training's p5 EKS all-reduce (NCCL 2.18.5, aws-ofi-nccl 1.7.3) reaches
    129 GB/s busbw at 128 MiB; crazyguitar/aws-gpu-communication-benchmark's two p5 nodes (NCCL 2.27.7) reach
    305, and the model about 297: the same inputs to the model, so it is within a few percent of one and more
    than twice too fast for the other. AMD's MI300X acceptance run drives 8 GPUs from one thread (-g 8), which the
    model reads, so it is no twin of the rccl-tests run with one process per GPU."""
    comparison = sweeps.compare(("fit", "holdout"))
    misses = sweeps.wide_misses(comparison)
    assert (misses["rel_error"].abs() > 0.35).all()
    inputs = {s.sweep: sweeps.model_inputs(s) for s in sweeps.sweeps()}
    twinned = misses[misses["twins"] > 0]
    assert (twinned["sweep"].map(inputs) == twinned["widest"].map(inputs)).all()
    assert (twinned["sweep"].map(inputs) == twinned["nearest"].map(inputs)).all()
    assert (twinned["widest_ratio"] >= 1).all() and misses.loc[misses["twins"] == 0, "widest_ratio"].isna().all()
    p5 = misses[(misses["sweep"] == "h100-16-2n-ar-efa-awsome-p5eks") & (misses["bytes"] == 2**27)].iloc[0]
    assert p5["twins"] >= 4 and abs(p5["nearest_error"]) < 0.05
    assert p5["widest"] == "h100-16-2n-ar-efa-cgawsbench" and p5["widest_ratio"] > sweeps.reachable_ratio(0.35)
    assert inputs["mi300x-8-ar-amdsysacc"] != inputs["mi300x-8-ar-rccltests"]
    spread = sweeps.deployment_spread()
    assert not (spread[["sweep", "other_sweep"]] == "mi300x-8-ar-amdsysacc").any().any()
