"""The hardware catalogue: sourced rows, consistent totals, reference values, validation errors, CLI."""

from __future__ import annotations

import csv
import io
import json
import math
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from csv_edit import rewrite_row

from multigpu.cli import main
from multigpu.common.errors import InputError
from multigpu.hardware import catalog

REQUIRED_SYSTEMS = {
    "dgx-1-p100", "dgx-1-v100", "dgx-2", "dgx-a100", "hgx-a800", "hgx-h100", "hgx-h800", "hgx-h20",
    "hgx-h200", "h200-p2p-8", "dgx-b200", "dgx-b300", "gb200-nvl72", "gb300-nvl72", "vr-nvl72",
    "mi300x-8", "pcie-a100-8", "pcie-h100-nvl-pairs", "pcie-l40s-8", "pcie-l20-8", "pcie-rtx4090-8",
    "pcie-rtx5090-8", "pcie-a100-bridged-2", "h200-nvl-4",
}
TABLES = {"gpus": catalog.gpus, "links": catalog.links, "systems": catalog.systems}


# ------------------------------------------------------------------ data


@pytest.mark.parametrize("table", TABLES)
def test_every_row_has_an_id_and_a_url_source(table):
    for key, record in TABLES[table]().items():
        assert record.id == key
        assert "http" in record.source, key


def test_per_gpu_totals_are_links_times_per_link_rate():
    for link in catalog.links().values():
        if link.links_per_gpu is not None and link.per_link_GBps_per_dir is not None:
            assert link.per_gpu_GBps_per_dir == pytest.approx(link.links_per_gpu * link.per_link_GBps_per_dir, rel=0.01), link.id
    for gpu in catalog.gpus().values():
        if gpu.nvlink is None:
            assert gpu.nvlink_GBps_per_dir == 0
        else:
            per_link = catalog.link(gpu.nvlink).per_link_GBps_per_dir
            assert gpu.nvlink_GBps_per_dir == pytest.approx(gpu.nvlink_links * per_link, rel=0.01), gpu.id


def test_nvlink_reference_values():
    # NVIDIA: H100 "900 GB/s" NVLink (bidirectional) = 18 links x 25 GB/s per direction.
    # https://www.nvidia.com/en-us/data-center/h100/
    nvlink4 = catalog.link("nvlink4")
    assert (nvlink4.links_per_gpu, nvlink4.per_link_GBps_per_dir) == (18, 25)
    assert nvlink4.per_gpu_GBps_per_dir == 450
    assert nvlink4.per_gpu_GBps_bidir == 900
    assert catalog.gpu("h100-sxm").nvlink_GBps_bidir == 900
    # A100: "600 GB/s" NVLink, https://www.nvidia.com/en-us/data-center/a100/
    assert catalog.link("nvlink3").per_gpu_GBps_bidir == 600
    assert catalog.gpu("a100-sxm4-80gb").nvlink_GBps_per_dir == 300
    # Blackwell: 18 x 100 GB/s = 1.8 TB/s, nvidia.com NVLink page (mirror: catalogone.com)
    assert catalog.link("nvlink5").per_gpu_GBps_bidir == 1800
    assert catalog.link("nvlink5").per_link_GBps_bidir == 100
    # Rubin: 3.6 TB/s per GPU, NVIDIA Rubin platform blog
    assert catalog.link("nvlink6").per_gpu_GBps_bidir == 3600


def test_pcie_gen5_is_the_encoded_data_rate():
    # 32 GT/s x 16 lanes x 128/130 (line code) / 8 bits = 63.02 GB/s per direction; NVIDIA's
    # "128 GB/s" (https://www.nvidia.com/en-us/data-center/h100/) is 2 x 64 before the line code.
    gen5 = catalog.link("pcie5-x16")
    assert gen5.per_link_GBps_per_dir == pytest.approx(32 * 16 * 128 / 130 / 8, abs=0.01)
    assert gen5.per_link_GBps_per_dir == pytest.approx(63.0, abs=0.05)
    assert catalog.link("pcie4-x16").per_link_GBps_per_dir == pytest.approx(16 * 16 * 128 / 130 / 8, abs=0.01)


