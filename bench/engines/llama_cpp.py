"""A real llama.cpp engine doing speculative decoding, with no GPU and no model download.

- The llama.cpp source comes from the llama-cpp-python sdist on PyPI (it
  vendors the whole tree, including tools/server and vocabulary-only GGUF files).
- `llama-server` is built with CMake into a cache folder keyed by version and
  build flags, and reused when present.
- Tiny random-weight llama models are written with the `gguf` package from
  fixed seeds: a target, and drafts made of the target's weights plus scaled
  noise (noise 0 accepts nearly everything; more noise, less acceptance).
- `LlamaServer` starts `llama-server` on 127.0.0.1 on a free port, waits for
  /health and stops it by its process id.

By hand:

    python bench/engines/llama_cpp.py build            # ~6 minutes on 2 cores, once
    python bench/engines/llama_cpp.py serve --draft-noise 0.3 --n-max 4
    benchledger run openai --base-url http://127.0.0.1:PORT/v1 --concurrency 1,4 ...
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

VERSION = "0.3.36"
VOCAB = "ggml-vocab-llama-spm.gguf"
SHAPE = {"n_embd": 64, "n_layer": 2, "n_head": 4, "n_ff": 128, "n_ctx": 512}


def cache_root() -> Path:
    base = os.environ.get("BENCHLEDGER_CACHE") or os.environ.get("XDG_CACHE_HOME")
    root = Path(base) / "benchledger" if base else Path.home() / ".cache" / "benchledger"
    return root / "engines" / f"llama-cpp-python-{VERSION}"


def source_dir() -> Path:
    """The vendored llama.cpp tree, downloaded and unpacked once."""
    root = cache_root()
    tree = root / "vendor" / "llama.cpp"
    if (tree / "CMakeLists.txt").is_file():
        return tree
    root.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--no-binary",
                ":all:",
                f"llama-cpp-python=={VERSION}",
                "-d",
                tmp,
            ],
            check=True,
        )
        (archive,) = Path(tmp).glob("*.tar.gz")
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        unpacked = next(p for p in Path(tmp).iterdir() if p.is_dir())
        if root.exists():
            shutil.rmtree(root)
        shutil.move(str(unpacked), root)
    return tree


def build(native: bool = False, jobs: int = 2) -> Path:
    """Build llama-server (and llama-bench); return the folder holding the binaries."""
    tree = source_dir()
    folder = cache_root() / ("build-native" if native else "build")
    binary = folder / "bin" / "llama-server"
    if binary.is_file():
        return binary.parent
    flags = [
        f"-DGGML_NATIVE={'ON' if native else 'OFF'}",
        "-DLLAMA_CURL=OFF",
        "-DLLAMA_BUILD_TESTS=OFF",
        "-DLLAMA_BUILD_EXAMPLES=OFF",
        "-DCMAKE_BUILD_TYPE=Release",
    ]
    subprocess.run(["cmake", "-S", str(tree), "-B", str(folder), *flags], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(
        ["cmake", "--build", str(folder), f"-j{jobs}", "--target", "llama-server", "llama-bench"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return binary.parent


def build_flags(native: bool = False) -> dict[str, Any]:
    """What the manifest should say about the build (the server cannot report it)."""
    return {"llama_cpp_python_sdist": VERSION, "GGML_NATIVE": "ON" if native else "OFF", "CMAKE_BUILD_TYPE": "Release"}


def write_model(path: Path, seed: int = 0, noise: float = 0.0, noise_seed: int = 1) -> Path:
    """A tiny llama model with random float32 weights (the target when noise is 0; a draft
    of that target otherwise: same weights plus noise x standard normal)."""
    import gguf
    import numpy as np

    vocab = gguf.GGUFReader(source_dir() / "models" / VOCAB)
    fields = {k: f.contents() for k, f in vocab.fields.items()}
    tokens = fields["tokenizer.ggml.tokens"]
    n_vocab, n_embd, n_ff, n_layer, n_head = (
        len(tokens),
        SHAPE["n_embd"],
        SHAPE["n_ff"],
        SHAPE["n_layer"],
        SHAPE["n_head"],
    )
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name(f"benchledger-tiny-seed{seed}-noise{noise}")
    writer.add_context_length(SHAPE["n_ctx"])
    writer.add_embedding_length(n_embd)
    writer.add_block_count(n_layer)
    writer.add_feed_forward_length(n_ff)
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_head)
    writer.add_rope_dimension_count(n_embd // n_head)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores(fields["tokenizer.ggml.scores"])
    writer.add_token_types(fields["tokenizer.ggml.token_type"])
    writer.add_bos_token_id(fields["tokenizer.ggml.bos_token_id"])
    writer.add_eos_token_id(fields["tokenizer.ggml.eos_token_id"])
    writer.add_unk_token_id(fields["tokenizer.ggml.unknown_token_id"])
    base, extra = np.random.default_rng(seed), np.random.default_rng(noise_seed)

    def weight(*shape: int, scale: float = 0.2) -> np.ndarray:
        w = base.standard_normal(shape).astype(np.float32) * scale
        if noise:
            w = w + (extra.standard_normal(shape) * noise * scale).astype(np.float32)
        return w

    writer.add_tensor("token_embd.weight", weight(n_vocab, n_embd, scale=1.0))
    writer.add_tensor("output_norm.weight", np.ones(n_embd, dtype=np.float32))
    writer.add_tensor("output.weight", weight(n_vocab, n_embd))
    for i in range(n_layer):
        writer.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(n_embd, dtype=np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(f"blk.{i}.{name}.weight", weight(n_embd, n_embd))
        writer.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(n_embd, dtype=np.float32))
        writer.add_tensor(f"blk.{i}.ffn_gate.weight", weight(n_ff, n_embd))
        writer.add_tensor(f"blk.{i}.ffn_up.weight", weight(n_ff, n_embd))
        writer.add_tensor(f"blk.{i}.ffn_down.weight", weight(n_embd, n_ff))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def models(folder: Path, noise: float | None) -> tuple[Path, Path | None]:
    """The target model and, unless noise is None, a draft with that much noise (cached)."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "target.gguf"
    if not target.is_file():
        write_model(target)
    if noise is None:
        return target, None
    draft = folder / f"draft-noise{noise:g}.gguf"
    if not draft.is_file():
        write_model(draft, noise=noise)
    return target, draft


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LlamaServer:
    """llama-server on 127.0.0.1, started with the given draft settings and stopped by pid."""

    def __init__(
        self,
        bin_dir: Path,
        target: Path,
        draft: Path | None = None,
        n_max: int = 4,
        threads: int | None = None,
        parallel: int = 4,
        ctx: int = 2048,
        log: Path | None = None,
    ) -> None:
        self.port = free_port()
        self.command = [
            str(bin_dir / "llama-server"),
            "-m",
            str(target),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "-c",
            str(ctx),
            "-np",
            str(parallel),
            "--seed",
            "1",
        ]
        if draft is not None:
            self.command += ["-md", str(draft), "--spec-type", "draft-simple", "--spec-draft-n-max", str(n_max)]
        if threads is not None:
            self.command += ["-t", str(threads)]
        self.env = dict(os.environ, LD_LIBRARY_PATH=str(bin_dir))
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout: float = 120) -> LlamaServer:
        import httpx

        out = self.log.open("wb") if self.log else subprocess.DEVNULL
        self.process = subprocess.Popen(
            self.command, env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama-server exited with {self.process.returncode}: {' '.join(self.command)}")
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/health", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"llama-server did not become healthy within {timeout} s")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="action", required=True)
    b = sub.add_parser("build", help="download the sdist and build llama-server (cached)")
    b.add_argument("--native", action="store_true", help="GGML_NATIVE=ON (CPU-specific kernels)")
    s = sub.add_parser("serve", help="start llama-server with a tiny target and draft; Ctrl-C stops it")
    s.add_argument("--draft-noise", type=float, default=None, help="noise of the draft; omit for no draft")
    s.add_argument("--n-max", type=int, default=4)
    s.add_argument("--threads", type=int, default=None)
    s.add_argument("--native", action="store_true")
    args = parser.parse_args()
    bin_dir = build(native=args.native)
    if args.action == "build":
        print(bin_dir)
        return
    target, draft = models(cache_root() / "models", args.draft_noise)
    with LlamaServer(bin_dir, target, draft, args.n_max, args.threads) as server:
        print(f"llama-server ready: {server.base_url} (Ctrl-C stops it)", flush=True)
        try:
            while server.process is not None and server.process.poll() is None:
                time.sleep(1)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
