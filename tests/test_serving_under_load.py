"""Serving under load (``multigpu.compute.queueing``, ``infer --rate`` / ``--concurrency``): what a queue of
requests does to TTFT and time per output token, checked against physical bounds, queueing laws, the closed-loop
model and published fixed-concurrency runs whose users outnumber what fits memory."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from multigpu.book import ch03_bottlenecks as ch03
from multigpu.cli.app import main
from multigpu.common.errors import InputError
from multigpu.compute import inference, queueing
from multigpu.evidence import serving, underload

ARGS = dict(model_id="llama3.1-70b", system_id="hgx-h100", tp=4, input_tokens=1024, output_tokens=256, dtype="fp8")


@pytest.fixture(scope="module")
def h100():
    """Llama 3.1 70B in FP8 on 4 H100s of an NVSwitch node, at most 256 queries at once."""
    return queueing.engine(max_batch=256, **ARGS)


def test_a_lone_request_sees_the_bare_prefill_and_one_query_s_decode_step(h100):
    alone = queueing.simulate(h100, rate=0.005 * h100.capacity_per_s(), requests=200)
    assert alone.ttft_p50_s == pytest.approx(h100.prefill_s, rel=1e-9)
    assert alone.tpot_p50_s == pytest.approx(h100.decode_step_s[0], rel=1e-3)
    single = inference.run(batch=1, **ARGS)
    assert h100.prefill_s == pytest.approx(single.ttft_s) and h100.decode_step_s[0] == pytest.approx(single.tpot_s)


@pytest.mark.parametrize("share", [0.3, 0.6, 0.85])
def test_little_s_law_and_conservation_of_tokens(h100, share):
    """Queries held = arrival rate x time each spends decoding (Little's law), and a stable deployment puts out
    the tokens that arrive: rate x output tokens, over its GPUs."""
    rate = share * h100.capacity_per_s()
    run = queueing.simulate(h100, rate=rate, requests=3000)
    in_system = run.ttft_mean_s + (h100.output_tokens - 1) * run.tpot_mean_s
    assert run.batch_mean == pytest.approx(rate * in_system, rel=0.08)
    assert run.tokens_per_s_per_gpu == pytest.approx(rate * h100.output_tokens / h100.gpus, rel=0.05)
    assert run.utilization == pytest.approx(share)


def test_more_load_is_never_faster(h100):
    runs = [queueing.simulate(h100, rate=share * h100.capacity_per_s()) for share in (0.1, 0.4, 0.7, 0.9)]
    for lighter, heavier in zip(runs, runs[1:]):
        assert heavier.ttft_p99_s >= lighter.ttft_p99_s and heavier.ttft_mean_s >= lighter.ttft_mean_s
        assert heavier.tpot_p50_s >= lighter.tpot_p50_s and heavier.batch_mean > lighter.batch_mean
    assert all(r.ttft_p50_s <= r.ttft_p90_s <= r.ttft_p99_s for r in runs)
    assert all(r.tpot_p50_s <= r.tpot_p90_s <= r.tpot_p99_s for r in runs)


@settings(max_examples=40, deadline=None)
@given(prefill=st.floats(0.005, 0.5), step=st.floats(0.002, 0.05), growth=st.floats(0.0, 0.05),
       batch=st.integers(1, 64), output=st.integers(2, 64), share=st.floats(0.05, 0.9), seed=st.integers(0, 99))
def test_no_user_is_served_faster_than_the_hardware(prefill, step, growth, batch, output, share, seed):
    """Whatever the load, no first token comes before one prefill and no token after it faster than one decode
    step of a single query; the batch never exceeds its cap."""
    eng = queueing.Engine(prefill, tuple(step * (1 + growth * n) for n in range(batch)), 512, output, 1)
    run = queueing.simulate(eng, rate=share * eng.capacity_per_s(), requests=200, seed=seed)
    assert run.ttft_p50_s >= prefill * (1 - 1e-9) and run.ttft_mean_s >= prefill * (1 - 1e-9)
    assert run.tpot_p50_s >= step * (1 - 1e-9) and run.tpot_mean_s >= step * (1 - 1e-9)
    assert run.batch_mean <= batch


@pytest.mark.parametrize("users", [4, 16, 64])
def test_closed_loop_time_per_token_is_the_closed_loop_model_s(h100, users):
    """Two derivations of one steady state: each user's tokens come one cycle of the batch (its prefills and
    decode steps) per answer, so the simulated time per output token is ``inference.closed_loop``'s. The
    simulation packs prompts that wait together into one prefill pass, which the analytic model does not: at 64
    users that makes its tokens about 2 % faster."""
    run = queueing.simulate(h100, concurrency=users)
    analytic = inference.closed_loop(inference.run(batch=users, **ARGS))
    assert run.tpot_mean_s == pytest.approx(analytic.itl_s, rel=0.03)
    assert run.tpot_mean_s <= analytic.itl_s * 1.001
    assert run.ttft_mean_s >= h100.prefill_s


def test_memory_caps_the_batch_and_the_rest_wait():
    """Llama 3.3 70B on 2 H100s with 5,000-token prompts: about 97 queries fit; 250 users leave the others
    waiting for a place, so their first token takes tens of seconds while each token after it does not slow."""
    args = dict(ARGS, tp=2, input_tokens=5000, output_tokens=500, dtype="fp8")
    eng = queueing.engine(max_batch=250, **args)
    fits = inference.run(batch=eng.max_batch, **args).fits
    assert 50 < eng.max_batch < 250 and fits and not inference.run(batch=eng.max_batch + 1, **args).fits
    crowded, full = (queueing.simulate(eng, concurrency=users) for users in (250, eng.max_batch))
    assert crowded.ttft_mean_s > 20 * full.ttft_mean_s
    assert crowded.tpot_mean_s == pytest.approx(full.tpot_mean_s, rel=0.05)


def test_published_fixed_concurrency_runs_beyond_memory_are_compared_with_their_queue():
    """NVIDIA's NIM benchmark of Llama 3.3 70B on 2 H100s (5,000 in, 500 out) at 100 to 250 users: before the
    simulation these rows were not compared (the batch does not fit). Held out: TTFT at 250 users (88.6 s
    measured), TPOT at 200 and 250 users, throughput at 100 users (458.6 tokens/s per GPU)."""
    compared = serving.compare().set_index("id")
    queued = compared[serving.queued(compared)]
    assert len(queued) >= 5 and (queued["batch"] < 100).all()
    held = queued[queued["split"] == "holdout"]
    by_metric = held.groupby("metric")["rel_error"].apply(lambda e: e.abs().max())
    assert by_metric["ttft"] <= 0.15 and by_metric["tpot"] <= 0.15 and by_metric["throughput"] <= 0.05


def test_a_rate_the_deployment_cannot_serve_is_refused(h100):
    with pytest.raises(InputError, match="at or above the .* requests/s this deployment can serve"):
        queueing.simulate(h100, rate=h100.capacity_per_s())
    with pytest.raises(InputError, match="not both"):
        queueing.simulate(h100, rate=1.0, concurrency=4)
    with pytest.raises(InputError, match="pp must be 1"):
        queueing.engine(max_batch=8, pp=2, **ARGS)
    with pytest.raises(InputError, match="longer than the 512 tokens"):
        queueing.engine(max_batch=8, max_num_tokens=512, **ARGS)


def test_expert_parallel_serving_splits_the_load_over_its_attention_groups():
    """DeepSeek-V3 in FP8 on 8 H200s with its experts over 8 GPUs and attention in 8 groups: each group serves an
    eighth of the requests. The deployment still puts out what arrives, holds what Little's law says, and
    never answers faster than one prefill and one decode step of one query per group."""
    args = dict(model_id="deepseek-v3", system_id="hgx-h200", tp=1, ep=8, input_tokens=2048, output_tokens=512,
                dtype="fp8")
    eng = queueing.engine(max_batch=512, **args)
    assert eng.groups == 8 and eng.max_batch == 64 and eng.gpus == 1
    one_per_group = inference.run(batch=8, **args)
    assert eng.prefill_s == pytest.approx(one_per_group.ttft_s) and eng.decode_step_s[0] == pytest.approx(
        one_per_group.decode_step_s)
    rate = 0.6 * eng.capacity_per_s()
    run = queueing.simulate(eng, rate=rate, requests=1500)
    assert run.max_batch == 512 and run.batch_mean <= 512
    assert run.tokens_per_s_per_gpu == pytest.approx(rate * 512 / 8, rel=0.06)
    in_system = run.ttft_mean_s + 511 * run.tpot_mean_s
    assert run.batch_mean == pytest.approx(rate * in_system, rel=0.08)
    assert run.ttft_p50_s >= eng.prefill_s and run.tpot_p50_s >= eng.decode_step_s[0]
    with pytest.raises(InputError, match="do not split evenly over 8"):
        queueing.simulate(eng, concurrency=12)
    with pytest.raises(InputError, match="not a whole number of queries"):
        queueing.engine(max_batch=100, **args)


def test_the_same_seed_gives_the_same_run(h100):
    rate = 0.5 * h100.capacity_per_s()
    assert queueing.simulate(h100, rate=rate, seed=3) == queueing.simulate(h100, rate=rate, seed=3)
    assert queueing.simulate(h100, rate=rate, seed=3) != queueing.simulate(h100, rate=rate, seed=4)


def test_infer_rate_adds_the_latencies_under_load(capsys):
    argv = ["infer", "--model", "llama3.1-8b", "--system", "hgx-h100", "--tp", "1", "--batch", "64",
            "--input-tokens", "512", "--output-tokens", "128", "--format", "json"]
    assert main(argv + ["--rate", "10", "--requests", "500"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["load_mode"] == "open" and out["load_rate_per_s"] == 10 and out["load_measured"] == 400
    assert out["ttft_s"] <= out["load_ttft_p50_s"] <= out["load_ttft_p99_s"]
    assert 0 < out["load_batch_mean"] <= out["load_max_batch"] == 64
    assert main(argv + ["--concurrency", "8", "--requests", "500"]) == 0
    assert json.loads(capsys.readouterr().out)["load_mode"] == "closed"
    assert main(argv[:-2]) == 0 and "load_mode" not in capsys.readouterr().out  # no load asked: no load fields
    assert main(argv + ["--rate", "1e6"]) == 2 and "queue would grow without end" in capsys.readouterr().err


# ----------------------------------------------------------------------------- chapter 3's servers under load


@pytest.fixture(scope="module")
def server_layouts():
    return underload.layouts()


def test_the_rate_within_the_limits_meets_them_and_a_little_more_breaks_them():
    eng = underload._engine(underload.SETUPS[1], 8, None)  # 8x A100 behind NVSwitch, TP 8
    rate = underload.within_limits(eng)
    at, above = (queueing.simulate(eng, rate=r) for r in (rate, 1.05 * rate))
    limits = underload.LIMITS
    assert at.ttft_p99_s <= limits.ttft_p99_s and at.tpot_p99_s <= limits.tpot_p99_s
    assert above.ttft_p99_s > limits.ttft_p99_s or above.tpot_p99_s > limits.tpot_p99_s


def test_a_server_never_serves_more_within_limits_than_flat_out_nor_the_slower_wiring_more(server_layouts):
    table = server_layouts
    assert (table["within_limits_requests_per_s"] <= table["capacity_requests_per_s"]).all()
    assert table["share_of_capacity_pct"].between(0, 100).all()
    by = table.set_index(["setup", "tp"])
    for switch, other in (("8x A100, NVSwitch", "8x A100, PCIe"), ("8x H200, NVSwitch", "8x H200, NVLink mesh")):
        for tp in underload.TP_DEGREES:  # the same GPUs, faster links: never fewer requests, with or without limits
            assert by.loc[(switch, tp), "capacity_requests_per_s"] >= by.loc[(other, tp), "capacity_requests_per_s"]
            assert (by.loc[(switch, tp), "within_limits_requests_per_s"]
                    >= by.loc[(other, tp), "within_limits_requests_per_s"])


def test_the_best_layout_is_the_one_that_serves_most_within_the_limits(server_layouts):
    picks = underload.best(server_layouts)
    assert list(picks["setup"]) == [s.label for s in underload.SETUPS]
    for pick in picks.itertuples():
        same = server_layouts[server_layouts["setup"] == pick.setup]
        assert pick.within_limits_requests_per_s == same["within_limits_requests_per_s"].max()


def test_the_limits_are_those_the_published_server_runs_state():
    """MLPerf's llama2-70b Server rows of data/serving_runs.csv note the limits they ran under."""
    notes = {row.notes for row in serving.load(serving.SPLITS) if row.scenario == "server" and "llama2-70b" in row.id}
    assert notes and all("TTFT 2000 ms, TPOT 200 ms (p99)" in n for n in notes)
    assert underload.LIMITS == underload.Limits(2.0, 0.2)