def test_required_systems_exist_with_their_contract_fields():
    systems = catalog.systems()
    assert REQUIRED_SYSTEMS <= set(systems)
    mesh = systems["h200-p2p-8"]
    assert (mesh.topology, mesh.nvlink_links_per_gpu, catalog.link(mesh.nvlink).per_link_GBps_per_dir) == ("mesh", 7, 64)
    assert mesh.nvlink_GBps_bidir == 896  # the blog's 7 x 128 GB/s
    mi300x = systems["mi300x-8"]
    assert (mi300x.nvlink_links_per_gpu, mi300x.nvlink_GBps_per_dir) == (7, 448)
    assert systems["gb200-nvl72"].gpus_per_node == 72 and systems["hgx-h100"].gpus_per_node == 8
    assert systems["hgx-h100"].in_switch_reduction and not systems["dgx-a100"].in_switch_reduction
    assert systems["pcie-h100-nvl-pairs"].bridge_group == 2 and systems["h200-nvl-4"].bridge_group == 4
    assert not systems["pcie-rtx4090-8"].pcie_p2p
    assert systems["hgx-h800"].nvlink_GBps_bidir == 400
    assert systems["hgx-h100"].nic == "infiniband-ndr" and systems["hgx-h100"].nic_GBps_per_dir == 50


def test_export_variants_point_at_their_parents():
    gpus = catalog.gpus()
    assert gpus["a800-sxm4-80gb"].parent == "a100-sxm4-80gb"
    assert gpus["h800-sxm"].parent == "h100-sxm"
    assert gpus["h20"].parent == "h100-sxm"
    assert gpus["a800-sxm4-80gb"].bf16_dense_TFLOPS == gpus["a100-sxm4-80gb"].bf16_dense_TFLOPS
    assert gpus["h800-sxm"].nvlink_GBps_bidir == 400


def test_a3_mega_is_an_hgx_h100_on_gpudirect_tcpxo():
    """Google Cloud's A3 Mega: the HGX H100 board with 1,600 Gb/s of GPUDirect-TCPXO networking per VM
    (https://cloud.google.com/compute/docs/gpus/gpu-network-bandwidth), not the DGX's 8 x 400 Gb/s InfiniBand;
    the packaged price file's A3 Mega offer names it."""
    from multigpu.market import prices

    a3, dgx = catalog.system("hgx-h100-a3mega"), catalog.system("hgx-h100")
    assert a3.variant_of == "hgx-h100" and a3.nvlink_GBps_per_dir == dgx.nvlink_GBps_per_dir
    assert a3.nics_per_node * a3.nic_GBps_per_dir * 8 == 1600  # Gb/s per VM
    assert a3.fabric == "tcpxo" and dgx.fabric == "ib"
    table = prices.load_table().offers
    mega = table[table["instance"].str.startswith("a3-megagpu")]
    assert not mega.empty and set(mega["system"]) == {"hgx-h100-a3mega"}


