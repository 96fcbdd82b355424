"""The speaker embedder: one per process, shared by every device.

Resemblyzer's encoder (a 3-layer LSTM over 40 mel bands, 256-d output, trained on thousands of
speakers) run by onnxruntime: the graph is built in memory from the published weights at load
time (``onnx.helper``), so neither PyTorch nor a model hub is involved. An utterance becomes the
L2-normalised mean of its 1.6 s partial embeddings.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from server.voices.features import N_MELS, normalize_volume, partial_windows, pcm16_to_float
from server.voices.weights import load_weights

HIDDEN = 256
LAYERS = 3
DIM = 256


def _onnx_gates(w: np.ndarray) -> np.ndarray:
    """PyTorch orders LSTM gates input, forget, cell, output; ONNX input, output, forget, cell."""
    i, f, g, o = np.split(w, 4, axis=0)
    return np.concatenate([i, o, f, g], axis=0)


def build_graph(state: dict[str, np.ndarray]) -> onnx.ModelProto:
    """mels (batch, frames, 40) → unnormalised embeddings (batch, 256): LSTM ×3, linear, ReLU."""
    inits, nodes = [], [helper.make_node("Transpose", ["mels"], ["x0"], perm=[1, 0, 2])]
    for layer in range(LAYERS):
        w = _onnx_gates(state[f"lstm.weight_ih_l{layer}"])[None]
        r = _onnx_gates(state[f"lstm.weight_hh_l{layer}"])[None]
        b = np.concatenate(
            [
                _onnx_gates(state[f"lstm.bias_ih_l{layer}"]),
                _onnx_gates(state[f"lstm.bias_hh_l{layer}"]),
            ]
        )[None]
        inits += [
            numpy_helper.from_array(a.astype(np.float32), f"{n}{layer}")
            for a, n in ((w, "W"), (r, "R"), (b, "B"))
        ]
        nodes.append(
            helper.make_node(
                "LSTM",
                [f"x{layer}", f"W{layer}", f"R{layer}", f"B{layer}"],
                [f"y{layer}", f"h{layer}"],
                hidden_size=HIDDEN,
            )
        )
        # Y is (seq, directions, batch, hidden): drop the direction axis for the next layer
        nodes.append(helper.make_node("Squeeze", [f"y{layer}", "axis1"], [f"x{layer + 1}"]))
    inits.append(numpy_helper.from_array(np.array([1], np.int64), "axis1"))
    inits.append(numpy_helper.from_array(np.array([0], np.int64), "axis0"))
    inits.append(numpy_helper.from_array(state["linear.weight"].astype(np.float32), "LW"))
    inits.append(numpy_helper.from_array(state["linear.bias"].astype(np.float32), "LB"))
    nodes += [
        helper.make_node("Squeeze", [f"h{LAYERS - 1}", "axis0"], ["last"]),
        helper.make_node("Gemm", ["last", "LW", "LB"], ["lin"], transB=1),
        helper.make_node("Relu", ["lin"], ["embeds"]),
    ]
    graph = helper.make_graph(
        nodes,
        "voice_encoder",
        [helper.make_tensor_value_info("mels", TensorProto.FLOAT, ["batch", "frames", N_MELS])],
        [helper.make_tensor_value_info("embeds", TensorProto.FLOAT, ["batch", DIM])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


class VoiceEmbedder:
    """Speaker embeddings of 16 kHz 16-bit mono PCM. Thread-safe; ``threads`` intra-op threads
    (one by default: identification runs beside ASR on a two-core machine)."""

    def __init__(self, weights: Path, threads: int = 1) -> None:
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        model = build_graph(load_weights(weights))
        self._session = ort.InferenceSession(
            model.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
        self._lock = threading.Lock()

    def partials(self, wav: np.ndarray) -> np.ndarray:
        """(windows, 256) unit embeddings of the utterance's 1.6 s windows."""
        mels = partial_windows(normalize_volume(wav.astype(np.float32)))
        with self._lock:
            (out,) = self._session.run(["embeds"], {"mels": mels})
        norms = np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)
        return np.asarray(out / norms, dtype=np.float32)

    def embed_wave(self, wav: np.ndarray) -> np.ndarray:
        mean = self.partials(wav).mean(axis=0)
        return np.asarray(mean / max(float(np.linalg.norm(mean)), 1e-9), np.float32)

    def embed(self, pcm: bytes) -> np.ndarray:
        """The 256-d unit-length voiceprint of one utterance (16 kHz, 16-bit mono)."""
        return self.embed_wave(pcm16_to_float(pcm))


_shared: dict[Path, VoiceEmbedder] = {}
_shared_lock = threading.Lock()


def shared_embedder(weights: Path) -> VoiceEmbedder:
    """The process's one embedder for ``weights`` (built on first use)."""
    with _shared_lock:
        if weights not in _shared:
            _shared[weights] = VoiceEmbedder(weights)
        return _shared[weights]
