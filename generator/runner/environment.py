"""Capture the environment a run measured in, for manifest.yaml.

Never invent a value: a field that cannot be read is left out (absent means
unknown). Environment variables are kept only when they steer kernels or
engines, and never when their name suggests a secret.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from .. import __version__
from ..format.models import MANIFEST_SCHEMA
from .fetch import get_json, plain

ENV_PREFIXES = ("CUDA_", "VLLM_", "GGML_", "LLAMA_", "HIP_", "ROCM_", "HSA_", "OMP_", "TORCH_", "NCCL_", "SGLANG_")
SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSWORD", re.IGNORECASE)


def steering_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    env = os.environ if environ is None else environ
    return {k: env[k] for k in sorted(env) if k.startswith(ENV_PREFIXES) and not SECRET.search(k)}


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith(("model name", "hardware")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _memory_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024**2, 1)
    except (OSError, ValueError):
        pass
    return None


def host() -> dict[str, Any]:
    info = {
        "name": platform.node() or None,
        "os": platform.platform(),
        "kernel": platform.release(),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gb": _memory_gb(),
    }
    return {k: v for k, v in info.items() if v is not None}


def gpus() -> list[dict[str, Any]]:
    """NVIDIA GPUs from nvidia-smi; AMD GPUs from rocm-smi; [] when neither answers."""
    if shutil.which("nvidia-smi"):
        try:
            out = subprocess.run(
                ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader,nounits"],
                capture_output=True,
                text=True,
                timeout=20,
                check=True,
            ).stdout
            cuda = re.search(
                r"CUDA Version:\s*([\d.]+)",
                subprocess.run(["nvidia-smi"], capture_output=True, text=True, timeout=20).stdout,
            )
            found = []
            for line in out.strip().splitlines():
                name, driver, memory = (p.strip() for p in line.split(","))
                gpu: dict[str, Any] = {"name": name, "driver": driver, "memory_gb": round(float(memory) / 1024, 1)}
                if cuda:
                    gpu["cuda"] = cuda.group(1)
                found.append(gpu)
            return found
        except (subprocess.SubprocessError, ValueError, OSError):
            return []
    if shutil.which("rocm-smi"):
        try:
            out = subprocess.run(
                ["rocm-smi", "--showproductname"], capture_output=True, text=True, timeout=20, check=True
            ).stdout
            return [{"name": m.group(1).strip()} for m in re.finditer(r"Card series:\s*(.+)", out)]
        except (subprocess.SubprocessError, OSError):
            return []
    return []


def server(base_url: str, root: str, deadline_s: float) -> dict[str, Any]:
    """The server's own description: llama.cpp /props and /slots, /v1/models, vLLM /version.
    Each probe has a deadline of `deadline_s` on its whole answer and a size cap
    (fetch.MAX_BYTES); fields of unexpected types or sizes are recorded as described by
    `fetch.plain`, never trusted."""
    out: dict[str, Any] = {}
    props = get_json(root + "/props", deadline_s)
    if isinstance(props, dict):
        keep = {k: plain(props[k]) for k in ("build_info", "model_path", "total_slots") if k in props}
        settings = props.get("default_generation_settings")
        params = settings.get("params") if isinstance(settings, dict) else None
        if isinstance(params, dict):
            spec = {str(k): plain(v) for k, v in params.items() if "draft" in str(k) or "spec" in str(k)}
            if spec:  # the defaults a request starts from, as the server reports them
                keep["generation_defaults"] = spec
        slots = get_json(root + "/slots", deadline_s)
        if isinstance(slots, list) and slots and all(isinstance(x, dict) for x in slots):
            keep["slots"] = {"count": len(slots)}
            for key in ("speculative", "n_ctx"):
                values = {json.dumps(plain(x[key]), sort_keys=True) for x in slots if key in x}
                if len(values) == 1:
                    keep["slots"][key] = plain(slots[0][key])
        out["llama_cpp_props"] = keep
    models = get_json(base_url.rstrip("/") + "/models", deadline_s)
    if isinstance(models, dict) and isinstance(models.get("data"), list):
        out["models"] = [
            {k: plain(m.get(k)) for k in ("id", "owned_by", "max_model_len") if k in m}
            for m in models["data"][:64]
            if isinstance(m, dict)
        ]
    version = get_json(root + "/version", deadline_s)
    if isinstance(version, dict) and "version" in version:
        out["vllm_version"] = plain(version["version"])
    return out


def deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        out[key] = deep_merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def manifest(extra: dict[str, Any], server_info: dict[str, Any] | None = None) -> dict[str, Any]:
    """manifest.yaml for a run captured now on this machine."""
    data: dict[str, Any] = {
        "schema": MANIFEST_SCHEMA,
        "captured": {
            "at": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
            "by": f"benchledger {__version__}",
            "method": "auto",
        },
        "host": host(),
        "software": {"python": platform.python_version(), "benchledger": __version__},
    }
    found = gpus()
    if found:
        data["accelerators"] = found
    if server_info:
        data["server"] = server_info
    env = steering_environment()
    if env:
        data["environment"] = env
    return deep_merge(data, extra)