def test_a3_high_is_an_hgx_h100_on_four_gpudirect_tcpx_nics_carrying_simple_only():
    """Google Cloud's A3 High: 1,000 Gb/s per VM (https://cloud.google.com/compute/docs/gpus/gpu-network-bandwidth),
    of which Google's NCCL configuration uses four GPU NICs with NCCL_PROTO=Simple (container-engine-accelerators
    gpudirect-tcpx/nccl-config.yaml); both A3 High offers of the packaged price file name it."""
    from multigpu.comm import calibration, collectives
    from multigpu.market import prices

    a3 = catalog.system("hgx-h100-a3high")
    assert a3.variant_of == "hgx-h100" and a3.fabric == "tcpx"
    assert a3.nics_per_node * a3.nic_GBps_per_dir * 8 == 800 <= 1000  # Gb/s of GPU NICs, within the VM's total
    table = prices.load_table().offers
    high = table[table["instance"].str.startswith("a3-highgpu")]
    assert len(high) >= 2 and set(high["system"]) == {"hgx-h100-a3high"}
    for nbytes in (8, 2**20, 2**30):
        assert collectives.collective("allreduce", "hgx-h100-a3high", 16, nbytes, nodes=2).protocol == "simple"
    # two nodes: each sends half the data through 4 x 25 GB/s, so busbw <= 2(15/16) / 2(1/2) x 100 = 187.5 GB/s
    # at line rate, x GPUDirect-TCPX's network efficiency (about half, fitted on dstack's A3 High all-gather, which
    # stops at 50 GB/s busbw: dstackai/dstack examples/clusters/a3high/README.md @a2b13a01c), far below the
    # 8 x 400 Gb/s InfiniBand that hgx-h100 was costed on
    efficiency = calibration.default().value("sm_efficiency", "net.tcpx")
    assert 0.3 < efficiency < 0.7
    slow = collectives.collective("allreduce", "hgx-h100-a3high", 16, 2**32, nodes=2).busbw_GBps
    fast = collectives.collective("allreduce", "hgx-h100", 16, 2**32, nodes=2).busbw_GBps
    assert 0.8 * efficiency * 187.5 <= slow <= efficiency * 187.5 < fast / 4


def test_p4de_is_an_hgx_a100_on_400_gbps_of_efa():
    """AWS p4d/p4de: the HGX A100 board with 400 Gb/s of EFA per instance, 4 interfaces of 100 Gb/s
    (https://aws.amazon.com/ec2/instance-types/p4/), not the DGX's 8 x 200 Gb/s InfiniBand; the packaged price
    file's p4de offer names it. Held-out check: aws-efa-eks's p4d ring sweep (NCCL 2.9.9) plateaus at 43.8 GB/s
    busbw at 4 GiB, which the variant reproduces within 5 % and the DGX's NICs would overshoot about 4x."""
    from multigpu.comm import collectives
    from multigpu.market import prices

    p4, dgx = catalog.system("hgx-a100-efa"), catalog.system("dgx-a100")
    assert p4.variant_of == "dgx-a100" and p4.nvlink_GBps_per_dir == dgx.nvlink_GBps_per_dir
    assert p4.nics_per_node * p4.nic_GBps_per_dir * 8 == 400  # Gb/s per instance
    assert p4.fabric == "efa" and dgx.fabric == "ib"
    size = 4 * 2**30
    def busbw(system: str) -> float:
        return collectives.collective("allreduce", system, 16, size, nodes=2, algorithm="ring").busbw_GBps

    assert busbw("hgx-a100-efa") == pytest.approx(43.81, rel=0.05)
    assert busbw("dgx-a100@efa") > 3 * 43.81
    table = prices.load_table().offers
    p4de = table[table["instance"] == "p4de.24xlarge"]
    assert not p4de.empty and set(p4de["system"]) == {"hgx-a100-efa"}


def test_unknown_ids_name_the_known_ones():
    with pytest.raises(InputError, match=r"unknown system 'x'; known: .*dgx-a100"):
        catalog.system("x")
    with pytest.raises(InputError, match="unknown gpu"):
        catalog.gpu("x")
    with pytest.raises(InputError, match="unknown link"):
        catalog.link("x")


def test_records_are_frozen():
    with pytest.raises(AttributeError):
        catalog.gpu("h100-sxm").memory_GB = 1  # type: ignore[misc]


# ------------------------------------------------------------- validation





def _line_of(path: Path, row_id: str) -> int:
    with open(path, newline="", encoding="utf-8") as handle:
        for number, row in enumerate(csv.reader(handle), start=1):
            if row[0] == row_id:
                return number
    raise AssertionError(row_id)


