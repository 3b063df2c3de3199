"""Expert parallelism in the serving search (``search.serve``, ``recommend --serve``, the cost plans): a
mixture-of-experts model may spread its routed experts over ``ep`` GPUs with attention in ``ep / tp``
data-parallel groups, as ``infer --ep`` runs it."""

from __future__ import annotations

import pytest

from multigpu.compute import inference, models
from multigpu.market import cost, search

DEEPSEEK = dict(model_id="deepseek-v3", input_tokens=2048, output_tokens=512, min_tokens_per_s_per_user=20,
                dtype="fp8")


@pytest.fixture(scope="module")
def h200():
    """DeepSeek-V3 in FP8 on one 8-GPU H200 node, 20 tokens/s per user, 2K in and 512 out."""
    return search.serve(system_id="hgx-h200", gpus=8, **DEEPSEEK)


def test_a_mixture_of_experts_model_is_tried_with_its_experts_spread(h200):
    spread = [o for o in h200.options if o.ep > 1]
    assert {(o.tp, o.ep) for o in spread} == {(1, 2), (1, 4), (1, 8), (2, 4), (2, 8), (4, 8)}
    for o in spread:
        assert o.gpus == o.ep and o.label == f"tp{o.tp} ep{o.ep}" and o.batch % o.groups == 0
    dense = search.serve("llama3.1-70b", "hgx-h200", 8, 2048, 512, 20)
    assert all(o.ep == 1 and o.label == f"tp{o.tp}" for o in dense.options)


def test_data_parallel_attention_beats_tensor_parallelism_for_deepseek_v3(h200):
    """Under TP 8 every GPU holds the whole MLA latent cache (it has no heads to split), so few queries fit; with
    the experts over 8 GPUs and attention in 8 groups each GPU holds its group's cache only: the batch, and the
    tokens per GPU, grow several times over."""
    tp8 = next(o for o in h200.options if (o.tp, o.ep) == (8, 1))
    best = h200.best
    assert best.ep == 8 and best.batch >= 4 * tp8.batch
    assert best.tokens_per_s_per_gpu >= 2 * tp8.tokens_per_s_per_gpu
    assert best.tokens_per_s_per_user >= DEEPSEEK["min_tokens_per_s_per_user"]


def test_an_option_s_throughput_is_the_inference_model_s_at_its_batch(h200):
    for o in (x for x in h200.options if x.batch):
        run = inference.run("deepseek-v3", "hgx-h200", o.tp, o.batch, 2048, 512, dtype="fp8", ep=o.ep)
        assert o.tokens_per_s_per_gpu == pytest.approx(run.tokens_per_s_per_gpu, rel=1e-9)
        assert o.tokens_per_s_per_user == pytest.approx(run.tokens_per_s_per_user, rel=1e-9) and run.fits


def test_faster_links_never_serve_fewer_tokens(h200):
    for o in (x for x in h200.options if x.batch):
        faster = o.at(comm_bandwidth=2.0)
        assert faster.ep == o.ep and faster.tokens_per_s_per_gpu >= o.tokens_per_s_per_gpu * (1 - 1e-12)


def test_plans_and_recommendations_count_a_copy_s_gpus():
    plan = cost.plan("serve-deepseek-v3-20tps", "hgx-h200", 8)
    assert plan.feasible and plan.serving.ep == 8 and plan.job_gpus == 8
    assert plan.layout == f"tp{plan.serving.tp} ep8 batch {plan.serving.batch}"
    assert models.model("deepseek-v3").experts % plan.serving.ep == 0


def test_recommend_serve_names_the_expert_parallel_degree(capsys):
    import csv
    import io

    from multigpu.cli.app import main

    assert main(["recommend", "--serve", "deepseek-v3", "--tokens-per-s-per-user", "20", "--requests-per-s", "5",
                 "--dtype", "fp8", "--format", "csv"]) == 0
    rows = [r for r in csv.DictReader(io.StringIO(capsys.readouterr().out)) if r["feasible"] == "True"]
    assert rows
    for row in rows:
        per_copy = int(row["ep"]) if int(row["ep"]) > 1 else int(row["tp"])
        assert int(row["replicas"]) == int(row["gpus"]) // per_copy
        assert row["layout"].startswith(f"tp{row['tp']} ep{row['ep']} " if int(row["ep"]) > 1 else f"tp{row['tp']} ")
        assert f"{row['layout'].rsplit(' batch', 1)[0]} over" in row["reason"]
