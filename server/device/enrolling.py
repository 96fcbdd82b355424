"""The session's side of enrolment by voice: runs the enrolment the state machine asks for
(``server.device.enrolment``) and tells it how that went, every failure turned into a sentence
the person hears."""

from __future__ import annotations

from typing import Any

from redis.exceptions import RedisError

from memory.identity import IdentityError
from server.device.enrolment import Enrol, GuidedEnrolment, Say
from server.voices.checks import Refusal
from server.voices.speaking import SpeakerIdentifier, VoicesUnavailable
from server.voices.store import HouseholdFull


async def run_enrolment(
    speakers: SpeakerIdentifier, household: str, flow: GuidedEnrolment, step: Enrol, log: Any
) -> Say:
    """Enrol ``step``'s sentences in ``household``: what to say about it."""
    try:
        voice, again = await speakers.enrol(household, step.speaker, step.sentences)
    except Refusal as exc:
        log.info("voice.enrol_refused", speaker=step.speaker, reason=exc.reason,
                 sentence=exc.sentence, member=exc.member)  # fmt: skip
        return flow.refused(exc.reason, exc.sentence, exc.speaker)
    except HouseholdFull:
        log.warning("voice.enrol_refused", speaker=step.speaker, reason="household_full")
        return flow.refused("household_full")
    except (VoicesUnavailable, IdentityError, RedisError, OSError) as exc:
        log.error("voice.enrol_failed", speaker=step.speaker, error=str(exc))
        return flow.unavailable()
    log.info("voice.enrolled", household=household, member=voice.member,
             speaker=voice.speaker, again=again)  # fmt: skip
    return flow.enrolled(again)