BAD_LINKS = [
    ("nvlink4", {"source": ""}, "source", "is empty"),
    ("nvlink4", {"source": "my notes"}, "source", "URL"),
    ("nvlink4", {"category": "nvlinkk"}, "category", "not one of"),
    ("nvlink4", {"per_link_GBps_per_dir": "25 GB/s"}, "per_link_GBps_per_dir", "not a number"),
    ("nvlink4", {"links_per_gpu": "n/a"}, "links_per_gpu", "whole number"),
    ("nvlink4", {"per_gpu_GBps_per_dir": "900"}, "per_gpu_GBps_per_dir", "18 links x 25"),
    ("nvlink4", {"in_network_reduction": "yes"}, "in_network_reduction", "true or false"),
    ("nvlink4", {"id": "nvlink3"}, "id", "duplicate link"),
    ("nvlink4", {"id": "NVLink4"}, "id", "lower-case"),
]


@pytest.mark.parametrize(("row_id", "changes", "column", "message"), BAD_LINKS)
def test_bad_link_rows_are_reported_with_file_line_and_column(tmp_path, row_id, changes, column, message):
    path = rewrite_row(catalog.LINKS_CSV, tmp_path / "links.csv", row_id, **changes)
    with pytest.raises(InputError, match=message) as caught:
        catalog.load_links(path)
    assert (caught.value.file, caught.value.line, caught.value.column) == (str(path), _line_of(catalog.LINKS_CSV, row_id), column)


BAD_GPUS = [
    ("h100-sxm", {"nvlink": "nvlink9"}, "nvlink", "unknown link 'nvlink9'"),
    ("h100-sxm", {"nvlink": "pcie5-x16"}, "nvlink", "is a pcie link"),
    ("h100-sxm", {"pcie": "pcie7-x16"}, "pcie", "unknown link"),
    ("h100-sxm", {"arch": "hoper"}, "arch", "not one of"),
    ("h100-sxm", {"bf16_dense_TFLOPS": "989.4*"}, "bf16_dense_TFLOPS", "not a number"),
    ("h100-sxm", {"nvlink_GBps_per_dir": "900"}, "nvlink_GBps_per_dir", "disagrees"),
    ("h20", {"parent": "h100"}, "parent", "unknown gpu 'h100'"),
    ("l40s", {"nvlink_GBps_per_dir": "450"}, "nvlink_GBps_per_dir", "must be 0"),
    ("l40s", {"memory_GB": ""}, "memory_GB", "is empty"),
]


@pytest.mark.parametrize(("row_id", "changes", "column", "message"), BAD_GPUS)
def test_bad_gpu_rows_are_reported_with_file_line_and_column(tmp_path, row_id, changes, column, message):
    path = rewrite_row(catalog.GPUS_CSV, tmp_path / "gpus.csv", row_id, **changes)
    with pytest.raises(InputError, match=message) as caught:
        catalog.load_gpus(path)
    assert (caught.value.file, caught.value.line, caught.value.column) == (str(path), _line_of(path, row_id), column)


BAD_SYSTEMS = [
    ("hgx-h100", {"gpu": "h100"}, "gpu", "unknown gpu 'h100'"),
    ("hgx-h100", {"nvswitch": "nvlink4"}, "nvswitch", "expected nvswitch"),
    ("hgx-h100", {"nic": "infiniband-qdr"}, "nic", "unknown link"),
    ("hgx-h100", {"topology": "fat-tree"}, "topology", "not one of"),
    ("hgx-h100", {"gpus_per_node": "eight"}, "gpus_per_node", "whole number"),
    ("hgx-h100", {"source": " "}, "source", "is empty"),
    ("dgx-a100", {"in_switch_reduction": "true"}, "in_switch_reduction", "no in-network reduction"),
    ("pcie-l40s-8", {"topology": "nvswitch"}, "nvswitch", "exactly when"),
    ("h200-nvl-4", {"bridge_group": ""}, "bridge_group", "exactly when"),
    ("pcie-rtx5090-8-switch", {"variant_of": "no-such-system"}, "variant_of", "same GPU"),
    ("pcie-rtx5090-8-switch", {"variant_of": "hgx-h100"}, "variant_of", "same GPU"),
]


