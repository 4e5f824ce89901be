"""llama-bench input that is not what llama-bench writes: a clear located error, never a traceback."""

from __future__ import annotations

from pathlib import Path

from helpers import import_into

FIXTURES = Path(__file__).parents[1] / "fixtures" / "llama-bench"
RUN = "2026-11-30-hostile"


def test_a_csv_cell_over_the_field_limit_is_a_located_error(tmp_path: Path) -> None:
    """Issue 34: a cell over 131,072 characters gave a `_csv.Error` traceback."""
    lines = (FIXTURES / "testbed-tiny-threads.csv").read_text().splitlines()
    cells = lines[1].split(",")
    cells[6] = '"' + "x" * 140_000 + '"'
    big = tmp_path / "bench.csv"
    big.write_text("\n".join([lines[0], lines[1], ",".join(cells)]) + "\n")
    code, out, root = import_into(
        tmp_path, "llama-bench", str(big), "--id", RUN, "--citation", "x", "--repetitions", "3"
    )
    assert code == 1 and out == (
        "Error: bench.csv:3: a cell is longer than 131,072 characters, which llama-bench never writes; give "
        "llama-bench's own -o csv output\n"
    )
    assert not (root / "runs" / RUN).exists()


def test_an_unclosed_json_array_in_a_log_cites_its_line(tmp_path: Path) -> None:
    log = tmp_path / "bench.log"
    log.write_text(
        'ggml_cuda_init: found 1 CUDA devices:\n  Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9\n[\n  {"n_prompt": 1,\n'
    )
    code, out, _ = import_into(tmp_path, "llama-bench", str(log), "--id", RUN)
    assert code == 1 and out.startswith("Error: bench.log:5: is not llama-bench json ("), out


def test_text_with_no_llama_bench_output_says_what_it_looked_for(tmp_path: Path) -> None:
    log = tmp_path / "bench.log"
    log.write_text("ggml_vulkan: Found 1 Vulkan devices:\nerror: failed to load model\n")
    code, out, _ = import_into(tmp_path, "llama-bench", str(log), "--id", RUN)
    assert code == 1 and out == (
        "Error: bench.log: holds no llama-bench output: no Markdown table with `test` and `t/s` columns, no JSON and "
        "no CSV header starting build_commit; give llama-bench's output (-o json, jsonl, csv, or its default table)\n"
    )
