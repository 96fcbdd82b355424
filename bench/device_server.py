"""The server side of ``hearth bench device``: Hearth's device stack in its own process.

Run as ``python -m bench.device_server`` by the bench, never by hand. Prints ``READY <port>``
when listening and appends one line ``<text→first frame s> <provider s>`` per turn to the
samples file.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from pathlib import Path

import uvloop
from arq.connections import create_pool

from bench.instant import InstantLLM, InstantTTS
from config.settings import load_settings
from providers.llm import ChatLLM
from providers.tts import TextToSpeech
from server.logs import configure_logging
from server.runtime import build_llm, device_stack
from workers.settings import redis_settings


async def serve(args: argparse.Namespace) -> None:
    settings = load_settings(
        data_dir=args.data_dir,
        auth={"secret": args.secret},
        llm={"base_url": args.llm_base_url},
        server={"idle_timeout_s": 600},
    )
    configure_logging("warning")
    llm: ChatLLM = build_llm(settings, args.llm_base_url) if args.llm_base_url else InstantLLM()
    tts: TextToSpeech | None = (
        None if args.real_tts else InstantTTS(settings.audio.downlink_sample_rate)
    )
    arq = await create_pool(redis_settings(args.redis_url))
    samples = Path(args.samples).open("a", buffering=1)  # noqa: SIM115, ASYNC230 - once, at start

    def record(total: float, provider: float) -> None:
        samples.write(f"{total:.6f} {provider:.6f}\n")

    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with device_stack(settings, llm, arq, tts) as (server, _hook):
        server.services.turn.on_first_audio = record
        ws = await server.start("127.0.0.1", 0)
        print(f"READY {next(iter(ws.sockets)).getsockname()[1]}", flush=True)
        await stop.wait()
        ws.close()
    samples.close()
    await arq.aclose()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--secret", required=True)
    parser.add_argument("--samples", required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--llm-base-url", default=None)
    parser.add_argument("--real-tts", action="store_true")
    uvloop.run(serve(parser.parse_args()))


if __name__ == "__main__":
    main()