@pytest.mark.parametrize(("row_id", "changes", "column", "message"), BAD_SYSTEMS)
def test_bad_system_rows_are_reported_with_file_line_and_column(tmp_path, row_id, changes, column, message):
    path = rewrite_row(catalog.SYSTEMS_CSV, tmp_path / "systems.csv", row_id, **changes)
    with pytest.raises(InputError, match=message) as caught:
        catalog.load_systems(path)
    assert (caught.value.file, caught.value.line, caught.value.column) == (str(path), _line_of(path, row_id), column)


def test_header_problems_are_reported_on_line_1(tmp_path):
    path = tmp_path / "links.csv"
    path.write_text(catalog.LINKS_CSV.read_text().replace("per_gpu_GBps_per_dir", "per_gpu_GBps", 1))
    with pytest.raises(InputError, match="unknown column") as caught:
        catalog.load_links(path)
    assert (caught.value.line, caught.value.column) == (1, "per_gpu_GBps")
    path.write_text("id,name\nx,y\n")
    with pytest.raises(InputError, match="no header row with the required columns .missing: category, year") as caught:
        catalog.load_links(path)
    assert caught.value.line == 1 and len(caught.value.lines()) == 1  # eight missing columns are one problem


def test_a_small_handwritten_file_loads(tmp_path):
    path = tmp_path / "links.csv"
    path.write_text(
        "id,name,category,year,per_link_GBps_per_dir,links_per_gpu,per_gpu_GBps_per_dir,in_network_reduction,source,notes\n"
        "x,X,pcie,2020,,,10,false,https://example.org,\n")
    (record,) = catalog.load_links(path).values()
    assert (record.per_link_GBps_per_dir, record.links_per_gpu, record.notes) == (None, None, "")
    assert record.per_gpu_GBps_bidir == 20


def test_error_message_reads_as_file_line_column(tmp_path):
    path = rewrite_row(catalog.LINKS_CSV, tmp_path / "links.csv", "nvlink4", category="bogus")
    with pytest.raises(InputError) as caught:
        catalog.load_links(path)
    assert str(caught.value).startswith(f"{path}:{_line_of(path, 'nvlink4')}: column 'category': ")


# -------------------------------------------------------------------- CLI


def _run(*argv: str) -> tuple[int, str]:
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        status = main(list(argv))
    return status, buffer.getvalue()


@pytest.mark.parametrize("table", TABLES)
def test_cli_json_lists_every_row_with_id_and_source(table):
    status, text = _run(table, "--format", "json")
    assert status == 0
    rows = json.loads(text)
    assert [row["id"] for row in rows] == list(TABLES[table]())
    assert all(row["source"].startswith("http") for row in rows)


def test_cli_csv_has_all_columns_and_table_a_subset():
    _, text = _run("links", "--format", "csv")
    header = next(csv.reader(io.StringIO(text)))
    assert {"id", "source", "notes", "per_link_GBps_per_dir", "per_gpu_GBps_bidir"} <= set(header)
    _, table = _run("systems")
    assert table.splitlines()[0].split()[0] == "id" and "source" in table.splitlines()[0]
    assert "hgx-h100" in table


def test_cli_selects_ids_and_rejects_unknown_ones(capsys):
    status, text = _run("systems", "hgx-h100", "--format", "json")
    assert status == 0 and [row["id"] for row in json.loads(text)] == ["hgx-h100"]
    assert json.loads(text)[0]["nvlink_GBps_per_dir"] == 450
    status, text = _run("gpus", "nope")
    assert status == 2 and text == ""
    assert "unknown gpu 'nope'" in capsys.readouterr().err


def test_derived_bidirectional_values_are_twice_per_direction():
    for link in catalog.links().values():
        assert math.isclose(link.per_gpu_GBps_bidir, 2 * link.per_gpu_GBps_per_dir)
