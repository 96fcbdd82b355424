"""Voices of a household: who is speaking, so that memory follows the speaker.

One speaker-embedding model per process (``embedder``), shared by every device; voiceprints per
household member in Redis (``store``); the best member above a threshold, else unknown
(``identify``); enrolment with its bad-input checks (``checks``, ``enrol``); per utterance on a
device, beside ASR (``speaking``).
"""