@pytest.mark.parametrize("capacity_x, within_x, word", [(1.2, 7.6, "widen"), (2.0, 1.0, "narrow"),
                                                        (1.45, 1.41, "leave")])
def test_the_chapter_s_sentence_follows_the_two_ratios(capacity_x, within_x, word):
    text = ch03._load_sentence(capacity_x, within_x)
    assert word in text and f"{capacity_x:.1f}" in text and f"{within_x:.1f}" in text


# ----------------------------------------------------------------------------- recommend --serve --ttft-p99-s

SERVE = dict(model_id="llama3.1-70b", tokens_per_s_per_user=20, requests_per_s=2, input_tokens=2048,
             output_tokens=256)


@pytest.fixture(scope="module")
def sized():
    """The recommender's options without and with a p99 limit of 2 s on the first token."""
    from multigpu.market import recommend

    plain = recommend.serve(**SERVE).set_index("offer")
    tails = recommend.serve(**SERVE, ttft_p99_s=2.0).set_index("offer")
    return plain, tails


def test_sized_for_the_tail_every_option_keeps_its_limits(sized):
    from multigpu.market import recommend

    plain, tails = sized
    assert not set(recommend.LOAD_COLUMNS) & set(plain.columns)  # added only when asked
    ok = tails[tails["feasible"]]
    assert len(ok) >= 10
    assert (ok["ttft_p99_s"] <= 2.0 * 1.02).all() and (ok["tpot_p99_ms"] <= 1e3 / 20 * 1.02).all()


