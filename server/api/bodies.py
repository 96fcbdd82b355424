"""The memory API's request bodies (pydantic: validation and the OpenAPI document come from
these). Unknown fields are refused; text must be valid Unicode without NUL."""

import uuid
from typing import Annotated

from pydantic import AfterValidator, AliasChoices, BaseModel, ConfigDict, Field

from memory.identity import DEFAULT_STORE, PERSON_PATTERN


def _utf8(value: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("text must be valid Unicode (no lone surrogates)") from exc
    if "\x00" in value:
        raise ValueError("text must not contain NUL characters")
    return value


Text = Annotated[str, AfterValidator(_utf8)]
StoreId = Annotated[
    str,
    Field(
        description="The store: 1-64 ASCII letters, digits, '.', '_', '-', starting with a "
        "letter or digit; ids differing only by case name one store",
        pattern=f"^{PERSON_PATTERN.pattern}$",  # anchored (the Rust regex searches)
        examples=["default"],
    ),
]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CollectionBody(_Body):
    user_id: StoreId


class StoreMetadata(BaseModel):
    model_config = ConfigDict(extra="allow")
    speaker: Text | None = Field(None, description="A registered speaker, or 'me'")


class StoreBody(_Body):
    user_id: StoreId
    content: Annotated[Text, Field(min_length=1, examples=["我老婆对海鲜过敏"])]
    metadata: StoreMetadata | None = None


class StoreTurnBody(_Body):
    user_id: StoreId
    user: Annotated[Text, Field(min_length=1, description="what the person said")]
    assistant: Text | None = Field(None, description="the assistant's reply (context only)")
    metadata: StoreMetadata | None = None
    timestamp: float | None = Field(None, description="unix seconds of the exchange")


class ExpandBody(_Body):
    user_id: StoreId
    memory_id: uuid.UUID


BULK_MAX_ITEMS = 100  # memories per /bulk-store call (also the 64 KB body cap applies)


class BulkItem(_Body):
    content: Text
    metadata: StoreMetadata | None = None


class BulkStoreBody(_Body):
    user_id: StoreId
    items: list[BulkItem] = Field(min_length=1, max_length=BULK_MAX_ITEMS)


class SearchBody(_Body):
    user_id: StoreId
    query: Text
    speaker: Text | None = None
    limit: int = Field(10, ge=1, le=100)


class SpeakerBody(_Body):
    user_id: StoreId = DEFAULT_STORE
    speaker: Text


class _Cursor(_Body):
    # the cursor goes back under the names it came with (seed 000) or the short ones
    before: Text | None = Field(
        None,
        validation_alias=AliasChoices("before", "next_before"),
        description="next_before of the previous page (either name)",
    )
    skip_ids: list[uuid.UUID] = Field(
        default_factory=list,
        max_length=1000,
        validation_alias=AliasChoices("skip_ids", "next_skip_ids"),
        description="next_skip_ids of the previous page (either name)",
    )


class BySpeakerBody(_Cursor):
    user_id: StoreId = DEFAULT_STORE
    speaker: Text
    limit: int = Field(50, ge=1, le=200)


class ImagesBody(_Cursor):
    """The image listing pages like by-speaker (seed 000: 分页方式与图像相同)."""

    user_id: StoreId = DEFAULT_STORE
    limit: int = Field(20, ge=1, le=200)


class DeleteImageBody(_Body):
    user_id: StoreId = DEFAULT_STORE
    image_id: uuid.UUID


class SupersedeBody(_Body):
    user_id: StoreId
    memory_id: uuid.UUID
    content: Text


class ForgetBody(_Body):
    user_id: StoreId
    memory_id: uuid.UUID | None = None
    all: bool = Field(False, description="forget every memory in the store")