def test_the_tail_never_needs_fewer_instances_than_the_steady_state(sized):
    """An option's capacity within the limits is never above its capacity flat out, and the steady state already
    takes each offer's best: so sizing for the 99th percentile rents at least as many instances."""
    plain, tails = sized
    both = plain[plain["feasible"]].index.intersection(tails[tails["feasible"]].index)
    assert len(both) >= 10
    assert (tails.loc[both, "instances"] >= plain.loc[both, "instances"]).all()
    assert (tails.loc[both, "instances"] > plain.loc[both, "instances"]).any()


def test_a_limit_below_any_prefill_leaves_no_option():
    from multigpu.market import recommend

    frame = recommend.serve(**SERVE, ttft_p99_s=0.01)
    assert not frame["feasible"].any()
    assert frame["reason"].str.contains("no layout keeps the first token within 0.01 s").any()


def test_recommend_ttft_p99_is_a_serving_flag(capsys):
    argv = ["recommend", "--serve", "llama3.1-8b", "--tokens-per-s-per-user", "30", "--requests-per-s", "4",
            "--input-tokens", "1024", "--output-tokens", "128", "--ttft-p99-s", "1", "--top", "3"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "first token within 1 s and the per-user floor at the 99th percentile" in out and "ttft_p99_s" in out
    assert main(["recommend", "--train", "llama3.2-1b", "--tokens", "1e9", "--ttft-p99-s", "1"]) == 2
    assert "--ttft-p99-s" in capsys.readouterr().err


def test_a_server_split_into_prefill_and_decode_pools(server_layouts):
    """Each server's best split of its 8 GPUs (evidence.underload.split_layouts): every GPU used, the KV cache
    over NVLink where the server has it and over PCIe where not, within the limits never above capacity. On the
    PCIe server, where a colocated prefill holds up every decoder longest, the split serves more within the
    limits than any colocated layout."""
    split = underload.split_layouts().set_index("setup")
    gpus = split["prefill_copies"] * split["prefill_tp"] + split["decode_copies"] * split["decode_tp"]
    assert (gpus == underload.SERVER_GPUS).all() and len(split) == len(underload.SETUPS)
    assert (split["within_limits_requests_per_s"] <= split["capacity_requests_per_s"]).all()
    assert [underload.kv_link(s) for s in underload.SETUPS] == ["pcie", "nvlink", "nvlink", "nvlink"]
    assert split.loc["8x A100, PCIe", "kv_transfer_ms"] > split.loc["8x A100, NVSwitch", "kv_transfer_ms"]
    colocated = server_layouts.groupby("setup")["within_limits_requests_per_s"].max()
    assert split.loc["8x A100, PCIe", "within_limits_requests_per_s"] > colocated["8x A100, PCIe"]


@pytest.mark.parametrize("share, word", [(0.64, "recovers most"), (0.3, "still decides")])
def test_the_split_sentence_follows_the_share(share, word):
    row = pd.Series({"prefill_copies": 3, "prefill_tp": 2, "decode_copies": 1, "decode_tp": 2})
    text = ch03._split_sentence(row, share)
    assert word in text and f"{100 * share:.0f} %" in text and "3 x TP 2" in text


def test_a_run_asked_for_again_comes_from_the_memo_and_a_new_seed_is_a_new_run():
    eng = queueing.Engine(0.05, tuple(0.02 * (1 + 0.01 * n) for n in range(32)), 512, 64, 1)
    rate = 0.5 * eng.capacity_per_s()
    first = queueing.simulate(eng, rate=rate, requests=200, seed=3)
    assert queueing.simulate(eng, rate=rate, requests=200, seed=3) is first
    assert queueing.simulate(eng, rate=rate, requests=200, seed=4) != first
    # the memo is keyed by the engine's step times, not by its identity: an equal engine finds the run
    twin = queueing.Engine(0.05, tuple(eng.decode_step_s), 512, 64, 1)
    assert queueing.simulate(twin, rate=rate, requests=200, seed=3) is first
